#include "core/fidelity/collective_model.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/fidelity/profile_tables.h"
#include "core/fidelity/table_cost_model.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

struct Tables {
  OpTable nccl, custom;
  Tables() {
    auto a = test::catalog().load_text("H100-SXM", "nccl.json");
    auto b = test::catalog().load_text("H100-SXM/vllm", "custom_allreduce.json");
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(parse_op_table(*a, nccl).empty());
    REQUIRE(parse_op_table(*b, custom).empty());
  }
};

}  // namespace

TEST_CASE("small all-reduces use vLLM's custom all-reduce, graph replays cheaper than eager",
          "[fidelity][collective]") {
  Tables t;
  CollectiveModel c;
  c.set_tables(&t.nccl, &t.custom, 8.0 * (1 << 20));
  const CollectiveTime graph = c.all_reduce(4096 * 64, 4, true);
  const CollectiveTime eager = c.all_reduce(4096 * 64, 4, false);
  CHECK(graph.ok);
  CHECK(graph.custom);
  CHECK(eager.custom);
  CHECK(graph.us < eager.us);
  // Exact at a measured size: the graph table's value.
  const OpGrid* g = t.custom.find({"graph", "4"});
  REQUIRE(g != nullptr);
  CHECK(c.all_reduce(g->axes[0][5], 4, true).us == g->values[5]);
}

TEST_CASE("above the custom kernel's buffer the engine's dispatched all-reduce is read from its graph table - "
          "NCCL beyond the table's sizes, scaled linearly beyond NCCL's",
          "[fidelity][collective]") {
  Tables t;
  CollectiveModel c;
  c.set_tables(&t.nccl, &t.custom, 8.0 * (1 << 20));
  const OpGrid* cg = t.custom.find({"graph", "8"});
  REQUIRE(cg != nullptr);
  // 16M elements (32 MiB): vLLM's symmetric-memory all-reduce at 8 GPUs, measured in the graph table; eager steps
  // read the same (the eager rows add the benchmark's copy of the input).
  const std::size_t i = std::find(cg->axes[0].begin(), cg->axes[0].end(), 16777216.0) - cg->axes[0].begin();
  REQUIRE(i < cg->axes[0].size());
  const CollectiveTime mid = c.all_reduce(16777216.0, 8, false);
  CHECK(mid.custom);
  CHECK(mid.us == cg->values[i]);
  CHECK(c.all_reduce(16777216.0, 8, true).us == mid.us);
  // The measured crossovers this reading relies on: at 8 GPUs the dispatched all-reduce beats NCCL below 64 MiB
  // (symmetric memory), at 2 GPUs it is slower (custom two-shot up to 64 MiB), and both equal NCCL above.
  CHECK(c.all_reduce(8388608.0, 8, true).us < 0.9 * c.nccl("all_reduce", 8388608.0, 8).us);
  CHECK(c.all_reduce(16777216.0, 2, true).us > 1.05 * c.nccl("all_reduce", 16777216.0, 2).us);
  CHECK(c.all_reduce(134217728.0, 8, true).us == Approx(c.nccl("all_reduce", 134217728.0, 8).us).epsilon(0.02));
  // Beyond the table's largest message: NCCL.
  const double top = cg->axes[0].back();
  const CollectiveTime beyond_custom = c.all_reduce(2 * top, 8, true);
  CHECK_FALSE(beyond_custom.custom);
  CHECK(beyond_custom.us == Approx(c.nccl("all_reduce", 2 * top, 8).us));
  const OpGrid* g = t.nccl.find({"all_reduce", "half", "8"});
  REQUIRE(g != nullptr);
  const double hi = g->axes[0].back();
  const CollectiveTime beyond = c.nccl("all_reduce", 4 * hi, 8);
  CHECK(beyond.extrapolated);
  CHECK(beyond.us == Approx(4 * g->values.back()));
  // Monotone in size over the measured range.
  double prev = 0;
  for (double e = 1024; e <= hi; e *= 2) {
    const double us = c.nccl("all_reduce", e, 8).us;
    CHECK(us >= prev * 0.9);  // measurements are noisy at the latency floor
    prev = us;
  }
  // No table for 16 GPUs (inter-node): not ok, the cost model falls back to the datasheet.
  CHECK_FALSE(c.all_reduce(1e6, 16, true).ok);
  CHECK(c.all_reduce(1e6, 1, true).us == 0);
}

TEST_CASE("an engine with the custom kernel but not vLLM's dispatch above its buffer reads NCCL there (SGLang)",
          "[fidelity][collective]") {
  Tables t;
  CollectiveModel c;
  c.set_tables(&t.nccl, &t.custom, 8.0 * (1 << 20), /*beyond_buffer=*/false);
  // Up to the 8 MiB buffer (4M 16-bit elements): the custom kernel, as for vLLM.
  const CollectiveTime small = c.all_reduce(4096 * 64, 8, true);
  CHECK(small.custom);
  CollectiveModel v;
  v.set_tables(&t.nccl, &t.custom, 8.0 * (1 << 20));
  CHECK(small.us == v.all_reduce(4096 * 64, 8, true).us);
  // Above it NCCL, where vLLM's table holds its symmetric-memory path.
  const CollectiveTime big = c.all_reduce(16777216.0, 8, true);
  CHECK_FALSE(big.custom);
  CHECK(big.us == c.nccl("all_reduce", 16777216.0, 8).us);
  CHECK(v.all_reduce(16777216.0, 8, true).custom);
}

