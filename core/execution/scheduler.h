#pragma once
/// Batch formation policy of a replica. Engines differ in policy, not skeleton: the replica loop calls
/// schedule(), adapters reshape the batch, the fidelity plane prices it, completion updates progress.
#include <cstdint>
#include <deque>
#include <vector>

#include "core/execution/batch.h"
#include "core/execution/kv_block_manager.h"

namespace servesim {

/// Scheduler-visible limits; runtime adapters may change them before each schedule().
struct SchedulerLimits {
  std::int64_t token_budget = 8192;  ///< max_num_batched_tokens
  int max_num_seqs = 256;
  bool allow_chunking = false;       ///< set by the chunked-prefill adapter
  std::int64_t long_prefill_token_threshold = 0;
  std::int64_t max_prefill_tokens = 0;  ///< SGLang --max-prefill-tokens (sglang scheduler; 0 = unbounded)
  /// KV blocks booked by requests the replica holds for a later batch (async scheduling: a request whose KV
  /// arrived during a step); a booking scheduler keeps them out of its admissions (Replica::booked_blocks).
  std::int64_t held_booked_blocks = 0;
};

/// Shared counters across all replicas (for cluster-wide time series without scanning replicas).
struct ClusterCounters {
  std::int64_t waiting = 0;
  std::int64_t running = 0;
};

/// A batch-formation policy.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// A new request routed to this replica (or arriving with its KV already in place from a prefill role).
  virtual void add(Request* r) = 0;
  /// Forms the next batch into `out` (cleared by the caller), allocating KV blocks and preempting if needed.
  /// Requests with `in_flight` set are in a batch still inside the pipeline (pp > 1): they are neither
  /// scheduled nor preempted until that batch leaves the last stage.
  virtual void schedule(const SchedulerLimits& limits, KvBlockManager& kv, Batch& out) = 0;
  /// Drops requests that left (finished, or handed off to a decode role) from the running set.
  virtual void remove_finished() = 0;
  virtual bool has_work() const = 0;
  virtual std::int64_t num_waiting() const = 0;
  virtual std::int64_t num_running() const = 0;
  /// KV blocks promised to the requests it holds beyond the blocks they have, which no admission may take:
  /// TRT-LLM's GUARANTEED_NO_EVICT books each admitted request's whole length. vLLM and SGLang admit on the
  /// next step's needs and recover by preemption: 0.
  virtual std::int64_t booked_blocks(const KvBlockManager& kv) const { return 0; }
  /// Blocks `r`'s whole length takes here when admission books whole requests: a request moving in from a prefill
  /// role has its KV pulled only once these fit the unbooked blocks. 0 where room for its prompt and first decode
  /// token suffices (vLLM, SGLang).
  virtual std::int64_t whole_request_blocks(const KvBlockManager& kv, const Request& r) const { return 0; }
  /// Prefill role: requests leave after their first token, so their whole length is the prompt plus one.
  void set_handoff_after_prefill(bool on) { handoff_after_prefill_ = on; }

 protected:
  bool handoff_after_prefill_ = false;
};

}  // namespace servesim
