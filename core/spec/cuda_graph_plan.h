#pragma once
/// Which decode batches a role replays from CUDA graphs: each engine's own capture sizes and padding rule.
#include <cstdint>
#include <vector>

#include "core/spec/engine_options.h"

namespace servesim {

struct CudaGraphPlan {
  std::vector<std::int64_t> sizes;  ///< ascending; empty = no graphs (enforce_eager)
  bool padding = true;              ///< a batch between sizes is padded up to the next (else it runs eagerly)
};

/// The role's capture sizes: `cuda_graph_sizes` when given, else the engine's defaults, none above max_num_seqs (the
/// engine captures no batch it cannot run):
///  - vllm: 1, 2, 4, multiples of 8 to 256, of 16 above, up to min(max_cudagraph_capture_size or 512,
///    2 x max_num_seqs) (CompilationConfig); always padded.
///  - sglang: 1, 2, 4, 8, 12, multiples of 8 to 256, of 16 to 496, of 32 from 512, up to --cuda-graph-max-bs
///    (sglang_cuda_graph_max_bs for `gpu_mem_bytes` and `tp`, the replica's GPUs; 0 bytes = unknown); with padding off
///    every size from 1 (ServerArgs._generate_cuda_graph_batch_sizes).
///  - trtllm: CudaGraphConfig._generate_cuda_graph_batch_sizes for max_batch_size = max_cudagraph_capture_size or 128:
///    with padding 1, 2, 4 and multiples of 8 to 128, without (TRT-LLM's default) 1-31, 32, 64, 128; then powers of
///    two from 256 below the maximum, and the maximum itself.
CudaGraphPlan cuda_graph_plan(const EngineOptions& e, double gpu_mem_bytes, int tp);

}  // namespace servesim
