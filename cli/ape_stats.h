#pragma once
/// Absolute percentage errors of predictions against measurements, summarised with nearest-rank percentiles as
/// the validation reports print them (servesim_opcheck).
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

namespace servesim {

struct ApeStats {
  std::vector<double> e;  ///< |pred / truth - 1| x 100 per comparison
  std::size_t failed = 0;  ///< predictions that were not a positive finite time (counted as 100% off, and here)
  void add(double pred, double truth) {
    if (!(truth > 0)) return;
    if (!(pred > 0) || !std::isfinite(pred)) {
      ++failed;
      e.push_back(100.0);
      return;
    }
    e.push_back(std::fabs(pred / truth - 1.0) * 100.0);
  }
  void add_all(const ApeStats& o) {
    e.insert(e.end(), o.e.begin(), o.e.end());
    failed += o.failed;
  }
  /// {"n", "p50", "p95", "max", "over_10pct"}, percentages rounded to 0.01; over_10pct counts the comparisons more
  /// than 10% off (the p95 <= 10% goal allows n - ceil(0.95 n) of them, nearest rank).
  nlohmann::ordered_json json() const {
    std::vector<double> s = e;
    std::sort(s.begin(), s.end());
    auto pct = [&s](double p) {
      if (s.empty()) return 0.0;
      std::size_t i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(s.size())));
      i = i == 0 ? 0 : i - 1;
      return std::round(s[std::min(i, s.size() - 1)] * 100.0) / 100.0;
    };
    // At the reported precision, as the p95 is compared with the goal.
    const auto over = static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](double x) { return std::round(x * 100.0) / 100.0 > 10.0; }));
    nlohmann::ordered_json j = {{"n", s.size()},
                                {"p50", pct(0.5)},
                                {"p95", pct(0.95)},
                                {"max", s.empty() ? 0.0 : pct(1.0)},
                                {"over_10pct", over}};
    if (failed > 0) j["failed"] = failed;
    return j;
  }
};

}  // namespace servesim
