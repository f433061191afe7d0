#include "core/sim/det_math.h"

#include <cmath>
#include <limits>

namespace servesim {

namespace {
constexpr double kLn2Hi = 6.93147180369123816490e-01;  // upper bits of ln 2, exact in a double
constexpr double kLn2Lo = 1.90821492927058770002e-10;  // ln 2 - kLn2Hi
constexpr double kSqrtHalf = 0.70710678118654752440;
}  // namespace

double det_log(double x) {
  if (x < 0 || std::isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return x;
  int e = 0;
  double m = std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1)
  if (m < kSqrtHalf) {
    m *= 2.0;
    e -= 1;
  }
  // log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.1716: the odd series converges to 1e-17 by s^23.
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double term = s;
  double sum = s;
  for (int k = 3; k <= 27; k += 2) {
    term *= s2;
    sum += term / k;
  }
  return (2.0 * sum + e * kLn2Lo) + e * kLn2Hi;
}

double det_exp(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.782712893384) return std::numeric_limits<double>::infinity();  // ln(DBL_MAX)
  if (x < -745.2) return 0.0;
  // x = k ln2 + r with |r| <= ln2/2; Taylor series of e^r to r^20/20! is below 1e-25.
  const double kd = std::nearbyint(x / 0.69314718055994530942);
  const int k = static_cast<int>(kd);
  const double r = (x - kd * kLn2Hi) - kd * kLn2Lo;
  double term = 1.0;
  double sum = 1.0;
  for (int n = 1; n <= 20; ++n) {
    term *= r / n;
    sum += term;
  }
  return std::ldexp(sum, k);
}

double det_pow(double a, double b) {
  if (b == 0) return 1.0;
  if (a == 0) return 0.0;
  return det_exp(b * det_log(a));
}

double det_log2(double x) { return det_log(x) / 0.69314718055994530942; }

}  // namespace servesim
