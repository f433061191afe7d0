#pragma once
/// CUDA graphs: a decode-only batch no larger than the biggest captured size is padded up to the next
/// capture size and replayed as one graph (no per-kernel launches). Larger or mixed batches run eagerly.
#include <cstdint>
#include <vector>

#include "core/execution/runtime_adapter.h"

namespace servesim {

/// vLLM's default capture sizes: 1, 2, 4, then multiples of 8 up to 256, then of 16, up to `max_size`.
std::vector<std::int64_t> default_cuda_graph_sizes(std::int64_t max_size);

class CudaGraphAdapter : public RuntimeAdapter {
 public:
  /// `sizes` ascending (deduplicated here).
  explicit CudaGraphAdapter(std::vector<std::int64_t> sizes);
  const char* name() const override { return "cuda_graph"; }
  void shape_batch(Batch& batch) override;
  /// Smallest capture size >= n, or 0 when n exceeds every size.
  std::int64_t capture_size_for(std::int64_t n) const;
  /// Padded tokens added over the run.
  std::int64_t padded_tokens() const { return padded_; }
  std::int64_t graph_batches() const { return graph_batches_; }

 private:
  std::vector<std::int64_t> sizes_;
  std::int64_t padded_ = 0;
  std::int64_t graph_batches_ = 0;
};

}  // namespace servesim
