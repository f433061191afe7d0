#include "core/fidelity/gemm_model.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace servesim {

const char* token_reading_name(TokenReading r) {
  switch (r) {
    case TokenReading::kLogLog: return "log_log";
    case TokenReading::kAffine: return "affine";
    case TokenReading::kTiles64: return "tiles_64";
    case TokenReading::kTiles128: return "tiles_128";
    case TokenReading::kTiles256: return "tiles_256";
    case TokenReading::kPow2Clusters: return "pow2_clusters";
  }
  return "log_log";
}

namespace {

double tile_rows(TokenReading r) {
  switch (r) {
    case TokenReading::kTiles64: return 64;
    case TokenReading::kTiles128: return 128;
    case TokenReading::kTiles256: return 256;
    default: return 0;
  }
}

/// The units a unit reading is linear in at m rows: tiles ceil(m / T), or the rows a kernel dispatched on
/// next_pow2(m) launches with clusters of 256 rows above 128 (kPow2Clusters).
double reading_units(TokenReading r, double m) {
  if (r == TokenReading::kPow2Clusters) {
    if (m > 256) return 256 * std::ceil(m / 256);
    double rows = 1;
    while (rows < m) rows *= 2;
    return rows;
  }
  return std::ceil(m / tile_rows(r));
}

/// The linear readings at m between (a, ya) and (b, yb), a < m < b: false where `reading` falls back to log-log
/// (log-log itself; affine where the latency falls; a tile reading below one tile; a unit reading where a and b
/// have the same units).
bool read_linear(double a, double b, double ya, double yb, double m, TokenReading reading, double& out) {
  if (reading == TokenReading::kLogLog) return false;
  if (reading == TokenReading::kAffine) {
    if (ya > yb) return false;
    out = ya + (m - a) / (b - a) * (yb - ya);  // interp_pair_affine's rising branch
    return true;
  }
  if (reading != TokenReading::kPow2Clusters && a < tile_rows(reading)) return false;
  const double ua = reading_units(reading, a), ub = reading_units(reading, b);
  if (ub <= ua) return false;
  out = ya + (yb - ya) * (reading_units(reading, m) - ua) / (ub - ua);
  return true;
}

/// y at m between (a, ya) and (b, yb), a < m < b, in `reading`; lm, la, lb, lya, lyb are their interp_log.
double read_between(double a, double b, double ya, double yb, double lm, double la, double lb, double lya, double lyb,
                    double m, TokenReading reading) {
  double v = 0;
  if (read_linear(a, b, ya, yb, m, reading, v)) return v;
  return interp_exp(lya + (lm - la) / (lb - la) * (lyb - lya));
}

/// One cell of the (n, k) grid, along k then along n: affine where latency rises with the dimension and geometric
/// where it falls (interp_pair_affine, as interp_cell_affine reads a whole cell). A line that lacks its upper value
/// (the grids leave out their largest shapes: n and k both >= 51,200 on TensorRT-LLM's FP8-block grid) is read as
/// its lower value times x / x0 (FLOPs and weight bytes are linear in n and in k; the cell holds no second line on
/// that side to read affinely from, as past_edge_us does past the grid's edge). False where a lower corner is
/// missing (left to the log-space fallback).
bool interp_gemm_cell(const double c[4], const AxisPos& pn, const AxisPos& pk, const OpGrid& grid, double& out) {
  auto along = [](double lo, double hi, const AxisPos& p, const std::vector<double>& axis) {
    if (std::isnan(lo)) return std::nan("");
    if (p.i0 == p.i1) return lo;
    if (std::isnan(hi)) return lo * (p.clamped_to / axis[p.i0]);
    return interp_pair_affine(lo, hi, p.w_lin, p.w);
  };
  out = along(along(c[0], c[1], pk, grid.axes[1]), along(c[2], c[3], pk, grid.axes[1]), pn, grid.axes[0]);
  return !std::isnan(out);
}

}  // namespace

