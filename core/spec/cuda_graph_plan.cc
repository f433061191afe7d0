#include "core/spec/cuda_graph_plan.h"

#include <algorithm>

namespace servesim {

namespace {

void push_range(std::vector<std::int64_t>& v, std::int64_t from, std::int64_t to, std::int64_t step) {
  for (std::int64_t x = from; x <= to; x += step) v.push_back(x);
}

std::vector<std::int64_t> vllm_sizes(const EngineOptions& e) {
  const std::int64_t max = std::min<std::int64_t>(e.max_cudagraph_capture_size > 0 ? e.max_cudagraph_capture_size : 512,
                                                  2 * static_cast<std::int64_t>(e.max_num_seqs));
  std::vector<std::int64_t> v{1, 2, 4};
  push_range(v, 8, std::min<std::int64_t>(256, max), 8);
  push_range(v, 272, max, 16);
  return v;
}

std::vector<std::int64_t> sglang_sizes(const EngineOptions& e, bool padding, double gpu_mem_bytes, int tp) {
  const std::int64_t max = sglang_cuda_graph_max_bs(e, gpu_mem_bytes, tp);
  std::vector<std::int64_t> v;
  if (!padding) {
    push_range(v, 1, max, 1);
    return v;
  }
  v = {1, 2, 4, 8, 12};
  push_range(v, 16, 256, 8);
  push_range(v, 272, 511, 16);
  push_range(v, 512, max, 32);
  v.erase(std::remove_if(v.begin(), v.end(), [max](std::int64_t x) { return x > max; }), v.end());
  return v;
}

std::vector<std::int64_t> trtllm_sizes(const EngineOptions& e, bool padding) {
  const std::int64_t max = e.max_cudagraph_capture_size > 0 ? e.max_cudagraph_capture_size : 128;
  std::vector<std::int64_t> v;
  if (padding) {
    v = {1, 2, 4};
    push_range(v, 8, 128, 8);
  } else {
    push_range(v, 1, 31, 1);
    v.insert(v.end(), {32, 64, 128});
  }
  // Powers of two from 256 up to, not including, 2^ceil(log2(max)).
  for (std::int64_t p = 256; p < max; p *= 2) v.push_back(p);
  v.erase(std::remove_if(v.begin(), v.end(), [max](std::int64_t x) { return x > max; }), v.end());
  std::sort(v.begin(), v.end());
  if (v.empty() || v.back() != max) v.push_back(max);
  return v;
}

}  // namespace

CudaGraphPlan cuda_graph_plan(const EngineOptions& e, double gpu_mem_bytes, int tp) {
  CudaGraphPlan plan;
  plan.padding = e.backend == "vllm" || e.cuda_graph_padding.value_or(e.backend != "trtllm");
  if (e.enforce_eager) return plan;
  if (!e.cuda_graph_sizes.empty()) {
    plan.sizes = e.cuda_graph_sizes;
  } else {
    plan.sizes = e.backend == "sglang"   ? sglang_sizes(e, plan.padding, gpu_mem_bytes, tp)
                 : e.backend == "trtllm" ? trtllm_sizes(e, plan.padding)
                                         : vllm_sizes(e);
    const std::int64_t cap = e.backend == "vllm" ? 2 * static_cast<std::int64_t>(e.max_num_seqs) : e.max_num_seqs;
    plan.sizes.erase(std::remove_if(plan.sizes.begin(), plan.sizes.end(), [cap](std::int64_t x) { return x > cap; }),
                     plan.sizes.end());
  }
  std::sort(plan.sizes.begin(), plan.sizes.end());
  plan.sizes.erase(std::unique(plan.sizes.begin(), plan.sizes.end()), plan.sizes.end());
  return plan;
}

}  // namespace servesim
