#pragma once
/// Internals of a Session: every plane wired together for one run.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/session.h"
#include "core/control/cluster.h"
#include "core/control/global_controller.h"
#include "core/metrics/metrics_collector.h"
#include "core/sim/simulator.h"
#include "core/spec/resource_catalog.h"
#include "core/spec/scenario.h"
#include "core/workload/length_sampler.h"
#include "core/workload/trace_table.h"
#include "core/workload/workload_driver.h"

namespace servesim {

class SessionImpl {
 public:
  SessionImpl(const ResourceLoader& loader, const SessionOptions& options);
  /// Parses, loads workload data, compiles the cluster and starts the clients.
  bool build(const std::string& scenario_json, Errors& errors);
  Progress step(std::uint64_t max_events);
  void cancel();
  Progress progress() const;
  std::string result_json() const;
  /// The result's "summary" alone (a sweep point needs only this; the whole document costs more to build).
  std::string summary_json() const;
  std::string chrome_trace_json() const;
  std::string benchmark_block() const;

 private:
  bool load_workload_data(Errors& errors);
  void finish(const std::string& status, const std::string& message);
  std::uint64_t event_budget() const;
  std::vector<std::string> replica_names() const;
  nlohmann::ordered_json summary() const;

  ResourceCatalog catalog_;
  SessionOptions options_;
  Scenario scenario_;
  TraceTable arrival_trace_, length_trace_;
  EmpiricalCdf input_cdf_, output_cdf_, total_cdf_;
  std::vector<Request> pool_;
  Simulator sim_;
  ClusterCounters counters_;
  Cluster cluster_;
  std::unique_ptr<MetricsCollector> metrics_;
  std::unique_ptr<GlobalController> controller_;
  std::unique_ptr<WorkloadDriver> driver_;
  std::string status_ = "running";
  std::string message_;
  SimTime end_time_ = 0;
};

}  // namespace servesim
