#include "core/spec/model_spec.h"

#include "core/spec/resource_catalog.h"

namespace servesim {

namespace {

constexpr std::int64_t kMaxDim = 1 << 20;  // no real model has a dimension past a million
constexpr std::int64_t kMaxResponsePreambleTokens = 64;  // a format header, not a response

double ffn_params(std::int64_t hidden, std::int64_t inter) { return 3.0 * hidden * inter; }  // gated MLP

double attention_params(const ModelSpec& m) {
  const double h = m.hidden_size;
  if (m.is_mla()) {
    const double qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const double q = m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * m.num_attention_heads * qk_head
                                       : h * m.num_attention_heads * qk_head;
    const double kv_a = h * (m.kv_lora_rank + m.qk_rope_head_dim);
    const double kv_b = m.kv_lora_rank * m.num_attention_heads * (m.qk_nope_head_dim + m.v_head_dim);
    const double o = m.num_attention_heads * m.v_head_dim * h;
    return q + kv_a + kv_b + o;
  }
  const double q = h * m.num_attention_heads * m.head_dim;
  const double kv = 2.0 * h * m.num_key_value_heads * m.head_dim;
  const double o = m.num_attention_heads * m.head_dim * h;
  return q + kv + o;
}

// config.json "quantization_config": how the checkpoint stores its weights (weight_format.h applies it).
void read_quantization(const Json& q, const std::string& path, ModelSpec& m, Errors& errors) {
  ObjectReader r(q, path, errors);
  if (!r.valid()) return;
  r.allow_unknown();  // activation_scheme, fmt and the like do not change what the simulator prices
  std::string method;
  if (!r.get_string("quant_method", method, true, 64)) return;
  if (method != "fp8" && method != "mxfp4") {
    errors.add(r.path("quant_method"), "unsupported checkpoint quantisation \"" + method +
                                           "\"; the simulator knows fp8 (FP8 weights, per-tensor or with "
                                           "weight_block_size) and mxfp4 (MXFP4 expert weights)");
    return;
  }
  m.quant_method = method;
  std::vector<std::int64_t> block;
  if (r.get_int_list("weight_block_size", block, 1, 4096, 2)) {
    if (method != "fp8" || block.size() != 2) {
      errors.add(r.path("weight_block_size"), method != "fp8" ? "applies to quant_method fp8 only"
                                                              : "must be [n, k], two block dimensions");
    } else {
      m.quant_block_n = block[0];
      m.quant_block_k = block[1];
    }
  }
  if (const Json* skip = r.raw("modules_to_not_convert")) {
    if (!skip->is_null()) {
      if (!skip->is_array()) {
        errors.add(r.path("modules_to_not_convert"), "must be an array of module names");
      } else {
        for (std::size_t i = 0; i < skip->size(); ++i) {
          if (!(*skip)[i].is_string()) {
            errors.add(r.path("modules_to_not_convert") + "/" + std::to_string(i), "must be a module name (a string)");
            continue;
          }
          m.quant_not_converted.push_back((*skip)[i].get<std::string>());
        }
      }
    }
  }
}

// config.json "layer_types" (one entry per layer) and "sliding_window": layers attending to the last window keys.
void read_layer_types(ObjectReader& r, ModelSpec& m, Errors& errors) {
  const Json* types = r.raw("layer_types");
  if (!types || types->is_null()) return;
  if (!types->is_array() || static_cast<std::int64_t>(types->size()) != m.num_hidden_layers) {
    errors.add(r.path("layer_types"), "must be an array of num_hidden_layers (" + std::to_string(m.num_hidden_layers) +
                                          ") entries, each \"full_attention\" or \"sliding_attention\"");
    return;
  }
  std::int64_t sliding = 0;
  for (std::size_t i = 0; i < types->size(); ++i) {
    const Json& t = (*types)[i];
    if (t.is_string() && t.get<std::string>() == "sliding_attention") {
      ++sliding;
    } else if (!t.is_string() || t.get<std::string>() != "full_attention") {
      errors.add(r.path("layer_types") + "/" + std::to_string(i),
                 "must be \"full_attention\" or \"sliding_attention\", got " + describe(t));
    }
  }
  if (sliding == 0) return;
  if (!r.get_int("sliding_window", m.sliding_window, 1, 1 << 24) || m.sliding_window <= 0) {
    errors.add(r.path("sliding_window"), "is required when layer_types has sliding_attention layers (keys per window)");
    return;
  }
  m.sliding_layers = sliding;
}

}  // namespace

double ModelSpec::param_count() const {
  const double embed = static_cast<double>(vocab_size) * hidden_size;
  const double lm_head = tie_word_embeddings ? 0.0 : embed;
  const double dense_layers = num_hidden_layers - moe_layers();
  double ffn = dense_layers * ffn_params(hidden_size, intermediate_size);
  if (is_moe()) {
    const double per_moe_layer = num_experts * ffn_params(hidden_size, moe_intermediate_size) +
                                 ffn_params(hidden_size, shared_expert_intermediate_size) +
                                 static_cast<double>(hidden_size) * num_experts;  // router
    ffn += moe_layers() * per_moe_layer;
  }
  const double norms = (2.0 * num_hidden_layers + 1) * hidden_size;
  return embed + lm_head + num_hidden_layers * attention_params(*this) + ffn + norms;
}

double ModelSpec::active_param_count() const {
  if (!is_moe()) return param_count();
  const double inactive = moe_layers() * (num_experts - num_experts_per_tok) *
                          ffn_params(hidden_size, moe_intermediate_size);
  return param_count() - inactive;
}

void read_hf_config(const Json& config, const std::string& path, ModelSpec& m, Errors& errors) {
  ObjectReader r(config, path, errors);
  if (!r.valid()) return;
  r.allow_unknown();
  if (const Json* a = r.raw("architectures"); a && !a->is_null()) {
    if (!a->is_array() || a->empty() || !(*a)[0].is_string() || (*a)[0].get<std::string>().size() > 200)
      errors.add(r.path("architectures"),
                 "must be an array of class names, e.g. [\"LlamaForCausalLM\"], got " + describe(*a));
    else
      m.architecture = (*a)[0].get<std::string>();
  }
  r.get_int("hidden_size", m.hidden_size, 1, kMaxDim, true);
  r.get_int("num_hidden_layers", m.num_hidden_layers, 1, 4096, true);
  r.get_int("num_attention_heads", m.num_attention_heads, 1, 16384, true);
  r.get_int("vocab_size", m.vocab_size, 1, 1 << 24, true);
  r.get_int("intermediate_size", m.intermediate_size, 1, kMaxDim);
  m.num_key_value_heads = m.num_attention_heads;
  r.get_int("num_key_value_heads", m.num_key_value_heads, 1, 16384);
  if (m.num_attention_heads > 0 && m.hidden_size > 0) m.head_dim = m.hidden_size / m.num_attention_heads;
  r.get_int("head_dim", m.head_dim, 1, 4096);
  r.get_int("max_position_embeddings", m.max_position_embeddings, 1, 1 << 24, true);
  r.get_bool("tie_word_embeddings", m.tie_word_embeddings);
  r.get_enum("torch_dtype", m.torch_dtype, {"bfloat16", "float16", "float32"});
  // Experts go by three names across families (Mixtral, Qwen-MoE, DeepSeek).
  for (const char* k : {"num_local_experts", "num_experts", "n_routed_experts"}) r.get_int(k, m.num_experts, 0, 65536);
  r.get_int("num_experts_per_tok", m.num_experts_per_tok, 0, 1024);
  r.get_int("moe_intermediate_size", m.moe_intermediate_size, 0, kMaxDim);
  r.get_int("shared_expert_intermediate_size", m.shared_expert_intermediate_size, 0, kMaxDim);
  std::int64_t n_shared = 0;
  if (r.get_int("n_shared_experts", n_shared, 0, 1024) && m.moe_intermediate_size > 0)
    m.shared_expert_intermediate_size = n_shared * m.moe_intermediate_size;
  r.get_int("first_k_dense_replace", m.first_k_dense_replace, 0, 4096);
  r.get_int("kv_lora_rank", m.kv_lora_rank, 0, kMaxDim);
  r.get_int("q_lora_rank", m.q_lora_rank, 0, kMaxDim);
  r.get_int("qk_rope_head_dim", m.qk_rope_head_dim, 0, 4096);
  r.get_int("qk_nope_head_dim", m.qk_nope_head_dim, 0, 4096);
  r.get_int("v_head_dim", m.v_head_dim, 0, 4096);
  if (const Json* q = r.raw("quantization_config"); q && !q->is_null())
    read_quantization(*q, r.path("quantization_config"), m, errors);
  read_layer_types(r, m, errors);
  bool qk_norm = false;
  std::string qk_norm_type = "per_head";
  r.get_bool("use_qk_norm", qk_norm);
  r.get_enum("qk_norm_type", qk_norm_type, {"per_head", "per_layer"});
  m.qk_norm_across_heads = qk_norm && qk_norm_type == "per_layer";
  m.qk_norm_per_head = (qk_norm && qk_norm_type == "per_head") || m.architecture == "Qwen3ForCausalLM" ||
                       m.architecture == "Qwen3MoeForCausalLM";
  // Mixtral-style configs have no moe_intermediate_size: experts are intermediate_size wide.
  if (m.is_moe() && m.moe_intermediate_size == 0) m.moe_intermediate_size = m.intermediate_size;
  if (m.is_moe() && m.num_experts_per_tok == 0)
    errors.add(r.path("num_experts_per_tok"), "is required for a mixture-of-experts model (top-k, at least 1)");
  if (m.is_moe() && m.num_experts_per_tok > m.num_experts)
    errors.add(r.path("num_experts_per_tok"), "must not exceed the number of experts (" + std::to_string(m.num_experts) + ")");
  if (!m.is_moe() && m.intermediate_size == 0 && r.valid() && errors.ok())
    errors.add(r.path("intermediate_size"), "is required for a dense model (an integer between 1 and 1048576)");
  if (m.num_key_value_heads > 0 && m.num_attention_heads % m.num_key_value_heads != 0)
    errors.add(r.path("num_key_value_heads"), "must divide num_attention_heads (" +
                                                  std::to_string(m.num_attention_heads) + "), got " +
                                                  std::to_string(m.num_key_value_heads));
  if (m.quant_method == "mxfp4" && !m.is_moe())
    errors.add(r.path("quantization_config") + "/quant_method",
               "mxfp4 quantises routed experts only; this model has none (num_local_experts / num_experts)");
  if (m.first_k_dense_replace > m.num_hidden_layers)
    errors.add(r.path("first_k_dense_replace"), "must not exceed num_hidden_layers");
  m.ignored_config_keys = r.unread_keys();
}

void read_model(const Json& j, const std::string& path, const ResourceCatalog& catalog, ModelSpec& m,
                Errors& errors) {
  if (j.is_string()) {
    const std::string name = j.get<std::string>();
    Json doc;
    if (!catalog.load_json("models", name, doc)) {
      errors.add(path, "unknown model \"" + (name.size() > 64 ? name.substr(0, 64) : name) +
                           "\"; bundled models: " + catalog.list_joined("models") +
                           " (or give an object with \"name\" and an HF \"config\")");
      return;
    }
    // Bundled files are {name, hf_id, source, config}; errors in them are ours, reported at the scenario path.
    ObjectReader r(doc, path, errors);
    r.ignore({"source", "notes"});
    r.get_string("name", m.name, true);
    r.get_string("hf_id", m.hf_id);
    r.get_int("response_preamble_tokens", m.response_preamble_tokens, 0, kMaxResponsePreambleTokens);
    if (const Json* c = r.raw("config")) read_hf_config(*c, path + "/config", m, errors);
    return;
  }
  ObjectReader r(j, path, errors);
  if (!r.valid()) return;
  r.get_string("name", m.name, true, 128);
  r.get_string("hf_id", m.hf_id, false, 256);
  r.get_int("response_preamble_tokens", m.response_preamble_tokens, 0, kMaxResponsePreambleTokens);
  const Json* c = r.raw("config");
  if (!c) {
    errors.add(r.path("config"), "is required (the model's Hugging Face config.json object)");
    return;
  }
  read_hf_config(*c, r.path("config"), m, errors);
}

}  // namespace servesim
