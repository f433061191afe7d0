#include "core/api/session_impl.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>

#include "core/metrics/chrome_trace.h"
#include "core/metrics/summary.h"
#include "core/sim/check.h"

namespace servesim {

SessionImpl::SessionImpl(const ResourceLoader& loader, const SessionOptions& options)
    : catalog_(loader), options_(options) {}

namespace {

/// Parsed traces per process, keyed by name, size and FNV-1a of the text (as the op-table cache): a sweep
/// parses each trace once per process (once per worker in the page) instead of once per point. Only traces
/// that parsed are kept, so an error is reported every time.
std::mutex& trace_cache_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, TraceTable>& trace_cache() {
  static std::map<std::string, TraceTable> cache;
  return cache;
}

bool load_trace(const ResourceCatalog& catalog, const std::string& name, const std::string& path, TraceTable& out,
                Errors& errors) {
  auto text = catalog.load_text("traces", name + ".csv");
  if (!text) {
    errors.add(path, "trace \"" + name + "\" could not be loaded");
    return false;
  }
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : *text) h = (h ^ ch) * 0x100000001b3ull;
  const std::string key = name + ":" + std::to_string(text->size()) + ":" + std::to_string(h);
  {
    std::lock_guard<std::mutex> lock(trace_cache_mutex());
    auto it = trace_cache().find(key);
    if (it != trace_cache().end()) {
      out = it->second;
      return true;
    }
  }
  const std::string err = parse_trace_csv(*text, out);
  if (!err.empty()) {
    errors.add(path, "trace \"" + name + "\": " + err);
    return false;
  }
  std::lock_guard<std::mutex> lock(trace_cache_mutex());
  trace_cache().emplace(key, out);
  return true;
}

bool load_cdf(const ResourceCatalog& catalog, const std::string& name, const std::string& path, EmpiricalCdf& out,
              Errors& errors) {
  auto text = catalog.load_text("workloads", name + "_cdf.json");
  if (!text) {
    errors.add(path, "length CDF \"" + name + "\" could not be loaded");
    return false;
  }
  const std::string err = parse_cdf_json(*text, out);
  if (!err.empty()) errors.add(path, "length CDF \"" + name + "\": " + err);
  return err.empty();
}

}  // namespace

bool SessionImpl::load_workload_data(Errors& errors) {
  WorkloadSpec& w = scenario_.workload;
  if (w.arrival.process == ArrivalSpec::Process::kTrace) {
    if (!load_trace(catalog_, w.arrival.trace, "/workload/arrival/trace", arrival_trace_, errors)) return false;
    if (arrival_trace_.arrival_ms.empty()) {
      errors.add("/workload/arrival/trace", "trace \"" + w.arrival.trace + "\" has no arrival_ms column");
      return false;
    }
    const auto rows = static_cast<std::int64_t>(arrival_trace_.size());
    if (w.num_requests == 0) w.num_requests = rows;
    if (w.num_requests > rows) {
      errors.add("/workload/num_requests", "must be at most the trace's " + std::to_string(rows) + " rows, got " +
                                               std::to_string(w.num_requests));
      return false;
    }
    if (w.arrival.trace_rate > 0 && w.num_requests > 1 &&
        arrival_trace_.arrival_ms[w.num_requests - 1] <= arrival_trace_.arrival_ms[0]) {
      errors.add("/workload/arrival/request_rate", "cannot re-time: the selected trace rows all arrive at once");
      return false;
    }
  }
  LengthSpec& l = w.lengths;
  if (l.source == LengthSpec::Source::kTrace) {
    if (w.lengths_from_arrival_trace) length_trace_ = arrival_trace_;
    else if (!load_trace(catalog_, l.trace, "/workload/lengths/trace", length_trace_, errors)) return false;
    if (length_trace_.clamped_rows > 0)
      scenario_.warnings.push_back("trace \"" + l.trace + "\": " + std::to_string(length_trace_.clamped_rows) +
                                   " rows with a zero length were raised to 1 token");
  } else if (l.source == LengthSpec::Source::kCdfTotal) {
    if (!load_cdf(catalog_, l.cdf, "/workload/lengths/cdf", total_cdf_, errors)) return false;
  } else {
    if (l.input.kind == LengthDist::Kind::kCdf &&
        !load_cdf(catalog_, l.input.cdf, "/workload/input_len/cdf", input_cdf_, errors))
      return false;
    if (l.output.kind == LengthDist::Kind::kCdf &&
        !load_cdf(catalog_, l.output.cdf, "/workload/output_len/cdf", output_cdf_, errors))
      return false;
  }
  return true;
}

