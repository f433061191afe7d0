#include "core/execution/cuda_graph_adapter.h"

#include <algorithm>

namespace servesim {

std::vector<std::int64_t> default_cuda_graph_sizes(std::int64_t max_size) {
  std::vector<std::int64_t> s;
  for (std::int64_t v : {1, 2, 4})
    if (v <= max_size) s.push_back(v);
  for (std::int64_t v = 8; v <= std::min<std::int64_t>(256, max_size); v += 8) s.push_back(v);
  for (std::int64_t v = 272; v <= max_size; v += 16) s.push_back(v);
  return s;
}

CudaGraphAdapter::CudaGraphAdapter(std::vector<std::int64_t> sizes) : sizes_(std::move(sizes)) {
  std::sort(sizes_.begin(), sizes_.end());
  sizes_.erase(std::unique(sizes_.begin(), sizes_.end()), sizes_.end());
}

std::int64_t CudaGraphAdapter::capture_size_for(std::int64_t n) const {
  auto it = std::lower_bound(sizes_.begin(), sizes_.end(), n);
  return it == sizes_.end() ? 0 : *it;
}

void CudaGraphAdapter::shape_batch(Batch& batch) {
  BatchShape& s = batch.shape;
  if (!s.prefills.empty() || s.num_decode == 0) return;
  const std::int64_t size = capture_size_for(s.num_tokens);
  if (size == 0) return;
  s.padded_tokens = size - s.num_tokens;
  s.cuda_graph = true;
  padded_ += s.padded_tokens;
  ++graph_batches_;
}

}  // namespace servesim
