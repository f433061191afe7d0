#pragma once
/// What the clients send: how many requests, when (arrival process) and how long (length model).
#include <cstdint>
#include <string>

#include "core/spec/json_reader.h"

namespace servesim {

class ResourceCatalog;

/// One token-length distribution.
struct LengthDist {
  enum class Kind { kFixed, kUniform, kLognormal, kCdf };
  Kind kind = Kind::kFixed;
  std::int64_t value = 128;    ///< fixed length
  std::int64_t min = 1;        ///< lower clamp (uniform: lower bound)
  std::int64_t max = 1 << 20;  ///< upper clamp (uniform: upper bound)
  double median = 0;           ///< lognormal median
  double sigma = 0;            ///< lognormal shape (std of log length)
  std::string cdf;             ///< name in profiles/workloads (kCdf)
  double scale = 1.0;          ///< kCdf: multiply the sampled value (e.g. a prompt share of total tokens)
};

/// Where prompt and output lengths come from.
struct LengthSpec {
  enum class Source { kDistributions, kTrace, kCdfTotal };
  Source source = Source::kDistributions;
  LengthDist input;                ///< kDistributions
  LengthDist output;               ///< kDistributions
  std::string trace;               ///< kTrace: profiles/traces name with input/output columns
  bool shuffle = true;             ///< kTrace: sample rows at random (false = file order, wrapping)
  std::string cdf;                 ///< kCdfTotal: total-token CDF name
  double output_fraction = 0.25;   ///< kCdfTotal: share of the total that is output
};

/// When requests are sent.
struct ArrivalSpec {
  enum class Process { kPoisson, kClosedLoop, kTrace };
  Process process = Process::kPoisson;
  double request_rate = 1.0;   ///< requests/s (kPoisson); infinity = all at t=0
  double burstiness = 1.0;     ///< gamma shape: 1 = Poisson, < 1 burstier (vllm bench --burstiness)
  int max_concurrency = 0;     ///< client-side cap on in-flight requests (0 = none); closed loop: N clients
  double think_time_ms = 0;    ///< closed loop: pause between a response and the client's next request
  std::string trace;           ///< kTrace: profiles/traces name with arrival_ms
  double time_scale = 1.0;     ///< kTrace: multiply trace inter-arrival gaps (0.5 = twice the rate)
  double trace_rate = 0;       ///< kTrace: if > 0, re-time to this mean rate instead of time_scale
};

/// The workload section of a scenario.
struct WorkloadSpec {
  std::int64_t num_requests = 0;  ///< 0 with a trace = every row of the trace
  ArrivalSpec arrival;
  LengthSpec lengths;
  bool lengths_from_arrival_trace = false;  ///< trace arrivals with no length section use the trace's lengths
  /// Which output token the client times as the first (TTFT; TPOT and ITL then count from it).
  /// kFirstToken: the first streamed token whatever it holds (vllm bench serve). kFirstText: the first token
  /// that carries text (AIPerf and genai-perf disregard empty responses), i.e. after the model's
  /// response_preamble_tokens.
  enum class TtftFrom { kFirstToken, kFirstText };
  TtftFrom ttft_from = TtftFrom::kFirstToken;
};

/// Reads "workload".
void read_workload(const Json& j, const std::string& path, const ResourceCatalog& catalog, WorkloadSpec& w,
                   Errors& errors);

}  // namespace servesim
