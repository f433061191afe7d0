#pragma once
/// A whole scenario: the typed form of one scenario JSON document (format version 1).
#include <cstdint>
#include <string>
#include <vector>

#include "core/spec/deployment_spec.h"
#include "core/spec/model_spec.h"
#include "core/spec/workload_spec.h"

namespace servesim {

class ResourceCatalog;

/// Latency objectives for goodput; 0 = not set.
struct SlaSpec {
  double ttft_ms = 0;
  double tpot_ms = 0;
  double e2el_ms = 0;
  bool any() const { return ttft_ms > 0 || tpot_ms > 0 || e2el_ms > 0; }
};

/// What the result carries besides the summary.
struct OutputSpec {
  int timeseries_points = 512;  ///< down-sampled points per series
  bool requests = false;        ///< per-request columns in the result (for timelines and CSV export)
  bool phases = false;          ///< per-request phase segments (queued, prefill chunks, decode)
};

/// Safety limits so a run always ends.
struct LimitsSpec {
  std::uint64_t max_events = 0;  ///< 0 = derived from the workload size
  double max_sim_time_s = 0;     ///< 0 = no limit on simulated time
};

/// Everything a run needs.
struct Scenario {
  int version = 1;
  std::string name;
  std::string description;
  std::uint64_t seed = 0;
  ModelSpec model;
  DeploymentSpec deployment;
  WorkloadSpec workload;
  SlaSpec sla;
  OutputSpec output;
  LimitsSpec limits;
  /// Non-fatal notes about the input (ignored HF config keys, ...), reported in the result.
  std::vector<std::string> warnings;
};

/// Current scenario format version.
inline constexpr int kScenarioVersion = 1;
/// Largest scenario document accepted.
inline constexpr std::size_t kMaxScenarioBytes = 16u << 20;

/// Parses and validates scenario text. Returns false with every problem in `errors`.
bool parse_scenario(const std::string& text, const ResourceCatalog& catalog, Scenario& s, Errors& errors);
/// Same, from an already parsed document.
bool read_scenario(const Json& doc, const ResourceCatalog& catalog, Scenario& s, Errors& errors);

}  // namespace servesim
