#include "cli/ape_stats.h"

#include <cmath>

#include <catch2/catch.hpp>

using namespace servesim;

TEST_CASE("held-out statistics count a prediction that is not a positive time as a failure, not as nothing",
          "[cli][opcheck]") {
  ApeStats s;
  s.add(110, 100);            // 10% off
  s.add(90, 100);             // 10% off
  s.add(-1, 100);             // a predictor's error sentinel: counted, 100% off
  s.add(std::nan(""), 100);   // likewise
  s.add(50, 0);               // no measurement: not a comparison
  const auto j = s.json();
  CHECK(j["n"] == 4);
  CHECK(j["failed"] == 2);
  CHECK(j["max"].get<double>() == Approx(100.0));
  ApeStats clean;
  clean.add(105, 100);
  CHECK_FALSE(clean.json().contains("failed"));
  clean.add_all(s);
  CHECK(clean.json()["failed"] == 2);
  CHECK(clean.json()["n"] == 5);
}

TEST_CASE("held-out statistics count the comparisons over the 10% goal at the reported precision", "[cli][opcheck]") {
  ApeStats s;
  CHECK(s.json()["over_10pct"] == 0);
  s.add(110, 100);     // 10% off (10.000000000000009 in floating point): at the goal, not over it
  s.add(89.9, 100);    // 10.1% off
  s.add(-1, 100);      // a failure: 100% off
  for (int i = 0; i < 17; ++i) s.add(101, 100);
  const auto j = s.json();
  CHECK(j["n"] == 20);
  CHECK(j["over_10pct"] == 2);
  // The p95 (nearest rank: the 19th of 20) meets the goal exactly when at most n - ceil(0.95 n) = 1 cell is over.
  CHECK(j["p95"].get<double>() > 10.0);
}
