#include "core/spec/scenario.h"

#include "core/spec/resource_catalog.h"

namespace servesim {

namespace {

void read_sla(const Json& j, const std::string& path, SlaSpec& s, Errors& errors) {
  ObjectReader r(j, path, errors);
  r.get_number("ttft_ms", s.ttft_ms, 0, 1e9, false, true);
  r.get_number("tpot_ms", s.tpot_ms, 0, 1e9, false, true);
  r.get_number("e2el_ms", s.e2el_ms, 0, 1e9, false, true);
}

void read_output(const Json& j, const std::string& path, OutputSpec& o, Errors& errors) {
  ObjectReader r(j, path, errors);
  r.get_int("timeseries_points", o.timeseries_points, 2, 100000);
  r.get_bool("requests", o.requests);
  r.get_bool("phases", o.phases);
}

void read_limits(const Json& j, const std::string& path, LimitsSpec& l, Errors& errors) {
  ObjectReader r(j, path, errors);
  std::int64_t ev = 0;
  if (r.get_int("max_events", ev, 1000, 1'000'000'000'000LL)) l.max_events = static_cast<std::uint64_t>(ev);
  r.get_number("max_sim_time_s", l.max_sim_time_s, 0, 1e9, false, true);
}

/// Checks that need the model and the deployment together.
void check_model_fits_roles(const Scenario& s, Errors& errors) {
  const ModelSpec& m = s.model;
  for (std::size_t i = 0; i < s.deployment.roles.size(); ++i) {
    const RoleSpec& role = s.deployment.roles[i];
    const std::string rp = "/deployment/roles/" + std::to_string(i);
    const Parallelism& p = role.parallelism;
    if (m.num_attention_heads % p.tp_attn != 0)
      errors.add(rp + "/tensor_parallel_size", "must divide num_attention_heads (" +
                                                   std::to_string(m.num_attention_heads) + "), got " +
                                                   std::to_string(p.tp_attn));
    if (!m.is_mla() && p.tp_attn > 0 && m.num_key_value_heads % p.tp_attn != 0 &&
        p.tp_attn % m.num_key_value_heads != 0)
      errors.add(rp + "/tensor_parallel_size", "must divide or be a multiple of num_key_value_heads (" +
                                                   std::to_string(m.num_key_value_heads) + "), got " +
                                                   std::to_string(p.tp_attn));
    if (p.pp > m.num_hidden_layers)
      errors.add(rp + "/pipeline_parallel_size", "must not exceed num_hidden_layers (" +
                                                     std::to_string(m.num_hidden_layers) + ")");
    if (!m.is_moe() && p.ep_ffn > 1)
      errors.add(rp + "/parallelism/ep_ffn", "must be 1 for a dense model (it has no experts)");
    if (m.is_moe() && m.num_experts % p.ep_ffn != 0)
      errors.add(rp + "/parallelism/ep_ffn", "must divide the number of experts (" + std::to_string(m.num_experts) + ")");
    const EngineOptions& e = role.engine;
    if (e.max_model_len > m.max_position_embeddings)
      errors.add(rp + "/engine/max_model_len", "must not exceed the model's max_position_embeddings (" +
                                                   std::to_string(m.max_position_embeddings) + "), got " +
                                                   std::to_string(e.max_model_len));
    const std::int64_t model_len = e.max_model_len > 0 ? e.max_model_len : m.max_position_embeddings;
    // vLLM refuses to start so; TRT-LLM starts and refuses each longer prompt instead (GlobalController::refusal).
    if (!e.enable_chunked_prefill && e.backend != "trtllm" && e.max_num_batched_tokens < model_len)
      errors.add(rp + "/engine/max_num_batched_tokens",
                 "must be at least max_model_len (" + std::to_string(model_len) +
                     ") when enable_chunked_prefill is false (a whole prompt must fit one batch), got " +
                     std::to_string(e.max_num_batched_tokens));
    if (e.dtype == "fp8" && m.quant_method == "mxfp4")
      errors.add(rp + "/engine/dtype", "the model's checkpoint is MXFP4-quantised (config quantization_config); fp8 "
                                       "would quantise it again, which vLLM refuses: use bfloat16 (the checkpoint's "
                                       "format is used as it is)");
    if (e.dtype == "fp8" && role.gpu.fp8_tflops <= 0 && !role.gpu.name.empty())
      errors.add(rp + "/engine/dtype", "fp8 needs FP8 tensor cores; " + role.gpu.name + " has none (fp8_tflops is 0)");
  }
}

}  // namespace

bool read_scenario(const Json& doc, const ResourceCatalog& catalog, Scenario& s, Errors& errors) {
  ObjectReader r(doc, "", errors);
  if (!r.valid()) return false;
  r.get_int("version", s.version, 1, 1000, true);
  if (s.version != kScenarioVersion && r.has("version") && errors.ok())
    errors.add("/version", "this simulator reads scenario format " + std::to_string(kScenarioVersion) + ", got " +
                               std::to_string(s.version));
  r.get_string("name", s.name, false, 200);
  r.get_string("description", s.description, false, 2000);
  r.ignore({"$schema", "title", "demonstrates"});
  std::int64_t seed = 0;
  if (r.get_int("seed", seed, 0, (1LL << 53))) s.seed = static_cast<std::uint64_t>(seed);

  if (const Json* m = r.raw("model")) read_model(*m, "/model", catalog, s.model, errors);
  else errors.add("/model", "is required: a bundled name (" + catalog.list_joined("models") + ") or {name, config}");

  const Json* default_gpu = nullptr;
  if (const Json* hw = r.raw("hardware")) {
    ObjectReader h(*hw, "/hardware", errors);
    default_gpu = h.raw("gpu");
  }
  EngineOptions engine;
  if (const Json* e = r.raw("engine")) read_engine_options(*e, "/engine", engine, errors);
  if (const Json* d = r.raw("deployment"))
    read_deployment(*d, "/deployment", catalog, default_gpu, "/hardware/gpu", engine, s.model.architecture,
                    s.deployment, errors);
  else errors.add("/deployment", "is required, e.g. {\"roles\": [{\"role\": \"C\", \"replicas\": 1}]}");
  if (const Json* w = r.raw("workload")) read_workload(*w, "/workload", catalog, s.workload, errors);
  else errors.add("/workload", "is required (arrival process and lengths)");
  if (const Json* x = r.raw("sla")) read_sla(*x, "/sla", s.sla, errors);
  if (const Json* x = r.raw("output")) read_output(*x, "/output", s.output, errors);
  if (const Json* x = r.raw("limits")) read_limits(*x, "/limits", s.limits, errors);
  r.finish();

  if (errors.ok()) check_model_fits_roles(s, errors);
  // TensorRT-LLM quantises no weights when it loads a model: FP8 on a 16-bit checkpoint means a pre-quantised
  // export was served, which the scenario does not name. Say which one is priced (docs/validation.md, "The TRT-LLM
  // Qwen3-32B rows run Qwen's block-FP8 release").
  std::string trt_fp8_roles;
  for (const RoleSpec& role : s.deployment.roles)
    if (role.engine.backend == "trtllm" && role.engine.dtype == "fp8" && s.model.quant_method.empty())
      trt_fp8_roles += (trt_fp8_roles.empty() ? "" : ", ") + role.name;
  if (!trt_fp8_roles.empty())
    s.warnings.push_back("roles " + trt_fp8_roles + " (trtllm, dtype fp8): TensorRT-LLM serves pre-quantised "
                         "checkpoints only; FP8 on the 16-bit model " + s.model.name +
                         " is priced as a per-tensor FP8 export (ModelOpt). For a block-scaled release (Qwen's "
                         "*-FP8, DeepSeek's) give the model its quantization_config (weight_block_size [128, 128])");
  if (!s.model.ignored_config_keys.empty()) {
    std::string keys;
    for (const auto& k : s.model.ignored_config_keys) keys += (keys.empty() ? "" : ", ") + k;
    s.warnings.push_back("model config keys not used by the simulator: " + keys);
  }
  return errors.ok();
}

bool parse_scenario(const std::string& text, const ResourceCatalog& catalog, Scenario& s, Errors& errors) {
  if (text.size() > kMaxScenarioBytes) {
    errors.add("", "the scenario is " + std::to_string(text.size()) + " bytes; at most " +
                       std::to_string(kMaxScenarioBytes) + " are accepted");
    return false;
  }
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    errors.add("", "not valid JSON: " + json_syntax_error(text));
    return false;
  }
  return read_scenario(doc, catalog, s, errors);
}

}  // namespace servesim
