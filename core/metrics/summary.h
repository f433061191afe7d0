#pragma once
/// The run's summary in `vllm bench serve` keys, and the familiar "Serving Benchmark Result" block.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metrics/metrics_collector.h"

namespace servesim {

/// What the summary needs besides the requests and the collector.
struct SummaryContext {
  SimTime makespan = 0;          ///< time of the last completion (benchmark duration)
  long num_gpus = 0;
  double usd_per_hour = 0;       ///< whole deployment
  int max_concurrency = 0;       ///< client cap, reported like vLLM (0 = none)
  double request_rate = 0;       ///< offered rate (0 = not open-loop)
  SlaSpec sla;
  /// The output token clients time as their first when they time the first text (workload.ttft_from
  /// "first_text"): 1 + the model's response preamble; 0 = the first token (vllm bench serve), not reported.
  int ttft_token = 0;
};

/// Summary keys: completed, failed, duration_s, totals, throughputs, goodput, {mean,median,std,p50,p90,p95,p99}
/// of ttft/tpot/itl/e2el/queue in ms, preemptions, cost.
nlohmann::ordered_json build_summary(const std::vector<Request>& pool, const MetricsCollector& m,
                                     const SummaryContext& ctx);

/// The CLI's "Serving Benchmark Result" block (same labels and layout as vLLM's).
std::string format_benchmark_block(const nlohmann::ordered_json& summary);

}  // namespace servesim
