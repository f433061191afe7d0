#include "core/sim/sim_time.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

using namespace servesim;

TEST_CASE("spans convert to nanoseconds rounded, and past the horizon land on it", "[sim][sim_time]") {
  CHECK(from_ms(1.5) == 1'500'000);
  CHECK(from_sec(2.0000000004) == 2'000'000'000);
  CHECK(from_sec(2.0000000006) == 2'000'000'001);
  CHECK(from_ms(-0.0000006) == -1);
  CHECK(span_ns(0.49) == 0);
  // Past the horizon (a double past int64 is undefined behaviour in C++ and a trap in WebAssembly).
  CHECK(from_sec(1e9) == kMaxSimTime);
  CHECK(from_sec(1e300) == kMaxSimTime);
  CHECK(from_ms(std::numeric_limits<double>::infinity()) == kMaxSimTime);
  CHECK(span_ns(std::nan("")) == kMaxSimTime);
  CHECK(from_sec(-1e300) == -kMaxSimTime);
  CHECK(from_sec(999'999'999.5) == 999'999'999'500'000'000);
  // Two spans at the horizon added to a time at the horizon still fit the clock.
  CHECK(kMaxSimTime <= std::numeric_limits<SimTime>::max() / 3);
}

TEST_CASE("spans add exactly below the horizon and land on it past it", "[sim][sim_time]") {
  CHECK(add_spans(2, 3) == 5);
  CHECK(add_spans(kMaxSimTime - 1, 1) == kMaxSimTime);
  CHECK(add_spans(kMaxSimTime, kMaxSimTime) == kMaxSimTime);
  CHECK(add_spans(4 * kMaxSimTime, 4 * kMaxSimTime) == kMaxSimTime);  // the most it takes without overflow
  CHECK(add_spans(-5, 2) == -3);
}
