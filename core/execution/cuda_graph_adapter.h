#pragma once
/// CUDA graphs: a decode-only batch of a captured size is replayed as one graph (no per-kernel launches); with padding
/// (vLLM, SGLang; TRT-LLM's enable_padding) one between sizes is padded up to the next. Larger or mixed batches, and
/// without padding uncaptured sizes, run eagerly (vLLM's mixed batches as piecewise graphs: table_cost_model.h).
#include <cstdint>
#include <vector>

#include "core/execution/runtime_adapter.h"

namespace servesim {

class CudaGraphAdapter : public RuntimeAdapter {
 public:
  /// `sizes` in any order (sorted and deduplicated here); `padding`: pad a batch up to the next size. With
  /// `attention_dp` > 1 ranks the sizes are per rank and every rank replays the graph of the fullest rank's share
  /// (TRT-LLM's and SGLang's attention DP), so the batch is padded to attention_dp x that size.
  CudaGraphAdapter(std::vector<std::int64_t> sizes, bool padding, int attention_dp = 1);
  const char* name() const override { return "cuda_graph"; }
  void shape_batch(Batch& batch) override;
  /// The captured size that replays a batch of n: the smallest >= n with padding, n itself if captured without; 0 when
  /// none does.
  std::int64_t capture_size_for(std::int64_t n) const;
  /// Padded tokens added over the run.
  std::int64_t padded_tokens() const { return padded_; }
  std::int64_t graph_batches() const { return graph_batches_; }

 private:
  std::vector<std::int64_t> sizes_;
  bool padding_;
  int dp_;
  std::int64_t padded_ = 0;
  std::int64_t graph_batches_ = 0;
};

}  // namespace servesim