bool SessionImpl::build(const std::string& scenario_json, Errors& errors) {
  if (!parse_scenario(scenario_json, catalog_, scenario_, errors)) return false;
  if (options_.seed) scenario_.seed = *options_.seed;
  if (options_.keep_trace) scenario_.output.phases = true;
  if (!load_workload_data(errors)) return false;
  metrics_ = std::make_unique<MetricsCollector>(scenario_.output, options_.keep_trace);
  RouterKind router;
  SERVESIM_CHECK(router_from_string(scenario_.deployment.router, router), "router passed validation");
  // The controller observes replicas, so it exists before the cluster is compiled.
  controller_ = std::make_unique<GlobalController>(cluster_, router, *metrics_, counters_);
  if (!compile_cluster(scenario_, &counters_, controller_.get(), cluster_, errors, &catalog_)) return false;
  scenario_.warnings.insert(scenario_.warnings.end(), cluster_.warnings.begin(), cluster_.warnings.end());
  controller_->init_disaggregation(scenario_);
  pool_.resize(static_cast<std::size_t>(scenario_.workload.num_requests));
  controller_->set_pool(&pool_);
  const TraceTable* lt = scenario_.workload.lengths.source == LengthSpec::Source::kTrace ? &length_trace_ : nullptr;
  LengthSampler lengths(scenario_.workload.lengths, lt, &input_cdf_, &output_cdf_, &total_cdf_);
  driver_ = std::make_unique<WorkloadDriver>(scenario_.workload, scenario_.seed, pool_, std::move(lengths),
                                             &arrival_trace_, controller_.get(),
                                             scenario_.model.response_preamble_tokens);
  controller_->set_driver(driver_.get());
  driver_->start(sim_);
  return true;
}

std::uint64_t SessionImpl::event_budget() const {
  if (scenario_.limits.max_events > 0) return scenario_.limits.max_events;
  // Each token needs at most a few events; preemption recompute is bounded by the same tokens again.
  return 2'000'000 + 16 * static_cast<std::uint64_t>(controller_->submitted_tokens());
}

Progress SessionImpl::step(std::uint64_t max_events) {
  if (status_ != "running") return progress();
  const SimTime until = scenario_.limits.max_sim_time_s > 0 ? from_sec(scenario_.limits.max_sim_time_s) : kMaxSimTime;
  std::uint64_t left = max_events;
  while (left > 0 && !sim_.idle()) {
    const std::uint64_t budget = event_budget();
    if (sim_.events_processed() >= budget) {
      finish("stopped", "event budget of " + std::to_string(budget) +
                            " exceeded; the run was stopped (raise /limits/max_events if this is expected)");
      return progress();
    }
    const std::uint64_t chunk = std::min(left, budget - sim_.events_processed());
    const std::uint64_t ran = sim_.run(chunk, until);
    left -= ran;
    if (ran < chunk && !sim_.idle() && sim_.next_time() > until) {
      if (scenario_.limits.max_sim_time_s > 0)
        finish("stopped", "simulated time limit of " + std::to_string(scenario_.limits.max_sim_time_s) +
                              " s reached (/limits/max_sim_time_s)");
      else
        finish("stopped",
               "the run reached the simulator's horizon, 1e9 s (about 32 years) of simulated time: an "
               "arrival gap or a step that long; check the workload's rates and the GPU's datasheet figures");
      return progress();
    }
  }
  if (sim_.idle()) {
    SERVESIM_CHECK(controller_->done() == scenario_.workload.num_requests,
                   "the event queue drained with " +
                       std::to_string(scenario_.workload.num_requests - controller_->done()) + " requests unfinished");
    finish("completed", "");
  }
  return progress();
}

void SessionImpl::cancel() {
  if (status_ == "running") finish("cancelled", "cancelled by the user");
}

void SessionImpl::finish(const std::string& status, const std::string& message) {
  status_ = status;
  message_ = message;
  end_time_ = sim_.now();
  if (status != "completed") controller_->fail_unfinished(end_time_, "run " + status + " before the request finished");
}

Progress SessionImpl::progress() const {
  Progress p;
  p.sim_time_s = as_sec(sim_.now());
  p.requests_done = controller_ ? controller_->done() : 0;
  p.requests_total = scenario_.workload.num_requests;
  p.events = sim_.events_processed();
  p.finished = status_ != "running";
  p.status = status_;
  return p;
}

// Trace process names: role[i], GPU and the degrees that shape the replica. An F role has no replicas of its
// own (its work runs inside its A replica's iterations), so an A replica names the F half it is paired with.
std::vector<std::string> SessionImpl::replica_names() const {
  const RoleSpec* ffn = nullptr;
  for (const auto& rc : cluster_.roles)
    if (rc.spec->kind == RoleKind::kFfn) ffn = rc.spec;
  std::vector<std::string> names;
  for (const auto& rc : cluster_.roles) {
    const Parallelism& p = rc.spec->parallelism;
    std::string shape = " tp" + std::to_string(p.tp_attn) + (p.dp_attn > 1 ? " dp" + std::to_string(p.dp_attn) : "") +
                        (p.ep_ffn > 1 ? " ep" + std::to_string(p.ep_ffn) : "") + (p.pp > 1 ? " pp" + std::to_string(p.pp) : "");
    if (rc.spec->kind == RoleKind::kAttention && ffn)
      shape += " + " + ffn->name + " " + ffn->gpu.name + " tp" + std::to_string(ffn->parallelism.tp_ffn) +
               (ffn->parallelism.ep_ffn > 1 ? " ep" + std::to_string(ffn->parallelism.ep_ffn) : "");
    for (std::size_t i = 0; i < rc.replicas.size(); ++i)
      names.push_back(rc.spec->name + "[" + std::to_string(i) + "] " + rc.spec->gpu.name + shape);
  }
  return names;
}

std::string SessionImpl::chrome_trace_json() const {
  return servesim::chrome_trace_json(pool_, *metrics_, replica_names());
}

}  // namespace servesim
