// TRT-LLM's KV cache: free_gpu_memory_fraction x the memory free at the peak of its profiling run (KvCacheCreator),
// against a case worked by hand from the formula quoted in core/fidelity/memory_model.h.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/fidelity/memory_model.h"
#include "tests/test_support.h"

using namespace servesim;

TEST_CASE("a TRT-LLM role's KV cache is free_gpu_memory_fraction x what its profiling run leaves free",
          "[fidelity][memory][trtllm]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  const GpuSpec g = test::bundled_gpu("H100-SXM");
  REQUIRE(g.memory_bytes == 85029158912.0);
  EngineOptions e = test::engine_for("trtllm");  // fraction 0.9, 8192 tokens, 256 seqs, bf16, block 16
  const KvBudget b = compute_kv_budget(m, g, test::tp_dp(1), e);
  REQUIRE(b.error.empty());
  CHECK(b.accounting == "trtllm");
  CHECK(b.memory_fraction == 0.9);
  // Weights may use everything but the CUDA context (0.5 GiB) and the library workspaces (0.15 GiB) at TP 1.
  CHECK(b.usable_bytes == Approx(85029158912.0 - 0.65 * test::kGiB));
  // The profiling run: one forward pass of 8192 tokens (residual 2 x T x 4096 x 2 B + gate/up/activation
  // 3 x T x 14336 x 2 B, as for vLLM) and one 8192-token context request sampling one row of the 128,256-token
  // vocabulary (38.9 B per logit), not vLLM's 256 rows; the peak is the larger, the forward pass.
  CHECK(b.forward_peak_bytes == 838'860'800.0);
  CHECK(b.sampler_bytes == Approx(128256.0 * 38.9).epsilon(1e-12));
  CHECK(b.activation_bytes == 838'860'800.0);
  const double weights = m.param_count() * 2.0;
  const double free = 85029158912.0 - 0.65 * test::kGiB - weights - 838'860'800.0;
  CHECK(b.free_bytes == Approx(free).epsilon(1e-12));
  CHECK(b.kv_bytes == Approx(0.9 * free).epsilon(1e-12));
  CHECK(b.reserved_bytes == Approx(0.1 * free).epsilon(1e-12));
  // 79.19 - 0.65 - 14.96 (weights) - 0.78 - 0.00 = 62.80 GiB free; 0.9 x 62.80 = 56.52 GiB at 128 KiB per token:
  // 28,938 blocks of 16 tokens, against 28,146 under vLLM's accounting of the same engine settings
  // (0.9 x device - weights - activations - workspaces).
  CHECK(b.free_bytes / test::kGiB == Approx(62.80).margin(0.01));
  CHECK(b.kv_bytes / test::kGiB == Approx(56.52).margin(0.01));
  CHECK(b.num_gpu_blocks == static_cast<std::int64_t>(std::floor(0.9 * free / (131072.0 * 16))));
  CHECK(b.num_gpu_blocks == 28938);
  EngineOptions v;
  CHECK(compute_kv_budget(m, g, test::tp_dp(1), v).num_gpu_blocks == 28146);
  // CUDA graphs are captured afterwards from the share left free: TRT-LLM's default sizes 1-32, 64, 128 (34 graphs
  // of 2 MiB, captured once each) and the pool of the largest.
  const double graphs = (2.0 * 128 * 4096 * 2 + 128.0 * 3 * 14336 * 2) + 34.0 * 2 * (1u << 20);
  CHECK(b.cuda_graph_bytes == Approx(graphs).epsilon(1e-12));
  CHECK(b.cuda_graph_bytes < b.reserved_bytes);
}

TEST_CASE("TRT-LLM's fraction does not bound the weights, and its errors name its option",
          "[fidelity][memory][trtllm]") {
  const GpuSpec g = test::bundled_gpu("H100-SXM");
  const ModelSpec m = test::bundled_model("Qwen3-32B");
  EngineOptions e = test::engine_for("trtllm");
  e.gpu_memory_utilization = 0.5;
  // 61 GiB of bf16 weights fit one H100 under TRT-LLM whatever the fraction; half of what is left is KV.
  const KvBudget b = compute_kv_budget(m, g, test::tp_dp(1), e);
  REQUIRE(b.error.empty());
  CHECK(b.kv_bytes == Approx(0.5 * (b.usable_bytes - b.weights_bytes - b.activation_bytes)).epsilon(1e-12));
  // Under vLLM's accounting 0.5 x 79.2 GiB cannot hold them.
  EngineOptions v;
  v.gpu_memory_utilization = 0.5;
  CHECK_THAT(compute_kv_budget(m, g, test::tp_dp(1), v).error, Catch::Contains("model weights need"));
  // Activations that leave nothing free: the error names free_gpu_memory_fraction.
  e.max_num_batched_tokens = 1 << 20;
  e.max_num_seqs = 1024;
  CHECK_THAT(compute_kv_budget(m, g, test::tp_dp(1), e).error,
             Catch::Contains("no memory left for the KV cache: free_gpu_memory_fraction (gpu_memory_utilization "
                             "0.500)"));
  // An F replica's room for weights is the same usable memory (its FFN group's communicators).
  Parallelism f;
  f.tp_ffn = 2;
  f.ep_ffn = 4;
  CHECK(ffn_weight_capacity_bytes(g, f, test::engine_for("trtllm")) ==
        Approx(g.memory_bytes - 0.5 * test::kGiB - (0.3 * test::kGiB + 32.0 * (1u << 20)) - 0.15 * test::kGiB));
}
