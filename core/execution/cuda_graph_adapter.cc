#include "core/execution/cuda_graph_adapter.h"

#include <algorithm>

namespace servesim {

CudaGraphAdapter::CudaGraphAdapter(std::vector<std::int64_t> sizes, bool padding, int attention_dp)
    : sizes_(std::move(sizes)), padding_(padding), dp_(std::max(1, attention_dp)) {
  std::sort(sizes_.begin(), sizes_.end());
  sizes_.erase(std::unique(sizes_.begin(), sizes_.end()), sizes_.end());
}

std::int64_t CudaGraphAdapter::capture_size_for(std::int64_t n) const {
  auto it = std::lower_bound(sizes_.begin(), sizes_.end(), n);
  if (it == sizes_.end() || (!padding_ && *it != n)) return 0;
  return *it;
}

void CudaGraphAdapter::shape_batch(Batch& batch) {
  BatchShape& s = batch.shape;
  if (!s.prefills.empty() || s.num_decode == 0) return;
  // The fullest rank's share (batch_split spreads requests evenly over the ranks).
  const std::int64_t size = capture_size_for((s.num_tokens + dp_ - 1) / dp_);
  if (size == 0) return;
  s.padded_tokens = size * dp_ - s.num_tokens;
  s.cuda_graph = true;
  padded_ += s.padded_tokens;
  ++graph_batches_;
}

}  // namespace servesim
