#include "core/fidelity/moe_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <catch2/catch.hpp>

using namespace servesim;

namespace {

std::int64_t total(const std::vector<std::int64_t>& c) { return std::accumulate(c.begin(), c.end(), std::int64_t{0}); }

OpGrid curve_grid(std::vector<double> tokens, std::vector<double> us) {
  OpGrid g;
  g.key = {"bfloat16", "4096", "1536", "8", "128", "1", "8", "balanced"};
  g.axes = {tokens};
  g.log_axes = {{}};
  for (double t : tokens) g.log_axes[0].push_back(std::log(t));
  g.strides = {1};
  g.values = us;
  for (double v : us) g.log_values.push_back(std::log(v));
  return g;
}

/// A rank cost with fixed 64-row blocks, or (`adaptive`) the blocks the simulator sizes by the rows per expert
/// (kMoeBlockRowsMin..Max).
MoeRankCost rank_cost(double t0, double t_weight, double t_block, bool adaptive) {
  MoeRankCost k;
  k.t0 = t0;
  k.t_weight = t_weight;
  k.t_block = t_block;
  k.block_m = adaptive ? kMoeBlockRowsMin : 64;
  if (adaptive) k.block_m_max = kMoeBlockRowsMax;
  return k;
}

}  // namespace

TEST_CASE("the balanced assignment spreads tokens x top-k evenly", "[fidelity][moe]") {
  std::vector<std::int64_t> c;
  moe_balanced_loads(1000, 128, 8, c);
  CHECK(total(c) == 8000);
  CHECK(*std::max_element(c.begin(), c.end()) - *std::min_element(c.begin(), c.end()) <= 8);
  moe_balanced_loads(3, 128, 8, c);  // fewer tokens than the stride: 24 distinct experts
  CHECK(total(c) == 24);
  CHECK(std::count(c.begin(), c.end(), 1) == 24);
}

TEST_CASE("sampled assignments keep the token count and are reproducible from the seed", "[fidelity][moe]") {
  for (MoeRouting r : {MoeRouting::kUniform, MoeRouting::kPowerLaw}) {
    for (std::int64_t tokens : {1, 7, 100, 5000}) {
      Rng a(42, 5), b(42, 5);
      std::vector<std::int64_t> x, y;
      moe_loads(r, 1.2, tokens, 128, 8, a, x);
      moe_loads(r, 1.2, tokens, 128, 8, b, y);
      CHECK(total(x) == tokens * 8);
      CHECK(x == y);
    }
  }
  // Uniform routing picks distinct experts per token: one token never loads an expert twice.
  Rng r(1, 5);
  std::vector<std::int64_t> c;
  moe_loads(MoeRouting::kUniform, 1.2, 1, 128, 8, r, c);
  CHECK(*std::max_element(c.begin(), c.end()) == 1);
}

TEST_CASE("power-law routing loads the busiest EP rank well above the balanced share", "[fidelity][moe]") {
  const MoeRankCost k{0, 1.0, 0.0, 64};  // cost = active experts... and rows via blocks below
  MoeRankCost rows_only{0, 0.0, 1.0, 1};  // one block per token: the rank's rows
  Rng rng(7, 5);
  std::vector<std::int64_t> skew, bal;
  moe_balanced_loads(4096, 128, 8, bal);
  double worst = 0;
  for (int d = 0; d < 8; ++d) {
    moe_loads(MoeRouting::kPowerLaw, 1.2, 4096, 128, 8, rng, skew);
    worst += moe_slowest_rank(rows_only, skew, 8) / 8;
  }
  CHECK(moe_slowest_rank(rows_only, bal, 8) == Approx(4096.0 * 8 / 8));
  CHECK(worst > 1.5 * 4096.0 * 8 / 8);
  // Active experts: balanced routing touches all 16 of a rank's experts.
  CHECK(moe_slowest_rank(k, bal, 8) == 16);
}

