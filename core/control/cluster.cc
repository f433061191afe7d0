#include "core/control/cluster.h"

#include "core/fidelity/table_cost_model.h"

namespace servesim {

bool compile_cluster(const Scenario& s, ClusterCounters* counters, ReplicaObserver* observer, Cluster& out,
                     Errors& errors, const ResourceCatalog* catalog) {
  int global_index = 0;
  for (std::size_t i = 0; i < s.deployment.roles.size(); ++i) {
    const RoleSpec& spec = s.deployment.roles[i];
    RoleCluster rc;
    rc.spec = &spec;
    rc.budget = compute_kv_budget(s.model, spec.gpu, spec.parallelism, spec.engine);
    if (!rc.budget.error.empty()) {
      errors.add("/deployment/roles/" + std::to_string(i), rc.budget.error);
      continue;
    }
    rc.max_model_len = spec.engine.max_model_len > 0 ? spec.engine.max_model_len : s.model.max_position_embeddings;
    // Measured tables where the GPU has them, else datasheet-derived (fidelity/table_cost_model.h).
    std::string cost_error;
    rc.cost = make_cost_model(s.model, spec.gpu, spec.parallelism, spec.engine, catalog,
                              s.seed ^ (0x9e3779b97f4a7c15ull * (i + 1)), cost_error);
    if (!rc.cost) {
      errors.add("/deployment/roles/" + std::to_string(i) + "/gpu", cost_error);
      continue;
    }
    for (int r = 0; r < spec.replicas; ++r) {
      rc.replicas.push_back(std::make_unique<Replica>(global_index++, static_cast<int>(i), spec.engine,
                                                      rc.budget.num_gpu_blocks, rc.cost.get(), counters, observer));
      rc.replicas.back()->set_handoff_after_prefill(spec.kind == RoleKind::kPrefill);
      rc.replicas.back()->set_may_wait_for_transfers(spec.kind != RoleKind::kColocated);
      rc.replica_ptrs.push_back(rc.replicas.back().get());
    }
    if (spec.kind == RoleKind::kPrefill) out.entry_role = static_cast<int>(out.roles.size());
    if (spec.kind == RoleKind::kDecode) out.decode_role = static_cast<int>(out.roles.size());
    out.roles.push_back(std::move(rc));
  }
  for (auto& rc : out.roles)
    for (auto& r : rc.replicas) out.all_replicas.push_back(r.get());
  return errors.ok();
}

}  // namespace servesim
