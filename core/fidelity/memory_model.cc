#include "core/fidelity/memory_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/spec/cuda_graph_plan.h"
#include "core/spec/weight_format.h"

namespace servesim {

namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1u << 30));
  return buf;
}

std::string fraction_text(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", f);
  return buf;
}

}  // namespace

double memory_fraction(const EngineOptions& e, const GpuSpec& g, const Parallelism& p) {
  if (e.gpu_memory_utilization) return *e.gpu_memory_utilization;
  if (e.backend == "sglang")
    return sglang_default_mem_fraction_static(e, g.memory_bytes, p.tp_attn * p.dp_attn, p.pp, p.dp_attn);
  return 0.9;
}

double weights_bytes_per_gpu(const ModelSpec& m, const Parallelism& p, double bpp, bool attention_only) {
  const double embed = static_cast<double>(m.vocab_size) * m.hidden_size;
  const double lm_head = m.tie_word_embeddings ? 0.0 : embed;
  const double total_layers = m.param_count() - embed - lm_head;  // attention, FFN/experts, norms
  double expert_params = 0;
  if (m.is_moe())
    expert_params = static_cast<double>(m.moe_layers()) * m.num_experts * 3.0 * m.hidden_size * m.moe_intermediate_size;
  const double other = total_layers - expert_params;
  const double stage_share = std::ceil(static_cast<double>(m.num_hidden_layers) / p.pp) / m.num_hidden_layers;
  double per_gpu;
  if (attention_only) {
    // An A replica (attention/FFN disaggregation): no dense FFN, router, shared or routed experts.
    const double H = static_cast<double>(m.hidden_size);
    const double dense = static_cast<double>(m.num_hidden_layers - m.moe_layers()) * 3.0 * H * m.intermediate_size;
    const double moe_rest = m.is_moe() ? static_cast<double>(m.moe_layers()) *
                                             (static_cast<double>(m.num_experts) * H +
                                              3.0 * H * static_cast<double>(m.shared_expert_intermediate_size))
                                       : 0.0;
    per_gpu = stage_share * std::max(0.0, other - dense - moe_rest) / p.tp_attn;
  } else {
    // Attention and dense FFN split over TP; routed experts over EP x TP of the FFN domain.
    per_gpu = stage_share * (other / p.tp_attn + expert_params / (static_cast<double>(p.ep_ffn) * p.tp_ffn));
  }
  // Vocabulary-parallel embedding on the first stage, LM head on the last (both on one stage when pp = 1).
  per_gpu += (p.pp == 1 ? embed + lm_head : std::max(embed, lm_head)) / p.tp_attn;
  return per_gpu * bpp;
}

namespace {

// A pre-quantised checkpoint (weight_format.h): each module at its own format. Router and norms stay 16-bit, as do
// the embedding and the LM head.
double checkpoint_weights_bytes_per_gpu(const ModelSpec& m, const Parallelism& p, const WeightFormats& f,
                                        bool attention_only) {
  const double H = static_cast<double>(m.hidden_size);
  const double embed = static_cast<double>(m.vocab_size) * H;
  const double lm_head = m.tie_word_embeddings ? 0.0 : embed;
  const double moe_layers = static_cast<double>(m.moe_layers());
  const double experts = m.is_moe() ? moe_layers * m.num_experts * 3.0 * H * m.moe_intermediate_size : 0.0;
  const double dense = static_cast<double>(m.num_hidden_layers - m.moe_layers()) * 3.0 * H * m.intermediate_size +
                       moe_layers * 3.0 * H * static_cast<double>(m.shared_expert_intermediate_size);
  const double router = m.is_moe() ? moe_layers * static_cast<double>(m.num_experts) * H : 0.0;
  const double norms = (2.0 * m.num_hidden_layers + 1) * H;
  const double attention = m.param_count() - embed - lm_head - experts - dense - router - norms;
  const double stage_share = std::ceil(static_cast<double>(m.num_hidden_layers) / p.pp) / m.num_hidden_layers;
  double per_gpu = attention * weight_format_bytes(f.attention, m) / p.tp_attn + norms * 2.0 / p.tp_attn;
  if (!attention_only)
    per_gpu += (dense * weight_format_bytes(f.dense, m) + router * 2.0) / p.tp_attn +
               experts * weight_format_bytes(f.experts, m) / (static_cast<double>(p.ep_ffn) * p.tp_ffn);
  per_gpu *= stage_share;
  per_gpu += (p.pp == 1 ? embed + lm_head : std::max(embed, lm_head)) / p.tp_attn * 2.0;
  return per_gpu;
}

// Sliding-window layers hold (and a P -> D transfer sends) only the window's tokens: vLLM's hybrid KV-cache manager
// on (EngineOptions::hybrid_kv_cache_manager, resolved per role). MLA models have no such layers here.
bool sliding_keeps_window(const ModelSpec& m, const EngineOptions& e) {
  return m.has_sliding_window() && !m.is_mla() && e.hybrid_kv_cache_manager.value_or(true);
}

}  // namespace

