#include "core/control/global_controller.h"

namespace servesim {

GlobalController::GlobalController(Cluster& cluster, RouterKind router, MetricsCollector& metrics,
                                   const ClusterCounters& counters)
    : cluster_(cluster), router_(make_router(router)), metrics_(metrics), counters_(counters) {}

void GlobalController::submit(Simulator& sim, Request& req) {
  submitted_tokens_ += static_cast<std::int64_t>(req.prompt_tokens) + req.output_tokens;
  // Co-located serving: the single role C takes every request.
  RoleCluster& role = cluster_.roles.front();
  const std::int64_t total = static_cast<std::int64_t>(req.prompt_tokens) + req.output_tokens;
  std::string reason;
  if (total > role.max_model_len) {
    reason = "prompt + output tokens exceed max_model_len (" + std::to_string(role.max_model_len) + ")";
  } else if (total > role.replicas.front()->kv().max_admissible_tokens()) {
    reason = "prompt + output tokens exceed one replica's KV cache (" +
             std::to_string(role.replicas.front()->kv().max_admissible_tokens()) + " tokens)";
  }
  if (!reason.empty()) {
    req.fail_reason = metrics_.failure_index(reason);
    // Failures are delivered by an event so the clients are never re-entered from inside submit().
    sim.schedule(sim.now(), this, kFail, req.id);
    return;
  }
  const std::size_t i = router_->pick(req, role.replica_ptrs);
  role.replica_ptrs[i]->enqueue(sim, &req);
}

void GlobalController::on_finished(Simulator& sim, Request& req) {
  ++done_;
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
