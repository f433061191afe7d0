#pragma once
/// A transformer's shape, read from Hugging Face config.json field names.
#include <cstdint>
#include <string>
#include <vector>

#include "core/spec/json_reader.h"

namespace servesim {

/// Architecture facts the cost and memory models need. Field names follow HF config.json.
struct ModelSpec {
  std::string name;                      ///< display name ("Llama-3.1-8B")
  std::string hf_id;                     ///< Hugging Face repo id when known
  std::string architecture;              ///< config.json "architectures"[0] ("GptOssForCausalLM"); "" when absent
  std::int64_t hidden_size = 0;          ///< d_model
  std::int64_t intermediate_size = 0;    ///< dense MLP width (gated: up and gate are each this wide)
  std::int64_t num_hidden_layers = 0;
  std::int64_t num_attention_heads = 0;
  std::int64_t num_key_value_heads = 0;  ///< GQA groups (= heads when absent)
  std::int64_t head_dim = 0;             ///< per-head width (= hidden / heads when absent)
  std::int64_t vocab_size = 0;
  std::int64_t max_position_embeddings = 0;
  bool tie_word_embeddings = false;
  std::string torch_dtype = "bfloat16";
  // Mixture of experts (0 = dense).
  std::int64_t num_experts = 0;              ///< routed experts (num_local_experts / num_experts / n_routed_experts)
  std::int64_t num_experts_per_tok = 0;      ///< top-k
  std::int64_t moe_intermediate_size = 0;    ///< routed expert width (= intermediate_size when absent)
  std::int64_t shared_expert_intermediate_size = 0;  ///< total width of always-on shared experts
  std::int64_t first_k_dense_replace = 0;    ///< leading dense layers (DeepSeek)
  // Multi-head latent attention (DeepSeek); 0 = standard attention.
  std::int64_t kv_lora_rank = 0;
  std::int64_t q_lora_rank = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  // Checkpoint quantisation (config.json "quantization_config"); weight_format.h turns it into a format per module.
  std::string quant_method;                  ///< "" = 16-bit checkpoint; "fp8"; "mxfp4"
  std::int64_t quant_block_n = 0;            ///< fp8 weight_block_size [n, k]; 0 = per-tensor scales
  std::int64_t quant_block_k = 0;
  std::vector<std::string> quant_not_converted;  ///< modules_to_not_convert (kept 16-bit)
  // Sliding-window attention (gpt-oss: layer_types alternating "sliding_attention" / "full_attention").
  std::int64_t sliding_window = 0;           ///< keys a sliding layer attends to, the new token included (0 = none)
  std::int64_t sliding_layers = 0;           ///< layers with the window (the others attend to every key)
  /// QK RMSNorm over all heads' dimensions at once (config "use_qk_norm" with "qk_norm_type": "per_layer",
  /// MiniMax-M2): with the heads split over TP ranks, the sums of squares of q and k are all-reduced together
  /// (vLLM's MiniMaxText01RMSNormTP.forward_qk). Per-head QK norms (Qwen3) are local.
  bool qk_norm_across_heads = false;
  /// QK RMSNorm per head (each head's q and k normalised over head_dim before RoPE): Qwen3 (dense and MoE), whose
  /// config.json carries no flag for it (the modelling code always applies q_norm and k_norm), and configs with
  /// "use_qk_norm" and "qk_norm_type": "per_head".
  bool qk_norm_per_head = false;
  /// Tokens a chat response opens with that carry no text (a format header, not in config.json): gpt-oss's harmony
  /// header <|channel|>analysis<|message|> is 3. A client that times the first chunk with text (workload.ttft_from
  /// "first_text", as AIPerf and genai-perf do) sees its first token after them. 0 = the first token is text.
  std::int32_t response_preamble_tokens = 0;
  /// config.json keys present but not used by the simulator (reported, not silently dropped).
  std::vector<std::string> ignored_config_keys;

  bool is_moe() const { return num_experts > 0; }
  bool is_mla() const { return kv_lora_rank > 0; }
  bool has_sliding_window() const { return sliding_window > 0 && sliding_layers > 0; }
  /// Layers attending to every key.
  std::int64_t full_attention_layers() const { return num_hidden_layers - (has_sliding_window() ? sliding_layers : 0); }
  /// Layers whose FFN is an MoE block.
  std::int64_t moe_layers() const { return is_moe() ? num_hidden_layers - first_k_dense_replace : 0; }
  /// Total parameter count (embeddings, attention, FFN or experts, norms, LM head).
  double param_count() const;
  /// Parameters touched per token (routed experts counted top-k only).
  double active_param_count() const;
};

/// Reads an HF config.json object into `m` (name/hf_id left to the caller). Unused keys go to
/// ignored_config_keys; missing or inconsistent required fields are errors at `path`.
void read_hf_config(const Json& config, const std::string& path, ModelSpec& m, Errors& errors);

/// Reads the scenario's "model": a bundled name ("Llama-3.1-8B") resolved through `bundled`, or an object
/// {"name", "config": {HF config.json}}.
class ResourceCatalog;
void read_model(const Json& j, const std::string& path, const ResourceCatalog& catalog, ModelSpec& m,
                Errors& errors);

}  // namespace servesim
