#include "core/metrics/time_series.h"

#include <algorithm>

namespace servesim {

TimeSeries::TimeSeries(std::vector<std::string> names, int max_points, SimTime initial_width)
    : names_(std::move(names)), max_points_(static_cast<std::size_t>(max_points)), width_(initial_width) {}

void TimeSeries::merge_pairs() {
  std::vector<Bucket> merged((buckets_.size() + 1) / 2);
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    Bucket& dst = merged[i / 2];
    const Bucket& src = buckets_[i];
    if (src.count == 0) continue;
    if (dst.count == 0) {
      dst = src;
      continue;
    }
    dst.count += src.count;
    for (std::size_t k = 0; k < names_.size(); ++k) {
      dst.sum[k] += src.sum[k];
      dst.max[k] = std::max(dst.max[k], src.max[k]);
    }
  }
  buckets_ = std::move(merged);
  width_ *= 2;
}

void TimeSeries::add(SimTime t, const double* values) {
  std::size_t b = static_cast<std::size_t>(t / width_);
  while (b >= 2 * max_points_) {
    merge_pairs();
    b = static_cast<std::size_t>(t / width_);
  }
  if (b >= buckets_.size()) buckets_.resize(b + 1);
  Bucket& bk = buckets_[b];
  if (bk.count == 0) {
    bk.sum.assign(values, values + names_.size());
    bk.max.assign(values, values + names_.size());
  } else {
    for (std::size_t k = 0; k < names_.size(); ++k) {
      bk.sum[k] += values[k];
      bk.max[k] = std::max(bk.max[k], values[k]);
    }
  }
  ++bk.count;
}

nlohmann::ordered_json TimeSeries::to_json() const {
  nlohmann::ordered_json j;
  j["bucket_s"] = as_sec(width_);
  auto& t = j["t_s"] = nlohmann::ordered_json::array();
  for (std::size_t b = 0; b < buckets_.size(); ++b)
    if (buckets_[b].count > 0) t.push_back(as_sec(static_cast<SimTime>(b) * width_ + width_ / 2));
  for (std::size_t k = 0; k < names_.size(); ++k) {
    auto& s = j[names_[k]];
    s["mean"] = nlohmann::ordered_json::array();
    s["max"] = nlohmann::ordered_json::array();
    for (const Bucket& bk : buckets_) {
      if (bk.count == 0) continue;
      s["mean"].push_back(bk.sum[k] / static_cast<double>(bk.count));
      s["max"].push_back(bk.max[k]);
    }
  }
  return j;
}

}  // namespace servesim
