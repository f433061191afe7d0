#pragma once
/// vLLM v1's scheduler: running requests first (in arrival order), then waiting ones, under a token budget
/// and a sequence cap; when blocks run out the newest running request is preempted by recompute (its
/// blocks freed, its progress reset, back to the front of the waiting queue).
#include "core/execution/scheduler.h"

namespace servesim {

/// Running-first, FCFS, recompute preemption.
class VllmV1Scheduler : public Scheduler {
 public:
  explicit VllmV1Scheduler(ClusterCounters* counters) : counters_(counters) {}
  void add(Request* r) override;
  void schedule(const SchedulerLimits& limits, KvBlockManager& kv, Batch& out) override;
  void remove_finished() override;
  bool has_work() const override { return !running_.empty() || !waiting_.empty(); }
  std::int64_t num_waiting() const override { return static_cast<std::int64_t>(waiting_.size()); }
  std::int64_t num_running() const override { return static_cast<std::int64_t>(running_.size()); }

 private:
  void preempt(Request* r, KvBlockManager& kv, Batch& out);
  std::vector<Request*> running_;
  std::deque<Request*> waiting_;
  ClusterCounters* counters_;
};

}  // namespace servesim
