#include "core/fidelity/mla_module_table.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "core/fidelity/interpolation.h"

namespace servesim {

namespace {

// Key layouts: module tables (kernel, kv_cache_dtype, gemm_type, num_heads, tp), kernel tables (kernel,
// kv_cache_dtype, num_heads, tp). kGemm < 0: the layout has no gemm_type.
struct Layout {
  std::size_t size;
  int gemm;
  std::size_t heads, tp;
};
constexpr std::size_t kKeyKernel = 0, kKeyKv = 1;
constexpr Layout kModule{5, 2, 3, 4}, kKernel{4, -1, 2, 3};

std::vector<const OpGrid*> matching(const OpTable& t, const Layout& l, const std::string& kv, const std::string& gemm) {
  std::vector<const OpGrid*> out;
  for (const OpGrid& g : t.grids)
    if (g.key.size() == l.size && g.axes.size() == 2 && g.key[kKeyKv] == kv &&
        (l.gemm < 0 || g.key[static_cast<std::size_t>(l.gemm)] == gemm))
      out.push_back(&g);
  return out;
}

void sorted_union(std::vector<double>& dst, const std::vector<double>& src) {
  dst.insert(dst.end(), src.begin(), src.end());
  std::sort(dst.begin(), dst.end());
  dst.erase(std::unique(dst.begin(), dst.end()), dst.end());
}

std::size_t index_of(const std::vector<double>& axis, double v) {
  return static_cast<std::size_t>(std::lower_bound(axis.begin(), axis.end(), v) - axis.begin());
}

void finish(OpGrid& g) {
  g.log_axes.assign(g.axes.size(), {});
  for (std::size_t a = 0; a < g.axes.size(); ++a)
    for (double x : g.axes[a]) g.log_axes[a].push_back(interp_log(x));
  g.strides.assign(g.axes.size(), 1);
  for (std::size_t a = g.axes.size(); a-- > 1;) g.strides[a - 1] = g.strides[a] * g.axes[a].size();
  g.log_values.resize(g.values.size());
  for (std::size_t i = 0; i < g.values.size(); ++i)
    g.log_values[i] = std::isnan(g.values[i]) || g.values[i] <= 0 ? std::nan("") : interp_log(g.values[i]);
}

}  // namespace

bool select_mla_module_grid(const OpTable& table, const std::string& kv_dtype, const std::string& gemm_type,
                            int heads, MlaModuleGrid& out) {
  out = MlaModuleGrid();
  if (table.empty() || heads <= 0) return false;
  const Layout& l = table.grids.front().key.size() == kKernel.size ? kKernel : kModule;
  out.module = &l == &kModule;
  const std::string other_gemm = gemm_type == "bfloat16" ? "fp8_block" : "bfloat16";
  const std::string other_kv = kv_dtype == "fp8" ? "bfloat16" : "fp8";
  const std::pair<std::string, std::string> tries[] = {
      {kv_dtype, gemm_type}, {kv_dtype, other_gemm}, {other_kv, gemm_type}, {other_kv, other_gemm}};
  std::vector<const OpGrid*> cand;
  for (const auto& t : tries) {
    cand = matching(table, l, t.first, t.second);
    if (!cand.empty()) {
      out.kv_dtype = t.first;
      out.gemm_type = out.module ? t.second : "";
      break;
    }
  }
  if (cand.empty()) return false;
  // Nearest head count in log distance; ties go to the larger count (fewer heads per GPU would under-price).
  int best = 0;
  double best_d = std::numeric_limits<double>::infinity();
  for (const OpGrid* g : cand) {
    const int h = std::atoi(g->key[l.heads].c_str());
    if (h <= 0) continue;
    const double d = std::fabs(interp_log(static_cast<double>(h) / heads));
    if (d < best_d - 1e-12 || (std::fabs(d - best_d) <= 1e-12 && h > best)) {
      best = h;
      best_d = d;
    }
  }
  if (best <= 0) return false;
  std::vector<const OpGrid*> parts;
  for (const OpGrid* g : cand)
    if (std::atoi(g->key[l.heads].c_str()) == best) parts.push_back(g);
  std::sort(parts.begin(), parts.end(), [](const OpGrid* a, const OpGrid* b) { return a->key < b->key; });
  // Module grids with another tp than 1 would be a different layout; the generator writes tp = 1 only, so prefer
  // it. Kernel tables record the TP that gave `heads` (tp x heads = 128), one grid per head count.
  std::vector<const OpGrid*> tp1;
  for (const OpGrid* g : parts)
    if (g->key[l.tp] == "1") tp1.push_back(g);
  if (!tp1.empty()) parts = tp1;
  OpGrid& j = out.grid;
  j.key = {"joined", out.kv_dtype, out.gemm_type, key_int(best), "1"};
  j.axes.assign(2, {});
  for (const OpGrid* g : parts) {
    sorted_union(j.axes[0], g->axes[0]);
    sorted_union(j.axes[1], g->axes[1]);
    out.kernels += (out.kernels.empty() ? "" : "+") + g->key[kKeyKernel];
  }
  const std::size_t ns = j.axes[1].size();
  j.values.assign(j.axes[0].size() * ns, std::nan(""));
  // The kernels' ranges do not overlap in the data; where they would, the first kernel (by name) is kept.
  for (const OpGrid* g : parts)
    for (std::size_t b = 0; b < g->axes[0].size(); ++b)
      for (std::size_t s = 0; s < g->axes[1].size(); ++s) {
        const double v = g->values[b * g->axes[1].size() + s];
        double& dst = j.values[index_of(j.axes[0], g->axes[0][b]) * ns + index_of(j.axes[1], g->axes[1][s])];
        if (!std::isnan(v) && std::isnan(dst)) dst = v;
      }
  j.kernel = out.kernels;
  finish(j);
  out.heads = best;
  out.approx = best != heads || out.kv_dtype != kv_dtype || (out.module && out.gemm_type != gemm_type);
  return true;
}

void MlaProjectionCap::add(const OpGrid& module, bool decode) {
  if (module.axes.size() != 2) return;
  const std::size_t ns = module.axes[1].size();
  for (std::size_t b = 0; b < module.axes[0].size(); ++b)
    for (std::size_t s = 0; s < ns; ++s) {
      const double v = module.values[b * ns + s];
      if (std::isnan(v) || v <= 0) continue;
      const double tokens = decode ? module.axes[0][b] : module.axes[0][b] * module.axes[1][s];
      cells_.emplace_back(tokens, (1.0 - kMlaCoreFloorShare) * v);
    }
}

void MlaProjectionCap::finish() {
  std::sort(cells_.begin(), cells_.end());
  std::vector<double> x, y;
  // Ascending tokens; a later (larger) count can only lower the bound of a smaller one.
  for (std::size_t i = cells_.size(); i-- > 0;) {
    const auto& c = cells_[i];
    if (!x.empty() && x.back() == c.first) {
      y.back() = std::min(y.back(), c.second);
    } else {
      x.push_back(c.first);
      y.push_back(y.empty() ? c.second : std::min(y.back(), c.second));
    }
  }
  std::reverse(x.begin(), x.end());
  std::reverse(y.begin(), y.end());
  cells_.clear();
  curve_ = x.empty() ? LogCurve() : LogCurve(x, y);
}

double MlaProjectionCap::cap_us(double tokens) const {
  if (curve_.empty() || tokens > curve_.xs().back()) return std::numeric_limits<double>::infinity();
  // At a measured token count the bound is the stored value itself (no log/exp round trip), so a module cell
  // minus the capped projections keeps exactly its floor share.
  const auto& xs = curve_.xs();
  const auto it = std::lower_bound(xs.begin(), xs.end(), tokens);
  if (it != xs.end() && *it == tokens) return curve_.ys()[static_cast<std::size_t>(it - xs.begin())];
  return curve_.eval(tokens);
}

void subtract_mla_projections(OpGrid& grid, bool decode,
                              const std::function<double(double tokens)>& projections_us) {
  if (grid.axes.size() != 2) return;
  const std::size_t ns = grid.axes[1].size();
  for (std::size_t b = 0; b < grid.axes[0].size(); ++b)
    for (std::size_t s = 0; s < ns; ++s) {
      double& v = grid.values[b * ns + s];
      if (std::isnan(v)) continue;
      const double tokens = decode ? grid.axes[0][b] : grid.axes[0][b] * grid.axes[1][s];
      v = std::max(v - projections_us(tokens), kMlaCoreFloorShare * v);
    }
  finish(grid);
}

}  // namespace servesim
