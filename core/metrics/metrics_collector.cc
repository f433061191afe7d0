#include "core/metrics/metrics_collector.h"

namespace servesim {

const char* phase_kind_name(std::uint8_t kind) {
  switch (kind) {
    case kPhasePrefill: return "prefill";
    case kPhasePreempted: return "preempted";
    case kPhaseKvTransfer: return "kv_transfer";
    case kPhaseKvWait: return "kv_wait";
  }
  return "?";
}

namespace {

/// Adds `cost` into `to`, held at the horizon like the steps it adds up (a run past it stops).
void add_cost(BatchCost& to, const BatchCost& cost) {
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f)
    to.by_family[f] = add_spans(to.by_family[f], cost.by_family[f]);
  to.total = add_spans(to.total, cost.total);
}

}  // namespace

MetricsCollector::MetricsCollector(const OutputSpec& output, bool keep_iterations)
    : keep_phases_(output.phases),
      keep_iterations_(keep_iterations),
      series_({"batch_size", "batch_tokens", "kv_usage", "queue_length", "running"}, output.timeseries_points) {}

void MetricsCollector::on_iteration(const Replica& replica, const Batch& batch, SimTime start, SimTime end,
                                    const BatchCost& cost, const ClusterCounters& counters) {
  ++total_iterations_;
  padded_tokens_ += batch.shape.padded_tokens;
  if (batch.shape.cuda_graph) ++graph_iterations_;
  const auto role = static_cast<std::size_t>(replica.role_index());
  if (role >= role_totals_.size()) role_totals_.resize(role + 1);
  add_cost(role_totals_[role], cost);
  const double kv = replica.kv().usage();
  const double values[] = {static_cast<double>(batch.items.size()), static_cast<double>(batch.shape.num_tokens), kv,
                           static_cast<double>(counters.waiting), static_cast<double>(counters.running)};
  series_.add(start, values);
  if (keep_phases_) {
    for (const ScheduledItem& it : batch.items)
      if (it.prefill) phases_.push_back({it.req->id, start, end, it.num_tokens, kPhasePrefill});
    for (const Request* r : batch.preempted) phases_.push_back({r->id, start, start, 0, kPhasePreempted});
  }
  if (keep_iterations_)
    iterations_.push_back({start, end, replica.index(), static_cast<std::int32_t>(batch.items.size()),
                           static_cast<std::int32_t>(batch.shape.num_tokens), static_cast<float>(kv)});
}

BatchCost MetricsCollector::cost_totals() const {
  BatchCost all;
  for (const BatchCost& r : role_totals_) add_cost(all, r);
  return all;
}

int MetricsCollector::failure_index(const std::string& reason) {
  for (std::size_t i = 0; i < failure_reasons_.size(); ++i)
    if (failure_reasons_[i] == reason) return static_cast<int>(i);
  failure_reasons_.push_back(reason);
  return static_cast<int>(failure_reasons_.size() - 1);
}

}  // namespace servesim
