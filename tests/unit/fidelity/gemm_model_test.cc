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
  // Past the last n line: affine through n = 256 and 128 (the line at most half the edge), as the data is.
  CHECK(out.us(1, &ex) == Approx(50 + 512.0 / 8 + 1).epsilon(1e-12));
  CHECK(ex);
}

TEST_CASE("past a GEMM grid's upper edge latency is read affinely from the edge, between flat and proportional",
          "[fidelity][gemm]") {
  // past_edge_us: the line through (x0, y0) and (x1, y1), kept within [y1, y1 x / x1].
  CHECK(past_edge_us(100, 30, 200, 50, 400) == Approx(90).epsilon(1e-15));     // affine: 50 + 0.2 x 200
  CHECK(past_edge_us(100, 10, 200, 50, 400) == Approx(100).epsilon(1e-15));    // steeper than proportional: capped
  CHECK(past_edge_us(100, 60, 200, 50, 400) == Approx(50).epsilon(1e-15));     // falling: flat
  CHECK(past_edge_us(100, 0, 200, 50, 400) == Approx(100).epsilon(1e-15));     // no second line: proportional
  // Work affine in n, k and m with an overhead: reproduced past every edge, where scaling the edge in proportion
  // would carry the overhead along (4 us here, x2 at twice the edge).
  const std::vector<double> ns = {256, 1024, 2048, 4096}, ks = {512, 1024, 2048}, ms = {1, 64, 512, 1024};
  auto work = [](double n, double k, double m) { return 4.0 + 1e-6 * n * k + 2e-9 * n * k * m; };
  const OpGrid g = gemm_grid(ns, ks, ms, work);
  for (double n : {3000.0, 8192.0})
    for (double k : {1024.0, 4096.0}) {
      const GemmCurve c = make_gemm_curve(g, n, k);
      CHECK(c.extrapolated == (n > 4096 || k > 2048));
      // Past n and k at once: along n from two lines each read past k, exact too (affine in n at any one k).
      for (double m : {1.0, 512.0, 2048.0, 4096.0}) {
        bool ex = false;
        CHECK(c.us(m, &ex) == Approx(work(n, k, m)).epsilon(1e-12));
        CHECK(ex == (n > 4096 || k > 2048 || m > 1024));
      }
    }
  // In proportion (the reading before), twice the edge in n and in k at one token: four times the edge's cost.
  CHECK(make_gemm_curve(g, 8192, 4096).us(1) < 4 * work(4096, 2048, 1) - 3 * 4.0 + 1e-9);
}

TEST_CASE("a GEMM cell whose largest corner is unmeasured scales from the measured side, not flat",
          "[fidelity][gemm]") {
  // TensorRT-LLM's FP8-block grid leaves out n and k both >= 51,200; work proportional to n k (the large-shape
  // regime) between measured lines.
  const std::vector<double> ns = {4096, 8192, 51200}, ks = {4096, 8192, 51200}, ms = {1, 256};
  auto work = [](double n, double k, double m) { return n >= 51200 && k >= 51200 ? std::nan("") : 1e-5 * n * k * (1 + m / 256); };
  const OpGrid g = gemm_grid(ns, ks, ms, work);
  for (double m : ms) {
    // A kept n line read between k = 8192 and the missing k = 51,200: k / 8192 times the k = 8192 value.
    CHECK(make_gemm_curve(g, 51200, 16384).us(m) == Approx(work(51200, 16384, m)).epsilon(1e-12));
    // Between n lines at the missing k: the n = 8192 line scaled by n / 8192.
    CHECK(make_gemm_curve(g, 16384, 51200).us(m) == Approx(work(16384, 51200, m)).epsilon(1e-12));
    // Inside the cell: along k on the n = 8192 line (affine), along n from it (scaled).
    CHECK(make_gemm_curve(g, 16384, 16384).us(m) == Approx(work(16384, 16384, m)).epsilon(1e-12));
    // Cells whose corners are all measured are read as before.
    CHECK(make_gemm_curve(g, 6000, 6000).us(m) == Approx(work(6000, 6000, m)).epsilon(1e-12));
  }
  CHECK_FALSE(make_gemm_curve(g, 16384, 16384).extrapolated);  // inside the measured axes
}

namespace {

/// Token counts as the measured grids space them: dense below 17, then step pairs (m, m + 1) every 128 rows.
std::vector<double> paired_token_counts() {
  std::vector<double> ms = {1, 2, 4, 8, 16};
  for (double m = 128; m <= 2048; m += 128) {
    ms.push_back(m);
    ms.push_back(m + 1);
  }
  ms.push_back(4096);
  return ms;
}

/// The measured grids' own counts: 1-16, then step pairs every 16 rows to 257 and every 256 rows to 2049.
std::vector<double> grid_token_counts() {
  std::vector<double> ms;
  for (double m = 1; m <= 16; ++m) ms.push_back(m);
  for (double m = 32; m <= 256; m += 16) ms.insert(ms.end(), {m, m + 1});
  for (double m = 512; m <= 2048; m += 256) ms.insert(ms.end(), {m, m + 1});
  ms.push_back(4096);
  return ms;
}

}  // namespace