TEST_CASE("SGLang roles price the custom all-reduce up to its buffer and NCCL above, vLLM roles the whole table",
          "[fidelity][collective]") {
  Parallelism p;
  p.tp_attn = p.tp_ffn = 8;
  auto role = [&](const std::string& backend) {
    EngineOptions e;
    e.backend = backend;
    std::string err;
    auto m = make_cost_model(test::bundled_model("Qwen3-32B"), test::bundled_gpu("H100-SXM"), p, e, &test::catalog(),
                             1, err);
    REQUIRE(err.empty());
    return m;
  };
  auto sg = role("sglang");
  auto vl = role("vllm");
  auto* s = dynamic_cast<TableCostModel*>(sg.get());
  auto* v = dynamic_cast<TableCostModel*>(vl.get());
  REQUIRE(s != nullptr);
  REQUIRE(v != nullptr);
  Tables t;
  CollectiveModel nccl_only;
  nccl_only.set_tables(&t.nccl, nullptr, 0);
  const double small = 64 * 5120.0, big = 16384 * 5120.0;  // 64 and 16384 tokens of hidden states
  CHECK(s->all_reduce_us(small, true) == v->all_reduce_us(small, true));
  CHECK(s->all_reduce_us(small, true) < nccl_only.all_reduce(small, 8, true).us);
  CHECK(s->all_reduce_us(big, true) == nccl_only.all_reduce(big, 8, true).us);
  CHECK(v->all_reduce_us(big, true) != s->all_reduce_us(big, true));
}

TEST_CASE("on a GPU without vLLM's symmetric-memory all-reduce the custom kernel's curve ends at its buffer",
          "[fidelity][collective]") {
  // A100 (compute capability 8.0): vLLM sends 8 MiB and more to NCCL, so its table's cells from there on are NCCL's.
  ProfileTables a100, h100;
  std::string err;
  REQUIRE(load_profile_tables(test::catalog(), "A100-80G", "vllm", test::bundled_model("Llama-3.1-70B"), a100, err));
  REQUIRE(load_profile_tables(test::catalog(), "H100-SXM", "vllm", test::bundled_model("Llama-3.1-70B"), h100, err));
  CHECK(a100.custom_allreduce_nccl_at_buffer);
  CHECK_FALSE(h100.custom_allreduce_nccl_at_buffer);
  const OpGrid* g = a100.custom_allreduce.find({"graph", "2"});
  REQUIRE(g != nullptr);
  const auto at = [&](double elements) {
    const std::size_t i = std::find(g->axes[0].begin(), g->axes[0].end(), elements) - g->axes[0].begin();
    REQUIRE(i < g->axes[0].size());
    return g->values[i];
  };
  const double mib = 1 << 20;
  const double t1 = at(mib), t2 = at(2 * mib), t4 = at(4 * mib);  // elements: 2, 4 and 8 MiB of bf16
  REQUIRE(t4 > 2 * t2);                                           // the jump to NCCL at the buffer
  CollectiveModel split, joined;
  split.set_tables(&a100.nccl, &a100.custom_allreduce, 8 * mib, true, /*split_at_buffer=*/true);
  joined.set_tables(&a100.nccl, &a100.custom_allreduce, 8 * mib);
  // 6 MiB: the custom kernel, along its 2 -> 4 MiB segment, not halfway up to NCCL's 8 MiB cell.
  const CollectiveTime six = split.all_reduce(3 * mib, 2, true);
  CHECK(six.custom);
  CHECK(six.extrapolated);
  CHECK(six.us == Approx(t2 + (t2 - t1)));
  CHECK(joined.all_reduce(3 * mib, 2, true).us == Approx((t2 + t4) / 2));
  // Measured sizes on either side read as measured.
  CHECK(split.all_reduce(2 * mib, 2, true).us == Approx(t2));
  CHECK(split.all_reduce(4 * mib, 2, true).us == Approx(t4));
  // A curve read beyond its first size goes along its first segment, at least in proportion to size.
  const LogCurve c({10, 20, 40}, {100, 150, 250});
  CHECK(CollectiveModel::lookup_extended(c, 5).us == Approx(75));
  const LogCurve steep({10, 20}, {100, 300});
  CHECK(CollectiveModel::lookup_extended(steep, 5).us == Approx(50));  // 0 along the segment, 50 in proportion
  CHECK(CollectiveModel::lookup_extended(c, 80).us == Approx(450));
}

