#pragma once
/// Down-sampled time series: samples fall into fixed-width time buckets; when the buckets exceed twice the
/// requested point count, neighbours merge and the width doubles. Memory stays bounded for any run length.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sim/sim_time.h"

namespace servesim {

/// Several series sampled at the same instants.
class TimeSeries {
 public:
  /// `names` of the series; `max_points` target resolution.
  TimeSeries(std::vector<std::string> names, int max_points, SimTime initial_width = kNsPerMs);
  /// Adds one sample of every series at time `t` (values in `names` order).
  void add(SimTime t, const double* values);
  /// {"t_s": [...], "<name>": {"mean": [...], "max": [...]}, "bucket_s": w}; empty buckets are skipped.
  nlohmann::ordered_json to_json() const;
  SimTime bucket_width() const { return width_; }

 private:
  struct Bucket {
    std::int64_t count = 0;
    std::vector<double> sum, max;
  };
  void merge_pairs();
  std::vector<std::string> names_;
  std::size_t max_points_;
  SimTime width_;
  std::vector<Bucket> buckets_;
};

}  // namespace servesim