double weights_bytes_per_gpu(const ModelSpec& m, const Parallelism& p, const EngineOptions& e, bool attention_only) {
  const WeightFormats f = weight_formats(m, e.dtype);
  if (f.from_checkpoint) return checkpoint_weights_bytes_per_gpu(m, p, f, attention_only);
  const double bpp = dtype_bytes(e.dtype);
  if (bpp >= 2.0) return weights_bytes_per_gpu(m, p, bpp, attention_only);
  // Quantised linear layers; the vocabulary-parallel embedding and LM head stay 16-bit.
  const double embed = static_cast<double>(m.vocab_size) * m.hidden_size;
  const double lm_head = m.tie_word_embeddings ? 0.0 : embed;
  const double vocab = (p.pp == 1 ? embed + lm_head : std::max(embed, lm_head)) / p.tp_attn;
  return weights_bytes_per_gpu(m, p, bpp, attention_only) + vocab * (2.0 - bpp);
}

double ffn_weights_bytes_per_gpu(const ModelSpec& m, const Parallelism& p, const EngineOptions& e) {
  const double H = static_cast<double>(m.hidden_size);
  const double dense = static_cast<double>(m.num_hidden_layers - m.moe_layers()) * 3.0 * H * m.intermediate_size;
  double experts = 0, moe_rest = 0;
  if (m.is_moe()) {
    experts = static_cast<double>(m.moe_layers()) * m.num_experts * 3.0 * H * m.moe_intermediate_size;
    moe_rest = static_cast<double>(m.moe_layers()) *
               (static_cast<double>(m.num_experts) * H + 3.0 * H * static_cast<double>(m.shared_expert_intermediate_size));
  }
  const double stage_share = std::ceil(static_cast<double>(m.num_hidden_layers) / p.pp) / m.num_hidden_layers;
  const WeightFormats f = weight_formats(m, e.dtype);
  if (f.from_checkpoint) {
    const double router = m.is_moe() ? static_cast<double>(m.moe_layers()) * static_cast<double>(m.num_experts) * H : 0;
    return stage_share * (experts * weight_format_bytes(f.experts, m) / (static_cast<double>(p.ep_ffn) * p.tp_ffn) +
                          ((dense + moe_rest - router) * weight_format_bytes(f.dense, m) + router * 2.0) / p.tp_ffn);
  }
  return stage_share * (experts / (static_cast<double>(p.ep_ffn) * p.tp_ffn) + (dense + moe_rest) / p.tp_ffn) *
         dtype_bytes(e.dtype);
}

double forward_peak_bytes(const ModelSpec& m, const Parallelism& p, double T, bool attention_only) {
  const double a = 2.0;  // 16-bit activations
  const double H = static_cast<double>(m.hidden_size);
  const double heads = static_cast<double>(m.num_attention_heads) / p.tp_attn;
  const double kv_heads = std::max(1.0, static_cast<double>(m.num_key_value_heads) / p.tp_attn);
  double attn;
  if (m.is_mla()) {
    const double qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
    attn = T * (heads * (2 * qk + static_cast<double>(m.v_head_dim)) +
                static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim)) * a;
  } else {
    attn = T * ((heads + 2 * kv_heads) * static_cast<double>(m.head_dim) + heads * static_cast<double>(m.head_dim)) * a;
  }
  if (attention_only) return 2.0 * T * H * a + attn;
  double ffn = 0;
  if (m.num_hidden_layers > m.moe_layers()) {
    const double inter = static_cast<double>(m.intermediate_size) / p.tp_ffn;
    ffn = T * 3.0 * inter * a;  // gate/up output (2 I) and the activation (I)
  }
  if (m.is_moe()) {
    const double inter = static_cast<double>(m.moe_intermediate_size) / p.tp_ffn;
    const double k = static_cast<double>(m.num_experts_per_tok);
    // fused_moe intermediate caches: top-k rows x (2 I), x I and x H; fp32 router logits.
    double moe = T * k * (3.0 * inter + H) * a + T * static_cast<double>(m.num_experts) * 4.0;
    if (m.shared_expert_intermediate_size > 0)
      moe += T * 3.0 * static_cast<double>(m.shared_expert_intermediate_size) / p.tp_ffn * a;
    ffn = std::max(ffn, moe);
  }
  return 2.0 * T * H * a + std::max(attn, ffn);
}

