#include "core/fidelity/interpolation.h"

#include <algorithm>
#include <cmath>


namespace servesim {

namespace {
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kSqrtHalf = 0.70710678118654752440;
}  // namespace

double interp_log(double x) {
  if (!(x > 0)) return x == 0 ? -HUGE_VAL : std::nan("");
  if (std::isinf(x)) return x;
  int e = 0;
  double m = std::frexp(x, &e);
  if (m < kSqrtHalf) {
    m *= 2.0;
    e -= 1;
  }
  // log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.1716; odd series to s^25 (error < 1e-19).
  const double s = (m - 1.0) / (m + 1.0);
  const double z = s * s;
  const double p = 1.0 / 3 + z * (1.0 / 5 + z * (1.0 / 7 + z * (1.0 / 9 + z * (1.0 / 11 + z * (1.0 / 13 +
                   z * (1.0 / 15 + z * (1.0 / 17 + z * (1.0 / 19 + z * (1.0 / 21 + z * (1.0 / 23 + z * (1.0 / 25)))))))))));
  const double lm = 2.0 * (s + s * z * p);
  return (lm + e * kLn2Lo) + e * kLn2Hi;
}

double interp_exp(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.78) return HUGE_VAL;
  if (x < -745.2) return 0.0;
  const double kd = std::nearbyint(x * 1.44269504088896340736);
  const int k = static_cast<int>(kd);
  const double r = (x - kd * kLn2Hi) - kd * kLn2Lo;  // |r| <= ln2/2
  // Taylor series to r^17 (error < 1e-17 for |r| <= 0.35), Horner form with constant reciprocals.
  const double p = 1 + r * (1 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (1.0 / 720 +
                   r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 + r * (1.0 / 3628800 +
                   r * (1.0 / 39916800 + r * (1.0 / 479001600 + r * (1.0 / 6227020800.0 + r * (1.0 / 87178291200.0 +
                   r * (1.0 / 1307674368000.0 + r * (1.0 / 20922789888000.0 + r * (1.0 / 355687428096000.0)))))))))))))))));
  return std::ldexp(p, k);
}

AxisPos locate_log(const std::vector<double>& axis, const std::vector<double>& log_axis, double x) {
  AxisPos p;
  const std::size_t n = axis.size();
  if (n == 1 || x <= axis.front()) {
    p.i0 = p.i1 = 0;
    p.clamped = x < axis.front();
    p.clamped_to = p.clamped ? axis.front() : x;
    return p;
  }
  if (x >= axis.back()) {
    p.i0 = p.i1 = n - 1;
    p.clamped = x > axis.back();
    p.clamped_to = p.clamped ? axis.back() : x;
    return p;
  }
  const std::size_t hi = static_cast<std::size_t>(std::upper_bound(axis.begin(), axis.end(), x) - axis.begin());
  p.i0 = hi - 1;
  p.i1 = hi;
  p.clamped_to = x;
  if (x == axis[p.i0]) {
    p.i1 = p.i0;  // exactly on a grid value: no interpolation along this axis
    return p;
  }
  p.w = (interp_log(x) - log_axis[p.i0]) / (log_axis[p.i1] - log_axis[p.i0]);
  p.w_lin = (x - axis[p.i0]) / (axis[p.i1] - axis[p.i0]);
  return p;
}

double interp_pair_affine(double a, double b, double w_lin, double w_log) {
  if (a <= b) return a + w_lin * (b - a);
  return interp_exp(interp_log(a) + w_log * (interp_log(b) - interp_log(a)));
}

bool interp_cell_affine(const double c[4], const AxisPos& outer, const AxisPos& inner, double& out) {
  for (int i = 0; i < 4; ++i)
    if (std::isnan(c[i])) return false;
  auto along = [](double lo, double hi, const AxisPos& p) {
    return p.i0 == p.i1 ? lo : interp_pair_affine(lo, hi, p.w_lin, p.w);
  };
  out = along(along(c[0], c[1], inner), along(c[2], c[3], inner), outer);
  return true;
}

double past_edge_us(double x0, double y0, double x1, double y1, double x) {
  if (!(y0 > 0) || !(x1 > x0)) return y1 * (x / x1);
  const double affine = y1 + (y1 - y0) / (x1 - x0) * (x - x1);
  return std::min(std::max(affine, y1), y1 * (x / x1));
}

