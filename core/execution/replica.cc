#include "core/execution/replica.h"

#include "core/execution/chunked_prefill_adapter.h"
#include "core/execution/cuda_graph_adapter.h"
#include "core/execution/scheduler_registry.h"
#include "core/sim/check.h"

namespace servesim {

std::vector<std::unique_ptr<RuntimeAdapter>> make_adapters(const EngineOptions& e) {
  std::vector<std::unique_ptr<RuntimeAdapter>> out;
  if (e.enable_chunked_prefill) out.push_back(std::make_unique<ChunkedPrefillAdapter>(e.long_prefill_token_threshold));
  if (!e.enforce_eager) {
    auto sizes = e.cuda_graph_sizes.empty()
                     ? default_cuda_graph_sizes(std::min<std::int64_t>(e.max_cudagraph_capture_size, 2 * e.max_num_seqs))
                     : e.cuda_graph_sizes;
    out.push_back(std::make_unique<CudaGraphAdapter>(std::move(sizes)));
  }
  return out;
}

Replica::Replica(int index, int role_index, const EngineOptions& engine, std::int64_t num_blocks, CostModel* cost,
                 ClusterCounters* counters, ReplicaObserver* observer)
    : index_(index),
      role_index_(role_index),
      kv_(num_blocks, engine.block_size, engine.kv_watermark),
      adapters_(make_adapters(engine)),
      cost_(cost),
      observer_(observer) {
  base_limits_.token_budget = engine.max_num_batched_tokens;
  base_limits_.max_num_seqs = engine.max_num_seqs;
  SchedulerKind kind;
  SERVESIM_CHECK(scheduler_from_string(engine.scheduler, kind), "unknown scheduler passed validation");
  scheduler_ = make_scheduler(kind, counters);
}

void Replica::enqueue(Simulator& sim, Request* r) {
  r->replica = index_;
  outstanding_ += static_cast<std::int64_t>(r->prompt_tokens) + r->output_tokens;
  scheduler_->add(r);
  if (!busy_ && !start_pending_) {
    start_pending_ = true;
    sim.schedule(sim.now(), this, kStart);
  }
}

void Replica::enqueue_prefilled(Simulator& sim, Request* r) {
  r->replica = index_;
  outstanding_ += static_cast<std::int64_t>(r->output_tokens) - r->generated;
  scheduler_->add(r);
  kick(sim);
}

void Replica::kick(Simulator& sim) {
  if (!busy_ && !start_pending_ && scheduler_->has_work()) {
    start_pending_ = true;
    sim.schedule(sim.now(), this, kStart);
  }
}

void Replica::on_event(Simulator& sim, const Event& ev) {
  if (ev.kind == kStart) {
    start_pending_ = false;
    if (!busy_) start_iteration(sim);
  } else {
    finish_iteration(sim);
  }
}

void Replica::build_shape() {
  BatchShape& s = batch_.shape;
  for (const ScheduledItem& it : batch_.items) {
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
  batch_.clear();
  SchedulerLimits limits = base_limits_;
  for (auto& a : adapters_) a->before_schedule(limits);
  scheduler_->schedule(limits, kv_, batch_);
  if (batch_.items.empty()) {
    busy_ = false;
    if (may_wait_for_transfers_ && batch_.preempted.empty()) return;  // a transfer event kicks it
    // A request that could never fit is refused at routing, so a co-located replica always progresses.
    SERVESIM_CHECK(!scheduler_->has_work() || !batch_.preempted.empty(), "replica has work but scheduled nothing");
    if (scheduler_->has_work()) {
      start_pending_ = true;
      sim.schedule(sim.now(), this, kStart);
    }
    return;
  }
  for (const ScheduledItem& it : batch_.items)
    if (it.req->first_scheduled < 0) it.req->first_scheduled = sim.now();
  build_shape();
  for (auto& a : adapters_) a->shape_batch(batch_);
  batch_cost_ = cost_->price(batch_.shape);
  SERVESIM_CHECK(batch_cost_.total > 0, "an iteration must take time");
  busy_ = true;
  batch_start_ = sim.now();
  sim.schedule(sim.now() + batch_cost_.total, this, kEnd);
}

void Replica::finish_iteration(Simulator& sim) {
  const SimTime now = sim.now();
  for (auto& a : adapters_) a->after_batch(batch_);
  for (const ScheduledItem& it : batch_.items) {
    Request& r = *it.req;
    if (it.prefill) ++r.prefill_chunks;
    r.num_computed += it.num_tokens;
    SERVESIM_CHECK(r.num_computed <= r.num_tokens(), "computed past the sequence");
    if (r.num_computed < r.num_tokens()) continue;  // a prompt chunk that does not reach the end
    if (r.generated == 0) outstanding_ -= r.prompt_tokens;
    observer_->on_token(r, now);
    ++r.generated;
    --outstanding_;
    r.last_token = now;
    if (r.generated == 1) r.first_token = now;
    if (r.generated >= r.output_tokens) {
      kv_.free(r);
      r.state = RequestState::kFinished;
      r.finished = now;
    } else if (handoff_after_prefill_ && r.generated == 1) {
      // The prompt's KV (and the first token) now wait for the decode role to pull them.
      kv_.hold(r);
      r.state = RequestState::kTransferring;
      r.prefill_done = now;
      outstanding_ -= static_cast<std::int64_t>(r.output_tokens) - r.generated;
    }
  }
  scheduler_->remove_finished();
  ++iterations_;
  busy_ns_ += now - batch_start_;
  observer_->on_iteration(*this, batch_, batch_start_, now, batch_cost_);
  for (const ScheduledItem& it : batch_.items) {
    if (it.req->state == RequestState::kFinished && it.req->finished == now) observer_->on_finished(sim, *it.req);
    else if (it.req->state == RequestState::kTransferring && it.req->prefill_done == now) observer_->on_handoff(sim, *it.req);
  }
  busy_ = false;
  if (scheduler_->has_work()) start_iteration(sim);
}

}  // namespace servesim
