#pragma once
/// Compiles a deployment into clusters of roles with their replicas, cost models and KV budgets.
#include <memory>
#include <string>
#include <vector>

#include "core/execution/replica.h"
#include "core/fidelity/memory_model.h"
#include "core/spec/scenario.h"

namespace servesim {

/// One compiled role: its spec, cost model, memory budget and replicas.
struct RoleCluster {
  const RoleSpec* spec = nullptr;
  std::unique_ptr<CostModel> cost;
  KvBudget budget;
  std::int64_t max_model_len = 0;
  std::vector<std::unique_ptr<Replica>> replicas;
  std::vector<Replica*> replica_ptrs;  ///< for routers
  /// An F role has no replicas of its own (its A replica's cost model schedules it) and no owned cost model:
  /// this points at the FFN side of the A role's model, for the result's fidelity report.
  const CostModel* borrowed_cost = nullptr;
  const CostModel& pricing() const { return cost ? *cost : *borrowed_cost; }
};

/// All roles of a deployment.
struct Cluster {
  std::vector<RoleCluster> roles;
  std::vector<Replica*> all_replicas;  ///< global replica index -> replica
  int entry_role = 0;      ///< where new requests go: C, or P when disaggregated
  int decode_role = -1;    ///< D (or A) when disaggregated
  int ffn_role = -1;       ///< F with attention/FFN disaggregation
  /// What the result lists under `warnings` (JSON path: message): deployments an engine would refuse to start.
  std::vector<std::string> warnings;
};

/// Builds the cluster; returns false with errors (named by JSON path) when a role's model does not fit.
/// `catalog` gives the measured operator tables (profiles/<gpu>/<backend>/); without it every role is priced by
/// the datasheet roofline.
bool compile_cluster(const Scenario& s, ClusterCounters* counters, ReplicaObserver* observer, Cluster& out,
                     Errors& errors, const ResourceCatalog* catalog = nullptr);

}  // namespace servesim
