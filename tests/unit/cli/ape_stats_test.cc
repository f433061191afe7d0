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
