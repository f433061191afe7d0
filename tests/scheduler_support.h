#pragma once
/// Helpers shared by the scheduler tests: requests to queue, and a batch's progress applied as the replica does.
#include <cstdint>

#include "core/execution/batch.h"
#include "core/execution/scheduler.h"
#include "core/workload/request.h"

namespace servesim::test {

inline Request make_request(std::int64_t id, std::int32_t prompt, std::int32_t output = 100) {
  Request r;
  r.id = id;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

/// Applies a batch's progress as the replica does at the end of an iteration.
inline void complete(Batch& b) {
  for (const ScheduledItem& it : b.items) {
    Request& r = *it.req;
    r.num_computed += it.num_tokens;
    if (r.num_computed == r.num_tokens()) ++r.generated;
  }
}

/// Per-step limits: token budget, running-request cap, chunking, per-request chunk cap (0 = budget only).
inline SchedulerLimits limits(std::int64_t budget, int max_seqs, bool chunking, std::int64_t threshold = 0) {
  SchedulerLimits l;
  l.token_budget = budget;
  l.max_num_seqs = max_seqs;
  l.allow_chunking = chunking;
  l.long_prefill_token_threshold = threshold;
  return l;
}

}  // namespace servesim::test
