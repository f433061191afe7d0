#pragma once
/// A sweep: a base scenario plus axes over any of its fields, a GPU budget, and the SLA and percentile the
/// Pareto frontier uses. Validated like scenarios (errors carry JSON pointers).
#include <cstdint>
#include <string>
#include <vector>

#include "core/spec/json_reader.h"

namespace servesim {

/// One axis. A field axis sets one scenario field (a JSON pointer into the base) to each value; a variant
/// axis applies a labelled set of field assignments at once (e.g. an architecture: C vs P + D).
struct SweepAxis {
  std::string name;                 ///< column name in results ("tp", "arch", ...)
  std::vector<std::string> paths;   ///< field axis: JSON pointers set to the same value (empty: variant axis)
  bool skip_missing = false;        ///< field axis: ignore paths into array elements a point does not have
  std::vector<Json> values;         ///< field axis values
  bool is_field() const { return !paths.empty(); }
  std::vector<std::string> labels;  ///< variant axis: one label per variant
  std::vector<Json> sets;           ///< variant axis: {pointer: value} per variant
};

/// The whole sweep document.
struct SweepSpec {
  std::string name;
  Json base;                        ///< a complete scenario
  std::vector<SweepAxis> axes;
  std::int64_t total_gpus = 0;      ///< GPU budget: roles may say {"replicas": {"gpu_share": f}}; 0 = none
  std::string group_by;             ///< axis whose label/value names a frontier series ("" = one series)
  std::string percentile = "p95";   ///< TPOT/TTFT percentile for the frontier and the SLA (p50..p99)
  double sla_ttft_ms = 0, sla_tpot_ms = 0;  ///< 0 = not set
};

/// Largest expansion accepted.
inline constexpr std::int64_t kMaxSweepPoints = 100000;

/// Parses and validates a sweep document.
bool parse_sweep(const std::string& text, SweepSpec& out, Errors& errors);

}  // namespace servesim
