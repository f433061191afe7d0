#pragma once
/// The global controller: admits requests from the clients, refuses those no replica could ever serve
/// (with a reason), routes the rest, and relays replica events to metrics and back to the clients. With
/// P + D roles it also picks the decode instance at prefill start and drives the KV transfers.
#include <cstdint>
#include <memory>

#include "core/control/cluster.h"
#include "core/control/decode_router.h"
#include "core/control/kv_transfer.h"
#include "core/control/router.h"
#include "core/metrics/metrics_collector.h"
#include "core/workload/workload_driver.h"

namespace servesim {

class GlobalController : public RequestSink, public ReplicaObserver, public EventHandler {
 public:
  GlobalController(Cluster& cluster, RouterKind router, MetricsCollector& metrics, const ClusterCounters& counters);
  /// Clients to notify when a request ends (set before the run starts).
  void set_driver(WorkloadDriver* driver) { driver_ = driver; }
  /// Pool used to look up failed requests by id.
  void set_pool(std::vector<Request>* pool) { pool_ = pool; }
  /// P + D deployments: builds the KV-transfer links and the decode router (after compile_cluster).
  void init_disaggregation(const Scenario& s);

  void submit(Simulator& sim, Request& req) override;
  void on_iteration(const Replica& replica, const Batch& batch, SimTime start, SimTime end,
                    const BatchCost& cost) override;
  void on_token(const Request& req, SimTime now) override { metrics_.on_token(req, now); }
  void on_finished(Simulator& sim, Request& req) override;
  void on_handoff(Simulator& sim, Request& req) override;
  void on_event(Simulator& sim, const Event& ev) override;

  /// Requests that ended (finished or failed).
  std::int64_t done() const { return done_; }
  /// Prompt + output tokens of all submitted requests (sizes the event budget).
  std::int64_t submitted_tokens() const { return submitted_tokens_; }
  /// Marks every unfinished request failed with `reason` (run stopped early).
  void fail_unfinished(SimTime now, const std::string& reason);
  const KvTransferManager* transfers() const { return transfers_.get(); }
  /// Requests that reached a decode instance, and how many of them had been assigned to the least loaded one.
  std::int64_t handoffs() const { return handoffs_; }
  std::int64_t optimal_assignments() const { return optimal_; }

 private:
  enum Kind : std::int32_t { kFail = 1 };
  /// Why `req` can never be served, or "" when it can.
  std::string refusal(const Request& req) const;
  void landed(Simulator& sim, Request& req);
  DecodeInstanceState& decode_state(int global_index) {
    return decode_states_[static_cast<std::size_t>(global_index - decode_base_)];
  }

  Cluster& cluster_;
  std::unique_ptr<Router> router_;
  MetricsCollector& metrics_;
  const ClusterCounters& counters_;
  WorkloadDriver* driver_ = nullptr;
  std::vector<Request>* pool_ = nullptr;
  std::int64_t done_ = 0;
  std::int64_t submitted_tokens_ = 0;
  // Disaggregation.
  std::unique_ptr<KvTransferManager> transfers_;
  std::unique_ptr<DecodeRouter> decode_router_;
  std::vector<DecodeInstanceState> decode_states_;
  int decode_base_ = 0;
  std::int64_t handoffs_ = 0, optimal_ = 0;
};

}  // namespace servesim
