// The MoE expert-parallel all-to-all: dispatch before and combine after the experts, the combine waiting for
// the slowest rank.
#include <algorithm>

#include <catch2/catch.hpp>

#include "core/fidelity/table_cost_model.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

Parallelism ep_par(int ep, int dp_attn = 1) {
  Parallelism p;
  p.tp_attn = ep / dp_attn;
  p.dp_attn = dp_attn;
  p.tp_ffn = 1;
  p.ep_ffn = ep;
  return p;
}

std::unique_ptr<TableCostModel> table_model(const std::string& gpu, int ep, int dp_attn = 1,
                                            const EngineOptions& e = EngineOptions{}) {
  ProfileTables t;
  std::string err;
  const ModelSpec m = test::bundled_model("Qwen3-30B-A3B");
  REQUIRE(load_profile_tables(test::catalog(), gpu, "vllm", m, t, err));
  EfficiencyCurves c;
  load_efficiency_curves(test::catalog(), c);
  return std::make_unique<TableCostModel>(m, test::bundled_gpu(gpu), ep_par(ep, dp_attn), e, std::move(t),
                                          std::move(c), 7);
}

using test::decode_batch;

SimTime fam(const BatchCost& c, OpFamily f) { return c.by_family[static_cast<int>(f)]; }

}  // namespace

TEST_CASE("without expert parallelism there is no all-to-all", "[fidelity][moe][ep]") {
  auto m = table_model("H100-SXM", 1);
  CHECK(m->all_to_all_us(4096) == 0);
  const MoeLayerTime t = m->moe_layer(4096, {});
  CHECK(t.dispatch_us == 0);
  CHECK(t.combine_us == 0);
  CHECK(t.total_us() == t.experts_us);
  CHECK(fam(m->price(decode_batch(64, 1000)), OpFamily::kAllToAll) == 0);
  RooflineCostModel r(test::bundled_model("Qwen3-30B-A3B"), test::bundled_gpu("H100-SXM"), ep_par(1), EngineOptions{});
  CHECK(r.all_to_all_ns(4096) == 0);
}

TEST_CASE("the all-to-all grows with tokens and with the expert-parallel group", "[fidelity][moe][ep]") {
  auto ep8 = table_model("H100-SXM", 8);
  auto ep16 = table_model("H100-SXM", 16);
  bool ex8 = false, ex16 = false;
  const double small = ep8->all_to_all_us(64, &ex8), big = ep8->all_to_all_us(8192, &ex8);
  CHECK(small > 0);
  CHECK(big > small);
  CHECK_FALSE(ex8);  // 8 GPUs in one node: the measured NCCL alltoall
  CHECK(ep8->source(OpFamily::kAllToAll) == PriceSource::kTable);
  // Same bytes per rank (2x the tokens over 2x the ranks), but 16 ranks span two nodes: the NIC, not NVLink.
  CHECK(ep16->all_to_all_us(16384, &ex16) > ep8->all_to_all_us(8192));
  CHECK(ex16);  // beyond the measured groups: flagged in the fidelity report
  CHECK(ep16->source(OpFamily::kAllToAll) == PriceSource::kRoofline);
  RooflineCostModel r8(test::bundled_model("Qwen3-30B-A3B"), test::bundled_gpu("H100-SXM"), ep_par(8), EngineOptions{});
  RooflineCostModel r16(test::bundled_model("Qwen3-30B-A3B"), test::bundled_gpu("H100-SXM"), ep_par(16),
                        EngineOptions{});
  CHECK(r8.all_to_all_ns(8192) > r8.all_to_all_ns(64));
  CHECK(r16.all_to_all_ns(16384) > r8.all_to_all_ns(8192));
  // With TP attention every rank already holds every token and the closing all-reduce is the combine: a priced
  // batch has no all-to-all. With DP attention (8 groups of tp 1) tokens are partitioned, so every MoE layer
  // carries a dispatch and a combine.
  CHECK(fam(ep8->price(decode_batch(64, 1000)), OpFamily::kAllToAll) == 0);
  auto dp8 = table_model("H100-SXM", 8, 8);
  const BatchCost c = dp8->price(decode_batch(64, 1000));
  CHECK(fam(c, OpFamily::kAllToAll) > 0);
  const ModelSpec m = test::bundled_model("Qwen3-30B-A3B");
  CHECK(static_cast<double>(fam(c, OpFamily::kAllToAll)) ==
        Approx(static_cast<double>(m.moe_layers()) * 2 * dp8->all_to_all_us(64) * 1e3).margin(1.0));
  RooflineCostModel rdp(m, test::bundled_gpu("H100-SXM"), ep_par(8, 8), EngineOptions{});
  CHECK(fam(rdp.price(decode_batch(64, 1000)), OpFamily::kAllToAll) > 0);
  CHECK(fam(r8.price(decode_batch(64, 1000)), OpFamily::kAllToAll) == 0);
}