TEST_CASE("a collective's curve is read non-decreasing in size: a lone slow cell takes its faster neighbour's time, "
          "a noisy flat run its median",
          "[fidelity][collective]") {
  const std::vector<double> sizes{256, 512, 1024, 2048, 4096, 8192, 16384};
  // H100 NCCL all-to-all over 4 GPUs, 256-4096 elements: 17.67 us at 512 among 6.5-7.6 (one slow repetition).
  const LogCurve spike = CollectiveModel::monotone_curve(sizes, {6.48, 17.67, 7.00, 7.61, 7.06, 7.49, 8.83});
  CHECK(spike.ys() == std::vector<double>{6.48, 7.00, 7.00, 7.06, 7.06, 7.49, 8.83});
  // A flat run (host-bound eager all-reduce) keeps the lower medians of its pooled blocks, not its fastest cell
  // (20.34); the rise is kept.
  const LogCurve flat = CollectiveModel::monotone_curve(sizes, {22.07, 20.78, 22.30, 23.20, 21.26, 20.34, 25.27});
  CHECK(flat.ys() == std::vector<double>{20.78, 20.78, 21.26, 21.26, 21.26, 21.26, 25.27});
  // A rising curve is unchanged; unmeasured cells are skipped.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const LogCurve rising = CollectiveModel::monotone_curve(sizes, {5.0, nan, 5.5, 6.0, 9.0, 15.0, 27.0});
  CHECK(rising.xs() == std::vector<double>{256, 1024, 2048, 4096, 8192, 16384});
  CHECK(rising.ys() == std::vector<double>{5.0, 5.5, 6.0, 9.0, 15.0, 27.0});
  // The model reads the fitted curve: at the spike's size the NCCL table prices its neighbour's time.
  Tables t;
  CollectiveModel c;
  c.set_tables(&t.nccl, nullptr, 0);
  const OpGrid* g = t.nccl.find({"alltoall", "half", "4"});
  REQUIRE(g != nullptr);
  REQUIRE(g->axes[0][1] == 512);
  REQUIRE(g->values[1] > 2 * g->values[2]);
  CHECK(c.nccl("alltoall", 512, 4).us == g->values[2]);
}

TEST_CASE("a rising collective is read between sizes halfway from the chord to the bound on the side it bends",
          "[fidelity][collective]") {
  // The fastest of two alpha-beta laws, 10 + x / 100 (one-shot) and 40 + x / 400 (two-shot), measured at
  // 1000, 2000, 8000, 16000: the switch (at 4000) lies between 2000 and 8000.
  auto envelope = [](double x) { return std::min(10 + x / 100, 40 + x / 400); };
  const std::vector<double> xs{1000, 2000, 8000, 16000};
  std::vector<double> ys;
  for (double x : xs) ys.push_back(envelope(x));
  const LogCurve c(xs, ys);
  // At 4000 the chord (30 + 30 x 2000 / 6000 = 40) undershoots the envelope's 50; the left segment's line gives 50,
  // the right one's 50, so the bound is 50 and the reading 45: halfway.
  const double chord = c.eval_affine(4000);
  CHECK(chord == Approx(40));
  CHECK(CollectiveModel::between_sizes(c, 4000, chord) == Approx(45));
  CHECK(CollectiveModel::lookup(c, 4000).us == Approx(45));
  // Still exact at the measured sizes.
  CHECK(CollectiveModel::lookup(c, 2000).us == Approx(30));
  // Convex (a latency floor giving way to a bandwidth slope): at 3000 the chord reads 16, the neighbours' lines 14
  // and 15, both below it; the tighter lower bound is 15, so 15.5.
  const LogCurve convex({1000, 2000, 4000, 8000}, {10, 12, 20, 40});
  CHECK(convex.eval_affine(3000) == Approx(16));
  CHECK(CollectiveModel::lookup(convex, 3000).us == Approx(15.5));
  // Lines on different sides of the chord (30 above, 16.25 below its 20.5): the chord.
  const LogCurve mixed({1000, 2000, 4000, 8000}, {10, 20, 21, 40});
  CHECK(CollectiveModel::lookup(mixed, 3000).us == Approx(20.5));
  // A falling pair reads log-log as before; a curve of two sizes has no neighbouring segment: the chord.
  const LogCurve falling({1000, 2000, 4000, 8000}, {10, 20, 15, 30});
  CHECK(CollectiveModel::lookup(falling, 3000).us == Approx(falling.eval_affine(3000)));
  const LogCurve two({1000, 4000}, {10, 40});
  CHECK(CollectiveModel::lookup(two, 2000).us == Approx(20));
  // Never above the larger size's time (the curve does not fall as the message grows), which binds on a curve read
  // as measured whose next segment falls: at 3000 the left line reaches 30, the right one 21.5, the larger size
  // takes 21, so the bound is 21 and the reading 20.75.
  const LogCurve dipping({1000, 2000, 4000, 8000}, {10, 20, 21, 19});
  CHECK(CollectiveModel::lookup(dipping, 3000).us == Approx(20.75));
  // In an end segment only one line: the chord (2000 -> 4000 of the same curve read from its last three sizes).
  const LogCurve last({2000, 4000, 8000}, {20, 21, 22});
  CHECK(CollectiveModel::lookup(last, 6000).us == Approx(21.5));
}
