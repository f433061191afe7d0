#include "core/metrics/itl_histogram.h"

namespace servesim {

std::vector<std::pair<SimTime, std::int64_t>> ItlHistogram::runs() const {
  std::vector<std::pair<SimTime, std::int64_t>> out;
  for (std::size_t us = 0; us < dense_.size(); ++us)
    if (dense_[us]) out.emplace_back(static_cast<SimTime>(us) * 1000, static_cast<std::int64_t>(dense_[us]));
  for (const auto& [us, n] : sparse_) out.emplace_back(us * 1000, n);
  return out;
}

}  // namespace servesim
