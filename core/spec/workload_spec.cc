#include "core/spec/workload_spec.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/spec/resource_catalog.h"

namespace servesim {

namespace {

constexpr std::int64_t kMaxRequests = 10'000'000;
constexpr std::int64_t kMaxLen = 1 << 22;
/// The most simulated seconds a workload's arrivals may be meant to span: a tenth of the run's horizon
/// (kMaxSimTime), so a Poisson process's random gaps stay inside it (a bursty one's rare long gap may reach it, and
/// the run stops there).
constexpr double kMaxArrivalSpanS = 1e8;
/// Bursty arrivals: the least gamma shape (vllm bench serve --burstiness) taken.
constexpr double kMinBurstiness = 1e-3;
/// Trace arrivals re-timed to a mean rate: the least rate (req/s) taken.
constexpr double kMinTraceRate = 1e-3;
/// Trace arrivals: the largest factor on the bundled traces' gaps (about an hour each: 1e5 x makes 11 years).
constexpr double kMaxTimeScale = 1e5;

bool check_listed(const ResourceCatalog& catalog, const std::string& folder, const std::string& name,
                  const std::string& path, Errors& errors) {
  for (const auto& n : catalog.list(folder))
    if (n == name) return true;
  errors.add(path, "unknown " + std::string(folder == "traces" ? "trace" : "length CDF") + " \"" +
                       (name.size() > 64 ? name.substr(0, 64) : name) + "\"; bundled: " + catalog.list_joined(folder));
  return false;
}

void read_length_dist(const Json& j, const std::string& path, const ResourceCatalog& catalog, LengthDist& d,
                      Errors& errors) {
  ObjectReader r(j, path, errors);
  if (!r.valid()) return;
  std::string kind;
  if (!r.get_enum("dist", kind, {"fixed", "uniform", "lognormal", "cdf"}, true)) {
    r.ignore({"value", "min", "max", "median", "sigma", "cdf", "scale"});  // report the bad "dist", not its fields
    return;
  }
  if (kind == "fixed") {
    d.kind = LengthDist::Kind::kFixed;
    r.get_int("value", d.value, 1, kMaxLen, true);
    return;
  }
  r.get_int("min", d.min, 1, kMaxLen, kind == "uniform");
  r.get_int("max", d.max, 1, kMaxLen, kind == "uniform");
  if (d.min > d.max) errors.add(r.path("max"), "must be at least min (" + std::to_string(d.min) + ")");
  if (kind == "uniform") {
    d.kind = LengthDist::Kind::kUniform;
  } else if (kind == "lognormal") {
    d.kind = LengthDist::Kind::kLognormal;
    r.get_number("median", d.median, 1, static_cast<double>(kMaxLen), true);
    r.get_number("sigma", d.sigma, 0, 5, true);
  } else {
    d.kind = LengthDist::Kind::kCdf;
    if (r.get_string("cdf", d.cdf, true, 128)) check_listed(catalog, "workloads", d.cdf, r.path("cdf"), errors);
    r.get_number("scale", d.scale, 0, 1000, false, true);
  }
}

void read_lengths(const Json& j, const std::string& path, const ResourceCatalog& catalog, LengthSpec& l,
                  Errors& errors) {
  ObjectReader r(j, path, errors);
  if (!r.valid()) return;
  std::string source;
  if (!r.get_enum("source", source, {"trace", "cdf_total"}, true)) {
    r.ignore({"trace", "order", "cdf", "output_fraction"});  // report the bad "source", not its fields
    return;
  }
  if (source == "trace") {
    l.source = LengthSpec::Source::kTrace;
    if (r.get_string("trace", l.trace, true, 128)) check_listed(catalog, "traces", l.trace, r.path("trace"), errors);
    std::string order = "shuffle";
    r.get_enum("order", order, {"shuffle", "sequential"});
    l.shuffle = order == "shuffle";
  } else {
    l.source = LengthSpec::Source::kCdfTotal;
    if (r.get_string("cdf", l.cdf, true, 128)) check_listed(catalog, "workloads", l.cdf, r.path("cdf"), errors);
    r.get_number("output_fraction", l.output_fraction, 0, 1, false, true);
  }
}

void read_arrival(const Json& j, const std::string& path, const ResourceCatalog& catalog, ArrivalSpec& a,
                  Errors& errors) {
  ObjectReader r(j, path, errors);
  if (!r.valid()) return;
  std::string process;
  if (!r.get_enum("process", process, {"poisson", "closed_loop", "trace"}, true)) {
    // Report the bad "process", not its fields as unknown keys.
    r.ignore({"request_rate", "burstiness", "max_concurrency", "think_time_ms", "trace", "time_scale"});
    return;
  }
  r.get_int("max_concurrency", a.max_concurrency, 1, 1'000'000, process == "closed_loop");
  if (process == "poisson") {
    a.process = ArrivalSpec::Process::kPoisson;
    const Json* rate = r.raw("request_rate");
    if (rate && rate->is_string() && rate->get<std::string>() == "inf") {
      a.request_rate = std::numeric_limits<double>::infinity();
    } else {
      r.get_number("request_rate", a.request_rate, 0, 1e7, true, true);
    }
    r.get_number("burstiness", a.burstiness, kMinBurstiness, 1e3);
  } else if (process == "closed_loop") {
    a.process = ArrivalSpec::Process::kClosedLoop;
    r.get_number("think_time_ms", a.think_time_ms, 0, 1e9);
  } else {
    a.process = ArrivalSpec::Process::kTrace;
    if (r.get_string("trace", a.trace, true, 128)) check_listed(catalog, "traces", a.trace, r.path("trace"), errors);
    r.get_number("time_scale", a.time_scale, 0, kMaxTimeScale, false, true);
    // Its floor keeps the longest bundled trace (30,731 rows) inside kMaxArrivalSpanS when num_requests is not given.
    r.get_number("request_rate", a.trace_rate, kMinTraceRate, 1e7);
    if (r.has("time_scale") && r.has("request_rate"))
      errors.add(r.path("request_rate"), "give either time_scale or request_rate for a trace, not both");
  }
}

/// Arrivals meant to span more simulated time than a run reaches (kMaxArrivalSpanS): a request rate so low, or a
/// think time so long, that the run would only measure its own idle time (and past the horizon, overflow it).
void check_arrival_span(const WorkloadSpec& w, const std::string& path, Errors& errors) {
  const ArrivalSpec& a = w.arrival;
  const auto gaps = static_cast<double>(std::max<std::int64_t>(w.num_requests - 1, 0));
  auto refuse = [&](const std::string& key, double span_s, const char* advice) {
    std::ostringstream ss;
    ss << "with " << w.num_requests << " requests the arrivals would span about " << span_s
       << " s of simulated time, more than the " << kMaxArrivalSpanS << " s a run may; " << advice
       << " or send fewer requests";
    errors.add(path + "/" + key, ss.str());
  };
  // Poisson arrivals, or a trace re-timed to a mean rate (0: its own gaps); "inf" sends everything at once.
  const double rate = a.process == ArrivalSpec::Process::kPoisson ? a.request_rate
                      : a.process == ArrivalSpec::Process::kTrace ? a.trace_rate
                                                                  : 0;
  if (std::isfinite(rate) && rate > 0 && gaps / rate > kMaxArrivalSpanS)
    refuse("request_rate", gaps / rate, "raise it");
  if (a.process == ArrivalSpec::Process::kClosedLoop && a.max_concurrency > 0) {
    // Each client thinks once per request it sends.
    const double rounds = std::ceil(static_cast<double>(w.num_requests) / static_cast<double>(a.max_concurrency));
    if (rounds * a.think_time_ms / 1e3 > kMaxArrivalSpanS)
      refuse("think_time_ms", rounds * a.think_time_ms / 1e3, "shorten it");
  }
}

}  // namespace

void read_workload(const Json& j, const std::string& path, const ResourceCatalog& catalog, WorkloadSpec& w,
                   Errors& errors) {
  ObjectReader r(j, path, errors);
  if (!r.valid()) return;
  if (const Json* a = r.raw("arrival")) read_arrival(*a, r.path("arrival"), catalog, w.arrival, errors);
  else errors.add(r.path("arrival"), "is required, e.g. {\"process\": \"poisson\", \"request_rate\": 4}");
  const bool trace_arrivals = w.arrival.process == ArrivalSpec::Process::kTrace;
  r.get_int("num_requests", w.num_requests, 1, kMaxRequests, !trace_arrivals);
  check_arrival_span(w, r.path("arrival"), errors);
  std::string ttft_from = "first_token";
  if (r.get_enum("ttft_from", ttft_from, {"first_token", "first_text"}))
    w.ttft_from = ttft_from == "first_text" ? WorkloadSpec::TtftFrom::kFirstText : WorkloadSpec::TtftFrom::kFirstToken;

  const bool has_lengths = r.has("lengths");
  const bool has_dists = r.has("input_len") || r.has("output_len");
  if (has_lengths && has_dists) {
    errors.add(r.path("lengths"), "give either \"lengths\" or \"input_len\"/\"output_len\", not both");
  } else if (has_lengths) {
    read_lengths(*r.raw("lengths"), r.path("lengths"), catalog, w.lengths, errors);
  } else if (has_dists) {
    w.lengths.source = LengthSpec::Source::kDistributions;
    for (const char* k : {"input_len", "output_len"}) {
      if (const Json* d = r.raw(k))
        read_length_dist(*d, r.path(k), catalog, k[0] == 'i' ? w.lengths.input : w.lengths.output, errors);
      else
        errors.add(r.path(k), "is required with the other length, e.g. {\"dist\": \"fixed\", \"value\": 256}");
    }
  } else if (trace_arrivals) {
    w.lengths_from_arrival_trace = true;
    w.lengths.source = LengthSpec::Source::kTrace;
    w.lengths.trace = w.arrival.trace;
    w.lengths.shuffle = false;
  } else {
    errors.add(r.path("input_len"), "lengths are required: \"input_len\" and \"output_len\", or \"lengths\"");
  }
}

}  // namespace servesim
