#pragma once
/// A request's lengths and its progress through the system. Requests live in one pool owned by the
/// session (index = id) and double as the per-request metrics record, so memory per request is fixed.
#include <cstdint>

#include "core/sim/sim_time.h"

namespace servesim {

/// Where a request is in its life.
enum class RequestState : std::uint8_t { kPending, kWaiting, kRunning, kTransferring, kFinished, kFailed };

/// One inference request.
struct Request {
  std::int64_t id = 0;
  SimTime arrival = 0;            ///< when the client sent it (latencies are measured from here)
  SimTime first_scheduled = -1;   ///< first iteration that included it
  SimTime first_token = -1;       ///< when the client saw its first token: output token first_text_token
  SimTime last_token = -1;        ///< time of the latest output token
  SimTime finished = -1;          ///< completion (or failure) time
  SimTime prefill_done = -1;      ///< disaggregated: prefill finished on P (KV held there until pulled)
  SimTime transfer_start = -1;    ///< disaggregated: D pulled the KV (blocks reserved on D)
  SimTime transfer_end = -1;      ///< disaggregated: KV landed on D; the first token reaches the client
  std::int64_t num_computed = 0;  ///< tokens whose KV is in the cache (reset by recompute preemption)
  std::int32_t prompt_tokens = 0;
  std::int32_t output_tokens = 0;  ///< tokens to generate (fixed by the workload: ignore_eos)
  std::int32_t generated = 0;      ///< output tokens produced so far
  /// The output token the client times as its first (1, or 1 + the model's response preamble when the client
  /// times the first text; at most output_tokens). TTFT ends there; TPOT and ITL count from it.
  std::int32_t first_text_token = 1;
  std::int32_t num_blocks = 0;     ///< KV blocks held
  std::int32_t preemptions = 0;
  std::int32_t replica = -1;       ///< global replica index serving it (the decode replica once handed off)
  std::int32_t prefill_replica = -1;  ///< disaggregated: global index of the P replica
  std::int32_t decode_target = -1;    ///< disaggregated: D replica chosen at prefill start
  std::int32_t held_blocks = 0;       ///< disaggregated: blocks still held on P after the handoff
  bool optimal_assignment = false;    ///< disaggregated: decode_target was least loaded at the handoff
  bool in_flight = false;             ///< in a batch still inside the replica's pipeline: not schedulable
  std::int32_t fail_reason = -1;   ///< index into the failure-reason table when failed
  std::int32_t prefill_chunks = 0; ///< iterations that advanced its prompt
  RequestState state = RequestState::kPending;

  /// Prompt plus generated tokens: what a recompute must rebuild.
  std::int64_t num_tokens() const { return static_cast<std::int64_t>(prompt_tokens) + generated; }
  bool done() const { return state == RequestState::kFinished || state == RequestState::kFailed; }
};

}  // namespace servesim
