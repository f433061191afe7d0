#include "core/metrics/percentile.h"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "core/sim/rng.h"

using namespace servesim;

// Expected values are numpy.percentile(a, p) (linear interpolation) and numpy.std(a) (population), by hand.

TEST_CASE("percentiles of 1 2 3 4 equal numpy's linear interpolation", "[metrics][percentile]") {
  std::vector<double> v = {4, 2, 1, 3};  // unsorted on purpose
  const Stats s = compute_stats(v);
  CHECK(v == std::vector<double>{1, 2, 3, 4});  // sorted in place
  CHECK(s.count == 4);
  CHECK(s.mean == 2.5);
  CHECK(s.median == Approx(2.5));
  CHECK(s.p50 == Approx(2.5));
  CHECK(s.p90 == Approx(3.7));   // index 2.7: 3 + 0.7 * (4 - 3)
  CHECK(s.p95 == Approx(3.85));  // index 2.85
  CHECK(s.p99 == Approx(3.97));  // index 2.97
  CHECK(s.max == 4);
  CHECK(s.std == Approx(1.118033988749895));  // sqrt(1.25), population std (not the sample std 1.29)
}

TEST_CASE("percentiles of a five-element sample", "[metrics][percentile]") {
  std::vector<double> v = {40, 15, 50, 35, 20};
  const Stats s = compute_stats(v);
  CHECK(s.mean == 32.0);
  CHECK(s.median == 35.0);
  CHECK(s.p90 == Approx(46.0));  // index 3.6: 40 + 0.6 * 10
  CHECK(s.p95 == Approx(48.0));
  CHECK(s.p99 == Approx(49.6));
  CHECK(s.std == Approx(12.884098726725126));  // sqrt(830 / 5)
  CHECK(percentile_sorted(v, 0) == 15.0);
  CHECK(percentile_sorted(v, 100) == 50.0);
  CHECK(percentile_sorted(v, 25) == 20.0);
  CHECK(percentile_sorted(v, 10) == Approx(17.0));  // index 0.4
}

TEST_CASE("a single value and an empty sample", "[metrics][percentile]") {
  std::vector<double> one = {7.5};
  const Stats s = compute_stats(one);
  CHECK(s.count == 1);
  CHECK(s.mean == 7.5);
  CHECK(s.std == 0.0);
  CHECK(s.p99 == 7.5);
  CHECK(s.max == 7.5);
  std::vector<double> none;
  const Stats z = compute_stats(none);
  CHECK(z.count == 0);
  CHECK(z.mean == 0.0);
  CHECK(z.p99 == 0.0);
  std::vector<std::pair<double, std::int64_t>> no_runs;
  CHECK(compute_weighted_stats(no_runs).count == 0);
}

TEST_CASE("weighted stats of runs equal the stats of the expanded sample", "[metrics][percentile]") {
  std::vector<std::pair<double, std::int64_t>> runs = {{2, 3}, {5, 1}, {1, 2}};
  const Stats w = compute_weighted_stats(runs);
  // Expanded: [1, 1, 2, 2, 2, 5].
  CHECK(w.count == 6);
  CHECK(w.mean == Approx(13.0 / 6.0));
  CHECK(w.median == 2.0);
  CHECK(w.p90 == Approx(3.5));  // index 4.5: 2 + 0.5 * 3
  CHECK(w.p99 == Approx(4.85));  // index 4.95
  CHECK(w.max == 5.0);
  CHECK(w.std == Approx(std::sqrt((2 * (1 - 13.0 / 6) * (1 - 13.0 / 6) + 3 * (2 - 13.0 / 6) * (2 - 13.0 / 6) +
                                   (5 - 13.0 / 6) * (5 - 13.0 / 6)) / 6)));

  Rng rng(2, 0);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::pair<double, std::int64_t>> rs;
    std::vector<double> expanded;
    const int n = static_cast<int>(rng.uniform_int(1, 30));
    for (int i = 0; i < n; ++i) {
      const double v = static_cast<double>(rng.uniform_int(0, 20)) * 0.5;  // repeated values across runs too
      const std::int64_t c = rng.uniform_int(1, 7);
      rs.emplace_back(v, c);
      expanded.insert(expanded.end(), static_cast<std::size_t>(c), v);
    }
    const Stats a = compute_weighted_stats(rs);
    const Stats b = compute_stats(expanded);
    INFO("trial " << trial);
    REQUIRE(a.count == b.count);
    CHECK(a.mean == Approx(b.mean).epsilon(1e-12));
    CHECK(a.std == Approx(b.std).epsilon(1e-9).margin(1e-12));
    CHECK(a.median == Approx(b.median).epsilon(1e-12));
    CHECK(a.p90 == Approx(b.p90).epsilon(1e-12));
    CHECK(a.p95 == Approx(b.p95).epsilon(1e-12));
    CHECK(a.p99 == Approx(b.p99).epsilon(1e-12));
    CHECK(a.max == b.max);
  }
}
