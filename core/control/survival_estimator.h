#pragma once
/// SIBYL's online survival estimator (seed 003, Eq. 4): S(l) = P(output length > l) kept at bucket
/// boundaries l = k * Delta and updated on every completion by an exponential moving average. Queries between
/// boundaries interpolate linearly; S(0) = 1.
#include <cstdint>
#include <vector>

namespace servesim {

class SurvivalEstimator {
 public:
  /// `bucket` = Delta in tokens, `max_len` = longest output to track, `alpha` = EMA smoothing in (0, 1).
  SurvivalEstimator(int bucket, std::int64_t max_len, double alpha);
  /// A request finished with `final_len` output tokens: S(l) <- alpha S(l) + (1 - alpha) [final_len >= l].
  void observe(std::int64_t final_len);
  /// S(l) for any l >= 0 (0 beyond the tracked range once observations say so).
  double survival(double l) const;
  /// P(L > to | L > from) = S(to) / S(from), 1 when S(from) is 0.
  double conditional(double from, double to) const;

 private:
  int bucket_;
  double alpha_;
  std::size_t max_buckets_;
  // s_[k] = S((k + 1) * bucket) up to the longest output seen; every bucket past it has seen only zeros,
  // so they share one value, tail_ (kept lazily: an update costs the observed length, not max_len).
  std::vector<double> s_;
  double tail_ = 1.0;
};

}  // namespace servesim
