#pragma once
/// The global controller: admits requests from the clients, refuses those no replica could ever serve
/// (with a reason), routes the rest, and relays replica events to metrics and back to the clients.
#include <cstdint>
#include <memory>

#include "core/control/cluster.h"
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

  void submit(Simulator& sim, Request& req) override;
  void on_iteration(const Replica& replica, const Batch& batch, SimTime start, SimTime end,
                    const BatchCost& cost) override {
    metrics_.on_iteration(replica, batch, start, end, cost, counters_);
  }
  void on_token(const Request& req, SimTime now) override { metrics_.on_token(req, now); }
  void on_finished(Simulator& sim, Request& req) override;
  void on_event(Simulator& sim, const Event& ev) override;

  /// Requests that ended (finished or failed).
  std::int64_t done() const { return done_; }
  /// Prompt + output tokens of all submitted requests (sizes the event budget).
  std::int64_t submitted_tokens() const { return submitted_tokens_; }
  /// Marks every unfinished request failed with `reason` (run stopped early).
  void fail_unfinished(SimTime now, const std::string& reason);

 private:
  enum Kind : std::int32_t { kFail = 1 };
  Cluster& cluster_;
  std::unique_ptr<Router> router_;
  MetricsCollector& metrics_;
  const ClusterCounters& counters_;
  WorkloadDriver* driver_ = nullptr;
  std::vector<Request>* pool_ = nullptr;
  std::int64_t done_ = 0;
  std::int64_t submitted_tokens_ = 0;
};

}  // namespace servesim