double kv_element_bytes(const EngineOptions& e) {
  // FP8 weights keep a 16-bit cache unless kv_cache_dtype says otherwise.
  return e.kv_cache_dtype == "auto" ? (e.dtype == "fp8" ? 2.0 : dtype_bytes(e.dtype)) : dtype_bytes(e.kv_cache_dtype);
}

double kv_bytes_per_token_model(const ModelSpec& m, const EngineOptions& e) {
  const double layers = static_cast<double>(m.num_hidden_layers);
  if (m.is_mla()) return layers * static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) * kv_element_bytes(e);
  return 2.0 * layers * static_cast<double>(m.num_key_value_heads) * m.head_dim * kv_element_bytes(e);
}

double kv_transfer_bytes(const ModelSpec& m, const EngineOptions& e, std::int64_t prompt_tokens) {
  const double per_token = kv_bytes_per_token_model(m, e);
  if (!sliding_keeps_window(m, e)) return static_cast<double>(prompt_tokens) * per_token;
  const double per_layer = per_token / static_cast<double>(m.num_hidden_layers);
  const double sliding = static_cast<double>(m.sliding_layers);
  const double full = static_cast<double>(m.num_hidden_layers) - sliding;
  const double kept = static_cast<double>(std::min<std::int64_t>(prompt_tokens, m.sliding_window));
  return per_layer * (full * static_cast<double>(prompt_tokens) + sliding * kept);
}

double comm_workspace_bytes(const GpuSpec& g, int group, int pp, const MemoryConstants& k) {
  // One NCCL communicator per process group this GPU talks in (the TP/EP group and, with pipeline stages, the PP
  // group) plus vLLM's custom all-reduce buffers on NVLink groups.
  double bytes = 0;
  if (group > 1) {
    bytes += k.nccl_bytes_per_group;
    if (group <= 8 && g.nvlink_gb_s > 0) bytes += k.custom_ar_bytes;
  }
  if (pp > 1) bytes += k.nccl_bytes_per_group;
  return bytes;
}

double usable_bytes_per_gpu(const EngineOptions& e, const GpuSpec& g, double fraction, double comm_bytes,
                            const MemoryConstants& k) {
  // vLLM's utilisation is a share of the whole device; SGLang's mem_fraction_static a share of what is free after
  // the CUDA context and the communicators. TRT-LLM's free_gpu_memory_fraction is a share of what is free after
  // loading and profiling (compute_kv_budget), so it does not bound the weights: they may take everything the
  // context, the communicators and the library workspaces leave.
  if (e.backend == "sglang") return fraction * (g.memory_bytes - k.cuda_context_bytes - comm_bytes);
  if (e.backend == "trtllm") return g.memory_bytes - k.cuda_context_bytes - comm_bytes - k.non_torch_bytes;
  return fraction * g.memory_bytes;
}

double ffn_weight_capacity_bytes(const GpuSpec& g, const Parallelism& p, const EngineOptions& e, MemoryConstants k) {
  // An F replica's GPUs talk in the FFN group (tp_ffn x ep_ffn) and, with stages, the PP group.
  return usable_bytes_per_gpu(e, g, memory_fraction(e, g, p), comm_workspace_bytes(g, p.tp_ffn * p.ep_ffn, p.pp, k), k);
}

