#include "core/fidelity/gemm_model.h"

#include <cmath>

namespace servesim {

GemmCurve make_gemm_curve(const OpGrid& grid, double n, double k) {
  GemmCurve g;
  g.n = n;
  g.k = k;
  if (grid.axes.size() != 3 || n < 1 || k < 1) return g;
  const AxisPos pn = locate_log(grid.axes[0], grid.log_axes[0], n);
  const AxisPos pk = locate_log(grid.axes[1], grid.log_axes[1], k);
  if (pn.clamped || pk.clamped) {
    g.extrapolated = true;
    g.scale = (n / pn.clamped_to) * (k / pk.clamped_to);
  }
  const auto& ms = grid.axes[2];
  std::vector<double> ys(ms.size());
  // Along k, then along n: affine where latency rises with the dimension (interp_cell_affine). A missing corner
  // falls back to the log-space interpolation over the measured ones.
  for (std::size_t i = 0; i < ms.size(); ++i) {
    auto at = [&](std::size_t a, std::size_t b) { return grid.values[a * grid.stride(0) + b * grid.stride(1) + i]; };
    const double c[4] = {at(pn.i0, pk.i0), at(pn.i0, pk.i1), at(pn.i1, pk.i0), at(pn.i1, pk.i1)};
    if (interp_cell_affine(c, pn, pk, ys[i])) continue;
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
    v = curve.ys().back() * (m / hi);
    clamped = true;
  } else {
    v = curve.eval(m, &clamped);
  }
  if (extrapolated_out && clamped) *extrapolated_out = true;
  return v * scale;
}

}  // namespace servesim
