#include "core/execution/cuda_graph_adapter.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "core/spec/cuda_graph_plan.h"

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

/// vLLM's default sizes for max_num_seqs 256: 1, 2, 4, multiples of 8 to 256, of 16 to 512.
std::vector<std::int64_t> vllm_sizes() { return cuda_graph_plan(EngineOptions{}, 0, 1).sizes; }

}  // namespace

TEST_CASE("capture_size_for picks the smallest capture size at least n", "[execution][cuda_graph]") {
  CudaGraphAdapter a(vllm_sizes(), true);
  CHECK(a.capture_size_for(1) == 1);
  CHECK(a.capture_size_for(3) == 4);
  CHECK(a.capture_size_for(9) == 16);
  CHECK(a.capture_size_for(257) == 272);
  CHECK(a.capture_size_for(512) == 512);
  CHECK(a.capture_size_for(513) == 0);
  CudaGraphAdapter unsorted({8, 2, 8, 32}, true);
  CHECK(unsorted.capture_size_for(3) == 8);
  CHECK(unsorted.capture_size_for(1) == 2);
  CHECK(unsorted.capture_size_for(9) == 32);
}

TEST_CASE("a decode-only batch of 3 tokens is padded to 4 and replayed as a graph", "[execution][cuda_graph]") {
  CudaGraphAdapter a(vllm_sizes(), true);
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
  CudaGraphAdapter a(vllm_sizes(), true);
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
  CudaGraphAdapter a(vllm_sizes(), true);
  Batch b = decode_batch(513);
  a.shape_batch(b);
  CHECK(b.shape.padded_tokens == 0);
  CHECK_FALSE(b.shape.cuda_graph);
  CHECK(a.graph_batches() == 0);
}

TEST_CASE("without padding only captured sizes replay - the others run eagerly", "[execution][cuda_graph]") {
  // TRT-LLM's default (cuda_graph_config.enable_padding false): 1-31, 32, 64, 128.
  EngineOptions e;
  e.backend = "trtllm";
  const CudaGraphPlan plan = cuda_graph_plan(e, 0, 1);
  REQUIRE_FALSE(plan.padding);
  CudaGraphAdapter a(plan.sizes, plan.padding);
  CHECK(a.capture_size_for(31) == 31);
  CHECK(a.capture_size_for(33) == 0);
  CHECK(a.capture_size_for(64) == 64);
  Batch b = decode_batch(33);
  a.shape_batch(b);
  CHECK_FALSE(b.shape.cuda_graph);
  CHECK(b.shape.padded_tokens == 0);
  Batch c = decode_batch(64);
  a.shape_batch(c);
  CHECK(c.shape.cuda_graph);
  CHECK(a.graph_batches() == 1);
  CHECK(a.padded_tokens() == 0);
  // The same sizes with padding: 33 pads to 64.
  CudaGraphAdapter p(plan.sizes, true);
  Batch d = decode_batch(33);
  p.shape_batch(d);
  CHECK(d.shape.cuda_graph);
  CHECK(d.shape.padded_tokens == 31);
}

TEST_CASE("with attention DP every rank replays the graph of the fullest rank's share", "[execution][cuda_graph]") {
  // 9 requests over 8 ranks: the fullest holds 2, so all 8 replay the size-2 graph: 16 rows, 7 of them padding.
  CudaGraphAdapter a({1, 2, 4, 8}, true, 8);
  Batch b = decode_batch(9);
  a.shape_batch(b);
  CHECK(b.shape.cuda_graph);
  CHECK(b.shape.padded_tokens == 7);
  // 33 requests: the fullest rank holds 5, padded to 8 on every rank.
  Batch c = decode_batch(33);
  a.shape_batch(c);
  CHECK(c.shape.padded_tokens == 8 * 8 - 33);
  // Beyond the largest per-rank size (8 x 8 = 64 requests) the batch runs eagerly.
  Batch d = decode_batch(65);
  a.shape_batch(d);
  CHECK_FALSE(d.shape.cuda_graph);
}
