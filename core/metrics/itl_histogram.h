#pragma once
/// Inter-token latencies at 1 us resolution: a dense array below ~1 s and an ordered map above. Memory is
/// bounded (8 MiB) however many tokens a run produces; percentiles are exact at that resolution.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/sim/sim_time.h"

namespace servesim {

class ItlHistogram {
 public:
  /// Counts one latency.
  void add(SimTime itl_ns) {
    const std::int64_t us = (itl_ns + 500) / 1000;
    if (us < kDense) {
      if (dense_.empty()) dense_.assign(kDense, 0);
      ++dense_[static_cast<std::size_t>(us)];
    } else {
      ++sparse_[us];
    }
    ++count_;
  }
  /// (latency ns, count) pairs in ascending latency order.
  std::vector<std::pair<SimTime, std::int64_t>> runs() const;
  std::int64_t count() const { return count_; }

 private:
  static constexpr std::int64_t kDense = 1 << 20;  // ~1.05 s in microseconds
  std::vector<std::uint64_t> dense_;
  std::map<std::int64_t, std::int64_t> sparse_;
  std::int64_t count_ = 0;
};

}  // namespace servesim
