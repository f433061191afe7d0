#include "core/fidelity/collective_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <vector>

namespace servesim {

void CollectiveModel::set_tables(const OpTable* nccl, const OpTable* custom, double custom_max_bytes,
                                 bool beyond_buffer, bool split_at_buffer) {
  nccl_.clear();
  custom_.clear();
  custom_split_.clear();
  custom_max_bytes_ = custom_max_bytes;
  beyond_buffer_ = beyond_buffer;
  if (nccl) {
    for (const OpGrid& g : nccl->grids) {
      if (g.key.size() != 3 || g.key[1] != "half" || g.axes.size() != 1) continue;
      nccl_[{g.key[0], std::atoi(g.key[2].c_str())}] = monotone_curve(g.axes[0], g.values);
    }
  }
  if (custom) {
    for (const OpGrid& g : custom->grids) {
      if (g.key.size() != 2 || g.axes.size() != 1) continue;
      const std::pair<std::string, int> key{g.key[0], std::atoi(g.key[1].c_str())};
      custom_[key] = monotone_curve(g.axes[0], g.values);
      std::pair<LogCurve, LogCurve> parts;
      if (split_at_buffer && split_curve(g.axes[0], g.values, custom_max_bytes, parts.first, parts.second))
        custom_split_[key] = std::move(parts);
    }
  }
}

bool vllm_all_reduce_nccl_at_buffer(const std::string& compute_capability) {
  return !compute_capability.empty() && std::atoi(compute_capability.c_str()) < 9;
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
  if (!clamped) t.us = between_sizes(c, size, t.us);
  return t;
}

double CollectiveModel::between_sizes(const LogCurve& c, double size, double chord) {
  const std::vector<double>& xs = c.xs();
  const std::vector<double>& ys = c.ys();
  const std::size_t hi = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), size) - xs.begin());
  if (hi == 0 || hi >= xs.size()) return chord;
  const std::size_t lo = hi - 1;
  if (size == xs[lo] || !(ys[hi] > ys[lo])) return chord;
  // Both neighbouring segments' lines at `size` (one alone does not show which way the curve bends).
  if (lo == 0 || hi + 1 == xs.size()) return chord;
  auto line = [&](std::size_t a, std::size_t b) { return ys[a] + (ys[b] - ys[a]) * (size - xs[a]) / (xs[b] - xs[a]); };
  const double left = line(lo - 1, lo), right = line(hi, hi + 1);
  // Concave (a faster law takes over between the sizes): each line and the larger size's time bound it above.
  const double above = std::min({left, right, ys[hi]});
  if (above > chord) return 0.5 * (chord + above);
  // Convex (a latency floor giving way to a bandwidth slope): each line and the smaller size's time bound it below.
  const double below = std::max(left, right);
  if (below < chord) return 0.5 * (chord + std::max(below, ys[lo]));
  return chord;  // the lines disagree on the side
}

bool CollectiveModel::split_curve(const std::vector<double>& elements, const std::vector<double>& us,
                                  double buffer_bytes, LogCurve& below, LogCurve& from, bool monotone) {
  below = from = LogCurve();
  if (!(buffer_bytes > 0) || elements.size() != us.size()) return false;
  std::vector<double> bx, by, fx, fy;
  for (std::size_t i = 0; i < elements.size(); ++i) {
    if (std::isnan(us[i])) continue;
    const bool b = elements[i] * 2 < buffer_bytes;
    (b ? bx : fx).push_back(elements[i]);
    (b ? by : fy).push_back(us[i]);
  }
  if (bx.size() < 2 || fx.size() < 2) return false;
  below = monotone ? monotone_curve(bx, by) : LogCurve(bx, by);
  from = monotone ? monotone_curve(fx, fy) : LogCurve(fx, fy);
  return true;
}

LogCurve CollectiveModel::monotone_curve(const std::vector<double>& sizes, std::vector<double> us) {
  // Pool adjacent violators (L1): each block of sizes takes the lower median of its cells, and a block slower
  // than the next merges with it until the blocks rise. A lone slow cell pools with its faster neighbour and
  // takes that one's time; a flat run of noisy cells keeps its median rather than its fastest.
  struct Block {
    std::vector<double> cells;  // sorted
    std::vector<std::size_t> at;
    double median() const { return cells[(cells.size() - 1) / 2]; }
  };
  std::vector<Block> blocks;
  for (std::size_t i = 0; i < us.size(); ++i) {
    if (std::isnan(us[i]) || !(us[i] > 0)) continue;
    blocks.push_back(Block{{us[i]}, {i}});
    while (blocks.size() > 1 && blocks[blocks.size() - 2].median() > blocks.back().median()) {
      Block last = std::move(blocks.back());
      blocks.pop_back();
      Block& prev = blocks.back();
      std::vector<double> merged;
      std::merge(prev.cells.begin(), prev.cells.end(), last.cells.begin(), last.cells.end(),
                 std::back_inserter(merged));
      prev.cells = std::move(merged);
      prev.at.insert(prev.at.end(), last.at.begin(), last.at.end());
    }
  }
  for (const Block& b : blocks)
    for (std::size_t i : b.at) us[i] = b.median();
  return LogCurve(sizes, us);
}

CollectiveTime CollectiveModel::lookup_extended(const LogCurve& c, double size) {
  const std::size_t n = c.xs().size();
  if (n < 2 || (size >= c.xs().front() && size <= c.xs().back())) return lookup(c, size);
  // Beyond either end, along the end segment (t0 + bytes / bw); at least in proportion to size below the first
  // size, and in proportion above the last where the segment falls.
  CollectiveTime t;
  t.ok = true;
  t.extrapolated = true;
  const bool above = size > c.xs().back();
  const std::size_t a = above ? n - 2 : 0;
  const double x0 = c.xs()[a], x1 = c.xs()[a + 1], y0 = c.ys()[a], y1 = c.ys()[a + 1];
  const double slope = (y1 - y0) / (x1 - x0);
  if (above) t.us = slope > 0 ? y1 + slope * (size - x1) : y1 * size / x1;
  else t.us = slope > 0 ? std::max(y0 + slope * (size - x0), y0 * size / x0) : y0;
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
    const auto split = custom_split_.find(it->first);
    CollectiveTime t = split == custom_split_.end() ? lookup(it->second, elements)
                       : lookup_extended(elements * 2 < custom_max_bytes_ ? split->second.first : split->second.second,
                                         elements);
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
