#pragma once
/// Simulated time: integer nanoseconds, so ordering and arithmetic are exact and identical on every platform.
#include <cstdint>

namespace servesim {

/// A point or span of simulated time in nanoseconds.
using SimTime = std::int64_t;

inline constexpr SimTime kNsPerUs = 1000;
inline constexpr SimTime kNsPerMs = 1000 * 1000;
inline constexpr SimTime kNsPerSec = 1000 * 1000 * 1000;
/// Larger than any time a run can reach (~292 years).
inline constexpr SimTime kTimeInfinity = INT64_MAX;

/// The run's horizon, 1e9 s (about 32 years): a run whose next event lies past it stops there (SessionImpl::step).
/// Scenario checks keep what they can see well inside it (arrival spans, datasheet floors).
inline constexpr SimTime kMaxSimTime = 1'000'000'000LL * kNsPerSec;

/// Nanoseconds to SimTime, rounded to nearest and held to +-kMaxSimTime (NaN to +kMaxSimTime): a span past the horizon
/// lands there, where the run stops, instead of overflowing the clock (a double past int64 is undefined in C++ and
/// traps in WebAssembly).
inline SimTime span_ns(double ns) {
  constexpr double kMax = static_cast<double>(kMaxSimTime);
  if (!(ns < kMax)) return kMaxSimTime;
  if (ns <= -kMax) return -kMaxSimTime;
  return static_cast<SimTime>(ns + (ns >= 0 ? 0.5 : -0.5));
}
/// a + b held at kMaxSimTime, for adding up spans that are each held there (a step's op families, a prompt's
/// chunks): their sum lands on the horizon instead of overflowing. Exact below it; `a` and `b` at most 4 horizons.
inline SimTime add_spans(SimTime a, SimTime b) {
  const SimTime sum = a + b;
  return sum > kMaxSimTime ? kMaxSimTime : sum;
}
/// Milliseconds (possibly fractional) to nanoseconds, rounded to nearest (span_ns).
inline SimTime from_ms(double ms) { return span_ns(ms * 1e6); }
/// Seconds to nanoseconds, rounded to nearest (span_ns).
inline SimTime from_sec(double s) { return span_ns(s * 1e9); }
/// Nanoseconds to milliseconds.
inline double as_ms(SimTime t) { return static_cast<double>(t) / 1e6; }
/// Nanoseconds to seconds.
inline double as_sec(SimTime t) { return static_cast<double>(t) / 1e9; }

}  // namespace servesim
