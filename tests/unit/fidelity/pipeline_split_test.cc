// The per-stage split both cost models report for pipeline parallelism (BatchCost::stages and its parts).
#include <catch2/catch.hpp>

#include "core/fidelity/roofline_cost_model.h"
#include "core/fidelity/table_cost_model.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

Parallelism pp_tp(int pp, int tp) {
  Parallelism p;
  p.pp = pp;
  p.tp_attn = p.tp_ffn = tp;
  return p;
}

BatchShape decode_shape(int n, std::int32_t context) {
  BatchShape s;
  s.num_tokens = n;
  s.num_decode = n;
  s.num_sampled = n;
  for (int i = 0; i < n; ++i) s.decode_contexts.push_back(context);
  s.decode_context_sum = static_cast<std::int64_t>(n) * context;
  s.decode_context_max = context;
  return s;
}

SimTime fam(const BatchCost& c, OpFamily f) { return c.by_family[static_cast<int>(f)]; }

SimTime sum_of_stages(const BatchCost& c) {
  SimTime t = (c.stages - 1) * c.p2p_hop;
  for (int s = 0; s < c.stages; ++s) t += c.stage_time(s);
  return t;
}

/// The split's contract for one priced batch under `pp` stages.
void check_split(const BatchCost& c, int pp) {
  CHECK(c.stages == pp);
  CHECK(sum_of_stages(c) == c.total);
  CHECK(c.first_stage_extra == fam(c, OpFamily::kEmbedding));
  CHECK(c.last_stage_extra >= fam(c, OpFamily::kLmHead));
  CHECK(c.last_stage_extra - fam(c, OpFamily::kLmHead) < 2 * pp);  // only the even split's remainders
  CHECK(c.host <= fam(c, OpFamily::kOverhead));
  if (pp > 1) {
    CHECK(c.p2p_hop > 0);
    CHECK(c.p2p_hop * (pp - 1) <= fam(c, OpFamily::kPipelineP2p));
    // Stage 0 also prepares the batch, so it is the longest stage.
    CHECK(c.stage_time(0) > c.stage_time(1));
  }
}

}  // namespace

TEST_CASE("the roofline's pp=4 stage split adds up to its total with embedding first and LM head last",
          "[fidelity][pipeline]") {
  EngineOptions e;
  RooflineCostModel pp4(test::bundled_model("Llama-3.1-70B"), test::bundled_gpu("H100-SXM"), pp_tp(4, 2), e);
  RooflineCostModel pp1(test::bundled_model("Llama-3.1-70B"), test::bundled_gpu("H100-SXM"), pp_tp(1, 2), e);
  CHECK(pp4.pipeline_stages() == 4);
  for (int n : {1, 64}) {
    const BatchShape s = decode_shape(n, 2048);
    const BatchCost c4 = pp4.price(s);
    check_split(c4, 4);
    const BatchCost c1 = pp1.price(s);
    CHECK(c1.stages == 1);
    CHECK(c1.stage_time(0) == c1.total);
    // A stage holds a quarter of the layers: about a quarter of the single-stage layer time.
    const double layers1 = static_cast<double>(c1.total - c1.host - fam(c1, OpFamily::kEmbedding) -
                                               fam(c1, OpFamily::kLmHead));
    CHECK(static_cast<double>(c4.stage_gpu) * 4 == Approx(layers1).epsilon(0.01));
  }
}

TEST_CASE("the table cost model's pp=4 split adds up to its total and spreads eager launch waits over stages",
          "[fidelity][pipeline]") {
  EngineOptions e;
  e.enforce_eager = true;  // a 1-token eager batch is launch-bound: the launch wait must not all land on stage 0
  std::string err;
  auto pp4 = make_cost_model(test::bundled_model("Llama-3.1-8B"), test::bundled_gpu("H100-SXM"), pp_tp(4, 4), e,
                             &test::catalog(), 1, err);
  REQUIRE(pp4);
  CHECK(pp4->pipeline_stages() == 4);
  const BatchCost c = pp4->price(decode_shape(1, 512));
  check_split(c, 4);
  const SimTime host_constants = static_cast<SimTime>(
      (backend_constants("vllm").cpu_iteration_us + backend_constants("vllm").cpu_per_request_us) * 1e3 + 0.5);
  CHECK(fam(c, OpFamily::kOverhead) > host_constants);  // includes a launch wait
  CHECK(c.host == Approx(static_cast<double>(host_constants)).margin(2));
}

TEST_CASE("families each held at the horizon add up to a total no later than it, and the split still adds up",
          "[fidelity][pipeline]") {
  // A datasheet far below the spec's floors (set here directly) prices every family of a mixed MoE batch past
  // 1e9 s: each is held at the horizon, but their sum (eleven horizons with the GEMMs of both domains and the
  // experts' all-to-all under attention DP) passed int64's 9.2e18 ns.
  GpuSpec slow = test::bundled_gpu("H100-SXM");
  slow.bf16_tflops = slow.fp8_tflops = 1e-12;
  slow.hbm_tb_s = 1e-15;
  slow.nvlink_gb_s = slow.pcie_gb_s = slow.inter_node_gb_s = 1e-12;
  Parallelism p = pp_tp(4, 2);
  p.dp_attn = 2;
  p.tp_ffn = 1;
  p.ep_ffn = 4;
  EngineOptions e;
  e.enforce_eager = true;
  RooflineCostModel m(test::bundled_model("Qwen3-30B-A3B"), slow, p, e);
  BatchShape s = decode_shape(8, 4096);
  s.prefills.push_back({2048, 2048});
  s.num_tokens += 2048;
  s.num_sampled += 1;
  const BatchCost c = m.price(s);
  int saturated = 0;
  SimTime sum = 0;
  for (SimTime f : c.by_family) {
    CHECK(f >= 0);
    saturated += f >= kMaxSimTime / 12;  // each scaled down in proportion from one horizon or more
    sum += f;
  }
  // All but decode attention (the attention-DP group priced, the slowest, is the prompt's), the host and the A/F
  // transfers; GEMM held twice (attention and FFN domains).
  CHECK(saturated == 9);
  CHECK(fam(c, OpFamily::kGemm) > fam(c, OpFamily::kMoe) * 19 / 10);
  CHECK(c.total == sum);
  CHECK(c.total == kMaxSimTime);
  check_split(c, 4);
  for (int st = 0; st < 4; ++st) CHECK(c.stage_time(st) > 0);
}

TEST_CASE("sum_families leaves sums below the horizon exact and scales those past it onto it", "[fidelity]") {
  BatchCost c;
  c.by_family[static_cast<int>(OpFamily::kGemm)] = 3;
  c.by_family[static_cast<int>(OpFamily::kOverhead)] = 4;
  sum_families(c);
  CHECK(c.total == 7);
  for (SimTime& f : c.by_family) f = kMaxSimTime;
  sum_families(c);
  CHECK(c.total <= kMaxSimTime);
  CHECK(c.total > kMaxSimTime - 1000);  // the scaling's rounding, a few ns a family
  CHECK(c.by_family[0] == c.by_family[static_cast<int>(OpFamily::kCount) - 1]);
}
