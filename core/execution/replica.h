#pragma once
/// One serving instance: its scheduler, KV pool and runtime adapters.
/// Each iteration: adapters adjust limits -> scheduler forms the batch -> adapters reshape it -> the
/// fidelity plane prices it -> at its end, progress and tokens are applied and the next one starts.
/// With pp pipeline stages up to pp batches are in flight (vLLM V1's batch queue): stage s of a batch starts at
/// max(stage s free, its stage s-1 end + one p2p hop), each stage end is an event that schedules the next
/// stage, a new batch forms whenever stage 0 is free, and progress commits when a batch leaves the last stage.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "core/execution/kv_block_manager.h"
#include "core/execution/runtime_adapter.h"
#include "core/execution/scheduler.h"
#include "core/fidelity/cost_model.h"
#include "core/sim/simulator.h"
#include "core/spec/engine_options.h"

namespace servesim {

class Replica;

/// Receives what replicas do (metrics, the controller).
class ReplicaObserver {
 public:
  virtual ~ReplicaObserver() = default;
  /// A batch ran from `start` to `end` on `replica`.
  virtual void on_iteration(const Replica& replica, const Batch& batch, SimTime start, SimTime end,
                            const BatchCost& cost) = 0;
  /// `req` produced an output token at `now` (before last_token is updated, so now - last_token is the ITL).
  virtual void on_token(const Request& req, SimTime now) = 0;
  /// `req` produced its last token; its blocks are already freed.
  virtual void on_finished(Simulator& sim, Request& req) = 0;
  /// A prefill-role replica finished `req`'s prompt; its KV blocks are held until the decode side pulls them.
  virtual void on_handoff(Simulator& sim, Request& req) {}
};

/// Runtime adapters enabled by engine options, in hook order.
/// `attention_dp`: data-parallel attention ranks of the replica, each replaying its own share of a decode batch.
std::vector<std::unique_ptr<RuntimeAdapter>> make_adapters(const EngineOptions& engine, int attention_dp = 1);

/// A replica of a role.
class Replica : public EventHandler {
 public:
  Replica(int index, int role_index, const EngineOptions& engine, std::int64_t num_blocks, CostModel* cost,
          ClusterCounters* counters, ReplicaObserver* observer, int attention_dp = 1);
  /// Accepts a routed request; starts an iteration if idle.
  void enqueue(Simulator& sim, Request* r);
  /// Accepts a request whose prompt KV arrived from a prefill role (blocks already allocated here).
  void enqueue_prefilled(Simulator& sim, Request* r);
  /// Prefill role: hand requests off after their prompt instead of decoding them.
  void set_handoff_after_prefill(bool on) {
    handoff_after_prefill_ = on;
    scheduler_->set_handoff_after_prefill(on);
  }
  /// Disaggregated roles may sit idle with waiting work: a decode replica while transfers it reserved
  /// blocks for are in flight, a prefill replica while its blocks are held by handed-off requests.
  void set_may_wait_for_transfers(bool on) { may_wait_for_transfers_ = on; }
  /// Starts an iteration if idle with work (after held blocks were released or KV landed).
  void kick(Simulator& sim);
  KvBlockManager& kv_mutable() { return kv_; }
  void on_event(Simulator& sim, const Event& ev) override;

  int index() const { return index_; }
  int role_index() const { return role_index_; }
  const KvBlockManager& kv() const { return kv_; }
  const Scheduler& scheduler() const { return *scheduler_; }
  /// KV blocks promised beyond those allocated: the scheduler's bookings and those of the requests held for a
  /// later batch (async scheduling), which a KV pull or an admission may not take.
  std::int64_t booked_blocks() const;
  /// Over its requests: the whole prompt until the first token, plus output tokens not yet generated.
  std::int64_t outstanding_tokens() const { return outstanding_; }
  std::int64_t iterations() const { return iterations_; }
  /// Stage-0 occupancy (stage 0's kernels, plus the host time unless engine.host.overlaps_pipeline) summed
  /// over batches; with pp = 1 the time spent running iterations. Pipelined batches overlap, so this never counts a moment twice.
  SimTime busy_time() const { return busy_ns_; }
  /// Batches formed and not yet out of the last pipeline stage.
  int batches_in_flight() const { return in_flight_; }
  const std::vector<std::unique_ptr<RuntimeAdapter>>& adapters() const { return adapters_; }

 private:
  enum Kind : std::int32_t { kStart = 1, kStageEnd = 2, kHostEnd = 3, kFrontendReady = 4 };
  /// A batch inside the pipeline.
  struct InFlight {
    Batch batch;
    BatchCost cost;
    SimTime start = 0;
    bool active = false;
  };
  bool can_start() const { return !(host_overlap_ ? host_busy_ : stage0_busy_) && in_flight_ < stages_; }
  void start_iteration(Simulator& sim);
  void stage_end(Simulator& sim, int slot, int stage);
  void host_end(Simulator& sim, int slot);
  void begin_stage0(Simulator& sim, int slot, SimTime ready);
  void finish_iteration(Simulator& sim, InFlight& f);
  static void build_shape(Batch& batch);
  /// Hands a request to the scheduler and starts an iteration if idle; with async scheduling a request arriving
  /// while a batch is in flight is held for the batch after the next.
  void admit(Simulator& sim, Request* r);
  /// Async scheduling: hands the requests that arrived while a batch was in flight to the scheduler.
  void release_held(Simulator& sim);
  /// Blocks the held requests' whole lengths still need (0 unless the scheduler books whole requests).
  std::int64_t held_booked_blocks() const;
  /// When the client sees a token the engine produced at `now`: after the front-end's turn for it (engine.frontend).
  SimTime deliver(SimTime now);

  int index_;
  int role_index_;
  SchedulerLimits base_limits_;
  KvBlockManager kv_;
  std::unique_ptr<Scheduler> scheduler_;
  std::vector<std::unique_ptr<RuntimeAdapter>> adapters_;
  CostModel* cost_;
  ReplicaObserver* observer_;
  int stages_ = 1;
  std::vector<InFlight> slots_;      // one per stage: at most `stages_` batches in flight
  std::vector<SimTime> stage_free_;  // when each stage finishes the last batch it accepted
  int in_flight_ = 0;
  bool stage0_busy_ = false;
  bool host_overlap_ = false;  // engine.host.overlaps_pipeline with pp > 1
  bool host_busy_ = false;
  bool start_pending_ = false;
  bool handoff_after_prefill_ = false;
  bool may_wait_for_transfers_ = false;
  /// Async scheduling (vLLM's, TRT-LLM's and SGLang's overlap schedulers): the next batch is formed when the current
  /// one launches, so a request arriving while a batch is in flight joins the batch after the next one (held here until
  /// then; counted as outstanding, not yet as waiting).
  bool async_admission_ = false;
  std::vector<Request*> held_;
  /// One serial resource: each use waits for the one before it, then holds it for `span`.
  struct SerialStage {
    SimTime span = 0, free = 0;
    /// When a use starting no earlier than `now` ends.
    SimTime take(SimTime now) { return free = add_spans(std::max(free, now), span); }
  };
  /// engine.frontend, one stage per direction; requests wait in order for the engine to see them.
  SerialStage frontend_request_, frontend_token_;
  std::deque<Request*> frontend_pending_;
  std::int64_t outstanding_ = 0;
  std::int64_t iterations_ = 0;
  SimTime busy_ns_ = 0;
};

}  // namespace servesim
