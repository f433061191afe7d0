// Embind bindings: forward to core/api's Session and core/explore's SweepSession and nothing else (no
// simulation logic here). Every value
// crossing to JS is a string or a number; no exception crosses the boundary (the core returns errors).
#include <emscripten/bind.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/api/session.h"
#include "core/explore/sweep_session.h"

namespace {

/// Bundled profiles are packaged into the module's virtual filesystem at /profiles.
const servesim::ResourceLoader& bundled_loader() {
  static const servesim::ResourceLoader loader = servesim::directory_loader("/profiles");
  return loader;
}

std::string progress_json(const servesim::Progress& p) {
  nlohmann::ordered_json j;
  j["sim_time_s"] = p.sim_time_s;
  j["requests_done"] = p.requests_done;
  j["requests_total"] = p.requests_total;
  j["events"] = p.events;
  j["finished"] = p.finished;
  j["status"] = p.status;
  return j.dump();
}

/// One run as JS sees it: create() once, then step() until finished, then read the outputs.
class WasmSession {
 public:
  /// Parses and compiles the scenario; returns {"ok": bool, "errors": [{"path", "message"}]}.
  std::string create(const std::string& scenario_json, bool keep_trace) {
    servesim::SessionOptions options;
    options.keep_trace = keep_trace;
    servesim::Errors errors;
    session_ = servesim::Session::create(scenario_json, bundled_loader(), errors, options);
    nlohmann::ordered_json j;
    j["ok"] = session_ != nullptr;
    j["errors"] = nlohmann::ordered_json::parse(servesim::errors_to_json(errors));
    return j.dump();
  }
  /// Processes at most `max_events` events; returns the progress JSON (status "none" before create()).
  std::string step(double max_events) {
    if (!session_) return none_progress();
    return progress_json(session_->step(max_events > 0 ? static_cast<std::uint64_t>(max_events) : 0));
  }
  /// The progress JSON without advancing.
  std::string progress() const { return session_ ? progress_json(session_->progress()) : none_progress(); }
  void cancel() {
    if (session_) session_->cancel();
  }
  std::string result_json() const { return session_ ? session_->result_json() : std::string(); }
  std::string chrome_trace_json() const { return session_ ? session_->chrome_trace_json() : std::string(); }
  std::string benchmark_block() const { return session_ ? session_->benchmark_block() : std::string(); }

 private:
  static std::string none_progress() {
    servesim::Progress p;
    p.finished = true;
    p.status = "none";
    return progress_json(p);
  }
  std::unique_ptr<servesim::Session> session_;
};

/// A JS number as a point index (-1, which the core refuses, for NaN, negatives and huge values).
std::int64_t to_index(double v) { return v >= 0 && v < 1e15 ? static_cast<std::int64_t>(v) : -1; }

/// A sweep for the page's worker pool: load() once per worker, then evaluate points by index.
class WasmSweep {
 public:
  std::string load(const std::string& sweep_text) { return sweep_.load(sweep_text); }
  std::string evaluate(double index) const { return sweep_.evaluate(to_index(index), bundled_loader()); }
  std::string scenario(double index) const { return sweep_.scenario(to_index(index)); }
  std::string merge(const std::string& records_json) const { return sweep_.merge(records_json); }

 private:
  servesim::SweepSession sweep_;
};

std::string version() { return servesim::servesim_version(); }
std::string validate(const std::string& scenario_json) {
  return servesim::validate_scenario_json(scenario_json, bundled_loader());
}

}  // namespace

EMSCRIPTEN_BINDINGS(servesim) {
  emscripten::class_<WasmSession>("Session")
      .constructor<>()
      .function("create", &WasmSession::create)
      .function("step", &WasmSession::step)
      .function("progress", &WasmSession::progress)
      .function("cancel", &WasmSession::cancel)
      .function("resultJson", &WasmSession::result_json)
      .function("chromeTraceJson", &WasmSession::chrome_trace_json)
      .function("benchmarkBlock", &WasmSession::benchmark_block);
  emscripten::class_<WasmSweep>("Sweep")
      .constructor<>()
      .function("load", &WasmSweep::load)
      .function("evaluate", &WasmSweep::evaluate)
      .function("scenario", &WasmSweep::scenario)
      .function("merge", &WasmSweep::merge);
  emscripten::function("version", &version);
  emscripten::function("validate", &validate);
}
