#pragma once
/// What the vLLM-, SGLang- and TRT-LLM-style schedulers share: a FCFS waiting queue, the running set, recompute
/// preemption and the prompt-chunk size; each subclass decides how a step's batch is formed.
#include <cstdint>
#include <deque>
#include <vector>

#include "core/execution/scheduler.h"

namespace servesim {

class QueueScheduler : public Scheduler {
 public:
  explicit QueueScheduler(ClusterCounters* counters) : counters_(counters) {}
  /// Appends a new (or KV-transferred) request to the waiting queue.
  void add(Request* r) override;
  /// Finished requests and prefills handed off to a decode role both leave the running set.
  void remove_finished() override;
  bool has_work() const override { return !running_.empty() || !waiting_.empty(); }
  std::int64_t num_waiting() const override { return static_cast<std::int64_t>(waiting_.size()); }
  std::int64_t num_running() const override { return static_cast<std::int64_t>(running_.size()); }

 protected:
  /// Recompute preemption (vLLM preempt, SGLang retract): frees `r`'s blocks, resets its progress and puts it
  /// at the front of the waiting queue. The caller removes it from running_.
  void preempt_for_recompute(Request* r, KvBlockManager& kv, Batch& out);
  /// Tokens of `r`'s next prompt chunk: what is left, capped by long_prefill_token_threshold and `budget`.
  static std::int64_t prefill_chunk(const Request& r, const SchedulerLimits& lim, std::int64_t budget);
  /// True while `r` still has prompt (or recompute) work; a request whose KV arrived from a prefill role has exactly
  /// its one new token left and decodes.
  static bool needs_prefill(const Request& r) { return r.num_tokens() - r.num_computed > 1 || r.generated == 0; }
  /// Joins `r`, already taken off waiting_, to the running set.
  void mark_running(Request* r);

  std::vector<Request*> running_;  ///< admitted, in admission order
  std::deque<Request*> waiting_;
  ClusterCounters* counters_;
};

}  // namespace servesim
