#pragma once
/// TensorRT-LLM's default scheduling (PyTorch executor): a capacity scheduler with the GUARANTEED_NO_EVICT
/// policy in front of the micro-batch scheduler.
///
/// Capacity: a request is admitted only when the KV blocks for its whole length (prompt + max_new_tokens; the
/// prompt + 1 on a prefill role, whose requests leave after their first token) fit the free blocks left after
/// what every admitted request still needs to finish. Admission is first-come-first-served and stops at the first
/// request that does not fit. Nothing is ever preempted: the bookings guarantee each admitted request its blocks,
/// and what cannot be booked waits in the queue (as TTFT, not as slower tokens). A request whose KV arrives from a
/// prefill role is admitted by the same rule before its KV is pulled (whole_request_blocks).
///
/// Micro-batch: generation requests first, one token each, in admission order, then the admitted prompts under
/// the token budget (max_num_tokens). Without chunked prefill a prompt goes whole or, with the first that does not
/// fit, no further prompts this step. With chunked prefill (FIRST_COME_FIRST_SERVED policy) the prompts take the
/// budget left in order; a prompt cut short is cut to a whole number of KV blocks (the chunk unit) and a later
/// prompt that fits whole in what remains still goes. max_num_seqs stands for max_batch_size.
#include "core/execution/queue_scheduler.h"

namespace servesim {

/// GUARANTEED_NO_EVICT admission with TensorRT-LLM's micro-batching.
class TrtllmScheduler : public QueueScheduler {
 public:
  using QueueScheduler::QueueScheduler;
  void schedule(const SchedulerLimits& limits, KvBlockManager& kv, Batch& out) override;
  /// Over the running requests and the waiting ones that already hold KV (moved in from a prefill role): the
  /// blocks each still needs to reach its whole length.
  std::int64_t booked_blocks(const KvBlockManager& kv) const override;
  /// Most blocks `r` holds on its way to its whole length (prompt + output, or prompt + 1 on a prefill role).
  std::int64_t whole_request_blocks(const KvBlockManager& kv, const Request& r) const override;

 private:
  /// Blocks `r` still needs beyond those it holds.
  std::int64_t still_needed(const KvBlockManager& kv, const Request& r) const;
  /// Moves a waiting request to the running set.
  void start(Request* r);
};

}  // namespace servesim
