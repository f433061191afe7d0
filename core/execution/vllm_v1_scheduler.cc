#include "core/execution/vllm_v1_scheduler.h"

#include <algorithm>

#include "core/sim/check.h"

namespace servesim {

/// A chunk is prompt work unless it is exactly the one new token of a request whose KV is otherwise complete.
static bool is_prefill(const Request& r, std::int64_t n) {
  return r.num_computed + n < r.num_tokens() || n > 1 || r.generated == 0;
}

void VllmV1Scheduler::schedule(const SchedulerLimits& lim, KvBlockManager& kv, Batch& out) {
  std::int64_t budget = lim.token_budget;
  const bool pipeline_busy =
      std::any_of(running_.begin(), running_.end(), [](const Request* r) { return r->in_flight; });
  bool blocked = false;
  // 1. Running requests, oldest first. Victims come from the back, so scheduled ones are never preempted;
  // requests in a batch still in the pipeline are skipped (as vLLM V1's batch queue does with pp > 1) and
  // never chosen as victims, since that batch is still computing into their blocks.
  for (std::size_t i = 0; i < running_.size() && budget > 0;) {
    Request* r = running_[i];
    if (r->in_flight) {
      ++i;
      continue;
    }
    const std::int64_t n = prefill_chunk(*r, lim, budget);
    SERVESIM_CHECK(n > 0, "running request with nothing to compute");
    bool ok = true;
    while (!kv.allocate(*r, r->num_computed + n, false)) {
      std::size_t v = running_.size() - 1;
      while (running_[v]->in_flight) --v;  // stops at r at the latest
      if (running_[v] == r && pipeline_busy) {
        // Rather than throw away its own progress, r waits for the batches in flight: when they return, their
        // (newer) requests become victims. Preempting itself here livelocks under tight KV.
        ok = false;
        blocked = true;
        break;
      }
      Request* victim = running_[v];
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(v));
      preempt_for_recompute(victim, kv, out);
      if (victim == r) {
        ok = false;
        break;
      }
    }
    if (!ok) break;
    out.items.push_back({r, static_cast<std::int32_t>(n), is_prefill(*r, n)});
    budget -= n;
    ++i;
  }
  // 2. Waiting requests, only when nothing was preempted this step (as vLLM v1) and no running one is blocked.
  if (!out.preempted.empty() || blocked) return;
  for (auto it = waiting_.begin(); it != waiting_.end() && budget > 0 &&
                                   static_cast<int>(running_.size()) < lim.max_num_seqs;) {
    Request* r = *it;
    const std::int64_t whole = r->num_tokens() - r->num_computed;
    if (!lim.allow_chunking && whole > budget) break;
    const std::int64_t n = prefill_chunk(*r, lim, budget);
    if (!kv.allocate(*r, r->num_computed + n, true)) {
      // FCFS stops at a request that does not fit, except that requests whose KV already arrived from a
      // prefill role (blocks held, nothing to allocate) may still start: they free blocks when they finish,
      // which is what the blocked request is waiting for.
      ++it;
      while (it != waiting_.end() && kv.blocks_needed(**it, (*it)->num_computed + 1) > (*it)->num_blocks) ++it;
      continue;
    }
    it = waiting_.erase(it);
    mark_running(r);
    out.items.push_back({r, static_cast<std::int32_t>(n), is_prefill(*r, n)});
    budget -= n;
  }
}

}  // namespace servesim
