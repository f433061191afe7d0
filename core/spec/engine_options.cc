#include "core/spec/engine_options.h"

#include <algorithm>
#include <cmath>

namespace servesim {

double dtype_bytes(const std::string& dtype) {
  if (dtype == "fp8" || dtype == "fp8_e4m3" || dtype == "fp8_e5m2") return 1.0;
  if (dtype == "float32") return 4.0;
  return 2.0;
}

void read_engine_options(const Json& j, const std::string& path, EngineOptions& o, Errors& errors) {
  ObjectReader r(j, path, errors);
  if (!r.valid()) return;
  r.get_enum("backend", o.backend, {"vllm", "sglang", "trtllm"});
  r.get_enum("scheduler", o.scheduler, {"vllm_v1", "sglang", "trtllm"});
  r.get_int("max_num_seqs", o.max_num_seqs, 1, 65536);
  r.get_int("max_num_batched_tokens", o.max_num_batched_tokens, 1, 1 << 22);
  if (r.get_bool("enable_chunked_prefill", o.enable_chunked_prefill)) o.enable_chunked_prefill_set = true;
  // Unset, chunking follows the backend (as the block size below does).
  if (!o.enable_chunked_prefill_set) o.enable_chunked_prefill = o.backend != "trtllm";
  r.get_int("long_prefill_token_threshold", o.long_prefill_token_threshold, 0, 1 << 22);
  const bool max_prefill_set = r.get_int("max_prefill_tokens", o.max_prefill_tokens, 1, 1 << 22);
  std::int64_t bs = o.block_size;
  if (const Json* v = r.raw("block_size")) {
    const bool pow2 = v->is_number_integer() && v->get<std::int64_t>() >= 1 && v->get<std::int64_t>() <= 256 &&
                      (v->get<std::int64_t>() & (v->get<std::int64_t>() - 1)) == 0;
    if (!pow2)
      errors.add(r.path("block_size"), "must be a power of two between 1 and 256, got " + describe(*v));
    else
      bs = v->get<std::int64_t>(), o.block_size_set = true;
  }
  // Unset, the block follows the backend (a role's engine may change the backend the scenario's engine set).
  if (!o.block_size_set) bs = o.backend == "trtllm" ? 32 : 16;
  o.block_size = static_cast<int>(bs);
  if (double f = 0; r.get_number("gpu_memory_utilization", f, 0.0, 1.0, false, true)) o.gpu_memory_utilization = f;
  r.get_int("max_model_len", o.max_model_len, 1, 1 << 24);
  r.get_number("kv_watermark", o.kv_watermark, 0.0, 0.5);
  r.get_enum("dtype", o.dtype, {"bfloat16", "float16", "fp8"});
  r.get_enum("kv_cache_dtype", o.kv_cache_dtype, {"auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2"});
  r.get_bool("enforce_eager", o.enforce_eager);
  if (bool on = false; r.get_bool("async_scheduling", on)) o.async_scheduling = on;
  if (bool on = false; r.get_bool("hybrid_kv_cache_manager", on)) o.hybrid_kv_cache_manager = on;
  r.get_int_list("cuda_graph_sizes", o.cuda_graph_sizes, 1, 1 << 16, 1024);
  r.get_int("max_cudagraph_capture_size", o.max_cudagraph_capture_size, 1, 1 << 16);
  if (bool on = false; r.get_bool("cuda_graph_padding", on)) {
    o.cuda_graph_padding = on;
    if (o.backend == "vllm" && r.valid())
      errors.add(r.path("cuda_graph_padding"),
                 "is TRT-LLM's and SGLang's option; vLLM always pads a decode batch to "
                 "the next capture size (leave it unset under backend \"vllm\")");
  }
  r.get_enum("moe_routing", o.moe_routing, {"uniform", "balanced", "power_law"});
  r.get_number("moe_power_law_alpha", o.moe_power_law_alpha, 0.5, 3.0);
  r.get_enum("moe_a2a_backend", o.moe_a2a_backend, {"none", "deepep"});
  if (o.moe_a2a_backend == "deepep" && o.backend != "sglang" && r.valid())
    errors.add(r.path("moe_a2a_backend"),
               "\"deepep\" is measured for backend \"sglang\" only (SGLang's DeepEP "
               "tables), got backend \"" +
                   o.backend + "\"");
  if (const Json* h = r.raw("host")) {
    ObjectReader hr(*h, r.path("host"), errors);
    if (hr.valid()) {
      hr.get_number("iteration_us", o.host.iteration_us, 0, 1e7);
      hr.get_number("per_request_us", o.host.per_request_us, 0, 1e6);
      hr.get_number("per_token_us", o.host.per_token_us, 0, 1e6);
      hr.get_number("launch_us", o.host.launch_us, 0, 1e4);
      hr.get_bool("overlaps_pipeline", o.host.overlaps_pipeline);
    }
  }
  if (const Json* f = r.raw("frontend")) {
    ObjectReader fr(*f, r.path("frontend"), errors);
    if (fr.valid()) {
      fr.get_number("request_us", o.frontend.request_us, 0, 1e7);
      fr.get_number("token_us", o.frontend.token_us, 0, 1e6);
    }
  }
  if (o.scheduler == "trtllm" && o.long_prefill_token_threshold > 0 && r.valid())
    errors.add(r.path("long_prefill_token_threshold"),
               "is vLLM's per-request chunk cap; scheduler \"trtllm\" chunks prompts first come first served under "
               "max_num_batched_tokens only, got " +
                   std::to_string(o.long_prefill_token_threshold));
  if (max_prefill_set && o.scheduler != "sglang" && r.valid())
    errors.add(r.path("max_prefill_tokens"),
               "is SGLang's --max-prefill-tokens, read by scheduler \"sglang\" only; scheduler \"" + o.scheduler +
                   "\" bounds a step's prompt tokens by max_num_batched_tokens");
  if (o.max_num_batched_tokens < o.max_num_seqs && r.valid())
    errors.add(r.path("max_num_batched_tokens"),
               "must be at least max_num_seqs (" + std::to_string(o.max_num_seqs) + "), got " +
                   std::to_string(o.max_num_batched_tokens));
}

bool sglang_disables_hybrid_swa(const std::string& architecture) {
  static const char* const kClasses[] = {"GptOssForCausalLM",  "Gemma2ForCausalLM",
                                         "Gemma3ForCausalLM",  "Gemma3ForConditionalGeneration",
                                         "Gemma3nForCausalLM", "Gemma3nForConditionalGeneration",
                                         "Olmo2ForCausalLM"};
  for (const char* c : kClasses)
    if (architecture == c) return true;
  return false;
}

bool hybrid_kv_cache_on(const EngineOptions& o, bool kv_connector, const std::string& architecture) {
  if (o.backend == "sglang" && sglang_disables_hybrid_swa(architecture)) return false;
  if (o.hybrid_kv_cache_manager) return *o.hybrid_kv_cache_manager;
  return !(kv_connector && o.backend == "vllm");
}

bool async_scheduling_on(const EngineOptions& o, int pp) {
  if (o.async_scheduling) return *o.async_scheduling;
  return pp <= 1;
}

bool async_hides_host_time(const EngineOptions& o, int pp) { return o.backend == "vllm" && async_scheduling_on(o, pp); }

int sglang_cuda_graph_max_bs(const EngineOptions& o, double gpu_mem_bytes, int tp) {
  if (!o.cuda_graph_sizes.empty())
    return static_cast<int>(*std::max_element(o.cuda_graph_sizes.begin(), o.cuda_graph_sizes.end()));
  if (o.max_cudagraph_capture_size > 0) return static_cast<int>(o.max_cudagraph_capture_size);
  const double gib = gpu_mem_bytes / (1u << 30);
  if (gpu_mem_bytes <= 0) return 512;
  if (gib < 20) return 8;
  if (gib < 35) return tp < 4 ? 24 : 80;
  if (gib < 60) return tp < 4 ? 32 : 160;
  if (gib < 160) return tp < 4 ? 256 : 512;
  return 512;
}

double sglang_default_mem_fraction_static(const EngineOptions& o, double gpu_mem_bytes, int tp, int pp, int dp_attn) {
  const double gpu_mib = gpu_mem_bytes / (1u << 20);
  const double gib = 1024;  // MiB
  const int graph_bs = sglang_cuda_graph_max_bs(o, gpu_mem_bytes, tp);
  double reserved = 512 + 1.5 * std::max<double>(static_cast<double>(o.max_num_batched_tokens), 2048) + 2.0 * graph_bs +
                    tp * pp / 8.0 * gib;
  if (dp_attn > 1) {
    reserved += 3.0 * graph_bs * dp_attn;
    if (graph_bs > 300) reserved += 1.5 * graph_bs * dp_attn;
  }
  if (gpu_mib > 60 * gib) reserved = std::max(reserved, 10 * gib);
  return std::round((gpu_mib - reserved) / gpu_mib * 1000) / 1000;
}

}  // namespace servesim