TEST_CASE("the MoE predictor returns the measured curve for the reference routing and scales skew by the "
          "slowest rank", "[fidelity][moe]") {
  const OpGrid g = curve_grid({1, 16, 256, 4096}, {50, 250, 300, 1400});
  const MoeRankCost k = rank_cost(0, 2.0, 0.5, false);  // from the table
  MoePredictor p;
  REQUIRE(p.build(g, MoeRouting::kBalanced, 1.0, k, 128, 8, 8));
  CHECK(p.rank_cost().t0 == 25);  // half the single-token call
  CHECK(p.us(256, {}) == 300);
  std::vector<std::int64_t> bal;
  moe_balanced_loads(256, 128, 8, bal);
  CHECK(p.us(256, bal) == Approx(300).epsilon(1e-12));
  Rng rng(3, 5);
  std::vector<std::int64_t> skew;
  moe_loads(MoeRouting::kPowerLaw, 1.2, 4096, 128, 8, rng, skew);
  CHECK(p.us(4096, skew) > 1400);
  bool ex = false;
  // Past the last count: affine through 4096 and 256 (the largest at most half of it), not 2 x 1400 in proportion.
  CHECK(p.us(8192, {}, &ex) == Approx(1400 + (1400.0 - 300) / (4096 - 256) * 4096));
  CHECK(ex);
}

TEST_CASE(
    "the row block follows the mean tokens per expert, so a sampled assignment pads where balanced loads "
    "fill whole blocks",
    "[fidelity][moe]") {
  const MoeRankCost k = rank_cost(0, 0, 16, true);  // one row costs 1: t_block is per block of block_m = 16 rows
  CHECK(moe_block_rows(k, 1) == 16);
  CHECK(moe_block_rows(k, 17) == 32);
  CHECK(moe_block_rows(k, 32) == 32);
  CHECK(moe_block_rows(k, 96) == 128);
  CHECK(moe_block_rows(k, 4096) == 128);
  MoeRankCost fixed = k;
  fixed.block_m_max = 0;
  CHECK(moe_block_rows(fixed, 4096) == 16);
  // gpt-oss-120b's shape, one rank: 4096 tokens x top-4 over 128 experts is 128 rows each, one block of 128.
  std::vector<std::int64_t> bal;
  moe_balanced_loads(4096, 128, 4, bal);
  CHECK(moe_slowest_rank(k, bal, 1) == Approx(128.0 * 128));
  // 6144 tokens (192 rows each) take two blocks of 128: the measured curve's step, twice the rows.
  moe_balanced_loads(6144, 128, 4, bal);
  CHECK(moe_slowest_rank(k, bal, 1) == Approx(128.0 * 256));
  // Uniform routing at 4096 tokens: about half the experts get more than 128 rows and a second block, where a
  // fixed 16-row block would pad by less than one block of 16 per expert.
  Rng rng(7, 1);
  std::vector<std::int64_t> uni;
  moe_loads(MoeRouting::kUniform, 0, 4096, 128, 4, rng, uni);
  const double adaptive = moe_slowest_rank(k, uni, 1) / (128.0 * 128);
  CHECK(adaptive > 1.3);
  CHECK(adaptive < 1.7);
  CHECK(moe_slowest_rank(fixed, uni, 1) / (128.0 * 128) < 1.07);
}

