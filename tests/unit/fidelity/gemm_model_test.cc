#include "core/fidelity/gemm_model.h"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "core/fidelity/interpolation.h"
#include "core/fidelity/op_table.h"

using namespace servesim;

namespace {

/// A GEMM grid (n, k, m) filled from `f`.
template <typename F>
OpGrid gemm_grid(const std::vector<double>& ns, const std::vector<double>& ks, const std::vector<double>& ms, F f) {
  OpGrid g;
  g.key = {"bfloat16"};
  g.axes = {ns, ks, ms};
  for (const auto& a : g.axes) {
    std::vector<double> l;
    for (double v : a) l.push_back(interp_log(v));
    g.log_axes.push_back(l);
  }
  g.strides = {ks.size() * ms.size(), ms.size(), 1};
  for (double n : ns)
    for (double k : ks)
      for (double m : ms) {
        const double v = f(n, k, m);
        g.values.push_back(v);
        g.log_values.push_back(std::isnan(v) ? v : interp_log(v));
      }
  return g;
}

/// Overhead plus work affine in n and in k (bilinear): what a GEMM of one kernel costs along n and k.
double affine(double n, double k, double m) { return 4.0 + 0.002 * n + 0.001 * k + 1e-6 * n * k * (1 + m / 64); }

}  // namespace

TEST_CASE("interp_pair_affine: linear where latency rises, geometric where it falls, always between",
          "[fidelity][gemm]") {
  CHECK(interp_pair_affine(10, 30, 0.25, 0.5) == Approx(15).epsilon(1e-15));
  CHECK(interp_pair_affine(30, 10, 0.25, 0.5) == Approx(std::sqrt(300.0)).epsilon(1e-14));
  CHECK(interp_pair_affine(7, 7, 0.3, 0.6) == Approx(7).epsilon(1e-15));
  for (double w : {0.0, 0.1, 0.5, 0.9, 1.0}) {
    for (auto ab : {std::pair<double, double>{5, 50}, {50, 5}}) {
      const double v = interp_pair_affine(ab.first, ab.second, w, std::sqrt(w));
      CHECK(v >= std::min(ab.first, ab.second) - 1e-12);
      CHECK(v <= std::max(ab.first, ab.second) + 1e-12);
    }
  }
}

TEST_CASE("GEMM curves are exact on the grid and reproduce work affine in n and k between grid lines",
          "[fidelity][gemm]") {
  const std::vector<double> ns = {64, 256, 1024, 4096}, ks = {128, 512, 2048}, ms = {1, 16, 256, 4096};
  const OpGrid g = gemm_grid(ns, ks, ms, affine);
  for (double n : ns)
    for (double k : ks) {
      const GemmCurve c = make_gemm_curve(g, n, k);
      REQUIRE(c.ok());
      CHECK_FALSE(c.extrapolated);
      for (double m : ms) CHECK(c.us(m) == affine(n, k, m));  // the measurement itself
    }
  // Off the grid in n and k at once: bilinear data is reproduced (log-log interpolation would bend it).
  for (double n : {100.0, 700.0, 3000.0})
    for (double k : {200.0, 1500.0}) {
      const GemmCurve c = make_gemm_curve(g, n, k);
      for (double m : ms) CHECK(c.us(m) == Approx(affine(n, k, m)).epsilon(1e-12));
    }
}

TEST_CASE("GEMM curves are monotone in n where the data is, between the neighbours where it is not, and flag "
          "shapes outside the grid",
          "[fidelity][gemm]") {
  const std::vector<double> ns = {32, 64, 128, 256}, ks = {4096}, ms = {1, 64};
  // A slower kernel path at n = 32 (as block-scaled FP8 falls back below its tile): latency falls from 32 to 64.
  const OpGrid g = gemm_grid(ns, ks, ms, [](double n, double, double m) { return n == 32 ? 200.0 : 50 + n / 8 + m; });
  double prev = 0;
  for (double n = 64; n <= 256; n += 8) {
    const double v = make_gemm_curve(g, n, 4096).us(1);
    CHECK(v >= prev);
    prev = v;
  }
  const double mid = make_gemm_curve(g, std::sqrt(32.0 * 64.0), 4096).us(1);  // between the slow and fast paths
  CHECK(mid < 200.0);
  CHECK(mid > 58.0);
  CHECK(mid == Approx(std::sqrt(200.0 * 59.0)).epsilon(1e-12));  // geometric: halfway in log n
  bool ex = false;
  const GemmCurve out = make_gemm_curve(g, 512, 4096);
  CHECK(out.extrapolated);
  CHECK(out.us(1, &ex) == Approx(2 * (50 + 256.0 / 8 + 1)).epsilon(1e-12));  // clamped, FLOP-scaled
  CHECK(ex);
}