std::vector<int> token_count_groups(const std::vector<double>& ms) {
  std::vector<int> group(ms.size(), 0);
  for (std::size_t i = 1; i < ms.size(); ++i)
    group[i] = group[i - 1] + (ms[i] >= 33 && ms[i] == ms[i - 1] + 1 ? 0 : 1);
  return group;
}

void choose_token_readings(OpTable& table) {
  if (table.op != "gemm") return;
  for (OpGrid& g : table.grids) g.token_reading = static_cast<std::uint8_t>(choose_token_reading(g));
}

double read_tokens(const LogCurve& curve, double m, TokenReading reading) {
  const auto& xs = curve.xs();
  const auto& ys = curve.ys();
  if (xs.empty()) return 0;
  if (m <= xs.front()) return ys.front();
  if (m >= xs.back()) return ys.back();
  const std::size_t hi = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), m) - xs.begin());
  const std::size_t lo = hi - 1;
  if (m == xs[lo]) return ys[lo];
  const auto& lx = curve.log_xs();
  const auto& ly = curve.log_ys();
  return read_between(xs[lo], xs[hi], ys[lo], ys[hi], interp_log(m), lx[lo], lx[hi], ly[lo], ly[hi], m, reading);
}

TokenReading choose_token_reading(const OpGrid& grid) {
  if (grid.axes.size() != 3) return TokenReading::kLogLog;
  const std::vector<double>& ms = grid.axes[2];
  const std::vector<double>& lms = grid.log_axes[2];
  // Every other interior group of token counts held out.
  const std::vector<int> group = token_count_groups(ms);
  const int groups = ms.empty() ? 0 : group.back() + 1;
  std::vector<bool> held(ms.size(), false);
  for (std::size_t i = 0; i < ms.size(); ++i) held[i] = group[i] % 2 == 1 && group[i] + 1 < groups;
  constexpr std::size_t kN = std::size(kTokenReadings);
  double sse[kN] = {};
  std::size_t count = 0;
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < grid.axes[0].size(); ++i)
    for (std::size_t j = 0; j < grid.axes[1].size(); ++j) {
      const std::size_t base = i * grid.stride(0) + j * grid.stride(1);
      kept.clear();
      for (std::size_t t = 0; t < ms.size(); ++t)
        if (!held[t] && !std::isnan(grid.values[base + t])) kept.push_back(t);
      if (kept.size() < 2) continue;
      std::size_t next = 1;  // kept[next] is the first kept count above the held one
      for (std::size_t t = kept.front() + 1; t < kept.back(); ++t) {
        while (kept[next] < t) ++next;
        if (!held[t] || std::isnan(grid.values[base + t])) continue;
        const std::size_t lo = kept[next - 1], hi = kept[next];
        const double a = ms[lo], b = ms[hi], ya = grid.values[base + lo], yb = grid.values[base + hi];
        const double lya = grid.log_values[base + lo], lyb = grid.log_values[base + hi];
        const double truth = grid.log_values[base + t];
        // Log errors without exp: log-log is linear in the logs; a linear reading is logged once.
        const double e_loglog = lya + (lms[t] - lms[lo]) / (lms[hi] - lms[lo]) * (lyb - lya) - truth;
        double e[kN];
        for (std::size_t r = 0; r < kN; ++r) {
          double v = 0;
          e[r] = read_linear(a, b, ya, yb, ms[t], kTokenReadings[r], v) ? interp_log(v) - truth : e_loglog;
        }
        for (std::size_t r = 0; r < kN; ++r) sse[r] += e[r] * e[r];
        ++count;
      }
    }
  if (count == 0) return TokenReading::kLogLog;
  std::size_t best = 0;
  for (std::size_t r = 1; r < kN; ++r)
    if (sse[r] < sse[best]) best = r;
  return kTokenReadings[best];
}