TEST_CASE("the MoE predictor reads a stepped curve through the row-block model and an affine one linearly",
          "[fidelity][moe]") {
  const MoeRankCost k = rank_cost(5, 1, 16, true);
  const std::vector<double> tokens = {256, 512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384};
  // A curve three times the balanced assignment's model: flat while the rows per expert stay within one block of
  // 128, a step where they cross one (128 experts, top-4: 4096 tokens are one block each, 6144 two).
  MoePredictor model_only;
  REQUIRE(model_only.build(curve_grid({1, 2}, {1, 1}), MoeRouting::kBalanced, 1.0, k, 128, 4, 1, false));
  std::vector<double> stepped;
  for (double t : tokens) stepped.push_back(3 * model_only.reference_rank_cost(static_cast<std::int64_t>(t)));
  CHECK(stepped[5] == Approx(stepped[4]));  // 3072 and 4096 tokens: one block of 128 rows per expert
  CHECK(stepped[6] > 1.9 * stepped[5]);     // 6144: two
  MoePredictor p;
  REQUIRE(p.build(curve_grid(tokens, stepped), MoeRouting::kBalanced, 1.0, k, 128, 4, 1));
  CHECK(p.interp() == MoePredictor::Interp::kProduct);
  const double between = 3 * model_only.reference_rank_cost(5000);
  CHECK(p.us(5000, {}) == Approx(between).epsilon(1e-9));
  // The log-log reading of the same points misses it (the step sits between 4096 and 6144).
  MoePredictor raw;
  REQUIRE(raw.build(curve_grid(tokens, stepped), MoeRouting::kBalanced, 1.0, k, 128, 4, 1, false));
  CHECK(raw.interp() == MoePredictor::Interp::kRaw);
  CHECK(std::fabs(raw.us(5000, {}) / between - 1) > 0.05);
  // Exact at the measured counts whatever the reading.
  for (std::size_t i = 0; i < tokens.size(); ++i)
    CHECK(p.us(static_cast<std::int64_t>(tokens[i]), {}) == Approx(stepped[i]).epsilon(1e-12));

  // t = 20 + 0.25 T: the affine reading reproduces it between the points, log-log bends it.
  std::vector<double> affine;
  for (double t : tokens) affine.push_back(20 + 0.25 * t);
  MoePredictor a;
  REQUIRE(a.build(curve_grid(tokens, affine), MoeRouting::kBalanced, 1.0, k, 128, 4, 1));
  CHECK(a.interp() == MoePredictor::Interp::kAffine);
  CHECK(a.us(5000, {}) == Approx(20 + 0.25 * 5000).epsilon(1e-12));

  // A power-law reference stays log-log: its curve is one draw of the generator.
  MoePredictor pl;
  REQUIRE(pl.build(curve_grid(tokens, affine), MoeRouting::kPowerLaw, 1.2, k, 128, 4, 1));
  CHECK(pl.interp() == MoePredictor::Interp::kRaw);
}

TEST_CASE("power-law loads never give an expert more rows than tokens, nor the rounding remainder to the "
          "lowest-numbered experts",
          "[fidelity][moe]") {
  std::vector<std::int64_t> c;
  // Alpha 1.2 over 128 experts at top-8: the heaviest draw exceeds 1 / 8 of the rows, more than one per token.
  Rng rng(11, 5);
  for (std::int64_t tokens : {4096, 12288}) {
    for (int d = 0; d < 16; ++d) {
      moe_loads(MoeRouting::kPowerLaw, 1.2, tokens, 128, 8, rng, c);
      CHECK(total(c) == tokens * 8);
      CHECK(*std::max_element(c.begin(), c.end()) <= tokens);
    }
  }
  // 2 tokens x top-16 over 896 experts: every weight rounds to 0 and all 32 rows are the remainder. They go to the
  // 32 largest weights, spread over the experts, not to experts 0-31 (the first EP rank of 32 holds 0-27).
  int on_first_rank = 0;
  for (int d = 0; d < 64; ++d) {
    moe_loads(MoeRouting::kPowerLaw, 1.01, 2, 896, 16, rng, c);
    CHECK(total(c) == 32);
    CHECK(*std::max_element(c.begin(), c.end()) <= 2);
    on_first_rank += static_cast<int>(std::count_if(c.begin(), c.begin() + 28, [](std::int64_t x) { return x > 0; }));
  }
  CHECK(on_first_rank / 64.0 < 3.0);  // one expected (32 x 28 / 896)
}

