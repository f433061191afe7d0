#include "core/execution/trtllm_scheduler.h"

#include <algorithm>

#include "core/sim/check.h"

namespace servesim {

std::int64_t TrtllmScheduler::whole_request_blocks(const KvBlockManager& kv, const Request& r) const {
  const std::int64_t whole =
      static_cast<std::int64_t>(r.prompt_tokens) + (handoff_after_prefill_ ? 1 : r.output_tokens);
  // The largest step still ahead: the rest of the prompt (up to the step cap) or one decode token.
  const std::int64_t step = needs_prefill(r) ? std::min(r.num_tokens() - r.num_computed,
                                                        std::max<std::int64_t>(1, kv.layout().max_step_tokens))
                                             : 1;
  return kv.peak_blocks(whole, step);
}

std::int64_t TrtllmScheduler::still_needed(const KvBlockManager& kv, const Request& r) const {
  return std::max<std::int64_t>(0, whole_request_blocks(kv, r) - r.num_blocks);
}

std::int64_t TrtllmScheduler::booked_blocks(const KvBlockManager& kv) const {
  std::int64_t booked = 0;
  for (const Request* r : running_) booked += still_needed(kv, *r);
  for (const Request* r : waiting_)
    if (r->num_blocks > 0) booked += still_needed(kv, *r);  // admitted on arrival of its KV
  return booked;
}

void TrtllmScheduler::start(Request* r) {
  waiting_.erase(std::find(waiting_.begin(), waiting_.end(), r));
  mark_running(r);
}

void TrtllmScheduler::schedule(const SchedulerLimits& lim, KvBlockManager& kv, Batch& out) {
  auto grow = [&](Request* r, std::int64_t n) {
    // The bookings leave these blocks free: an admitted request never waits for memory.
    SERVESIM_CHECK(kv.allocate(*r, r->num_computed + n, false), "a booked request found no KV blocks");
  };
  std::int64_t budget = lim.token_budget;
  auto decode = [&](Request* r) {
    grow(r, 1);
    out.items.push_back({r, 1, false});
    --budget;
  };
  // 1. Generation requests, one token each, in admission order.
  for (Request* r : running_) {
    if (r->in_flight || needs_prefill(*r)) continue;
    if (budget < 1) break;
    decode(r);
  }
  // 2. Capacity: prompts already started keep their place; waiting requests are admitted first come first served
  // while their whole length fits what the admitted ones have not booked. A request whose KV came from a prefill
  // role was booked when its KV was pulled and decodes at once.
  std::vector<Request*> prompts;
  for (Request* r : running_)
    if (!r->in_flight && needs_prefill(*r)) prompts.push_back(r);
  std::int64_t unbooked = kv.free_blocks() - booked_blocks(kv) - lim.held_booked_blocks;
  std::vector<Request*> moved_in;
  std::int64_t admitted = static_cast<std::int64_t>(running_.size());
  for (Request* r : waiting_) {
    if (admitted >= lim.max_num_seqs) break;
    if (!needs_prefill(*r)) {
      moved_in.push_back(r);
      ++admitted;
      continue;
    }
    const std::int64_t need = still_needed(kv, *r);
    if (need > unbooked) break;
    unbooked -= need;
    prompts.push_back(r);
    ++admitted;
  }
  for (Request* r : moved_in) {
    start(r);
    if (budget >= 1) decode(r);
  }
  // 3. Micro-batch: the admitted prompts under the budget left; a prompt that does not fit ends the step's prompts
  // without chunking, and is cut to whole KV blocks with it.
  const std::int64_t unit = kv.block_size();
  for (Request* r : prompts) {
    const std::int64_t whole = r->num_tokens() - r->num_computed;
    std::int64_t n = whole;
    if (whole > budget) {
      if (!lim.allow_chunking) break;
      n = budget / unit * unit;
    }
    if (n <= 0) continue;
    if (r->state != RequestState::kRunning) start(r);
    grow(r, n);
    out.items.push_back({r, static_cast<std::int32_t>(n), true});
    budget -= n;
  }
}

}  // namespace servesim