KvBudget compute_kv_budget(const ModelSpec& m, const GpuSpec& g, const Parallelism& p, const EngineOptions& e,
                           MemoryConstants k, bool attention_only) {
  KvBudget b;
  b.block_size = e.block_size;
  b.device_bytes = g.memory_bytes;
  b.memory_fraction = memory_fraction(e, g, p);
  b.weights_bytes = weights_bytes_per_gpu(m, p, e, attention_only);
  const bool sglang = e.backend == "sglang", trtllm = e.backend == "trtllm";
  if (sglang && !e.gpu_memory_utilization && b.memory_fraction <= 0) {
    b.error =
        "SGLang's default mem_fraction_static comes to " + fraction_text(b.memory_fraction) + " on " + g.name +
        ": its reserve for max_num_batched_tokens (--chunked-prefill-size) and the largest CUDA-graph size "
        "(--cuda-graph-max-bs: max_cudagraph_capture_size, cuda_graph_sizes) exceeds the memory; lower them or set "
        "gpu_memory_utilization";
    return b;
  }

  // 1. Activation peak of the profile run: one forward pass of max_num_batched_tokens tokens, then the sampler.
  //    vLLM samples min(max_num_seqs, max_num_batched_tokens) rows of full-vocabulary logits (gathered whole: a
  //    TP 2 run logs the same peak as TP 1) with top-k/top-p, whose sort dominates. TRT-LLM's profiling run is context
  //    requests of min(max_num_tokens, max_seq_len) tokens filling max_num_tokens, each sampling its last token only.
  //    The forward pass's activations are freed before the sampler runs: the peak is the larger of the two (vLLM's
  //    logged peaks follow the vocabulary, not the model: 5.56 GiB for Qwen3-0.6B, 5.64 for Qwen3-32B).
  const double T = static_cast<double>(e.max_num_batched_tokens);
  b.forward_peak_bytes = forward_peak_bytes(m, p, T, attention_only);
  const double max_seq = static_cast<double>(e.max_model_len > 0 ? e.max_model_len : m.max_position_embeddings);
  const double rows = trtllm ? (max_seq > 0 ? std::ceil(T / std::min(T, max_seq)) : 1.0)
                             : std::min(static_cast<double>(e.max_num_seqs), T);
  b.sampler_bytes = rows * static_cast<double>(m.vocab_size) * k.sampler_bytes_per_logit;
  b.activation_bytes = std::max(b.forward_peak_bytes, b.sampler_bytes);

  // 2. CUDA graphs: captured graphs share one memory pool sized by the largest capture's activations; every
  //    size is captured twice in vLLM V1 (a full graph for decode-only batches, a piecewise one for the rest).
  //    TRT-LLM captures each size once. The sizes are each engine's (cuda_graph_plan.h). Captured after the KV
  //    cache is sized, from what the engine's fraction leaves: reported, not subtracted (KvBudget).
  if (!e.enforce_eager) {
    const CudaGraphPlan plan = cuda_graph_plan(e, g.memory_bytes, p.tp_attn * p.dp_attn);
    const std::int64_t largest = plan.sizes.empty() ? 0 : plan.sizes.back();
    const std::size_t count = plan.sizes.size();
    b.cuda_graph_bytes = forward_peak_bytes(m, p, static_cast<double>(largest), attention_only) +
                         (trtllm ? 1.0 : 2.0) * static_cast<double>(count) * k.graph_bytes_per_capture;
  }

  // 3. Communication workspaces (comm_workspace_bytes).
  b.comm_bytes = comm_workspace_bytes(g, p.tp_attn * p.dp_attn, p.pp, k);

  // 4. Non-torch memory allocated after start-up (library workspaces).
  b.non_torch_bytes = k.non_torch_bytes;
  b.overhead_bytes = b.comm_bytes + b.non_torch_bytes;

  const double kv_elem = kv_element_bytes(e);
  const double layers = std::ceil(static_cast<double>(m.num_hidden_layers) / p.pp);
  if (m.is_mla()) {
    b.kv_bytes_per_token = layers * static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) * kv_elem;
  } else {
    const double kv_heads_local = std::max(1.0, static_cast<double>(m.num_key_value_heads) / p.tp_attn);
    b.kv_bytes_per_token = 2.0 * layers * kv_heads_local * m.head_dim * kv_elem;
  }
  b.usable_bytes = usable_bytes_per_gpu(e, g, b.memory_fraction, b.comm_bytes, k);
  if (sglang) {
    // SGLang takes its "total" after the CUDA context and the communicators exist, reserves (1 - fraction) of it
    // for everything but weights and KV, and gives the rest after loading to the KV pool. The activation and graph
    // terms above are what that reserve has to hold; they are not subtracted again.
    b.accounting = "sglang";
    b.context_bytes = k.cuda_context_bytes;
    b.reserved_bytes = g.memory_bytes - b.context_bytes - b.comm_bytes - b.usable_bytes;
    b.kv_bytes = b.usable_bytes - b.weights_bytes;
  } else if (trtllm) {
    // TRT-LLM (KvCacheCreator) loads the weights, runs the profiling forward pass and takes the memory still free
    // at its peak (torch and non-torch: the context, communicators and workspaces are already in use);
    // free_gpu_memory_fraction of that becomes the KV cache and the rest stays free for what is allocated later,
    // the CUDA graphs among them.
    b.accounting = "trtllm";
    b.context_bytes = k.cuda_context_bytes;
    b.free_bytes = b.usable_bytes - b.weights_bytes - b.activation_bytes;
    b.kv_bytes = b.memory_fraction * b.free_bytes;
    b.reserved_bytes = b.free_bytes - b.kv_bytes;
  } else {
    b.kv_bytes = b.usable_bytes - b.weights_bytes - b.activation_bytes - b.overhead_bytes;
  }
  double per_block = b.kv_bytes_per_token * e.block_size;
  const bool keeps_window = sliding_keeps_window(m, e);
  b.sliding_kept_full = m.has_sliding_window() && !m.is_mla() && !keeps_window;
  if (keeps_window) {
    // vLLM's hybrid KV-cache manager: full and sliding layers form groups of equally many layers (the smaller of
    // the two counts); a block holds block_size tokens of one group's layers. Sliding groups keep only the
    // window's blocks of each request (kv_block_manager.h), so the same memory holds more requests.
    const std::int64_t full = m.full_attention_layers(), sliding = m.sliding_layers;
    const std::int64_t group = full > 0 ? std::min(full, sliding) : sliding;
    b.kv_groups_full = (full + group - 1) / group;
    b.kv_groups_sliding = (sliding + group - 1) / group;
    b.sliding_window = m.sliding_window;
    // This stage's share of a group's layers (pp > 1 splits every group over the stages alike).
    per_block = b.kv_bytes_per_token / layers * (static_cast<double>(group) * layers / m.num_hidden_layers) *
                e.block_size;
  }
  // Each data-parallel attention group keeps the KV cache of its own requests in its own GPUs' memory, so the
  // replica holds dp_attn groups' worth of blocks (one shared pool here; requests are not pinned to a group).
  b.num_gpu_blocks = b.kv_bytes > 0 ? static_cast<std::int64_t>(std::floor(b.kv_bytes / per_block)) * p.dp_attn : 0;
  if (b.weights_bytes > b.usable_bytes) {
    b.error = "model weights need " + gib(b.weights_bytes) + " per GPU but " +
              (sglang ? "mem_fraction_static (gpu_memory_utilization " + fraction_text(b.memory_fraction) +
                            ") x free memory is "
               : trtllm ? std::string("memory less the CUDA context, communicators and workspaces is ")
                        : std::string("gpu_memory_utilization x memory is ")) +
              gib(b.usable_bytes) + " on " + g.name + "; raise tensor/pipeline parallelism or use fp8";
  } else if (trtllm && b.num_gpu_blocks < 1) {
    b.error = "no memory left for the KV cache: free_gpu_memory_fraction (gpu_memory_utilization " +
              fraction_text(b.memory_fraction) + ") x (" + gib(b.usable_bytes) + " usable - weights " +
              gib(b.weights_bytes) + " - activations " + gib(b.activation_bytes) +
              "); lower max_num_batched_tokens, raise gpu_memory_utilization or add GPUs";
  } else if (sglang && b.num_gpu_blocks < 1) {
    b.error = "no memory left for the KV cache: mem_fraction_static (gpu_memory_utilization " +
              fraction_text(b.memory_fraction) + ") x free memory " + gib(b.usable_bytes) + " - weights " +
              gib(b.weights_bytes) + "; raise gpu_memory_utilization or add GPUs";
  } else if (b.num_gpu_blocks < 1) {
    b.error = "no memory left for the KV cache: " + gib(b.usable_bytes) + " usable - weights " + gib(b.weights_bytes) +
              " - activations " + gib(b.activation_bytes) + " - overhead " + gib(b.overhead_bytes) +
              "; lower max_num_batched_tokens or max_num_seqs, or add GPUs";
  }
  return b;
}

}  // namespace servesim