TEST_CASE("a power-law reference curve is the mean of its draws: sampled loads average back to the measured curve",
          "[fidelity][moe]") {
  OpGrid g = curve_grid({1, 16, 256, 4096}, {50, 250, 300, 1400});
  g.key[7] = "power_law_1.2";
  const MoeRankCost k = rank_cost(0, 2.0, 0.5, false);
  MoePredictor p;
  REQUIRE(p.build(g, MoeRouting::kPowerLaw, 1.2, k, 128, 8, 8));
  CHECK(p.interp() == MoePredictor::Interp::kRaw);
  CHECK(p.us(256, {}) == 300);
  // Between the measured counts the reference is read, not redrawn: the same value on every call.
  CHECK(p.reference_rank_cost(1000) == p.reference_rank_cost(1000));
  Rng rng(5, 5);
  std::vector<std::int64_t> loads;
  for (std::int64_t t : {256, 4096}) {
    double sum = 0;
    const int draws = 256;
    for (int d = 0; d < draws; ++d) {
      moe_loads(MoeRouting::kPowerLaw, 1.2, t, 128, 8, rng, loads);
      sum += p.us(t, loads);
    }
    CHECK(sum / draws == Approx(p.us(t, {})).epsilon(0.05));
  }
  CHECK(measured_power_law_key(1.2) == "power_law_1.2");
  CHECK(measured_power_law_key(1.01) == "power_law_1.01");
  CHECK(measured_power_law_key(1.1).empty());
}

TEST_CASE("across the power-law generator's switch a count is read through the model's draws at that count",
          "[fidelity][moe]") {
  // 128 experts, top 8: the generator switches its weight range once tokens x 8 > 128, between 8 and 32 here.
  const std::vector<double> tokens = {1, 2, 4, 8, 32, 64, 128};
  const MoeRankCost k = rank_cost(5, 2.0, 0.5, false);
  OpGrid g = curve_grid(tokens, {10, 20, 40, 80, 160, 320, 640});
  g.key[7] = "power_law_1.01";
  MoePredictor ref;
  REQUIRE(ref.build(g, MoeRouting::kPowerLaw, 1.01, k, 128, 8, 1));
  // A curve 3x the model's mean over draws at every measured count: a constant residual.
  std::vector<double> us;
  for (double t : tokens) us.push_back(3 * ref.reference_rank_cost(static_cast<std::int64_t>(t)));
  g = curve_grid(tokens, us);
  g.key[7] = "power_law_1.01";
  MoePredictor p;
  REQUIRE(p.build(g, MoeRouting::kPowerLaw, 1.01, k, 128, 8, 1));
  CHECK(p.interp() == MoePredictor::Interp::kRaw);
  for (double t : {9.0, 16.0, 31.0}) CHECK(p.across_generator_switch(t));
  for (double t : {5.0, 8.0, 32.0, 48.0}) CHECK_FALSE(p.across_generator_switch(t));
  // At 16 tokens: the model's own draws there times the residual, not log-log between 8 and 32.
  const double at16 = p.reference_rank_cost(16);
  CHECK(p.us(16, {}) == Approx(3 * at16).epsilon(1e-12));
  const double r8 = p.reference_rank_cost(8), r32 = p.reference_rank_cost(32);
  const double loglog = std::exp(std::log(r8) + (std::log(16.0) - std::log(8.0)) / (std::log(32.0) - std::log(8.0)) *
                                                    (std::log(r32) - std::log(r8)));
  CHECK(std::fabs(at16 / loglog - 1) > 0.05);
  // The same value on every call and from a fresh predictor (a fixed seed per count).
  CHECK(p.us(16, {}) == p.us(16, {}));
  MoePredictor q;
  REQUIRE(q.build(g, MoeRouting::kPowerLaw, 1.01, k, 128, 8, 1));
  CHECK(q.us(16, {}) == p.us(16, {}));
  // Elsewhere the curve stays log-log, and the measured counts are exact.
  const double w = (std::log(6.0) - std::log(4.0)) / (std::log(8.0) - std::log(4.0));
  CHECK(p.us(6, {}) == Approx(std::exp(std::log(us[2]) + w * (std::log(us[3]) - std::log(us[2])))).epsilon(1e-9));
  for (std::size_t i = 0; i < tokens.size(); ++i)
    CHECK(p.us(static_cast<std::int64_t>(tokens[i]), {}) == Approx(us[i]).epsilon(1e-12));
  // A balanced reference has no switch.
  MoePredictor b;
  REQUIRE(b.build(curve_grid(tokens, us), MoeRouting::kBalanced, 1.0, k, 128, 8, 1));
  CHECK_FALSE(b.across_generator_switch(16));
}