TEST_CASE("each GEMM grid is read between token counts in the reading its own counts predict best",
          "[fidelity][gemm]") {
  const std::vector<double> ns = {1024, 4096}, ks = {1024, 4096}, ms = grid_token_counts();
  // Compute-bound tiles of 128 rows: the time steps with ceil(m / 128) and is flat within a tile.
  const OpGrid tiles = gemm_grid(ns, ks, ms, [](double n, double k, double m) {
    return 5 + 1e-6 * n * k * std::ceil(std::max(m, 128.0) / 128);
  });
  CHECK(choose_token_reading(tiles) == TokenReading::kTiles128);
  // Work affine in m (an alpha-beta law): read linearly, which reproduces it.
  const OpGrid line = gemm_grid(ns, ks, ms, [](double n, double k, double m) { return 5 + 1e-9 * n * k * m; });
  CHECK(choose_token_reading(line) == TokenReading::kAffine);
  // A power law: log-log.
  const OpGrid power = gemm_grid(ns, ks, ms, [](double n, double, double m) { return n * std::pow(m, 0.7) / 64; });
  CHECK(choose_token_reading(power) == TokenReading::kLogLog);
  // Too few token counts to hold any out: the default.
  const OpGrid few = gemm_grid(ns, ks, {1, 4096}, [](double, double, double m) { return 10 + m; });
  CHECK(choose_token_reading(few) == TokenReading::kLogLog);
}

TEST_CASE("a tile reading is exact at the measured counts, flat within a tile and linear in tiles between",
          "[fidelity][gemm]") {
  const std::vector<double> xs = {16, 256, 257, 512, 513, 1024};
  const std::vector<double> ys = {10, 40, 50, 60, 70, 100};
  const LogCurve c(xs, ys);
  for (std::size_t i = 0; i < xs.size(); ++i)
    for (TokenReading r : kTokenReadings) CHECK(read_tokens(c, xs[i], r) == ys[i]);
  // 257 and 384 share the third 128-row tile with 257; 385 is in the fourth, as 512 is.
  CHECK(read_tokens(c, 300, TokenReading::kTiles128) == 50);
  CHECK(read_tokens(c, 384, TokenReading::kTiles128) == 50);
  CHECK(read_tokens(c, 385, TokenReading::kTiles128) == 60);
  // From 513 (five tiles) to 1024 (eight): 700 is in the sixth, a third of the way.
  CHECK(read_tokens(c, 700, TokenReading::kTiles128) == Approx(80).epsilon(1e-12));
  // Below one tile the tile readings fall back to log-log.
  CHECK(read_tokens(c, 64, TokenReading::kTiles128) == Approx(read_tokens(c, 64, TokenReading::kLogLog)));
  // Affine where the latency rises; never outside the neighbours.
  CHECK(read_tokens(c, 384.5, TokenReading::kAffine) == Approx(55).epsilon(1e-12));
  for (double m = 17; m < 1024; m += 7)
    for (TokenReading r : kTokenReadings) {
      const double v = read_tokens(c, m, r);
      CHECK(v >= 10);
      CHECK(v <= 100);
    }
}

TEST_CASE("a kernel dispatched on next_pow2(m) with 256-row clusters above is read in the rows it launches",
          "[fidelity][gemm]") {
  const std::vector<double> ms = grid_token_counts();
  auto rows = [](double m) {
    if (m > 256) return 256 * std::ceil(m / 256);
    double r = 1;
    while (r < m) r *= 2;
    return r;
  };
  const std::vector<double> ns = {1024, 4096}, ks = {1024, 4096};
  const OpGrid g = gemm_grid(ns, ks, ms, [&](double n, double k, double m) { return 5 + 1e-8 * n * k * rows(m); });
  CHECK(choose_token_reading(g) == TokenReading::kPow2Clusters);
  // 64 launches the rows of 49 (one 64-row bucket), 65 those of 80 (128); 512 those of 257 (two clusters), 513
  // those of 768 (three): read exactly from either side's measured neighbour.
  const LogCurve c({49, 80, 257, 768}, {11, 13, 21, 27});
  CHECK(read_tokens(c, 64, TokenReading::kPow2Clusters) == 11);
  CHECK(read_tokens(c, 65, TokenReading::kPow2Clusters) == 13);
  CHECK(read_tokens(c, 512, TokenReading::kPow2Clusters) == 21);
  CHECK(read_tokens(c, 513, TokenReading::kPow2Clusters) == 27);
  // 129-256 launch one 256-row cluster: between 80 (128 rows) and 257 (512) a quarter of the way.
  CHECK(read_tokens(c, 200, TokenReading::kPow2Clusters) == Approx(13 + 8.0 * 128 / 384).epsilon(1e-12));
}

TEST_CASE("a GEMM curve reads tokens in the reading it was built with", "[fidelity][gemm]") {
  const std::vector<double> ns = {1024, 4096}, ks = {1024, 4096}, ms = paired_token_counts();
  const OpGrid g = gemm_grid(ns, ks, ms, [](double n, double k, double m) { return 5 + 1e-9 * n * k * m; });
  const GemmCurve log_log = make_gemm_curve(g, 2048, 2048);
  const GemmCurve affine_m = make_gemm_curve(g, 2048, 2048, TokenReading::kAffine);
  CHECK(log_log.reading == TokenReading::kLogLog);
  // Between 1024 and 1025 nothing differs; between 2049 and 4096 the affine reading is exact and log-log is not.
  const double truth = 5 + 1e-9 * 2048 * 2048 * 3000;
  CHECK(affine_m.us(3000) == Approx(truth).epsilon(1e-12));
  CHECK(std::fabs(log_log.us(3000) / truth - 1) > 1e-4);
}
