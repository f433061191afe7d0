#include "core/fidelity/memory_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace servesim {

namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1u << 30));
  return buf;
}

}  // namespace

double weights_bytes_per_gpu(const ModelSpec& m, const Parallelism& p, double bpp) {
  const double embed = static_cast<double>(m.vocab_size) * m.hidden_size;
  const double lm_head = m.tie_word_embeddings ? 0.0 : embed;
  const double total_layers = m.param_count() - embed - lm_head;  // attention, FFN/experts, norms
  double expert_params = 0;
  if (m.is_moe())
    expert_params = static_cast<double>(m.moe_layers()) * m.num_experts * 3.0 * m.hidden_size * m.moe_intermediate_size;
  const double other = total_layers - expert_params;
  const double stage_share = std::ceil(static_cast<double>(m.num_hidden_layers) / p.pp) / m.num_hidden_layers;
  // Attention and dense FFN split over TP; routed experts over EP x TP of the FFN domain.
  double per_gpu = stage_share * (other / p.tp_attn + expert_params / (static_cast<double>(p.ep_ffn) * p.tp_ffn));
  // Vocabulary-parallel embedding on the first stage, LM head on the last (both on one stage when pp = 1).
  per_gpu += (p.pp == 1 ? embed + lm_head : std::max(embed, lm_head)) / p.tp_attn;
  return per_gpu * bpp;
}

static double kv_element_bytes(const EngineOptions& e) {
  // FP8 weights keep a 16-bit cache unless kv_cache_dtype says otherwise.
  return e.kv_cache_dtype == "auto" ? (e.dtype == "fp8" ? 2.0 : dtype_bytes(e.dtype)) : dtype_bytes(e.kv_cache_dtype);
}

double kv_bytes_per_token_model(const ModelSpec& m, const EngineOptions& e) {
  const double layers = static_cast<double>(m.num_hidden_layers);
  if (m.is_mla()) return layers * static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) * kv_element_bytes(e);
  return 2.0 * layers * static_cast<double>(m.num_key_value_heads) * m.head_dim * kv_element_bytes(e);
}

KvBudget compute_kv_budget(const ModelSpec& m, const GpuSpec& g, const Parallelism& p, const EngineOptions& e,
                           MemoryConstants k) {
  KvBudget b;
  b.block_size = e.block_size;
  b.device_bytes = g.memory_bytes;
  b.usable_bytes = e.gpu_memory_utilization * g.memory_bytes;
  b.weights_bytes = weights_bytes_per_gpu(m, p, dtype_bytes(e.dtype));

  // vLLM's profiling forward at max_num_batched_tokens: the gated-MLP intermediate (gate+up output and the
  // activation) and a few hidden-size buffers live at once, plus fp32 logits and probabilities for
  // max_num_seqs sampled rows.
  const double T = static_cast<double>(e.max_num_batched_tokens);
  const double inter = static_cast<double>(m.is_moe() ? std::max(m.moe_intermediate_size * m.num_experts_per_tok,
                                                                  m.intermediate_size)
                                                      : m.intermediate_size) / p.tp_ffn;
  b.activation_bytes = T * (3.0 * inter + 4.0 * m.hidden_size) * 2.0 +
                       2.0 * e.max_num_seqs * (static_cast<double>(m.vocab_size) / p.tp_attn) * 4.0;
  b.overhead_bytes = k.non_torch_bytes + (p.tp_attn * p.dp_attn > 1 ? k.nccl_bytes_per_tp_group : 0.0);

  const double kv_elem = kv_element_bytes(e);
  const double layers = std::ceil(static_cast<double>(m.num_hidden_layers) / p.pp);
  if (m.is_mla()) {
    b.kv_bytes_per_token = layers * static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) * kv_elem;
  } else {
    const double kv_heads_local = std::max(1.0, static_cast<double>(m.num_key_value_heads) / p.tp_attn);
    b.kv_bytes_per_token = 2.0 * layers * kv_heads_local * m.head_dim * kv_elem;
  }
  b.kv_bytes = b.usable_bytes - b.weights_bytes - b.activation_bytes - b.overhead_bytes;
  const double per_block = b.kv_bytes_per_token * e.block_size;
  b.num_gpu_blocks = b.kv_bytes > 0 ? static_cast<std::int64_t>(std::floor(b.kv_bytes / per_block)) : 0;
  if (b.weights_bytes > b.usable_bytes) {
    b.error = "model weights need " + gib(b.weights_bytes) + " per GPU but gpu_memory_utilization x memory is " +
              gib(b.usable_bytes) + " on " + g.name + "; raise tensor/pipeline parallelism or use fp8";
  } else if (b.num_gpu_blocks < 1) {
    b.error = "no memory left for the KV cache: " + gib(b.usable_bytes) + " usable - weights " + gib(b.weights_bytes) +
              " - activations " + gib(b.activation_bytes) + " - overhead " + gib(b.overhead_bytes) +
              "; lower max_num_batched_tokens or max_num_seqs, or add GPUs";
  }
  return b;
}

}  // namespace servesim
