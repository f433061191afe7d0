#include "core/execution/cuda_graph_adapter.h"

#include <algorithm>

#include <catch2/catch.hpp>

using namespace servesim;

namespace {

Batch decode_batch(std::int64_t n) {
  Batch b;
  b.shape.num_tokens = n;
  b.shape.num_decode = static_cast<std::int32_t>(n);
  b.shape.num_sampled = static_cast<std::int32_t>(n);
  b.shape.decode_context_sum = 100 * n;
  b.shape.decode_context_max = 100;
  return b;
}

}  // namespace

TEST_CASE("vLLM's default capture sizes are 1, 2, 4, multiples of 8 to 256, then of 16", "[execution][cuda_graph]") {
  const auto s = default_cuda_graph_sizes(512);
  // 1, 2, 4 (3) + 8..256 step 8 (32) + 272..512 step 16 (16).
  REQUIRE(s.size() == 3 + 32 + 16);
  CHECK(s[0] == 1);
  CHECK(s[1] == 2);
  CHECK(s[2] == 4);
  CHECK(s[3] == 8);
  CHECK(s[4] == 16);
  CHECK(s[34] == 256);
  CHECK(s[35] == 272);
  CHECK(s[36] == 288);
  CHECK(s.back() == 512);
  CHECK(std::is_sorted(s.begin(), s.end()));
  CHECK(std::find(s.begin(), s.end(), 264) == s.end());
  CHECK(default_cuda_graph_sizes(300).size() == 3 + 32 + 2);  // ..., 256, 272, 288
  CHECK(default_cuda_graph_sizes(3) == std::vector<std::int64_t>{1, 2});
  CHECK(default_cuda_graph_sizes(20) == std::vector<std::int64_t>{1, 2, 4, 8, 16});
}

TEST_CASE("capture_size_for picks the smallest capture size at least n", "[execution][cuda_graph]") {
  CudaGraphAdapter a(default_cuda_graph_sizes(512));
  CHECK(a.capture_size_for(1) == 1);
  CHECK(a.capture_size_for(3) == 4);
  CHECK(a.capture_size_for(9) == 16);
  CHECK(a.capture_size_for(257) == 272);
  CHECK(a.capture_size_for(512) == 512);
  CHECK(a.capture_size_for(513) == 0);
  CudaGraphAdapter unsorted({8, 2, 8, 32});
  CHECK(unsorted.capture_size_for(3) == 8);
  CHECK(unsorted.capture_size_for(1) == 2);
  CHECK(unsorted.capture_size_for(9) == 32);
}

TEST_CASE("a decode-only batch of 3 tokens is padded to 4 and replayed as a graph", "[execution][cuda_graph]") {
  CudaGraphAdapter a(default_cuda_graph_sizes(512));
  Batch b = decode_batch(3);
  a.shape_batch(b);
  CHECK(b.shape.padded_tokens == 1);
  CHECK(b.shape.cuda_graph);
  CHECK(b.shape.num_tokens == 3);  // real tokens are unchanged
  CHECK(a.padded_tokens() == 1);
  CHECK(a.graph_batches() == 1);
  Batch c = decode_batch(200);  // 200 is a capture size: no padding, still a graph
  a.shape_batch(c);
  CHECK(c.shape.padded_tokens == 0);
  CHECK(c.shape.cuda_graph);
  CHECK(a.padded_tokens() == 1);
  CHECK(a.graph_batches() == 2);
}

TEST_CASE("a batch containing a prefill is not padded", "[execution][cuda_graph]") {
  CudaGraphAdapter a(default_cuda_graph_sizes(512));
  Batch b = decode_batch(3);
  b.shape.num_tokens += 10;
  b.shape.prefills.push_back({10, 10});
  a.shape_batch(b);
  CHECK(b.shape.padded_tokens == 0);
  CHECK_FALSE(b.shape.cuda_graph);
  CHECK(a.graph_batches() == 0);
  CHECK(a.padded_tokens() == 0);
}

TEST_CASE("a decode batch above the largest capture size runs eagerly", "[execution][cuda_graph]") {
  CudaGraphAdapter a(default_cuda_graph_sizes(512));
  Batch b = decode_batch(513);
  a.shape_batch(b);
  CHECK(b.shape.padded_tokens == 0);
  CHECK_FALSE(b.shape.cuda_graph);
  CHECK(a.graph_batches() == 0);
}
