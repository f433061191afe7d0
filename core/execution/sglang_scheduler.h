#pragma once
/// SGLang's default scheduler (prefill-first, no mixed chunks): whenever prompts are waiting, the next step is a
/// prefill batch of them alone, up to the chunked-prefill token budget (--chunked-prefill-size), and the running
/// decodes pause; only a step with no prefill work decodes every running request, one token each. A prompt
/// longer than what is left of the budget is chunked and continues first in the next prefill batch. A prefill
/// batch also stops at --max-prefill-tokens (engine.max_prefill_tokens, SGLang's default 16384) as SGLang 0.5's
/// PrefillAdder counts it: the first prompt always goes in, a further one only while its prompt is below what is
/// left of it. When KV blocks run out during a decode step the newest running request is retracted (freed,
/// recomputed later), as SGLang's retract_decode does. In a closed loop this keeps clients in waves: a wave's prompts
/// are prefilled together while everyone else waits, so TTFT includes the whole wave's prefill.
///
/// Admission books memory ahead as SGLang's PrefillAdder does: every running request books its remaining output
/// tokens times new_token_ratio, and a waiting request is admitted only while its prompt plus its whole output
/// (each output capped at 4096, CLIP_MAX_NEW_TOKENS) fits in the free KV tokens left after those bookings.
/// new_token_ratio starts at 0.7, falls by (0.7 - 0.098) / 600 every decode step to 0.098, and returns to 0.7 when
/// the replica is idle or retracts a request (SGLang recomputes it from the retracted batch; the reset is this
/// model's simplification). The output length stands for max_new_tokens, as benchmark clients send
/// max_tokens = the output length with ignore_eos.
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
  /// Output tokens a request books: its remaining output, clipped as SGLang clips max_new_tokens.
  static double output_to_book(const Request& r, double pool_tokens);
  /// Free KV tokens minus the running requests' bookings (remaining outputs x new_token_ratio).
  double unbooked_tokens(const KvBlockManager& kv, double pool_tokens) const;

  static constexpr double kInitNewTokenRatio = 0.7;        ///< SGLANG_INIT_NEW_TOKEN_RATIO
  static constexpr double kMinNewTokenRatio = 0.7 * 0.14;  ///< init x SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
  static constexpr double kNewTokenRatioDecaySteps = 600;  ///< SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
  static constexpr std::int64_t kClipMaxNewTokens = 4096;  ///< CLIP_MAX_NEW_TOKENS
  double new_token_ratio_ = kInitNewTokenRatio;
};

}  // namespace servesim
