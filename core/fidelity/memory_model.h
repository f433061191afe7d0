#pragma once
/// Per-GPU memory of one replica and the KV-cache block budget left for it, term by term, as vLLM
/// logs it at start-up.
#include <cstdint>
#include <string>

#include "core/spec/deployment_spec.h"
#include "core/spec/model_spec.h"

namespace servesim {

/// The memory budget of one GPU of a replica (the most loaded pipeline stage), term by term as its engine accounts
/// it. vLLM roles (vLLM's profile run, which measures the torch peak and the non-torch growth after its start-up
/// snapshot, so the CUDA context itself, created before the snapshot, is not subtracted):
///   kv = gpu_memory_utilization x device - weights - activation peak - (comm + non-torch)
/// the CUDA graphs being captured after the KV cache is sized, from the memory gpu_memory_utilization leaves (vLLM
/// 0.10.2-0.20, the versions the profiles' kernels and the replayed runs come from; from 0.21 vLLM also subtracts an
/// estimate of them, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS). Checked against start-up logs: docs/validation.md,
/// "Memory model against engine start-up logs".
/// SGLang roles (ModelRunner.profile_max_num_token: the free memory after loading minus (1 - mem_fraction_static)
/// x the free memory before loading, which was taken after the CUDA context and the communicators):
///   kv = mem_fraction_static x (device - CUDA context - comm) - weights
/// activations, CUDA graphs and workspaces living in the (1 - mem_fraction_static) share SGLang reserves.
/// TRT-LLM roles (KvCacheCreator: free_gpu_memory_fraction x the memory free at the peak of its profiling run, which
/// follows loading; the temporary KV cache it profiles with is added back):
///   kv = free_gpu_memory_fraction x (device - CUDA context - comm - non-torch - weights - activation peak)
/// CUDA graphs, captured afterwards, living in the (1 - fraction) share left free.
/// profiles/README.md explains each term.
struct KvBudget {
  double device_bytes = 0;      ///< memory_bytes of the GPU
  /// "vllm", "sglang" or "trtllm": which engine's arithmetic the budget follows (the role's backend).
  std::string accounting = "vllm";
  /// gpu_memory_utilization / mem_fraction_static / free_gpu_memory_fraction in use (explicit or default)
  double memory_fraction = 0;
  /// What weights may take (usable_bytes_per_gpu): vllm: fraction x device; sglang: fraction x (device - context -
  /// comm); trtllm: device - context - comm - non-torch.
  double usable_bytes = 0;
  /// sglang: (1 - fraction) x (device - context - comm), for activations and graphs; trtllm: (1 - fraction) x
  /// free_bytes, left free for CUDA graphs and later allocations.
  double reserved_bytes = 0;
  double context_bytes = 0;     ///< sglang, trtllm: the CUDA context, outside the engine's snapshot
  double free_bytes = 0;        ///< trtllm: free at the profiling peak, what free_gpu_memory_fraction is a share of
  double weights_bytes = 0;     ///< parameters resident on this GPU
  /// Torch peak of the profile run: the larger of forward_peak_bytes and sampler_bytes (the forward pass's
  /// activations are freed before the sampler runs, so the two do not add).
  double activation_bytes = 0;
  double forward_peak_bytes = 0;  ///< live tensors of the widest layer at max_num_batched_tokens
  double sampler_bytes = 0;       ///< logits, probabilities and top-k/top-p sort buffers for the sampled rows
  double overhead_bytes = 0;      ///< runtime_overhead: comm_bytes + non_torch_bytes
  /// CUDA-graph memory pool (activations of the largest capture) and graph objects: captured after the KV cache is
  /// sized, from the memory beyond the engine's fraction (vLLM, SGLang's reserve, TRT-LLM's share left free), so
  /// reported but not subtracted.
  double cuda_graph_bytes = 0;
  double comm_bytes = 0;        ///< NCCL communicator buffers and custom all-reduce buffers
  double non_torch_bytes = 0;   ///< cuBLAS/cuBLASLt workspaces and allocator slack created after start-up
  double kv_bytes = 0;          ///< what is left for the KV cache (may be <= 0: does not fit)
  double kv_bytes_per_token = 0;  ///< K and V of one token for this GPU's layers and heads
  std::int64_t block_size = 16;
  std::int64_t num_gpu_blocks = 0;  ///< KV blocks per replica (every GPU of a stage holds its share)
  /// KV-cache groups (vLLM's hybrid allocator): models mixing full and sliding-window layers split them into
  /// groups of equally many layers (group size = the smaller count), and one block of the pool holds block_size
  /// tokens of one group. A request takes blocks in every full group for all its tokens and in every sliding
  /// group only for its window (kv_block_manager.h). One full group of every layer otherwise.
  std::int64_t kv_groups_full = 1;
  std::int64_t kv_groups_sliding = 0;
  std::int64_t sliding_window = 0;  ///< keys per sliding layer (0 = none)
  /// The model has sliding-window layers but the hybrid manager is off (a KV connector under vLLM; SGLang for the
  /// classes of sglang_disables_hybrid_swa): they keep every token.
  bool sliding_kept_full = false;
  /// Tokens as vLLM logs the cache size: blocks per group x block_size.
  std::int64_t max_tokens() const { return num_gpu_blocks / (kv_groups_full + kv_groups_sliding) * block_size; }
  /// Empty when the deployment fits; otherwise a message naming what does not fit.
  std::string error;
};

/// Named estimates for the terms that are not pure arithmetic.
struct MemoryConstants {
  double non_torch_bytes = 0.15 * (1u << 30);      ///< cuBLAS/cuBLASLt workspaces (32 MiB a stream) + allocator slack
  double nccl_bytes_per_group = 0.3 * (1u << 30);  ///< one NCCL communicator's buffers (channels x 4 MiB, NVLS)
  double custom_ar_bytes = 32.0 * (1u << 20);      ///< vLLM custom all-reduce: 8 MiB buffer x 2 + IPC metadata
  double graph_bytes_per_capture = 2.0 * (1u << 20);  ///< one captured graph's executable and private buffers
  /// Bytes per logit at the peak of vLLM's profile-run sampler (min(max_num_seqs, max_num_batched_tokens) rows x the
  /// vocabulary, with top-k and top-p): its PyTorch-native top-k/top-p holds the 16-bit logits, their fp32 copy, the
  /// sorted values (fp32) with int64 indices, the softmax of the sorted values, the masks, the scattered result, the
  /// probabilities and the exponential draws at once. Measured: 4.76 GiB of peak activation logged for
  /// Llama-3.1-8B at 1024 rows of 128,256 logits (vLLM 0.11, H100); held out on four other models within 1.7%
  /// (docs/validation.md, "Memory model against engine start-up logs").
  double sampler_bytes_per_logit = 38.9;
  double cuda_context_bytes = 0.5 * (1u << 30);  ///< CUDA context with torch's kernels loaded lazily (CUDA 12)
};

/// The memory fraction of a role's engine: engine.gpu_memory_utilization when set, else 0.9 (vLLM's
/// gpu_memory_utilization, TRT-LLM's free_gpu_memory_fraction) or SGLang's default formula
/// (sglang_default_mem_fraction_static; its tp_size is tp_attn x dp_attn).
double memory_fraction(const EngineOptions& engine, const GpuSpec& gpu, const Parallelism& par);

/// Forward-pass peak of live activations for `tokens` tokens on one GPU (the widest layer): the residual
/// stream (hidden + residual) plus the larger of the attention block (q/k/v and the attention output) and the
/// FFN block (gate/up output and the activation; for MoE the fused-experts intermediate caches of top-k rows and
/// the fp32 router logits).
/// `attention_only`: an A replica of attention/FFN disaggregation (no FFN block).
double forward_peak_bytes(const ModelSpec& model, const Parallelism& par, double tokens, bool attention_only = false);

/// Computes the budget; `error` is set when weights or activations leave no room for one block.
/// `attention_only`: an A replica (attention/FFN disaggregation) holds the attention, norm and vocabulary weights
/// only. With dp_attn > 1 the replica's blocks are dp_attn times one group's.
KvBudget compute_kv_budget(const ModelSpec& model, const GpuSpec& gpu, const Parallelism& par,
                           const EngineOptions& engine, MemoryConstants k = {}, bool attention_only = false);

/// NCCL and custom all-reduce workspaces of one GPU that talks in a group of `group` ranks and, with pp > 1, a
/// pipeline group.
double comm_workspace_bytes(const GpuSpec& gpu, int group, int pp, const MemoryConstants& k);

/// KvBudget::usable_bytes, what one GPU can give the weights: `fraction` x the device for vLLM; for SGLang `fraction`
/// x (device - CUDA context - `comm_bytes`); for TRT-LLM, whose fraction applies after loading, device - CUDA context
/// - `comm_bytes` - non-torch workspaces.
double usable_bytes_per_gpu(const EngineOptions& engine, const GpuSpec& gpu, double fraction, double comm_bytes,
                            const MemoryConstants& k);

/// KvBudget::usable_bytes for one GPU of an F replica (attention/FFN disaggregation), whose communicators are the
/// FFN group's.
double ffn_weight_capacity_bytes(const GpuSpec& gpu, const Parallelism& par, const EngineOptions& engine,
                                 MemoryConstants k = {});

/// Parameter bytes on one GPU of an F replica (attention/FFN disaggregation): dense FFN, router and shared expert
/// over tp_ffn, routed experts over ep_ffn x tp_ffn, for the largest pipeline stage.
double ffn_weights_bytes_per_gpu(const ModelSpec& model, const Parallelism& par, const EngineOptions& engine);

/// KV bytes of one token over the whole model (all layers and KV heads).
double kv_bytes_per_token_model(const ModelSpec& model, const EngineOptions& engine);
/// Bytes of one KV-cache element (kv_cache_dtype; "auto" keeps 16 bits, also under FP8 weights).
double kv_element_bytes(const EngineOptions& engine);

/// KV bytes of a `prompt_tokens` prompt handed from a P to a D role: every layer's, except that with the hybrid
/// KV-cache manager on (EngineOptions::hybrid_kv_cache_manager) sliding-window layers send only the window's tokens.
double kv_transfer_bytes(const ModelSpec& model, const EngineOptions& engine, std::int64_t prompt_tokens);

/// Parameter bytes held by one GPU of the largest pipeline stage.
double weights_bytes_per_gpu(const ModelSpec& model, const Parallelism& par, double bytes_per_param,
                             bool attention_only = false);
/// Same with each module's weight format (weight_format.h): quantised linear layers and experts, the embedding and
/// the LM head in 16 bits; for pre-quantised checkpoints the router and norms too, and the block scales counted.
double weights_bytes_per_gpu(const ModelSpec& model, const Parallelism& par, const EngineOptions& engine,
                             bool attention_only = false);

}  // namespace servesim
