// Glitch cells of measured kernel tables: found on every axis, read as unmeasured by the simulator's loader.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/fidelity/attention_predictor.h"
#include "core/fidelity/op_table.h"
#include "core/fidelity/profile_tables.h"
#include "tests/test_support.h"
#include "tests/unit/fidelity/attention_test_support.h"

using namespace servesim;

namespace {

/// A grid from its axes and row-major values (NaN: unmeasured).
OpGrid grid_of(std::vector<std::vector<double>> axes, std::vector<double> values) {
  OpGrid g;
  g.axes = std::move(axes);
  for (const auto& a : g.axes) {
    std::vector<double> l;
    for (double v : a) l.push_back(std::log(v));
    g.log_axes.push_back(l);
  }
  g.strides.assign(g.axes.size(), 1);
  for (std::size_t a = g.axes.size(); a-- > 1;) g.strides[a - 1] = g.strides[a] * g.axes[a].size();
  g.values = std::move(values);
  for (double v : g.values) g.log_values.push_back(std::isnan(v) ? v : std::log(v));
  return g;
}

}  // namespace

TEST_CASE("a cell more than twice every neighbour on every axis is read as unmeasured", "[fidelity][tables]") {
  const double nan = std::nan("");
  // 3 x 4 grid: (1, 1) is a glitch (30 among 10-12); (2, 2) steps up from its smaller neighbours but not over its
  // larger one (a kernel switch); (0, 3) is more than twice the length before it but not the batch after it.
  OpGrid g = grid_of({{1, 2, 4}, {16, 32, 64, 128}}, {10, 10, 11, 25,  //
                                                     10, 30, 12, 13,  //
                                                     11, 12, 30, 31});
  CHECK(mask_glitch_cells(g) == 1);
  CHECK(std::isnan(g.values[1 * 4 + 1]));
  CHECK(std::isnan(g.log_values[1 * 4 + 1]));
  CHECK(g.values[2 * 4 + 2] == 30);
  CHECK(g.values[0 * 4 + 3] == 25);
  // Every direction must agree: a cell over three neighbours but not the fourth stays.
  OpGrid h = grid_of({{1, 2, 4}, {16, 32, 64}}, {10, 10, 10, 10, 30, 16, 10, 10, 10});
  CHECK(mask_glitch_cells(h) == 0);
  // One dimension: a slow count between two fast ones goes; a slow first count (no smaller neighbour) stays.
  OpGrid c = grid_of({{1, 2, 4, 8, 16}}, {90, 40, 100, 45, 50});
  CHECK(mask_glitch_cells(c) == 1);
  CHECK(std::isnan(c.values[2]));
  CHECK(c.values[0] == 90);
  // Neighbours that are unmeasured do not count; one measured neighbour is not enough.
  OpGrid d = grid_of({{1, 2, 4}}, {nan, 50, 10});
  CHECK(mask_glitch_cells(d) == 0);
}

TEST_CASE("kernel tables are loaded without their glitches, collectives as measured", "[fidelity][tables]") {
  CHECK(reads_without_glitches("gemm"));
  CHECK(reads_without_glitches("generation_attention"));
  CHECK(reads_without_glitches("moe"));
  CHECK(reads_without_glitches("mla_context"));
  CHECK_FALSE(reads_without_glitches("nccl"));
  CHECK_FALSE(reads_without_glitches("custom_allreduce"));
  // A100's vLLM decode table holds four cells of 2.2-3.6x every neighbour (one request over 8 keys: 44.62 us
  // where 4 and 16 keys take 12.25 and 12.23 us, and 2 requests 12.46).
  ProfileTables a100;
  std::string err;
  REQUIRE(load_profile_tables(test::catalog(), "A100-80G", "vllm", test::bundled_model("Llama-3.1-70B"), a100, err));
  CHECK(a100.generation_attention.glitch_cells == 4);
  CHECK(a100.nccl.glitch_cells == 0);
  const OpTable raw = test::bundled_table("A100-80G/vllm", "generation_attention.json");
  const OpGrid* measured = raw.find({"bfloat16", "128", "4", "1"});
  const OpGrid* read = a100.generation_attention.find({"bfloat16", "128", "4", "1"});
  REQUIRE(measured != nullptr);
  REQUIRE(read != nullptr);
  const std::size_t ns = measured->axes[1].size();
  REQUIRE(measured->axes[1][2] == 8);
  CHECK(measured->values[2] == Approx(44.62));
  CHECK(std::isnan(read->values[2]));
  CHECK(read->values[1] == measured->values[1]);  // its neighbours as measured
  CHECK(read->values[ns + 2] == measured->values[ns + 2]);
  // Priced: one request over 8 keys now reads about its neighbours' 12.2-12.5 us (flagged: a missing corner),
  // where the measured grid gave the glitch itself.
  AttentionGeometry g = attention_test::a100_fa2_geo(4, 1);
  AttentionPredictor from_read, from_measured;
  REQUIRE(from_read.build(*read, true, g, true));
  REQUIRE(from_measured.build(*measured, true, g, true));
  bool ex = false;
  const double now = from_read.decode_us({8}, &ex);
  CHECK(now == Approx(12.3).epsilon(0.05));
  CHECK(ex);
  CHECK(from_measured.decode_us({8}) > 40);
}
