#include "core/sim/det_math.h"

#include <cfloat>
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "core/sim/rng.h"

using namespace servesim;

namespace {
double rel_err(double got, double want) {
  if (got == want) return 0.0;
  return std::fabs(got - want) / std::fabs(want);
}
}  // namespace

TEST_CASE("det_log agrees with std::log to 1e-14 from 1e-300 to 1e300", "[sim][det_math]") {
  double worst = 0, worst_x = 0;
  const int n = 200'000;
  Rng r(3, 0);
  for (int i = 0; i <= n; ++i) {
    // Log-spaced sweep with a random mantissa so every binade and mantissa region is hit.
    const double x = std::pow(10.0, -300.0 + 600.0 * i / n) * (1.0 + r.uniform());
    const double e = rel_err(det_log(x), std::log(x));
    if (e > worst) worst = e, worst_x = x;
  }
  // Near 1 the result is small, so relative error is the hard case.
  for (int i = 1; i <= 20'000; ++i) {
    for (double x : {1.0 + i * 1e-6, 1.0 - i * 1e-6, 1.0 + i * 1e-12, 0.70710678 + i * 1e-5}) {
      const double e = rel_err(det_log(x), std::log(x));
      if (e > worst) worst = e, worst_x = x;
    }
  }
  INFO("worst x " << worst_x);
  CHECK(worst < 1e-14);
}

TEST_CASE("det_exp agrees with std::exp to 1e-14 from -700 to 700", "[sim][det_math]") {
  double worst = 0, worst_x = 0;
  const int n = 200'000;
  for (int i = 0; i <= n; ++i) {
    const double x = -700.0 + 1400.0 * i / n + 0.000123 * (i % 7);
    const double e = rel_err(det_exp(x), std::exp(x));
    if (e > worst) worst = e, worst_x = x;
  }
  for (int i = -10'000; i <= 10'000; ++i) {
    const double x = i * 1e-5;
    const double e = rel_err(det_exp(x), std::exp(x));
    if (e > worst) worst = e, worst_x = x;
  }
  INFO("worst x " << worst_x);
  CHECK(worst < 1e-14);
}

TEST_CASE("det_pow agrees with std::pow to 1e-14 when the result is moderate", "[sim][det_math]") {
  // det_pow is exp(b log a): the relative error grows with |b log a| (an ulp of the exponent), so the sweep keeps
  // |b ln a| <= 20, which covers what the cost models use (fractional powers of sizes and probabilities).
  double worst = 0, worst_a = 0, worst_b = 0;
  Rng r(17, 0);
  int tested = 0;
  for (int i = 0; i < 200'000; ++i) {
    const double a = std::pow(10.0, -6.0 + 12.0 * r.uniform());
    const double b = -10.0 + 20.0 * r.uniform();
    if (std::fabs(b * std::log(a)) > 20.0) continue;
    ++tested;
    const double e = rel_err(det_pow(a, b), std::pow(a, b));
    if (e > worst) worst = e, worst_a = a, worst_b = b;
  }
  INFO("worst a " << worst_a << " b " << worst_b);
  CHECK(tested > 50'000);
  CHECK(worst < 1e-14);
  CHECK(det_pow(2.0, 10.0) == Approx(1024.0).epsilon(1e-15));
  CHECK(det_pow(9.0, 0.5) == Approx(3.0).epsilon(1e-15));
  CHECK(det_pow(1e6, -1.0 / 3.0) == Approx(0.01).epsilon(1e-14));
}

TEST_CASE("det_log and det_exp handle zeros, negatives, infinities and NaN", "[sim][det_math]") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(det_log(0.0) == -inf);
  CHECK(std::isnan(det_log(-1.0)));
  CHECK(std::isnan(det_log(-inf)));
  CHECK(std::isnan(det_log(std::nan(""))));
  CHECK(det_log(inf) == inf);
  CHECK(det_log(1.0) == 0.0);
  CHECK(det_log(DBL_MIN) == Approx(std::log(DBL_MIN)).epsilon(1e-15));
  CHECK(det_log(DBL_MAX) == Approx(std::log(DBL_MAX)).epsilon(1e-15));
  CHECK(det_log(4.9406564584124654e-324) == Approx(-744.44007192138126).epsilon(1e-14));  // smallest subnormal

  CHECK(det_exp(0.0) == 1.0);
  CHECK(det_exp(-800.0) == 0.0);
  CHECK(det_exp(800.0) == inf);
  CHECK(det_exp(-inf) == 0.0);
  CHECK(det_exp(inf) == inf);
  CHECK(std::isnan(det_exp(std::nan(""))));
  CHECK(det_exp(1.0) == Approx(2.718281828459045).epsilon(1e-15));
}

TEST_CASE("det_exp stays finite up to the log of the largest double", "[sim][det_math]") {
  // ln(DBL_MAX) = 709.782712893384; e^709.7827 is about 1.7976e308, still a finite double.
  for (double x : {709.0, 709.78, 709.781, 709.782, 709.7827}) {
    INFO("x " << x);
    REQUIRE(std::isfinite(std::exp(x)));
    CHECK(std::isfinite(det_exp(x)));
    CHECK(rel_err(det_exp(x), std::exp(x)) < 1e-13);
  }
  CHECK(det_exp(709.8) == std::numeric_limits<double>::infinity());
}

TEST_CASE("det_pow and det_log2 special cases", "[sim][det_math]") {
  CHECK(det_pow(123.0, 0.0) == 1.0);
  CHECK(det_pow(0.0, 2.5) == 0.0);
  CHECK(det_pow(1.0, 1e6) == 1.0);
  CHECK(det_log2(1024.0) == Approx(10.0).epsilon(1e-15));
  CHECK(det_log2(0.125) == Approx(-3.0).epsilon(1e-15));
  CHECK(det_log2(3.0) == Approx(1.584962500721156).epsilon(1e-14));
}
