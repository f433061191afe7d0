#pragma once
/// Per-GPU memory of one replica and the KV-cache block budget left for it, term by term, as vLLM
/// logs it at start-up.
#include <cstdint>
#include <string>

#include "core/spec/deployment_spec.h"
#include "core/spec/model_spec.h"

namespace servesim {

/// The memory budget of one GPU of a replica (the most loaded pipeline stage).
struct KvBudget {
  double device_bytes = 0;      ///< memory_bytes of the GPU
  double usable_bytes = 0;      ///< gpu_memory_utilization x device memory
  double weights_bytes = 0;     ///< parameters resident on this GPU
  double activation_bytes = 0;  ///< forward-pass peak at max_num_batched_tokens plus sampler logits
  double overhead_bytes = 0;    ///< CUDA context, NCCL and cuBLAS workspaces (non-torch memory)
  double kv_bytes = 0;          ///< what is left for the KV cache (may be <= 0: does not fit)
  double kv_bytes_per_token = 0;  ///< K and V of one token for this GPU's layers and heads
  std::int64_t block_size = 16;
  std::int64_t num_gpu_blocks = 0;  ///< KV blocks per replica (every GPU of a stage holds its share)
  std::int64_t max_tokens() const { return num_gpu_blocks * block_size; }
  /// Empty when the deployment fits; otherwise a message naming what does not fit.
  std::string error;
};

/// Named estimates for the terms that are not pure arithmetic.
struct MemoryConstants {
  double non_torch_bytes = 0.6 * (1u << 30);          ///< CUDA context and allocator slack, one GPU
  double nccl_bytes_per_tp_group = 0.4 * (1u << 30);  ///< NCCL / custom all-reduce buffers when TP > 1
};

/// Computes the budget; `error` is set when weights or activations leave no room for one block.
KvBudget compute_kv_budget(const ModelSpec& model, const GpuSpec& gpu, const Parallelism& par,
                           const EngineOptions& engine, MemoryConstants k = {});

/// KV bytes of one token over the whole model (all layers and KV heads): what a P -> D transfer moves.
double kv_bytes_per_token_model(const ModelSpec& model, const EngineOptions& engine);

/// Parameter bytes held by one GPU of the largest pipeline stage.
double weights_bytes_per_gpu(const ModelSpec& model, const Parallelism& par, double bytes_per_param);

}  // namespace servesim
