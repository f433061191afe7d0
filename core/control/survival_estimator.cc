#include "core/control/survival_estimator.h"

#include <algorithm>

namespace servesim {

SurvivalEstimator::SurvivalEstimator(int bucket, std::int64_t max_len, double alpha)
    : bucket_(bucket), alpha_(alpha) {
  // Before any observation every request is assumed to survive (S = 1), i.e. SIBYL starts conservative.
  const std::int64_t n = std::max<std::int64_t>(1, (max_len + bucket - 1) / bucket);
  max_buckets_ = static_cast<std::size_t>(std::min<std::int64_t>(n, 1 << 16));
}

void SurvivalEstimator::observe(std::int64_t final_len) {
  // The paper's text updates "buckets l <= L_final", but its indicator [L_final >= l] only has effect when
  // every bucket is updated (otherwise S never falls); every bucket is updated here.
  const std::size_t reached = std::min(max_buckets_, static_cast<std::size_t>(final_len / bucket_));
  if (reached > s_.size()) s_.resize(reached, tail_);
  for (std::size_t k = 0; k < s_.size(); ++k) {
    const double l = static_cast<double>((k + 1) * static_cast<std::size_t>(bucket_));
    s_[k] = alpha_ * s_[k] + (1.0 - alpha_) * (static_cast<double>(final_len) >= l ? 1.0 : 0.0);
  }
  tail_ *= alpha_;
}

double SurvivalEstimator::survival(double l) const {
  if (l <= 0) return 1.0;
  const double pos = l / bucket_;  // boundary index + 1
  const std::size_t k = static_cast<std::size_t>(pos);
  auto at = [this](std::size_t i) { return i < s_.size() ? s_[i] : tail_; };
  if (k >= max_buckets_) return at(max_buckets_ - 1);
  const double lo = k == 0 ? 1.0 : at(k - 1);
  const double hi = at(k);
  return lo + (hi - lo) * (pos - static_cast<double>(k));
}

double SurvivalEstimator::conditional(double from, double to) const {
  const double sf = survival(from);
  if (sf <= 0) return 1.0;
  return std::min(1.0, survival(to) / sf);
}

}  // namespace servesim
