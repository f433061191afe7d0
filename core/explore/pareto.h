#pragma once
/// SLA-filtered Pareto frontiers: per series, the points not dominated in (x = tokens/s per user, higher is
/// better; y = output tokens/s per GPU, higher is better), among those meeting the SLA; and the best point
/// under the SLA (highest y, ties to higher x, then lower id).
#include <string>
#include <vector>

namespace servesim {

struct ParetoInput {
  std::string id;
  std::string group;
  double x = 0;        ///< tokens/s per user (1000 / TPOT percentile in ms)
  double y = 0;        ///< output throughput per GPU
  bool meets_sla = false;
};

struct ParetoResult {
  /// Per group (in first-seen order): frontier point ids sorted by increasing x.
  std::vector<std::pair<std::string, std::vector<std::string>>> frontiers;
  std::string best_id;  ///< best point under the SLA over all groups ("" if none meets it)
};

/// A dominates B when A.x >= B.x and A.y >= B.y with one strictly greater. Equal points are all kept.
ParetoResult pareto_frontiers(const std::vector<ParetoInput>& points);

}  // namespace servesim
