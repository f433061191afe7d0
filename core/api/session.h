#pragma once
/// The only entry point for front ends (CLI, wasm): build a run from scenario JSON, advance it in bounded
/// steps (progress, cancel), then read the result JSON. No exception escapes this interface.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/spec/errors.h"
#include "core/spec/resource_loader.h"

namespace servesim {

/// Simulator version written into every result.
const char* servesim_version();

/// Options a front end may set on top of the scenario.
struct SessionOptions {
  std::optional<std::uint64_t> seed;  ///< overrides the scenario's seed
  bool keep_trace = false;            ///< keep phases and iterations for chrome_trace_json()
};

/// How far a run has got.
struct Progress {
  double sim_time_s = 0;
  std::int64_t requests_done = 0;
  std::int64_t requests_total = 0;
  std::uint64_t events = 0;
  bool finished = false;
  std::string status = "running";  ///< running | completed | cancelled | stopped
};

class SessionImpl;

/// One simulation run.
class Session {
 public:
  /// Parses and compiles; on failure returns null with every error in `errors`.
  static std::unique_ptr<Session> create(const std::string& scenario_json, const ResourceLoader& loader,
                                         Errors& errors, const SessionOptions& options = {});
  ~Session();
  /// Processes at most `max_events` events.
  Progress step(std::uint64_t max_events);
  /// Stops the run; result_json() then reports status "cancelled" with what finished so far.
  void cancel();
  Progress progress() const;
  /// The result document (complete once finished).
  std::string result_json() const;
  /// result_json()'s "summary" object alone, the same bytes, without building the rest of the document.
  std::string summary_json() const;
  /// Chrome/Perfetto trace (requires SessionOptions::keep_trace).
  std::string chrome_trace_json() const;
  /// The "Serving Benchmark Result" text block.
  std::string benchmark_block() const;

 private:
  explicit Session(std::unique_ptr<SessionImpl> impl);
  std::unique_ptr<SessionImpl> impl_;
};

/// Validates a scenario; returns {"ok": bool, "errors": [{"path", "message"}]}.
std::string validate_scenario_json(const std::string& scenario_json, const ResourceLoader& loader);
/// Errors as the JSON array used by validate and by front ends.
std::string errors_to_json(const Errors& errors);

}  // namespace servesim
