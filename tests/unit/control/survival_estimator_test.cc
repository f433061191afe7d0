#include "core/control/survival_estimator.h"

#include <catch2/catch.hpp>

using namespace servesim;

TEST_CASE("the survival estimator starts at one and follows the EMA of Eq. 4", "[control][sibyl]") {
  SurvivalEstimator s(100, 1000, 0.5);
  CHECK(s.survival(0) == 1.0);
  CHECK(s.survival(250) == 1.0);
  s.observe(150);  // buckets at 100 survive, 200.. do not
  CHECK(s.survival(100) == Approx(1.0));
  CHECK(s.survival(200) == Approx(0.5));
  CHECK(s.survival(150) == Approx(0.75));  // linear between boundaries
  s.observe(1000);
  CHECK(s.survival(200) == Approx(0.75));  // 0.5 * 0.5 + 0.5 * 1
  CHECK(s.survival(100) == Approx(1.0));
}

TEST_CASE("conditional survival is S(to) / S(from), capped at one", "[control][sibyl]") {
  SurvivalEstimator s(10, 100, 0.0);  // alpha 0: the last observation decides
  s.observe(50);
  CHECK(s.conditional(20, 40) == Approx(1.0));
  CHECK(s.conditional(20, 60) == Approx(0.0));
  CHECK(s.conditional(55, 70) == Approx(0.0));  // S(55) = 0.5 (interpolated), S(70) = 0
  CHECK(s.conditional(65, 70) == Approx(1.0));  // S(from) = 0 gives 1, not a division by zero
}
