// SGLang's KV pool: its default --mem-fraction-static and profile_max_num_token's arithmetic, against cases worked
// by hand from the formulas quoted in core/spec/engine_options.h and core/fidelity/memory_model.h.
#include <catch2/catch.hpp>

#include "core/fidelity/memory_model.h"
#include "tests/test_support.h"

using namespace servesim;

TEST_CASE("SGLang's default mem_fraction_static reserves memory by chunk size, graph batch and parallel size",
          "[fidelity][memory][sglang]") {
  const GpuSpec h100 = test::bundled_gpu("H100-SXM");  // 81,090 MiB
  const GpuSpec a10g = test::bundled_gpu("A10G");      // 22,587 MiB
  EngineOptions e = test::engine_for("sglang");
  // H100, TP 1: 512 + 1.5 x 8192 + 2 x 256 + 1/8 x 1024 = 13,440 MiB; (81,090 - 13,440) / 81,090 = 0.83426.
  CHECK(sglang_default_mem_fraction_static(e, h100.memory_bytes, 1, 1, 1) == 0.834);
  // TP 8 captures graphs up to 512: 512 + 12,288 + 1,024 + 1,024 = 14,848 MiB -> 0.81689.
  CHECK(sglang_default_mem_fraction_static(e, h100.memory_bytes, 8, 1, 1) == 0.817);
  // A small chunk is floored at 10 GiB on GPUs above 60 GiB: 512 + 3,072 + 512 + 128 = 4,224 -> 10,240 -> 0.87372.
  e.max_num_batched_tokens = 2048;
  CHECK(sglang_default_mem_fraction_static(e, h100.memory_bytes, 1, 1, 1) == 0.874);
  // Below 35 GiB, TP 1 captures up to 24 and nothing is floored: 512 + 3,072 + 48 + 128 = 3,760 -> 0.83353.
  CHECK(sglang_default_mem_fraction_static(e, a10g.memory_bytes, 1, 1, 1) == 0.834);
  // Data-parallel attention over 8 GPUs: + 3 x 512 x 8 + 1.5 x 512 x 8 (graph batch above 300):
  // 512 + 12,288 + 1,024 + 1,024 + 12,288 + 6,144 = 33,280 MiB -> 0.58959.
  e.max_num_batched_tokens = 8192;
  CHECK(sglang_default_mem_fraction_static(e, h100.memory_bytes, 8, 1, 8) == 0.590);
  // Explicit capture sizes set the graph batch: up to 64 -> 512 + 12,288 + 128 + 128 = 13,056 -> 0.83900.
  e.cuda_graph_sizes = {1, 2, 4, 8, 16, 32, 64};
  CHECK(sglang_default_mem_fraction_static(e, h100.memory_bytes, 1, 1, 1) == 0.839);
}

TEST_CASE("an SGLang role's KV pool is mem_fraction_static x the free memory before loading, minus the weights",
          "[fidelity][memory][sglang]") {
  const ModelSpec m = test::bundled_model("Qwen3-32B");
  const GpuSpec g = test::bundled_gpu("H100-SXM");
  const KvBudget b = compute_kv_budget(m, g, test::tp_dp(1), test::engine_for("sglang"));
  REQUIRE(b.error.empty());
  CHECK(b.accounting == "sglang");
  CHECK(b.memory_fraction == 0.834);
  // Free memory before loading: the device less a 0.5 GiB CUDA context (no communicators at TP 1).
  const double total = g.memory_bytes - 0.5 * test::kGiB;
  CHECK(b.usable_bytes == Approx(0.834 * total));
  CHECK(b.reserved_bytes == Approx(0.166 * total));
  CHECK(b.kv_bytes == Approx(0.834 * total - b.weights_bytes));
  // 0.834 x 78.69 GiB - 61.02 GiB of weights = 4.60 GiB; 8 KV heads x 128 x 64 layers x K and V x 2 bytes = 256 KiB
  // per token, so 1,178 blocks of 16 tokens.
  CHECK(b.kv_bytes_per_token == 262144.0);
  CHECK(b.num_gpu_blocks == static_cast<std::int64_t>(std::floor(b.kv_bytes / (262144.0 * 16))));
  CHECK(b.kv_bytes / test::kGiB == Approx(4.60).margin(0.01));
  CHECK(b.num_gpu_blocks == 1178);
  // The same engine under vLLM's accounting (0.9 x device - weights - activations - overhead) keeps more.
  EngineOptions v;
  const KvBudget vb = compute_kv_budget(m, g, test::tp_dp(1), v);
  CHECK(vb.accounting == "vllm");
  CHECK(vb.memory_fraction == 0.9);
  CHECK(vb.num_gpu_blocks > b.num_gpu_blocks);
}

