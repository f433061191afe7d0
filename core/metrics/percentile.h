#pragma once
/// Statistics as numpy computes them in `vllm bench serve` (linear-interpolated percentiles, population std).
#include <cstdint>
#include <utility>
#include <vector>

namespace servesim {

/// Mean, std and percentiles of a sample.
struct Stats {
  double mean = 0, std = 0, median = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
  std::int64_t count = 0;
};

/// numpy.percentile(values, p) with linear interpolation; `sorted` must be ascending and non-empty.
double percentile_sorted(const std::vector<double>& sorted, double p);
/// Stats of `values` (sorted in place). Empty input gives zeros.
Stats compute_stats(std::vector<double>& values);
/// Stats of a sample given as (value, multiplicity) pairs (sorted in place), exactly as if expanded.
Stats compute_weighted_stats(std::vector<std::pair<double, std::int64_t>>& runs);

}  // namespace servesim