TEST_CASE("routed loads scale the MoE table against its reference read the way the table is read", "[fidelity][moe]") {
  // 512 experts, top-22, EP 64 (8 experts a rank): the balanced assignment's slowest rank swings with the count
  // (ref_rank_cost at 3 / 4 / 6 / 7 tokens), so dividing a table read log-log or affinely between its measured
  // counts by it at the count itself made a sawtooth (H100 vLLM, bf16, hidden 2048, inter 5120, uniformly routed:
  // 181 / 120 / 214 / 123 us at 3 / 4 / 6 / 7 tokens).
  const MoeRankCost k = rank_cost(5, 1, 2, true);
  const int experts = 512, topk = 22, ep = 64;
  const std::vector<double> tokens = {1, 2, 4, 8, 16, 32, 64};
  std::vector<double> smooth;
  for (double t : tokens) smooth.push_back(50 + 10 * t);
  // Loads spread over the ranks in turn, distinct experts first: the busiest rank grows with the tokens.
  auto spread = [&](std::int64_t t) {
    std::vector<std::int64_t> c(experts, 0);
    const int per_rank = experts / ep;
    for (std::int64_t i = 0; i < t * topk; ++i) ++c[static_cast<std::size_t>((i % ep) * per_rank + (i / ep) % per_rank)];
    return c;
  };
  for (bool affine : {false, true}) {
    MoePredictor p;
    REQUIRE(p.build(curve_grid(tokens, smooth), MoeRouting::kBalanced, 1.0, k, experts, topk, ep, false));
    if (affine) p.set_interp(MoePredictor::Interp::kAffine);
    double before = 0;
    for (std::int64_t t = 2; t <= 64; ++t) {
      const double v = p.us(t, spread(t));
      // The busiest rank's load steps while the read reference rises smoothly: a token more may cost a few percent
      // less, not the third (here) to two fifths (H100's table) the reference taken at the count itself swung by.
      CHECK(v >= before * 0.95);
      before = v;
    }
    // At a measured count the reference is the assignment's own there, as before.
    const double ref8 = p.reference_rank_cost(8);
    CHECK(p.us(8, spread(8)) == Approx(smooth[3] * moe_slowest_rank(p.rank_cost(), spread(8), ep) / ref8));
  }
}

