#include "core/fidelity/collective_model.h"

#include <cstdlib>

namespace servesim {

void CollectiveModel::set_tables(const OpTable* nccl, const OpTable* custom, double custom_max_bytes,
                                 bool beyond_buffer) {
  nccl_.clear();
  custom_.clear();
  custom_max_bytes_ = custom_max_bytes;
  beyond_buffer_ = beyond_buffer;
  if (nccl) {
    for (const OpGrid& g : nccl->grids) {
      if (g.key.size() != 3 || g.key[1] != "half" || g.axes.size() != 1) continue;
      nccl_[{g.key[0], std::atoi(g.key[2].c_str())}] = LogCurve(g.axes[0], g.values);
    }
  }
  if (custom) {
    for (const OpGrid& g : custom->grids) {
      if (g.key.size() != 2 || g.axes.size() != 1) continue;
      custom_[{g.key[0], std::atoi(g.key[1].c_str())}] = LogCurve(g.axes[0], g.values);
    }
  }
}

CollectiveTime CollectiveModel::lookup(const LogCurve& c, double size) {
  CollectiveTime t;
  t.ok = !c.empty();
  if (!t.ok) return t;
  if (size <= 0) return t;
  const double hi = c.xs().back();
  if (size > hi) {
    t.us = c.ys().back() * (size / hi);
    t.extrapolated = true;
    return t;
  }
  bool clamped = false;
  t.us = c.eval_affine(size, &clamped);
  t.extrapolated = clamped;
  return t;
}

CollectiveTime CollectiveModel::all_reduce(double elements, int gpus, bool graph) const {
  if (gpus <= 1 || elements <= 0) {
    CollectiveTime t;
    t.ok = true;
    return t;
  }
  // Up to the custom kernel's buffer the graph or eager variant; above it the graph variant, whose time is the
  // dispatched kernel's alone (the eager measurements also time a copy of the input the benchmark makes per call).
  const bool small = elements * 2 <= custom_max_bytes_;
  auto it = custom_.find({small && !graph ? "eager" : "graph", gpus});
  if (it == custom_.end()) it = custom_.find({"graph", gpus});
  if (it != custom_.end() && (small || (beyond_buffer_ && elements <= it->second.xs().back()))) {
    CollectiveTime t = lookup(it->second, elements);
    t.custom = true;
    if (t.ok) return t;
  }
  return nccl("all_reduce", elements, gpus);
}

CollectiveTime CollectiveModel::nccl(const std::string& op, double elements, int gpus) const {
  if (gpus <= 1 || elements <= 0) {
    CollectiveTime t;
    t.ok = true;
    return t;
  }
  auto it = nccl_.find({op, gpus});
  if (it == nccl_.end()) return CollectiveTime{};
  return lookup(it->second, elements);
}

}  // namespace servesim
