#pragma once
/// SGLang's default scheduler (prefill-first, no mixed chunks): whenever prompts are waiting, the next step is a
/// prefill batch of them alone, up to the chunked-prefill token budget (--chunked-prefill-size), and the running
/// decodes pause; only a step with no prefill work decodes every running request, one token each. A prompt
/// longer than what is left of the budget is chunked and continues first in the next prefill batch. When KV
/// blocks run out during a decode step the newest running request is retracted (freed, recomputed later), as
/// SGLang's retract_decode does. In a closed loop this keeps clients in waves: a wave's prompts are prefilled
/// together while everyone else waits, so TTFT includes the whole wave's prefill.
#include "core/execution/queue_scheduler.h"

namespace servesim {

/// Prefill-first scheduling with decode pauses (SGLang enable_mixed_chunk = false).
class SglangScheduler : public QueueScheduler {
 public:
  using QueueScheduler::QueueScheduler;
  void schedule(const SchedulerLimits& limits, KvBlockManager& kv, Batch& out) override;

 private:
  /// Prompt chunks (continued chunked prompts, then waiting requests FCFS); false when none was scheduled.
  bool schedule_prefill(const SchedulerLimits& limits, KvBlockManager& kv, Batch& out);
  void schedule_decode(KvBlockManager& kv, Batch& out);
};

}  // namespace servesim