TEST_CASE("skewed routing makes the combine wait longer for the slowest rank than balanced routing",
          "[fidelity][moe][ep]") {
  const ModelSpec model = test::bundled_model("Qwen3-30B-A3B");
  for (const char* gpu : {"H100-SXM", "H800"}) {  // measured MoE table, and the datasheet-derived path
    INFO(gpu);
    auto m = table_model(gpu, 8);
    std::vector<std::int64_t> bal, skew;
    moe_balanced_loads(4096, static_cast<int>(model.num_experts), static_cast<int>(model.num_experts_per_tok), bal);
    Rng rng(3, 1);
    moe_loads(MoeRouting::kPowerLaw, 1.2, 4096, static_cast<int>(model.num_experts),
              static_cast<int>(model.num_experts_per_tok), rng, skew);
    const MoeLayerTime b = m->moe_layer(4096, bal), s = m->moe_layer(4096, skew);
    CHECK(b.dispatch_us == s.dispatch_us);  // the same bytes leave every rank
    CHECK(s.combine_start_us() > 1.2 * b.combine_start_us());
    CHECK(s.total_us() == Approx(s.dispatch_us + s.experts_us + s.combine_us));
  }
}

TEST_CASE("power-law routing with a measured exponent prices from that exponent's curve, other routings from the "
          "balanced one",
          "[fidelity][moe][ep]") {
  const ModelSpec model = test::bundled_model("Qwen3-30B-A3B");
  ProfileTables t;
  std::string err;
  REQUIRE(load_profile_tables(test::catalog(), "H100-SXM", "vllm", model, t, err));
  auto measured = [&](const char* distribution, double tokens) {
    const OpGrid* g = t.moe.find({"bfloat16", "2048", "768", "8", "128", "1", "8", distribution});
    REQUIRE(g != nullptr);
    const auto& x = g->axes[0];
    const auto i = static_cast<std::size_t>(std::find(x.begin(), x.end(), tokens) - x.begin());
    REQUIRE(i < x.size());
    return g->values[i];
  };
  struct Case {
    const char* routing;
    double alpha;
    const char* grid;
  };
  for (const Case& c : {Case{"power_law", 1.2, "power_law_1.2"}, Case{"power_law", 1.01, "power_law_1.01"},
                        Case{"power_law", 1.1, "balanced"}, Case{"uniform", 1.2, "balanced"},
                        Case{"balanced", 1.2, "balanced"}}) {
    INFO(c.routing << " " << c.alpha);
    EngineOptions e;
    e.moe_routing = c.routing;
    e.moe_power_law_alpha = c.alpha;
    auto m = table_model("H100-SXM", 8, 1, e);
    CHECK(m->moe_grid_distribution() == c.grid);
    CHECK(m->moe_us(4096, {}) == Approx(measured(c.grid, 4096)).epsilon(1e-9));
  }
  CHECK(measured("power_law_1.2", 4096) != measured("balanced", 4096));
}
