#include "core/execution/sglang_scheduler.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/sim/check.h"

namespace servesim {

namespace {
/// Tokens `blocks` pool blocks hold when every token takes a block slot in each KV group.
double tokens_of(const KvBlockManager& kv, std::int64_t blocks) {
  const KvLayout& l = kv.layout();
  return static_cast<double>(blocks) * kv.block_size() / static_cast<double>(l.full_groups + l.sliding_groups);
}
}  // namespace

double SglangScheduler::output_to_book(const Request& r, double pool_tokens) {
  // SGLang clips max_new_tokens so that prompt + output stays below the pool (max_req_len), so a request always
  // fits an idle replica; the estimate is further capped at CLIP_MAX_NEW_TOKENS.
  const double left = static_cast<double>(r.output_tokens - r.generated);
  const double clip = pool_tokens - 1 - static_cast<double>(r.prompt_tokens) - static_cast<double>(r.generated);
  return std::max(0.0, std::min({left, static_cast<double>(kClipMaxNewTokens), clip}));
}

double SglangScheduler::unbooked_tokens(const KvBlockManager& kv, double pool_tokens) const {
  double booked = 0;
  for (const Request* r : running_) booked += output_to_book(*r, pool_tokens) * new_token_ratio_;
  return tokens_of(kv, kv.free_blocks()) - booked;
}

bool SglangScheduler::schedule_prefill(const SchedulerLimits& lim, KvBlockManager& kv, Batch& out) {
  std::int64_t budget = lim.token_budget;
  // --max-prefill-tokens (PrefillAdder's rem_input_tokens): every prompt chunk in the batch takes from it.
  std::int64_t input_left =
      lim.max_prefill_tokens > 0 ? lim.max_prefill_tokens : std::numeric_limits<std::int64_t>::max();
  auto chunk = [&](const Request& r) { return prefill_chunk(r, lim, budget); };
  // 1. A chunked prompt admitted earlier continues first (SGLang keeps it as the batch's chunked request).
  for (Request* r : running_) {
    if (budget <= 0) break;
    if (r->in_flight || !needs_prefill(*r)) continue;
    const std::int64_t n = chunk(*r);
    if (!kv.allocate(*r, r->num_computed + n, false)) break;
    out.items.push_back({r, static_cast<std::int32_t>(n), true});
    budget -= n;
    input_left -= n;
  }
  // 2. Waiting requests, FCFS, under the running cap and while their prompt and whole output fit what the running
  // requests have not booked; the last may be chunked. Requests whose KV came from a prefill role join the running
  // set without budget (they only decode).
  if (running_.empty()) new_token_ratio_ = kInitNewTokenRatio;
  const double pool_tokens = tokens_of(kv, kv.num_blocks());
  double unbooked = unbooked_tokens(kv, pool_tokens);
  for (auto it = waiting_.begin();
       it != waiting_.end() && static_cast<int>(running_.size()) < lim.max_num_seqs;) {
    Request* r = *it;
    const bool decode_only = !needs_prefill(*r);
    std::int64_t n = 0;
    if (!decode_only) {
      if (budget <= 0) break;
      const std::int64_t whole = r->num_tokens() - r->num_computed;
      if (!lim.allow_chunking && whole > budget) break;
      // SGLang 0.5's add_one_req: a batch's first prompt always goes in; a further one only while its prompt is
      // below the max_prefill_tokens left (so none once nothing is left).
      if (!out.items.empty() && whole >= input_left) break;
      const double booking = static_cast<double>(whole) + output_to_book(*r, pool_tokens);
      if (booking >= unbooked) break;  // SGLang's NO_TOKEN: admission stops (FCFS)
      n = chunk(*r);
      if (!kv.allocate(*r, r->num_computed + n, true)) break;  // no memory: admission stops (FCFS)
      unbooked -= booking;
      input_left -= n;
    }
    it = waiting_.erase(it);
    mark_running(r);
    if (!decode_only) {
      out.items.push_back({r, static_cast<std::int32_t>(n), true});
      budget -= n;
    }
  }
  return !out.items.empty();
}

void SglangScheduler::schedule_decode(KvBlockManager& kv, Batch& out) {
  new_token_ratio_ = std::max(new_token_ratio_ - (kInitNewTokenRatio - kMinNewTokenRatio) / kNewTokenRatioDecaySteps,
                              kMinNewTokenRatio);
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
      new_token_ratio_ = kInitNewTokenRatio;
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
