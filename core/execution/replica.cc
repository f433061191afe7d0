#include "core/execution/replica.h"

#include <algorithm>

#include "core/execution/chunked_prefill_adapter.h"
#include "core/execution/cuda_graph_adapter.h"
#include "core/execution/scheduler_registry.h"
#include "core/sim/check.h"
#include "core/spec/cuda_graph_plan.h"

namespace servesim {

std::vector<std::unique_ptr<RuntimeAdapter>> make_adapters(const EngineOptions& e, int attention_dp) {
  std::vector<std::unique_ptr<RuntimeAdapter>> out;
  if (e.enable_chunked_prefill) out.push_back(std::make_unique<ChunkedPrefillAdapter>(e.long_prefill_token_threshold));
  if (!e.enforce_eager) {
    // compile_cluster resolves the role's sizes for its GPU; a replica built from bare options takes the engine's
    // defaults for an unknown GPU (cuda_graph_plan.h).
    CudaGraphPlan plan = cuda_graph_plan(e, 0, 1);
    out.push_back(std::make_unique<CudaGraphAdapter>(std::move(plan.sizes), plan.padding, attention_dp));
  }
  return out;
}

Replica::Replica(int index, int role_index, const EngineOptions& engine, std::int64_t num_blocks, CostModel* cost,
                 ClusterCounters* counters, ReplicaObserver* observer, int attention_dp)
    : index_(index),
      role_index_(role_index),
      kv_(num_blocks, engine.block_size, engine.kv_watermark),
      adapters_(make_adapters(engine, attention_dp)),
      cost_(cost),
      observer_(observer) {
  base_limits_.token_budget = engine.max_num_batched_tokens;
  base_limits_.max_num_seqs = engine.max_num_seqs;
  base_limits_.max_prefill_tokens = engine.max_prefill_tokens;
  SchedulerKind kind;
  SERVESIM_CHECK(scheduler_from_string(engine.scheduler, kind), "unknown scheduler passed validation");
  scheduler_ = make_scheduler(kind, counters);
  stages_ = cost_->pipeline_stages();
  SERVESIM_CHECK(stages_ >= 1, "a replica has at least one pipeline stage");
  slots_.resize(static_cast<std::size_t>(stages_));
  stage_free_.assign(static_cast<std::size_t>(stages_), 0);
  host_overlap_ = engine.host.overlaps_pipeline && stages_ > 1;
  async_admission_ = async_scheduling_on(engine, stages_);
  frontend_request_.span = span_ns(engine.frontend.request_us * 1e3);
  frontend_token_.span = span_ns(engine.frontend.token_us * 1e3);
}

void Replica::enqueue(Simulator& sim, Request* r) {
  r->replica = index_;
  outstanding_ += static_cast<std::int64_t>(r->prompt_tokens) + r->output_tokens;
  if (frontend_request_.span > 0) {
    // The front-end handles requests one at a time; the engine sees this one when its turn ends.
    frontend_pending_.push_back(r);
    sim.schedule(frontend_request_.take(sim.now()), this, kFrontendReady);
    return;
  }
  admit(sim, r);
}

SimTime Replica::deliver(SimTime now) { return frontend_token_.span > 0 ? frontend_token_.take(now) : now; }

void Replica::enqueue_prefilled(Simulator& sim, Request* r) {
  r->replica = index_;
  outstanding_ += static_cast<std::int64_t>(r->output_tokens) - r->generated;
  admit(sim, r);
}

void Replica::admit(Simulator& sim, Request* r) {
  if (async_admission_ && in_flight_ > 0) {
    held_.push_back(r);  // the next batch was formed when the running one launched
    return;
  }
  scheduler_->add(r);
  kick(sim);
}

std::int64_t Replica::held_booked_blocks() const {
  std::int64_t held = 0;
  for (const Request* r : held_)
    held += std::max<std::int64_t>(0, scheduler_->whole_request_blocks(kv_, *r) - r->num_blocks);
  return held;
}

std::int64_t Replica::booked_blocks() const { return scheduler_->booked_blocks(kv_) + held_booked_blocks(); }

void Replica::release_held(Simulator& sim) {
  if (held_.empty()) return;
  for (Request* r : held_) scheduler_->add(r);
  held_.clear();
  kick(sim);  // an idle replica schedules them at once; a busy one forms them into its next batch
}

void Replica::kick(Simulator& sim) {
  if (can_start() && !start_pending_ && scheduler_->has_work()) {
    start_pending_ = true;
    sim.schedule(sim.now(), this, kStart);
  }
}

void Replica::on_event(Simulator& sim, const Event& ev) {
  if (ev.kind == kStart) {
    start_pending_ = false;
    if (can_start()) start_iteration(sim);
  } else if (ev.kind == kHostEnd) {
    host_end(sim, static_cast<int>(ev.arg));
  } else if (ev.kind == kFrontendReady) {
    // Turns end in the order they were taken, so the oldest pending request is this event's.
    SERVESIM_CHECK(!frontend_pending_.empty(), "a front-end turn ended with no request waiting");
    Request* r = frontend_pending_.front();
    frontend_pending_.pop_front();
    admit(sim, r);
  } else {
    stage_end(sim, static_cast<int>(ev.arg >> 32), static_cast<int>(ev.arg & 0xffffffff));
  }
}

void Replica::build_shape(Batch& batch) {
  BatchShape& s = batch.shape;
  for (const ScheduledItem& it : batch.items) {
    const Request& r = *it.req;
    s.num_tokens += it.num_tokens;
    const std::int64_t ctx = r.num_computed + it.num_tokens;
    if (ctx == r.num_tokens()) ++s.num_sampled;
    if (it.prefill) {
      s.prefills.push_back({it.num_tokens, ctx});
    } else {
      ++s.num_decode;
      s.decode_context_sum += ctx;
      s.decode_contexts.push_back(static_cast<std::int32_t>(ctx));
      if (ctx > s.decode_context_max) s.decode_context_max = ctx;
    }
  }
}

void Replica::start_iteration(Simulator& sim) {
  int slot = 0;
  while (slots_[static_cast<std::size_t>(slot)].active) ++slot;
  InFlight& f = slots_[static_cast<std::size_t>(slot)];
  Batch& batch = f.batch;
  batch.clear();
  SchedulerLimits limits = base_limits_;
  limits.held_booked_blocks = held_booked_blocks();
  for (auto& a : adapters_) a->before_schedule(limits);
  scheduler_->schedule(limits, kv_, batch);
  if (batch.items.empty()) {
    // Everything schedulable is inside the pipeline: the next batch to leave it tries again.
    if (in_flight_ > 0) return;
    if (may_wait_for_transfers_ && batch.preempted.empty()) return;  // a transfer event kicks it
    // A request that could never fit is refused at routing, so a co-located replica always progresses.
    SERVESIM_CHECK(!scheduler_->has_work() || !batch.preempted.empty(), "replica has work but scheduled nothing");
    if (scheduler_->has_work()) {
      start_pending_ = true;
      sim.schedule(sim.now(), this, kStart);
    }
    return;
  }
  for (const ScheduledItem& it : batch.items) {
    SERVESIM_CHECK(!it.req->in_flight, "a request was scheduled into two batches in flight");
    it.req->in_flight = true;
    if (it.req->first_scheduled < 0) it.req->first_scheduled = sim.now();
  }
  build_shape(batch);
  for (auto& a : adapters_) a->shape_batch(batch);
  f.cost = cost_->price(batch.shape);
  SERVESIM_CHECK(f.cost.total > 0, "an iteration must take time");
  SERVESIM_CHECK(stages_ == 1 || f.cost.stages == stages_, "cost model priced a different number of stages");
  f.active = true;
  f.start = sim.now();
  ++in_flight_;
  if (host_overlap_) {
    // The host prepares this batch on its own; stage 0 takes it when both are done.
    host_busy_ = true;
    sim.schedule(sim.now() + f.cost.host, this, kHostEnd, slot);
    return;
  }
  begin_stage0(sim, slot, sim.now());
}

void Replica::begin_stage0(Simulator& sim, int slot, SimTime ready) {
  const BatchCost& c = slots_[static_cast<std::size_t>(slot)].cost;
  stage0_busy_ = true;
  const SimTime gpu0 = host_overlap_ ? c.stage_time(0) - c.host : c.stage_time(0);
  const SimTime end = std::max(stage_free_[0], ready) + gpu0;
  stage_free_[0] = end;
  sim.schedule(end, this, kStageEnd, static_cast<std::int64_t>(slot) << 32);
}

void Replica::host_end(Simulator& sim, int slot) {
  host_busy_ = false;
  begin_stage0(sim, slot, sim.now());
  if (can_start() && !start_pending_ && scheduler_->has_work()) start_iteration(sim);
}

void Replica::stage_end(Simulator& sim, int slot, int stage) {
  InFlight& f = slots_[static_cast<std::size_t>(slot)];
  SERVESIM_CHECK(f.active, "stage end of a batch not in flight");
  if (stage == 0) busy_ns_ += host_overlap_ ? f.cost.stage_time(0) - f.cost.host : f.cost.stage_time(0);
  if (stage + 1 < stages_) {
    if (stage == 0) stage0_busy_ = false;
    // The activations travel one hop; the next stage takes them when it has finished the batch before.
    const int next = stage + 1;
    const SimTime begin = std::max(stage_free_[static_cast<std::size_t>(next)], sim.now() + f.cost.p2p_hop);
    const SimTime end = begin + f.cost.stage_time(next);
    stage_free_[static_cast<std::size_t>(next)] = end;
    sim.schedule(end, this, kStageEnd, (static_cast<std::int64_t>(slot) << 32) | next);
  } else {
    // The batch leaves the pipeline only after its commit: arrivals the observers trigger (closed-loop clients)
    // then wait for the start below instead of racing it.
    finish_iteration(sim, f);
    f.active = false;
    --in_flight_;
    if (stage == 0) stage0_busy_ = false;
  }
  if (can_start() && !start_pending_ && scheduler_->has_work()) start_iteration(sim);
  // The batch just formed is the one the engine scheduled when this batch launched: later arrivals join the one after.
  if (stage + 1 == stages_) release_held(sim);
}

void Replica::finish_iteration(Simulator& sim, InFlight& f) {
  const SimTime now = sim.now();
  Batch& batch = f.batch;
  for (const ScheduledItem& it : batch.items) it.req->in_flight = false;
  for (auto& a : adapters_) a->after_batch(batch);
  for (const ScheduledItem& it : batch.items) {
    Request& r = *it.req;
    if (it.prefill) ++r.prefill_chunks;
    r.num_computed += it.num_tokens;
    SERVESIM_CHECK(r.num_computed <= r.num_tokens(), "computed past the sequence");
    if (r.num_computed < r.num_tokens()) continue;  // a prompt chunk that does not reach the end
    if (r.generated == 0) outstanding_ -= r.prompt_tokens;
    // A prefill role hands a request with more to generate to the decode role after its first token, which reaches
    // the client with the KV (GlobalController::landed), not from here.
    const bool handoff = handoff_after_prefill_ && r.generated == 0 && r.output_tokens > 1;
    const SimTime seen = handoff ? now : deliver(now);
    observer_->on_token(r, seen);
    ++r.generated;
    --outstanding_;
    r.last_token = seen;
    if (r.generated == r.first_text_token) r.first_token = seen;
    if (r.generated >= r.output_tokens) {
      kv_.free(r);
      r.state = RequestState::kFinished;
      r.finished = seen;  // the client's view: its last token; the blocks are free now
    } else if (handoff) {
      // The prompt's KV (and the first token) now wait for the decode role to pull them.
      kv_.hold(r);
      r.state = RequestState::kTransferring;
      r.prefill_done = now;
      outstanding_ -= static_cast<std::int64_t>(r.output_tokens) - r.generated;
    }
  }
  scheduler_->remove_finished();
  ++iterations_;
  observer_->on_iteration(*this, batch, f.start, now, f.cost);
  for (const ScheduledItem& it : batch.items) {
    // A request in this batch that is finished finished here (a finished request is never scheduled).
    if (it.req->state == RequestState::kFinished)
      observer_->on_finished(sim, *it.req);
    else if (it.req->state == RequestState::kTransferring && it.req->prefill_done == now) observer_->on_handoff(sim, *it.req);
  }
}

}  // namespace servesim
