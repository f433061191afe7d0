#pragma once
/// Interpolation over measured grids. Latency is close to linear in log(shape) on the geometric grids the
/// measurements use (a power law between neighbours), so interpolation is multilinear in (log x, log y).
/// Points outside an axis are clamped to its ends and flagged; the caller decides how to scale from the edge
/// (each op family knows its physics) and counts the extrapolation.
#include <cstddef>
#include <vector>

#include "core/fidelity/op_table.h"

namespace servesim {

/// Deterministic natural log and exp for interpolation (IEEE +, -, *, / and frexp/ldexp only, like
/// sim/det_math.h, with the series coefficients as constants: relative error below 1e-15, a few times faster).
double interp_log(double x);
double interp_exp(double x);

/// Where a coordinate falls on one axis: cell [i0, i1] and the weight of i1 (0 at i0, 1 at i1).
struct AxisPos {
  std::size_t i0 = 0, i1 = 0;
  double w = 0;      ///< weight in log(x)
  double w_lin = 0;  ///< weight in x itself: (x - x0) / (x1 - x0)
  bool clamped = false;  ///< the coordinate was below the first or above the last grid value
  double clamped_to = 0; ///< the grid value used when clamped (else the coordinate itself)
};

/// Locates x (> 0) on an increasing axis in log space; `log_axis` holds interp_log of the axis values.
AxisPos locate_log(const std::vector<double>& axis, const std::vector<double>& log_axis, double x);

/// Latency between two neighbouring grid values a (at x0) and b (at x1) along an axis in which the op's work is
/// affine (a GEMM's n or k: FLOPs and weight bytes are linear in each): linear in x where the latency rises
/// (a + w_lin (b - a); exact for t0 + c x), geometric where it falls (a slower smaller shape means another
/// kernel path on that side, where no common law holds and the geometric mean bounds the relative error of
/// either side). Always between a and b.
double interp_pair_affine(double a, double b, double w_lin, double w_log);

/// interp_pair_affine over one cell of a 2-D grid, along the inner axis first: corners c[0] = (outer i0, inner i0),
/// c[1] = (i0, i1), c[2] = (i1, i0), c[3] = (i1, i1). False (out untouched) when a corner is unmeasured (NaN).
bool interp_cell_affine(const double c[4], const AxisPos& outer, const AxisPos& inner, double& out);

/// Result of a grid lookup.
struct GridValue {
  double value = 0;       ///< interpolated latency (us); 0 when no corner was measured
  bool extrapolated = false;  ///< some coordinate was clamped or a corner was missing
  bool missing = false;   ///< a corner was unmeasured (NaN), whatever the clamping
  bool ok = false;        ///< at least one measured corner contributed
};

/// A latency past an axis's upper edge x1 (y1), from the line x0 < x1 (y0): affine through the two, kept between
/// the edge value (flat) and the edge value times x / x1 (proportional, the bound where fixed costs vanish); the
/// proportional reading where y0 is missing. GEMM shapes and MoE token counts past their tables are read so
/// (docs/validation.md, the "past the edge" figures).
double past_edge_us(double x0, double y0, double x1, double y1, double x);
/// The line past_edge_us reads beside an axis's (or a curve's) last value: the largest value at most half of it (a
/// slope over a factor two or more, not one neighbouring step), else the first. Index into `xs` (increasing).
std::size_t half_edge_index(const std::vector<double>& xs);

/// Multilinear interpolation of log(latency) over the corners of the cell each AxisPos names. Missing corners
/// (NaN) are left out and the remaining weights renormalised (flagged as extrapolated).
GridValue interpolate(const OpGrid& g, const AxisPos* pos);

/// Convenience: locate each coordinate and interpolate.
GridValue interpolate_at(const OpGrid& g, const double* coords);

/// A 1-D curve y(x) in log-log space (precomputed slices of a grid, e.g. a GEMM's latency against tokens).
class LogCurve {
 public:
  LogCurve() = default;
  /// x increasing and > 0; y > 0 (NaN points are dropped).
  LogCurve(const std::vector<double>& x, const std::vector<double>& y);
  bool empty() const { return x_.size() < 1; }
  /// y at x; outside the range the end segment's log-log slope is not used: the value is clamped and flagged.
  double eval(double x, bool* clamped = nullptr) const;
  /// As eval, but between points interp_pair_affine: linear in x where y rises (an alpha-beta law t0 + x / bw is
  /// reproduced exactly), log-log where it falls. Same values at the points, same clamping and flag outside.
  double eval_affine(double x, bool* clamped = nullptr) const;
  const std::vector<double>& xs() const { return x_; }
  const std::vector<double>& ys() const { return y_; }
  const std::vector<double>& log_xs() const { return lx_; }  ///< interp_log of xs()
  const std::vector<double>& log_ys() const { return ly_; }  ///< interp_log of ys()
  /// y at x past the last point (x > xs().back()): past_edge_us from the last point and half_edge_index's; in
  /// proportion to x with a single point.
  double past_end(double x) const;

 private:
  std::vector<double> x_, y_, lx_, ly_;
};

}  // namespace servesim
