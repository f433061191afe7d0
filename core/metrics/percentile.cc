#include "core/metrics/percentile.h"

#include <algorithm>
#include <cmath>

namespace servesim {

double percentile_sorted(const std::vector<double>& v, double p) {
  const double idx = p / 100.0 * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(idx));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  const double frac = idx - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

Stats compute_stats(std::vector<double>& values) {
  Stats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.count = static_cast<std::int64_t>(values.size());
  double sum = 0;
  for (double x : values) sum += x;
  s.mean = sum / static_cast<double>(values.size());
  double sq = 0;
  for (double x : values) sq += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(sq / static_cast<double>(values.size()));
  s.median = s.p50 = percentile_sorted(values, 50);
  s.p90 = percentile_sorted(values, 90);
  s.p95 = percentile_sorted(values, 95);
  s.p99 = percentile_sorted(values, 99);
  s.max = values.back();
  return s;
}

namespace {
/// The k-th smallest (0-based) of the expanded sample; `cum[i]` = count of runs[0..i].
double kth(const std::vector<std::pair<double, std::int64_t>>& runs, const std::vector<std::int64_t>& cum,
           std::int64_t k) {
  auto it = std::upper_bound(cum.begin(), cum.end(), k);
  return runs[static_cast<std::size_t>(it - cum.begin())].first;
}
}  // namespace

Stats compute_weighted_stats(std::vector<std::pair<double, std::int64_t>>& runs) {
  Stats s;
  std::sort(runs.begin(), runs.end());
  std::vector<std::int64_t> cum;
  cum.reserve(runs.size());
  std::int64_t n = 0;
  double sum = 0;
  for (const auto& [v, c] : runs) {
    n += c;
    sum += v * static_cast<double>(c);
    cum.push_back(n);
  }
  if (n == 0) return s;
  s.count = n;
  s.mean = sum / static_cast<double>(n);
  double sq = 0;
  for (const auto& [v, c] : runs) sq += (v - s.mean) * (v - s.mean) * static_cast<double>(c);
  s.std = std::sqrt(sq / static_cast<double>(n));
  auto pct = [&](double p) {
    const double idx = p / 100.0 * static_cast<double>(n - 1);
    const std::int64_t lo = static_cast<std::int64_t>(std::floor(idx));
    const std::int64_t hi = std::min(lo + 1, n - 1);
    const double a = kth(runs, cum, lo), b = kth(runs, cum, hi);
    return a + (b - a) * (idx - static_cast<double>(lo));
  };
  s.median = s.p50 = pct(50);
  s.p90 = pct(90);
  s.p95 = pct(95);
  s.p99 = pct(99);
  s.max = runs.back().first;
  return s;
}

}  // namespace servesim
