// Each engine's default CUDA-graph capture sizes and padding, against the rules read in their sources
// (cuda_graph_plan.h).
#include "core/spec/cuda_graph_plan.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "tests/test_support.h"

using namespace servesim;

namespace {
EngineOptions engine(const char* backend, int max_num_seqs = 256) {
  EngineOptions e = test::engine_for(backend);
  e.max_num_seqs = max_num_seqs;
  return e;
}
using test::kGiB;
}  // namespace

TEST_CASE("vLLM's default capture sizes are 1, 2, 4, multiples of 8 to 256, then of 16, within 2 x max_num_seqs",
          "[spec][cuda_graph]") {
  const CudaGraphPlan p = cuda_graph_plan(engine("vllm"), 80 * kGiB, 8);
  CHECK(p.padding);
  const auto& s = p.sizes;
  // 1, 2, 4 (3) + 8..256 step 8 (32) + 272..512 step 16 (16).
  REQUIRE(s.size() == 3 + 32 + 16);
  CHECK(std::vector<std::int64_t>(s.begin(), s.begin() + 5) == std::vector<std::int64_t>{1, 2, 4, 8, 16});
  CHECK(s[34] == 256);
  CHECK(s[35] == 272);
  CHECK(s.back() == 512);
  CHECK(std::is_sorted(s.begin(), s.end()));
  CHECK(cuda_graph_plan(engine("vllm", 150), 0, 1).sizes.size() == 3 + 32 + 2);  // ..., 256, 272, 288 (<= 300)
  CHECK(cuda_graph_plan(engine("vllm", 1), 0, 1).sizes == std::vector<std::int64_t>{1, 2});
  auto e = engine("vllm");
  e.max_cudagraph_capture_size = 20;
  CHECK(cuda_graph_plan(e, 0, 1).sizes == std::vector<std::int64_t>{1, 2, 4, 8, 16});
  e.cuda_graph_padding = false;  // refused by the reader under vllm; vLLM pads whatever
  CHECK(cuda_graph_plan(e, 0, 1).padding);
}

TEST_CASE("TRT-LLM captures 1-31, 32, 64 and 128 without padding by default, its padded list with it",
          "[spec][cuda_graph]") {
  const CudaGraphPlan p = cuda_graph_plan(engine("trtllm", 2048), 80 * kGiB, 8);
  CHECK_FALSE(p.padding);
  REQUIRE(p.sizes.size() == 34);
  CHECK(p.sizes[30] == 31);
  CHECK(std::vector<std::int64_t>(p.sizes.end() - 3, p.sizes.end()) == std::vector<std::int64_t>{32, 64, 128});
  auto e = engine("trtllm", 2048);
  e.cuda_graph_padding = true;
  const CudaGraphPlan q = cuda_graph_plan(e, 0, 1);
  CHECK(q.padding);
  std::vector<std::int64_t> want{1, 2, 4};
  for (std::int64_t v = 8; v <= 128; v += 8) want.push_back(v);
  CHECK(q.sizes == want);
  // A larger cuda_graph_config.max_batch_size adds the powers of two below it and itself.
  e.max_cudagraph_capture_size = 1000;
  const auto big = cuda_graph_plan(e, 0, 1).sizes;
  CHECK(std::vector<std::int64_t>(big.end() - 4, big.end()) == std::vector<std::int64_t>{128, 256, 512, 1000});
  // None above the executor's max_batch_size (max_num_seqs).
  CHECK(cuda_graph_plan(engine("trtllm", 40), 0, 1).sizes.back() == 32);
}

TEST_CASE("SGLang's capture sizes follow --cuda-graph-max-bs, by default from the GPU's memory and TP",
          "[spec][cuda_graph]") {
  // 80 GiB: 256 below TP 4, 512 from it.
  auto e = engine("sglang", 1024);
  const auto tp2 = cuda_graph_plan(e, 80 * kGiB, 2).sizes;
  const auto tp8 = cuda_graph_plan(e, 80 * kGiB, 8).sizes;
  CHECK(tp2.back() == 256);
  CHECK(tp8.back() == 512);
  CHECK(std::vector<std::int64_t>(tp2.begin(), tp2.begin() + 7) == std::vector<std::int64_t>{1, 2, 4, 8, 12, 16, 24});
  // 272..496 by 16, then 512.
  CHECK(std::find(tp8.begin(), tp8.end(), 496) != tp8.end());
  CHECK(std::find(tp8.begin(), tp8.end(), 504) == tp8.end());
  CHECK(cuda_graph_plan(e, 24 * kGiB, 1).sizes.back() == 24);
  e.max_cudagraph_capture_size = 640;  // --cuda-graph-max-bs 640: 512, 544, ..., 640
  const auto wide = cuda_graph_plan(e, 80 * kGiB, 8).sizes;
  CHECK(std::vector<std::int64_t>(wide.end() - 5, wide.end()) == std::vector<std::int64_t>{512, 544, 576, 608, 640});
  // --disable-cuda-graph-padding: every size from 1.
  e.max_cudagraph_capture_size = 0;
  e.cuda_graph_padding = false;
  const auto every = cuda_graph_plan(e, 80 * kGiB, 2).sizes;
  CHECK(every.size() == 256);
  CHECK(every[99] == 100);
}

TEST_CASE("explicit sizes are kept (sorted, deduplicated) and enforce_eager captures none", "[spec][cuda_graph]") {
  auto e = engine("trtllm");
  e.cuda_graph_sizes = {16, 1, 16, 4};
  CHECK(cuda_graph_plan(e, 0, 1).sizes == std::vector<std::int64_t>{1, 4, 16});
  e.enforce_eager = true;
  CHECK(cuda_graph_plan(e, 0, 1).sizes.empty());
}
