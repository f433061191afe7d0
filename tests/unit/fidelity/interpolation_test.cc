#include "core/fidelity/interpolation.h"

#include <cmath>

#include <catch2/catch.hpp>

#include "core/fidelity/op_table.h"
#include "core/sim/det_math.h"

using namespace servesim;

namespace {

/// A 2-D table (batch x length) with latency = 10 + b * s / 100 and one unmeasured corner.
const char* kTable = R"({
 "format": "servesim-op-table/1", "gpu": "TEST", "backend": "vllm", "backend_version": "0", "op": "t",
 "unit": "us", "key_fields": ["dtype", "heads"], "axis_fields": ["batch", "isl"],
 "source": {"file": "x", "rows": 8},
 "tables": [
  {"key":["bfloat16",8],"kernel":"k","axes":[[1,2,4],[16,64,256]],"values":[10.16,10.64,12.56,10.32,11.28,15.12,10.64,12.56,null]},
  {"key":["fp8",8],"kernel":"k","axes":[[1,2],[16,64]],"values":[5,6,7,8]}
 ]})";

OpTable parsed() {
  OpTable t;
  REQUIRE(parse_op_table(kTable, t).empty());
  return t;
}

}  // namespace

TEST_CASE("interp_log and interp_exp agree with the reference log/exp", "[fidelity][interpolation]") {
  for (double x : {1e-6, 0.3, 1.0, 2.0, 3.7, 1e3, 123456.789, 1e12}) {
    CHECK(interp_log(x) == Approx(det_log(x)).epsilon(1e-14));
    CHECK(interp_exp(interp_log(x)) == Approx(x).epsilon(1e-14));
  }
}

TEST_CASE("op tables parse with keys as text, NaN for unmeasured cells and row-major strides",
          "[fidelity][interpolation]") {
  const OpTable t = parsed();
  REQUIRE(t.grids.size() == 2);
  CHECK(t.key_fields == std::vector<std::string>{"dtype", "heads"});
  const OpGrid* g = t.find({"bfloat16", "8"});
  REQUIRE(g != nullptr);
  CHECK(g->stride(0) == 3);
  CHECK(g->stride(1) == 1);
  CHECK(std::isnan(g->values[8]));
  CHECK(t.find({"bfloat16", "16"}) == nullptr);
  OpTable bad;
  CHECK_FALSE(parse_op_table("{\"format\": \"other\"}", bad).empty());
  CHECK_FALSE(parse_op_table(R"({"format":"servesim-op-table/1","key_fields":["a"],"axis_fields":["x"],
    "tables":[{"key":["a"],"axes":[[1,2]],"values":[1]}]})", bad).empty());  // values do not fill the grid
}

TEST_CASE("interpolation is exact at every measured grid point", "[fidelity][interpolation]") {
  const OpTable t = parsed();
  const OpGrid& g = *t.find({"bfloat16", "8"});
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      const double v = g.values[i * 3 + j];
      if (std::isnan(v)) continue;
      const double xy[2] = {g.axes[0][i], g.axes[1][j]};
      const GridValue r = interpolate_at(g, xy);
      CHECK(r.ok);
      CHECK_FALSE(r.extrapolated);
      CHECK(r.value == v);  // bit-exact: the measured value is returned as is
    }
}

TEST_CASE("interpolation is monotone where the data is and lies between the neighbours",
          "[fidelity][interpolation]") {
  const OpTable t = parsed();
  const OpGrid& g = *t.find({"bfloat16", "8"});
  double prev = 0;
  for (double s = 16; s <= 256; s *= 1.1) {
    const double xy[2] = {2, s};
    const GridValue r = interpolate_at(g, xy);
    CHECK(r.ok);
    CHECK(r.value >= prev);
    CHECK(r.value >= 10.32);
    CHECK(r.value <= 15.12);
    prev = r.value;
  }
  // Between batch 1 and 2 at a measured length: between the two measurements.
  const double mid[2] = {1.5, 64};
  const GridValue r = interpolate_at(g, mid);
  CHECK(r.value > 10.64);
  CHECK(r.value < 11.28);
}