std::size_t half_edge_index(const std::vector<double>& xs) {
  std::size_t lo = 0;
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (xs[i] <= xs.back() / 2) lo = i;
  return lo;
}

GridValue interpolate(const OpGrid& g, const AxisPos* pos) {
  GridValue r;
  const std::size_t d = g.axes.size();
  double acc = 0, wsum = 0;
  bool missing = false;
  int used = 0;
  std::size_t last = 0;
  const std::size_t corners = static_cast<std::size_t>(1) << d;
  for (std::size_t c = 0; c < corners; ++c) {
    double w = 1;
    std::size_t idx = 0;
    bool skip = false;
    for (std::size_t a = 0; a < d; ++a) {
      const bool upper = (c >> (d - 1 - a)) & 1u;
      const AxisPos& p = pos[a];
      if (p.i0 == p.i1 && upper) {
        skip = true;  // degenerate axis: only the lower corner exists
        break;
      }
      const double wa = p.i0 == p.i1 ? 1.0 : (upper ? p.w : 1.0 - p.w);
      w *= wa;
      idx += (upper ? p.i1 : p.i0) * g.stride(a);
    }
    if (skip || w == 0) continue;
    const double lv = g.log_values[idx];
    if (std::isnan(lv)) {
      missing = true;
      continue;
    }
    acc += w * lv;
    wsum += w;
    ++used;
    last = idx;
  }
  for (std::size_t a = 0; a < d; ++a) r.extrapolated = r.extrapolated || pos[a].clamped;
  r.missing = missing;
  if (wsum <= 0) return r;
  r.ok = true;
  r.extrapolated = r.extrapolated || missing;
  // On a grid point the measured value is returned as is (no log/exp round trip).
  r.value = used == 1 ? g.values[last] : interp_exp(acc / wsum);
  return r;
}

GridValue interpolate_at(const OpGrid& g, const double* coords) {
  AxisPos pos[8];
  const std::size_t d = std::min<std::size_t>(g.axes.size(), 8);
  for (std::size_t a = 0; a < d; ++a) pos[a] = locate_log(g.axes[a], g.log_axes[a], coords[a]);
  return interpolate(g, pos);
}

LogCurve::LogCurve(const std::vector<double>& x, const std::vector<double>& y) {
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (std::isnan(y[i]) || !(y[i] > 0) || !(x[i] > 0)) continue;
    x_.push_back(x[i]);
    y_.push_back(y[i]);
    lx_.push_back(interp_log(x[i]));
    ly_.push_back(interp_log(y[i]));
  }
}

double LogCurve::past_end(double x) const {
  if (x_.empty()) return 0;
  if (x_.size() < 2) return y_.back() * (x / x_.back());
  const std::size_t lo = half_edge_index(x_);
  return past_edge_us(x_[lo], y_[lo], x_.back(), y_.back(), x);
}

double LogCurve::eval(double x, bool* clamped) const {
  if (x_.empty()) return 0;
  if (x <= x_.front()) {
    if (clamped && x < x_.front()) *clamped = true;
    return y_.front();
  }
  if (x >= x_.back()) {
    if (clamped && x > x_.back()) *clamped = true;
    return y_.back();
  }
  const std::size_t hi = static_cast<std::size_t>(std::upper_bound(x_.begin(), x_.end(), x) - x_.begin());
  const std::size_t lo = hi - 1;
  if (x == x_[lo]) return y_[lo];
  const double w = (interp_log(x) - lx_[lo]) / (lx_[hi] - lx_[lo]);
  return interp_exp(ly_[lo] + w * (ly_[hi] - ly_[lo]));
}

double LogCurve::eval_affine(double x, bool* clamped) const {
  if (x_.empty()) return 0;
  if (x <= x_.front() || x >= x_.back()) return eval(x, clamped);
  const std::size_t hi = static_cast<std::size_t>(std::upper_bound(x_.begin(), x_.end(), x) - x_.begin());
  const std::size_t lo = hi - 1;
  if (x == x_[lo]) return y_[lo];
  return interp_pair_affine(y_[lo], y_[hi], (x - x_[lo]) / (x_[hi] - x_[lo]),
                            (interp_log(x) - lx_[lo]) / (lx_[hi] - lx_[lo]));
}

}  // namespace servesim