TEST_CASE("a count read through the MoE model stays between its measured neighbours when routed as the reference",
          "[fidelity][moe]") {
  // 512 experts, top-22, EP 32 (H100 vLLM fp8 hidden 2048 inter 5120): between 4 and 8 tokens the balanced
  // assignment's busiest rank runs 5 / 7 / 4 / 9 / 11 active experts at 4 / 5 / 6 / 7 / 8 tokens, so the table read
  // as the model times its residual fell below the measurement at 4 tokens (233.6 us there, 187.9 at 6).
  const int experts = 512, topk = 22, ep = 32;
  const std::vector<double> tokens = {1, 2, 4, 8, 16, 32};
  const std::vector<double> us = {69.76, 169.4, 233.6, 360.1, 507.6, 638.7};
  const MoeRankCost k = rank_cost(0, 11.7, 0.73, true);
  OpGrid g = curve_grid(tokens, us);
  g.key = {"fp8", "2048", "5120", "22", "512", "1", "32", "balanced"};
  std::vector<std::int64_t> loads;
  auto balanced = [&](std::int64_t t) {
    moe_balanced_loads(t, experts, topk, loads);
    return loads;
  };
  MoePredictor uniform, as_ref;
  REQUIRE(uniform.build(g, MoeRouting::kBalanced, 1.0, k, experts, topk, ep, false));
  uniform.set_interp(MoePredictor::Interp::kProduct);
  uniform.set_batch_routing(MoeRouting::kUniform, 1.0);
  as_ref = uniform;
  as_ref.set_batch_routing(MoeRouting::kBalanced, 1.0);
  // The model reading alone leaves the range at 6 tokens.
  CHECK(uniform.us(6, balanced(6)) < us[2] * 0.9);
  for (std::int64_t t = 5; t < 8; ++t) {
    for (const double v : {as_ref.us(t, {}), as_ref.us(t, balanced(t))}) {
      CHECK(v >= us[2]);
      CHECK(v <= us[3]);
    }
  }
  CHECK(as_ref.us(6, {}) == Approx(us[2]));
  // Another routing keeps the residual at the count: its loads do not share the reference's swing.
  Rng rng(7, 1);
  moe_loads(MoeRouting::kUniform, 1.0, 6, experts, topk, rng, loads);
  const auto uniform6 = loads;
  const double residual6 = uniform.us(6, balanced(6)) / uniform.reference_rank_cost(6);
  CHECK(uniform.us(6, uniform6) == Approx(residual6 * moe_slowest_rank(uniform.rank_cost(), uniform6, ep)));
  // Measured counts are exact either way.
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    CHECK(as_ref.us(static_cast<std::int64_t>(tokens[i]), {}) == Approx(us[i]).epsilon(1e-12));
    CHECK(uniform.us(static_cast<std::int64_t>(tokens[i]), balanced(static_cast<std::int64_t>(tokens[i]))) ==
          Approx(us[i]).epsilon(1e-12));
  }

  // Across the power-law generator's switch (32 experts, top 4: between 8 and 16 tokens) on a curve the kernel
  // keeps flat (H100 vLLM MXFP4, alpha 1.2: 90.97 / 92.04 us at 8 / 16), the model's jump at the switch lifted 9
  // tokens to 125.8 us; routed as the reference it stays between them.
  const std::vector<double> pt = {1, 2, 4, 8, 16, 32};
  const std::vector<double> flat = {70.67, 89.72, 90.04, 90.97, 92.04, 92.47};
  OpGrid pg = curve_grid(pt, flat);
  pg.key = {"w4a16_mxfp4", "2880", "2880", "4", "32", "1", "4", "power_law_1.2"};
  MoePredictor pl;
  REQUIRE(pl.build(pg, MoeRouting::kPowerLaw, 1.2, rank_cost(0, 10, 0.5, true), 32, 4, 4));
  REQUIRE(pl.across_generator_switch(9));
  MoePredictor unbounded = pl;
  unbounded.set_batch_routing(MoeRouting::kUniform, 1.0);
  moe_loads(MoeRouting::kPowerLaw, 1.2, 9, 32, 4, rng, loads);
  const double r9 = pl.reference_rank_cost(9);
  CHECK(unbounded.us(9, loads) / moe_slowest_rank(pl.rank_cost(), loads, 4) * r9 > flat[4] * 1.05);
  pl.set_batch_routing(MoeRouting::kPowerLaw, 1.2);
  for (std::int64_t t = 9; t < 16; ++t) {
    CHECK(pl.us(t, {}) >= flat[3]);
    CHECK(pl.us(t, {}) <= flat[4]);
  }
  CHECK(pl.us(9, loads) == Approx(pl.us(9, {}) * moe_slowest_rank(pl.rank_cost(), loads, 4) / r9));
}