TEST_CASE("log-log interpolation reproduces a power law between grid points", "[fidelity][interpolation]") {
  const LogCurve c({1, 4, 16, 64}, {1, 16, 256, 4096});  // y = x^2
  CHECK(c.eval(2) == Approx(4).epsilon(1e-12));
  CHECK(c.eval(8) == Approx(64).epsilon(1e-12));
  CHECK(c.eval(30) == Approx(900).epsilon(1e-12));
  CHECK(c.eval(16) == 256);
}

TEST_CASE("points outside the grid are clamped and flagged", "[fidelity][interpolation]") {
  const OpTable t = parsed();
  const OpGrid& g = *t.find({"bfloat16", "8"});
  const double above[2] = {1, 1024};
  const GridValue a = interpolate_at(g, above);
  CHECK(a.ok);
  CHECK(a.extrapolated);
  CHECK(a.value == 12.56);  // the edge value; the caller scales from the edge
  const double below[2] = {0.5, 16};
  CHECK(interpolate_at(g, below).extrapolated);
  // A cell with an unmeasured corner is flagged and uses the measured corners.
  const double corner[2] = {3, 128};
  const GridValue c = interpolate_at(g, corner);
  CHECK(c.ok);
  CHECK(c.extrapolated);
  bool clamped = false;
  const LogCurve curve({1, 2}, {3, 4});
  CHECK(curve.eval(10, &clamped) == 4);
  CHECK(clamped);
  AxisPos p = locate_log(g.axes[1], g.log_axes[1], 1000);
  CHECK(p.clamped);
  CHECK(p.clamped_to == 256);
}

TEST_CASE("eval_affine: exact at the points, alpha-beta between rising points, log-log where falling, "
          "clamped and flagged outside",
          "[fidelity][interpolation]") {
  // t = 5 + x / 100 (latency plus size over bandwidth) on a geometric size grid, then one falling segment.
  const std::vector<double> xs = {256, 1024, 4096, 16384, 65536};
  std::vector<double> ys;
  for (double x : xs) ys.push_back(5 + x / 100);
  ys.back() = ys[3] / 2;  // a faster protocol at the largest size
  const LogCurve c(xs, ys);
  for (std::size_t i = 0; i < xs.size(); ++i) CHECK(c.eval_affine(xs[i]) == ys[i]);
  for (double x : {300.0, 2000.0, 10000.0}) {
    CHECK(c.eval_affine(x) == Approx(5 + x / 100).epsilon(1e-13));
    CHECK(c.eval(x) != Approx(5 + x / 100).epsilon(1e-3));  // log-log bends the alpha-beta line
  }
  CHECK(c.eval_affine(32768) == Approx(c.eval(32768)).epsilon(1e-15));  // falling: geometric
  CHECK(c.eval_affine(32768) < ys[3]);
  CHECK(c.eval_affine(32768) > ys[4]);
  bool lo = false, hi = false, in = false;
  CHECK(c.eval_affine(100, &lo) == ys.front());
  CHECK(c.eval_affine(1e6, &hi) == ys.back());
  c.eval_affine(2000, &in);
  CHECK(lo);
  CHECK(hi);
  CHECK_FALSE(in);
}

TEST_CASE("a curve past its last point: affine from the point at most half its x, between flat and proportional",
          "[fidelity][interpolation]") {
  CHECK(half_edge_index({1, 2, 4, 8}) == 2);      // 4 <= 8 / 2
  CHECK(half_edge_index({1, 2, 3, 5, 8}) == 2);   // 3, not 5 (a neighbouring step)
  CHECK(half_edge_index({10, 12, 16}) == 0);      // none at most half: the first
  // t0 + c x with t0 = 20, c = 0.5: reproduced past the end (in proportion it would be 2 x 84 at x = 256).
  const LogCurve affine({16, 64, 128}, {28, 52, 84});
  CHECK(affine.past_end(256) == Approx(148).epsilon(1e-12));
  // Falling towards the end: flat; steeper than proportional: proportional; one point: proportional.
  CHECK(LogCurve({16, 64, 128}, {28, 90, 84}).past_end(256) == Approx(84).epsilon(1e-12));
  CHECK(LogCurve({16, 64, 128}, {28, 10, 84}).past_end(256) == Approx(168).epsilon(1e-12));
  CHECK(LogCurve({128}, {84}).past_end(256) == Approx(168).epsilon(1e-12));
}
