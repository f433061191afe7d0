#include "core/explore/prefilter.h"

#include "core/fidelity/memory_model.h"
#include "core/spec/scenario.h"

namespace servesim {

std::string prefilter_point(const SweepPoint& p, std::int64_t total_gpus, const ResourceCatalog& catalog) {
  if (!p.error.empty()) return "unbuildable: " + p.error;
  Scenario s;
  Errors errors;
  if (!read_scenario(p.scenario, catalog, s, errors)) return "invalid: " + errors.list().front().to_string();
  const long gpus = s.deployment.total_gpus();
  if (total_gpus > 0 && gpus > total_gpus)
    return "over budget: " + std::to_string(gpus) + " GPUs > " + std::to_string(total_gpus);
  for (std::size_t i = 0; i < s.deployment.roles.size(); ++i) {
    const RoleSpec& r = s.deployment.roles[i];
    if (r.kind == RoleKind::kFfn) continue;  // holds no KV cache; priced with its A role
    const KvBudget b = compute_kv_budget(s.model, r.gpu, r.parallelism, r.engine, MemoryConstants{},
                                         r.kind == RoleKind::kAttention);
    if (b.weights_bytes > b.usable_bytes) return "weights do not fit: role " + r.name + ": " + b.error;
    if (!b.error.empty()) return "no KV memory: role " + r.name + ": " + b.error;
    // vLLM refuses to start when the KV cache cannot hold one max_model_len sequence; without an explicit
    // max_model_len, require one full batch (max_num_batched_tokens).
    const std::int64_t need = r.engine.max_model_len > 0 ? r.engine.max_model_len : r.engine.max_num_batched_tokens;
    if (b.max_tokens() < need)
      return "KV too small: role " + r.name + " holds " + std::to_string(b.max_tokens()) + " tokens, needs " +
             std::to_string(need);
  }
  return "";
}

}  // namespace servesim
