#include "core/execution/sglang_scheduler.h"

#include <algorithm>

#include "core/sim/check.h"

namespace servesim {

namespace {
/// True while a request still has prompt (or recompute) work: more than its one new token left, or no token
/// generated yet. Requests whose KV arrived from a prefill role have exactly one token left and decode.
bool needs_prefill(const Request& r) { return r.num_tokens() - r.num_computed > 1 || r.generated == 0; }
}  // namespace

bool SglangScheduler::schedule_prefill(const SchedulerLimits& lim, KvBlockManager& kv, Batch& out) {
  std::int64_t budget = lim.token_budget;
  auto chunk = [&](const Request& r) { return prefill_chunk(r, lim, budget); };
  // 1. A chunked prompt admitted earlier continues first (SGLang keeps it as the batch's chunked request).
  for (Request* r : running_) {
    if (budget <= 0) break;
    if (r->in_flight || !needs_prefill(*r)) continue;
    const std::int64_t n = chunk(*r);
    if (!kv.allocate(*r, r->num_computed + n, false)) break;
    out.items.push_back({r, static_cast<std::int32_t>(n), true});
    budget -= n;
  }
  // 2. Waiting requests, FCFS, under the running cap; the last may be chunked. Requests whose KV came from a
  // prefill role join the running set without budget (they only decode).
  for (auto it = waiting_.begin();
       it != waiting_.end() && static_cast<int>(running_.size()) < lim.max_num_seqs;) {
    Request* r = *it;
    const bool decode_only = !needs_prefill(*r);
    std::int64_t n = 0;
    if (!decode_only) {
      if (budget <= 0) break;
      const std::int64_t whole = r->num_tokens() - r->num_computed;
      if (!lim.allow_chunking && whole > budget) break;
      n = chunk(*r);
      if (!kv.allocate(*r, r->num_computed + n, true)) break;  // no memory: admission stops (FCFS)
    }
    it = waiting_.erase(it);
    --counters_->waiting;
    ++counters_->running;
    r->state = RequestState::kRunning;
    running_.push_back(r);
    if (!decode_only) {
      out.items.push_back({r, static_cast<std::int32_t>(n), true});
      budget -= n;
    }
  }
  return !out.items.empty();
}

void SglangScheduler::schedule_decode(KvBlockManager& kv, Batch& out) {
  const bool pipeline_busy =
      std::any_of(running_.begin(), running_.end(), [](const Request* r) { return r->in_flight; });
  for (std::size_t i = 0; i < running_.size();) {
    Request* r = running_[i];
    if (r->in_flight || needs_prefill(*r)) {  // a prompt that found no room waits for the next prefill step
      ++i;
      continue;
    }
    bool ok = true;
    while (!kv.allocate(*r, r->num_computed + 1, false)) {
      std::size_t v = running_.size() - 1;
      while (running_[v]->in_flight) --v;  // stops at r at the latest
      if (running_[v] == r && pipeline_busy) {
        ok = false;  // wait for the batches in flight instead of retracting itself (see VllmV1Scheduler)
        break;
      }
      Request* victim = running_[v];
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(v));
      preempt_for_recompute(victim, kv, out);  // SGLang's retract_decode
      if (victim == r) {
        ok = false;
        break;
      }
    }
    if (!ok) break;
    out.items.push_back({r, 1, false});
    ++i;
  }
}

void SglangScheduler::schedule(const SchedulerLimits& lim, KvBlockManager& kv, Batch& out) {
  if (schedule_prefill(lim, kv, out)) return;  // prefill-first: decodes pause for this step
  schedule_decode(kv, out);
}

}  // namespace servesim
