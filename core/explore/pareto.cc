#include "core/explore/pareto.h"

#include <algorithm>

namespace servesim {

ParetoResult pareto_frontiers(const std::vector<ParetoInput>& points) {
  ParetoResult out;
  std::vector<std::string> groups;
  for (const auto& p : points)
    if (std::find(groups.begin(), groups.end(), p.group) == groups.end()) groups.push_back(p.group);
  const ParetoInput* best = nullptr;
  for (const auto& g : groups) {
    std::vector<const ParetoInput*> in;
    for (const auto& p : points)
      if (p.group == g && p.meets_sla) in.push_back(&p);
    std::vector<const ParetoInput*> front;
    for (const auto* a : in) {
      bool dominated = false;
      for (const auto* b : in)
        if (b != a && b->x >= a->x && b->y >= a->y && (b->x > a->x || b->y > a->y)) {
          dominated = true;
          break;
        }
      if (!dominated) front.push_back(a);
    }
    std::sort(front.begin(), front.end(), [](const ParetoInput* a, const ParetoInput* b) {
      return a->x != b->x ? a->x < b->x : a->id < b->id;
    });
    std::vector<std::string> ids;
    for (const auto* p : front) {
      ids.push_back(p->id);
      if (!best || p->y > best->y || (p->y == best->y && (p->x > best->x || (p->x == best->x && p->id < best->id))))
        best = p;
    }
    out.frontiers.emplace_back(g, std::move(ids));
  }
  if (best) out.best_id = best->id;
  return out;
}

}  // namespace servesim
