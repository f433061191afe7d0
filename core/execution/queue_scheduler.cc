#include "core/execution/queue_scheduler.h"

#include <algorithm>

namespace servesim {

void QueueScheduler::add(Request* r) {
  r->state = RequestState::kWaiting;
  waiting_.push_back(r);
  ++counters_->waiting;
}

void QueueScheduler::remove_finished() {
  const auto before = running_.size();
  running_.erase(std::remove_if(running_.begin(), running_.end(),
                                [](const Request* r) { return r->state != RequestState::kRunning; }),
                 running_.end());
  counters_->running -= static_cast<std::int64_t>(before - running_.size());
}

void QueueScheduler::preempt_for_recompute(Request* r, KvBlockManager& kv, Batch& out) {
  kv.free(*r);
  r->num_computed = 0;
  r->preemptions += 1;
  r->state = RequestState::kWaiting;
  waiting_.push_front(r);
  ++counters_->waiting;
  --counters_->running;
  out.preempted.push_back(r);
}

void QueueScheduler::mark_running(Request* r) {
  --counters_->waiting;
  ++counters_->running;
  r->state = RequestState::kRunning;
  running_.push_back(r);
}

std::int64_t QueueScheduler::prefill_chunk(const Request& r, const SchedulerLimits& lim, std::int64_t budget) {
  std::int64_t n = r.num_tokens() - r.num_computed;
  if (lim.long_prefill_token_threshold > 0) n = std::min(n, lim.long_prefill_token_threshold);
  return std::min(n, budget);
}

}  // namespace servesim