TEST_CASE("an explicit gpu_memory_utilization is SGLang's --mem-fraction-static and TP adds the communicators",
          "[fidelity][memory][sglang]") {
  const ModelSpec m = test::bundled_model("Qwen3-32B");
  const GpuSpec g = test::bundled_gpu("H100-SXM");
  EngineOptions e = test::engine_for("sglang");
  e.gpu_memory_utilization = 0.8;
  const KvBudget b = compute_kv_budget(m, g, test::tp_dp(2), e);
  REQUIRE(b.error.empty());
  CHECK(b.memory_fraction == 0.8);
  // One NCCL communicator (0.3 GiB) and the custom all-reduce buffers (32 MiB) exist before SGLang's snapshot.
  const double total = g.memory_bytes - 0.5 * test::kGiB - 0.3 * test::kGiB - 32.0 * (1u << 20);
  CHECK(b.kv_bytes == Approx(0.8 * total - b.weights_bytes));
  // Too small a share for the weights is an error naming SGLang's option.
  e.gpu_memory_utilization = 0.3;
  const KvBudget tight = compute_kv_budget(m, g, test::tp_dp(2), e);
  CHECK_THAT(tight.error, Catch::Contains("mem_fraction_static (gpu_memory_utilization 0.300)") &&
                              Catch::Contains("model weights need"));
  // Room for the weights but not one block: the other error, also naming the option.
  e.gpu_memory_utilization = (b.weights_bytes + 1000.0) / total;
  const KvBudget none = compute_kv_budget(m, g, test::tp_dp(2), e);
  CHECK_THAT(none.error, Catch::Contains("no memory left for the KV cache: mem_fraction_static"));
}

TEST_CASE("an F replica's room for weights follows its engine's accounting and the FFN group's communicators",
          "[fidelity][memory][sglang]") {
  const GpuSpec g = test::bundled_gpu("H100-SXM");
  Parallelism p;
  p.tp_attn = 1;
  p.tp_ffn = 2;
  p.ep_ffn = 4;  // 8 ranks in the FFN group: one NCCL communicator and the custom all-reduce buffers
  EngineOptions vllm;
  vllm.gpu_memory_utilization = 0.8;
  CHECK(ffn_weight_capacity_bytes(g, p, vllm) == Approx(0.8 * g.memory_bytes));
  EngineOptions s = test::engine_for("sglang");
  s.gpu_memory_utilization = 0.8;
  const double comm = 0.3 * test::kGiB + 32.0 * (1u << 20);
  CHECK(ffn_weight_capacity_bytes(g, p, s) == Approx(0.8 * (g.memory_bytes - 0.5 * test::kGiB - comm)));
  // The same arithmetic as an SGLang KV budget with the same group (its usable_bytes).
  const KvBudget b = compute_kv_budget(test::bundled_model("Qwen3-32B"), g, test::tp_dp(8), s);
  CHECK(ffn_weight_capacity_bytes(g, p, s) == Approx(b.usable_bytes));
  // A pipeline group adds its own communicator; a lone rank has none.
  p.pp = 2;
  CHECK(ffn_weight_capacity_bytes(g, p, s) ==
        Approx(0.8 * (g.memory_bytes - 0.5 * test::kGiB - comm - 0.3 * test::kGiB)));
  p = Parallelism{};
  CHECK(ffn_weight_capacity_bytes(g, p, s) == Approx(0.8 * (g.memory_bytes - 0.5 * test::kGiB)));
}

TEST_CASE("an SGLang default fraction left at or below zero by a huge graph size is an error naming the cause",
          "[fidelity][memory][sglang]") {
  EngineOptions e = test::engine_for("sglang");
  e.max_cudagraph_capture_size = 65536;  // 2 MiB of reserve per graph batch: 128 GiB
  const KvBudget b = compute_kv_budget(test::bundled_model("Llama-3.1-8B"), test::bundled_gpu("H100-SXM"),
                                       test::tp_dp(1), e, MemoryConstants{});
  CHECK(b.memory_fraction <= 0);
  CHECK(b.error.find("--cuda-graph-max-bs") != std::string::npos);
  CHECK(b.num_gpu_blocks == 0);
}
