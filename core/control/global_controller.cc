#include "core/control/global_controller.h"

#include <algorithm>

#include "core/fidelity/memory_model.h"

namespace servesim {

GlobalController::GlobalController(Cluster& cluster, RouterKind router, MetricsCollector& metrics,
                                   const ClusterCounters& counters)
    : cluster_(cluster), router_(make_router(router)), metrics_(metrics), counters_(counters) {}

namespace {

/// Link bandwidth of one replica (all its GPUs in parallel), bytes/s.
double replica_link_bytes_per_s(const RoleSpec& role, const KvTransferSpec& t) {
  const double per_gpu = t.bandwidth_gb_s > 0 ? t.bandwidth_gb_s
                         : t.link == "nvlink"  ? role.gpu.intra_node_gb_s()
                                               : role.gpu.inter_node_gb_s;
  return per_gpu * 1e9 * t.efficiency * role.parallelism.world_size();
}

}  // namespace

void GlobalController::init_disaggregation(const Scenario& s) {
  if (cluster_.decode_role < 0) return;
  RoleCluster& p = cluster_.roles[cluster_.entry_role];
  RoleCluster& d = cluster_.roles[cluster_.decode_role];
  const KvTransferSpec& t = s.deployment.kv_transfer;
  // The P side's KV layout decides what is sent (its sliding layers hold only the window with the hybrid manager).
  const auto prompt_bytes = [&model = s.model, &engine = p.spec->engine](std::int64_t tokens) {
    return kv_transfer_bytes(model, engine, tokens);
  };
  const double p_bw = replica_link_bytes_per_s(*p.spec, t), d_bw = replica_link_bytes_per_s(*d.spec, t);
  const SimTime latency = from_ms(t.latency_us / 1000.0);
  transfers_ = std::make_unique<KvTransferManager>(cluster_, prompt_bytes, p_bw, d_bw, latency,
                                                   [this](Simulator& sim, Request& r) { landed(sim, r); });
  decode_base_ = d.replicas.front()->index();
  decode_states_.resize(d.replicas.size());

  // SIBYL's ESTPREFILL: the prompt priced alone on a P replica, chunk by chunk, plus its transfer alone.
  CostModel* p_cost = p.cost.get();
  const std::int64_t budget = p.spec->engine.max_num_batched_tokens;
  const double link = std::min(p_bw, d_bw);
  HandoffEstimate estimate = [p_cost, budget, prompt_bytes, link, latency](const Request& r) {
    SimTime total = 0;
    BatchShape shape;
    for (std::int64_t done = 0; done < r.prompt_tokens;) {
      const std::int64_t q = std::min<std::int64_t>(budget, r.prompt_tokens - done);
      done += q;
      shape.clear();
      shape.num_tokens = q;
      shape.prefills.push_back({static_cast<std::int32_t>(q), done});
      shape.num_sampled = done == r.prompt_tokens ? 1 : 0;
      total = add_spans(total, p_cost->price(shape).total);
    }
    return add_spans(add_spans(total, from_sec(prompt_bytes(r.prompt_tokens) / link)), latency);
  };
  // Initial system decode speed: one request decoding alone at a 1k context.
  BatchShape one;
  one.num_tokens = 1;
  one.num_decode = 1;
  one.decode_context_sum = one.decode_context_max = 1024;
  one.num_sampled = 1;
  one.cuda_graph = !d.spec->engine.enforce_eager;
  const double v0 = 1.0 / as_sec(d.cost->price(one).total);
  decode_router_ = make_decode_router(s.deployment.decode_router, s.deployment.sibyl, d.max_model_len,
                                      std::move(estimate), v0);
}

std::string GlobalController::refusal(const Request& req) const {
  const std::int64_t total = static_cast<std::int64_t>(req.prompt_tokens) + req.output_tokens;
  const RoleCluster& entry = cluster_.roles[cluster_.entry_role];
  std::int64_t max_len = entry.max_model_len;
  if (cluster_.decode_role >= 0) max_len = std::min(max_len, cluster_.roles[cluster_.decode_role].max_model_len);
  if (total > max_len) return "prompt + output tokens exceed max_model_len (" + std::to_string(max_len) + ")";
  // TRT-LLM without chunked prefill takes a prompt in one step or not at all: it answers 400 ("The sum of prompt
  // length ..., query length ... should not exceed max_num_tokens").
  const EngineOptions& entry_engine = entry.spec->engine;
  if (!entry_engine.enable_chunked_prefill && req.prompt_tokens > entry_engine.max_num_batched_tokens)
    return "prompt exceeds max_num_batched_tokens (" + std::to_string(entry_engine.max_num_batched_tokens) +
           ", TRT-LLM's max_num_tokens) with enable_chunked_prefill false";
  if (cluster_.decode_role < 0) {
    const std::int64_t cap = entry.replicas.front()->kv().max_admissible_tokens();
    if (total > cap) return "prompt + output tokens exceed one replica's KV cache (" + std::to_string(cap) + " tokens)";
    return "";
  }
  const std::int64_t p_cap = entry.replicas.front()->kv().max_admissible_tokens();
  if (req.prompt_tokens + 1 > p_cap)
    return "prompt exceeds one prefill replica's KV cache (" + std::to_string(p_cap) + " tokens)";
  const std::int64_t d_cap = cluster_.roles[cluster_.decode_role].replicas.front()->kv().max_admissible_tokens();
  if (total > d_cap)
    return "prompt + output tokens exceed one decode replica's KV cache (" + std::to_string(d_cap) + " tokens)";
  return "";
}

void GlobalController::submit(Simulator& sim, Request& req) {
  submitted_tokens_ += static_cast<std::int64_t>(req.prompt_tokens) + req.output_tokens;
  const std::string reason = refusal(req);
  if (!reason.empty()) {
    req.fail_reason = metrics_.failure_index(reason);
    // Failures are delivered by an event so the clients are never re-entered from inside submit().
    sim.schedule(sim.now(), this, kFail, req.id);
    return;
  }
  RoleCluster& entry = cluster_.roles[cluster_.entry_role];
  Replica* target = entry.replica_ptrs[router_->pick(req, entry.replica_ptrs)];
  if (decode_router_ && req.output_tokens > 1) {
    // Early assignment: the decode instance is bound now, so the transfer can start when prefill ends.
    req.prefill_replica = target->index();
    req.decode_target = decode_base_ + static_cast<int>(decode_router_->pick(req, sim.now(), decode_states_));
    decode_state(req.decode_target).pending.push_back(&req);
  }
  target->enqueue(sim, &req);
}

void GlobalController::on_iteration(const Replica& replica, const Batch& batch, SimTime start, SimTime end,
                                    const BatchCost& cost) {
  metrics_.on_iteration(replica, batch, start, end, cost, counters_);
}

void GlobalController::on_handoff(Simulator& sim, Request& req) { transfers_->request_pull(sim, req); }

namespace {
void erase_one(std::vector<Request*>& v, const Request* r) {
  auto it = std::find(v.begin(), v.end(), r);
  if (it != v.end()) {
    *it = v.back();
    v.pop_back();
  }
}
}  // namespace

void GlobalController::landed(Simulator& sim, Request& req) {
  // The first token reaches the client with the KV: TTFT includes the transfer, as in real P/D systems. (A client
  // that times the first text sees it later, when D decodes past the response preamble.)
  req.last_token = req.transfer_end;
  if (req.first_text_token == 1) req.first_token = req.transfer_end;
  if (req.transfer_start > req.prefill_done)
    metrics_.add_phase({req.id, req.prefill_done, req.transfer_start, 0, kPhaseKvWait});
  metrics_.add_phase({req.id, req.transfer_start, req.transfer_end, req.prompt_tokens, kPhaseKvTransfer});
  DecodeInstanceState& mine = decode_state(req.decode_target);
  erase_one(mine.pending, &req);
  // SIBYL's optimal-assignment ratio: was the chosen instance the least loaded when decoding starts?
  const double my_load = mine.current_load();
  bool optimal = true;
  for (const DecodeInstanceState& other : decode_states_)
    if (other.current_load() < my_load) optimal = false;
  req.optimal_assignment = optimal;
  ++handoffs_;
  optimal_ += optimal;
  mine.active.push_back(&req);
  cluster_.all_replicas[req.decode_target]->enqueue_prefilled(sim, &req);
}

void GlobalController::on_finished(Simulator& sim, Request& req) {
  ++done_;
  if (decode_router_ && req.decode_target >= 0) {
    DecodeInstanceState& st = decode_state(req.decode_target);
    if (req.transfer_end >= 0) {
      erase_one(st.active, &req);
      decode_router_->on_completed(req);
      // Its blocks just returned to the pool: queued pulls may now fit.
      transfers_->try_pull(sim, req.decode_target);
    } else {
      erase_one(st.pending, &req);
    }
  }
  if (driver_) driver_->on_request_done(sim, req);
}

void GlobalController::on_event(Simulator& sim, const Event& ev) {
  if (ev.kind != kFail) return;
  Request& req = (*pool_)[static_cast<std::size_t>(ev.arg)];
  req.state = RequestState::kFailed;
  req.finished = sim.now();
  ++done_;
  if (driver_) driver_->on_request_done(sim, req);
}

void GlobalController::fail_unfinished(SimTime now, const std::string& reason) {
  if (!pool_) return;
  const int idx = metrics_.failure_index(reason);
  for (Request& r : *pool_) {
    if (r.done()) continue;
    r.state = RequestState::kFailed;
    r.fail_reason = idx;
    r.finished = now;
    ++done_;
  }
}

}  // namespace servesim