GemmCurve make_gemm_curve(const OpGrid& grid, double n, double k) {
  return make_gemm_curve(grid, n, k, static_cast<TokenReading>(grid.token_reading));
}

GemmCurve make_gemm_curve(const OpGrid& grid, double n, double k, TokenReading reading) {
  GemmCurve g;
  g.n = n;
  g.k = k;
  g.reading = reading;
  if (grid.axes.size() != 3 || n < 1 || k < 1) return g;
  // Past the upper edge of n or of k: along that axis from the edge line and half_edge_index's (past_edge_us),
  // each read as a shape of the grid (so k past its edge too is read this way on both n lines).
  for (std::size_t axis = 0; axis < 2; ++axis) {
    const auto& a = grid.axes[axis];
    const double x = axis == 0 ? n : k;
    if (a.size() < 2 || !(x > a.back())) continue;
    const double x1 = a.back(), x0 = a[half_edge_index(a)];
    const GemmCurve c1 = make_gemm_curve(grid, axis == 0 ? x1 : n, axis == 0 ? k : x1, reading);
    const GemmCurve c0 = make_gemm_curve(grid, axis == 0 ? x0 : n, axis == 0 ? k : x0, reading);
    std::vector<double> ys;
    for (std::size_t i = 0; i < c1.curve.xs().size(); ++i) {
      const double m = c1.curve.xs()[i];
      const auto& m0 = c0.curve.xs();
      const auto at = std::lower_bound(m0.begin(), m0.end(), m);
      const double y0 = at != m0.end() && *at == m ? c0.curve.ys()[static_cast<std::size_t>(at - m0.begin())] * c0.scale
                                                   : 0.0;
      ys.push_back(past_edge_us(x0, y0, x1, c1.curve.ys()[i] * c1.scale, x));
    }
    g.curve = LogCurve(c1.curve.xs(), ys);
    g.extrapolated = true;
    return g;
  }
  const AxisPos pn = locate_log(grid.axes[0], grid.log_axes[0], n);
  const AxisPos pk = locate_log(grid.axes[1], grid.log_axes[1], k);
  if (pn.clamped || pk.clamped) {
    g.extrapolated = true;
    g.scale = (n / pn.clamped_to) * (k / pk.clamped_to);
  }
  const auto& ms = grid.axes[2];
  std::vector<double> ys(ms.size());
  // Along k, then along n (interp_gemm_cell); a missing lower corner falls back to the log-space interpolation over
  // the measured ones.
  for (std::size_t i = 0; i < ms.size(); ++i) {
    auto at = [&](std::size_t a, std::size_t b) { return grid.values[a * grid.stride(0) + b * grid.stride(1) + i]; };
    const double c[4] = {at(pn.i0, pk.i0), at(pn.i0, pk.i1), at(pn.i1, pk.i0), at(pn.i1, pk.i1)};
    if (interp_gemm_cell(c, pn, pk, grid, ys[i])) continue;
    AxisPos pos[3] = {pn, pk, AxisPos{}};
    pos[2].i0 = pos[2].i1 = i;
    pos[2].clamped_to = ms[i];
    const GridValue v = interpolate(grid, pos);
    ys[i] = v.ok ? v.value : std::nan("");
  }
  g.curve = LogCurve(ms, ys);
  return g;
}

double GemmCurve::us(double m, bool* extrapolated_out) const {
  if (m <= 0 || curve.empty()) return 0;
  const double hi = curve.xs().back();
  bool clamped = extrapolated;
  double v;
  if (m > hi) {
    v = curve.past_end(m);  // as n and k past their edges
    clamped = true;
  } else {
    v = m <= curve.xs().front() ? curve.eval(m, &clamped)  // clamped (and flagged) below the first count
                                : read_tokens(curve, m, reading);
  }
  if (extrapolated_out && clamped) *extrapolated_out = true;
  return v * scale;
}

}  // namespace servesim
