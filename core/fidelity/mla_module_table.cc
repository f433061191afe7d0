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

MlaDecodePath mla_decode_path(const std::string& kernel) {
  MlaDecodePath p;
  if (kernel == "FLASHMLA") {
    p.max_query = 128;
    p.uniform = true;
  } else if (kernel == "FLASH_ATTN_MLA") {
    p.max_query = 512;
  }
  return p;
}

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
  // A decode-path kernel beside a prefill kernel, their lengths on either side of its threshold: two kernels.
  if (parts.size() == 2) {
    for (int d = 0; d < 2; ++d) {
      const OpGrid& s = *parts[static_cast<std::size_t>(d)];
      const OpGrid& l = *parts[static_cast<std::size_t>(1 - d)];
      const MlaDecodePath path = mla_decode_path(s.key[kKeyKernel]);
      if (!path.ok() || mla_decode_path(l.key[kKeyKernel]).ok() || s.axes[1].empty() || l.axes[1].empty()) continue;
      if (s.axes[1].back() <= path.max_query && l.axes[1].front() > path.max_query) {
        out.decode_path = path;
        out.short_kernel = s.key[kKeyKernel];
        out.long_kernel = l.key[kKeyKernel];
      }
    }
  }
  out.heads = best;
  out.approx = best != heads || out.kv_dtype != kv_dtype || (out.module && out.gemm_type != gemm_type);
  return true;
}

void split_mla_context_grid(const MlaModuleGrid& m, const OpGrid& joined, OpGrid& short_part, OpGrid& long_part) {
  const auto& B = joined.axes[0];
  const auto& S = joined.axes[1];
  const double max_query = m.decode_path.max_query;
  auto cut = [&](bool shorter, OpGrid& out) {
    out = OpGrid();
    out.key = joined.key;
    out.kernel = shorter ? m.short_kernel : m.long_kernel;
    std::vector<std::size_t> rows, cols;
    for (std::size_t s = 0; s < S.size(); ++s)
      if ((S[s] <= max_query) == shorter) cols.push_back(s);
    for (std::size_t b = 0; b < B.size(); ++b)
      for (std::size_t s : cols)
        if (!std::isnan(joined.values[b * S.size() + s])) {
          rows.push_back(b);
          break;
        }
    std::vector<std::size_t> kept;
    for (std::size_t s : cols)
      for (std::size_t b : rows)
        if (!std::isnan(joined.values[b * S.size() + s])) {
          kept.push_back(s);
          break;
        }
    out.axes.assign(2, {});
    for (std::size_t b : rows) out.axes[0].push_back(B[b]);
    for (std::size_t s : kept) out.axes[1].push_back(S[s]);
    for (std::size_t b : rows)
      for (std::size_t s : kept) out.values.push_back(joined.values[b * S.size() + s]);
    finish(out);
  };
  cut(true, short_part);
  cut(false, long_part);
}

std::vector<char> mla_decode_path_prompts(const MlaDecodePath& path, const std::vector<PrefillChunk>& prompts,
                                          bool with_decodes) {
  std::vector<char> on(prompts.size(), 0);
  if (!path.ok()) return on;
  std::int32_t run = 0;  // without decodes, the uniform run's query length: the first short prompt's
  bool open = true;      // no other short length met yet
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    const std::int32_t q = prompts[i].q;
    if (q > path.max_query) continue;  // moved behind the short requests
    if (!path.uniform) {
      on[i] = 1;
    } else if (with_decodes) {
      on[i] = q == 1 ? 1 : 0;
    } else {
      if (run == 0) run = q;
      if (q != run) open = false;
      on[i] = open ? 1 : 0;
    }
  }
  return on;
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
