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

/// Milliseconds (possibly fractional) to nanoseconds, rounded to nearest.
inline SimTime from_ms(double ms) { return static_cast<SimTime>(ms * 1e6 + (ms >= 0 ? 0.5 : -0.5)); }
/// Seconds to nanoseconds, rounded to nearest.
inline SimTime from_sec(double s) { return static_cast<SimTime>(s * 1e9 + (s >= 0 ? 0.5 : -0.5)); }
/// Nanoseconds to milliseconds.
inline double as_ms(SimTime t) { return static_cast<double>(t) / 1e6; }
/// Nanoseconds to seconds.
inline double as_sec(SimTime t) { return static_cast<double>(t) / 1e9; }

}  // namespace servesim
