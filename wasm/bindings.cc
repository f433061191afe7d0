// Embind bindings: forward to core/api's Session and core/explore's SweepSession and nothing else (no
// simulation logic here). Every value
// crossing to JS is a string or a number; no exception crosses the boundary (the core returns errors).
#include <emscripten/bind.h>

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "core/api/session.h"
#include "core/explore/sweep_session.h"

namespace {

/// The profiles the page has handed over, by path relative to profiles/. The module ships no profiles: the
/// worker fetches what a scenario needs (web/lib/resources.js) and puts it here, once per module instance.
/// A path listed in the manifest but not handed over yet is recorded as missing: the worker fetches the
/// missing files and calls again, so the core only ever sees the same files the CLI reads from disk.
struct ResourceStore {
  std::map<std::string, std::string> files;
  std::set<std::string> listed;  // every file of the deployed profiles/ (the manifest)
  std::set<std::string> missing;  // listed, asked for, not handed over yet
};

ResourceStore& store() {
  static ResourceStore s;
  return s;
}

const servesim::ResourceLoader& bundled_loader() {
  static const servesim::ResourceLoader loader = [](const std::string& path) -> std::optional<std::string> {
    ResourceStore& s = store();
    auto it = s.files.find(path);
    if (it != s.files.end()) return it->second;
    if (s.listed.count(path)) s.missing.insert(path);
    return std::nullopt;
  };
  return loader;
}

/// Sets the manifest: a JSON array of paths relative to profiles/. Returns "" or an error.
std::string set_manifest(const std::string& paths_json) {
  const auto j = nlohmann::json::parse(paths_json, nullptr, false);
  if (j.is_discarded() || !j.is_array()) return "the profiles manifest is not a JSON array of paths";
  std::set<std::string> listed;
  for (const auto& v : j) {
    if (!v.is_string()) return "the profiles manifest holds a non-string entry";
    listed.insert(v.get<std::string>());
  }
  store().listed = std::move(listed);
  return "";
}

/// Hands over one file's text (the bytes of profiles/<path>).
void put_resource(const std::string& path, const std::string& text) {
  store().files[path] = text;
  store().missing.erase(path);
}

bool has_resource(const std::string& path) { return store().files.count(path) > 0; }

/// The listed files the core asked for since the last call and did not get (a JSON array); clears the list.
std::string take_missing() {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& p : store().missing) j.push_back(p);
  store().missing.clear();
  return j.dump();
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
std::string sweep_reframe(const std::string& merged_json, const std::string& view_json) {
  return servesim::SweepSession::reframe(merged_json, view_json);
}
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
  emscripten::function("sweepReframe", &sweep_reframe);
  emscripten::function("setManifest", &set_manifest);
  emscripten::function("putResource", &put_resource);
  emscripten::function("hasResource", &has_resource);
  emscripten::function("takeMissing", &take_missing);
  emscripten::function("validate", &validate);
}
