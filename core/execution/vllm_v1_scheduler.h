#pragma once
/// vLLM v1's scheduler: running requests first (in arrival order), then waiting ones, under a token budget
/// and a sequence cap; when blocks run out the newest running request is preempted by recompute (its
/// blocks freed, its progress reset, back to the front of the waiting queue).
#include "core/execution/queue_scheduler.h"

namespace servesim {

/// Running-first, FCFS, recompute preemption.
class VllmV1Scheduler : public QueueScheduler {
 public:
  using QueueScheduler::QueueScheduler;
  void schedule(const SchedulerLimits& limits, KvBlockManager& kv, Batch& out) override;
};

}  // namespace servesim
