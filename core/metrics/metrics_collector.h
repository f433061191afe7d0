#pragma once
/// Collects what replicas report: ITLs (run-length encoded), time series, failure reasons, cost
/// attribution and, when asked, per-request phase segments and per-iteration logs for traces.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/execution/replica.h"
#include "core/metrics/itl_histogram.h"
#include "core/metrics/time_series.h"
#include "core/spec/scenario.h"

namespace servesim {

/// Timeline segments beyond what each request's own timestamps give (queued and decode spans derive from those).
enum PhaseKind : std::uint8_t { kPhasePrefill = 0, kPhasePreempted = 1, kPhaseKvTransfer = 2, kPhaseKvWait = 3 };
/// Names used in the result's phases columns and in traces.
const char* phase_kind_name(std::uint8_t kind);

/// A prefill chunk, preemption or KV-transfer span on the timeline.
struct PhaseSegment {
  std::int64_t req = 0;
  SimTime start = 0;
  SimTime end = 0;
  std::int32_t tokens = 0;  ///< prompt tokens in the chunk (0 for a preemption mark)
  std::uint8_t kind = 0;    ///< a PhaseKind
};

/// One iteration of one replica (kept only for traces).
struct IterationRecord {
  SimTime start = 0, end = 0;
  std::int32_t replica = 0;
  std::int32_t batch_size = 0;
  std::int32_t tokens = 0;
  float kv_usage = 0;
};

/// Metrics sink for a run.
class MetricsCollector {
 public:
  MetricsCollector(const OutputSpec& output, bool keep_iterations);
  void on_iteration(const Replica& replica, const Batch& batch, SimTime start, SimTime end, const BatchCost& cost,
                    const ClusterCounters& counters);
  void on_token(const Request& req, SimTime now) {
    // Intervals between the tokens the client sees: none before its first (the first text, or token 1).
    if (req.generated >= req.first_text_token) itl_.add(now - req.last_token);
  }
  /// Records a segment when phases are kept (P/D transfers and their waits come from the controller).
  void add_phase(const PhaseSegment& s) {
    if (keep_phases_) phases_.push_back(s);
  }
  /// Index of a failure reason in the table (added if new).
  int failure_index(const std::string& reason);
  const std::vector<std::string>& failure_reasons() const { return failure_reasons_; }
  /// ITLs as (ns, count) runs at 1 us resolution, ascending.
  std::vector<std::pair<SimTime, std::int64_t>> itl_runs() const { return itl_.runs(); }
  const TimeSeries& series() const { return series_; }
  const std::vector<PhaseSegment>& phases() const { return phases_; }
  const std::vector<IterationRecord>& iterations() const { return iterations_; }
  /// Summed time per op family over all iterations of one role's replicas (Replica::role_index); all zero for a
  /// role that ran no iteration.
  BatchCost role_cost_totals(int role) const {
    return role >= 0 && static_cast<std::size_t>(role) < role_totals_.size() ? role_totals_[role] : BatchCost{};
  }
  /// The same over every role: the sum of the roles' totals.
  BatchCost cost_totals() const;
  std::int64_t total_iterations() const { return total_iterations_; }
  std::int64_t padded_tokens() const { return padded_tokens_; }
  std::int64_t graph_iterations() const { return graph_iterations_; }

 private:
  bool keep_phases_;
  bool keep_iterations_;
  ItlHistogram itl_;
  TimeSeries series_;
  std::vector<std::string> failure_reasons_;
  std::vector<PhaseSegment> phases_;
  std::vector<IterationRecord> iterations_;
  std::vector<BatchCost> role_totals_;
  std::int64_t total_iterations_ = 0;
  std::int64_t padded_tokens_ = 0;
  std::int64_t graph_iterations_ = 0;
};

}  // namespace servesim
