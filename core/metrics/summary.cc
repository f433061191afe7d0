#include "core/metrics/summary.h"

#include <cstdio>

#include "core/metrics/percentile.h"

namespace servesim {

namespace {

void put_stats(nlohmann::ordered_json& j, const char* metric, const Stats& s) {
  const std::string m = metric;
  j["mean_" + m + "_ms"] = s.mean;
  j["median_" + m + "_ms"] = s.median;
  j["std_" + m + "_ms"] = s.std;
  j["p50_" + m + "_ms"] = s.p50;
  j["p90_" + m + "_ms"] = s.p90;
  j["p95_" + m + "_ms"] = s.p95;
  j["p99_" + m + "_ms"] = s.p99;
}

}  // namespace

nlohmann::ordered_json build_summary(const std::vector<Request>& pool, const MetricsCollector& m,
                                     const SummaryContext& ctx) {
  std::vector<double> ttft, tpot, e2el, queue, transfer, transfer_wait;
  std::int64_t completed = 0, failed = 0, in_tokens = 0, out_tokens = 0, good = 0, preemptions = 0;
  for (const Request& r : pool) {
    if (r.state == RequestState::kFailed) {
      ++failed;
      continue;
    }
    if (r.state != RequestState::kFinished) continue;
    ++completed;
    in_tokens += r.prompt_tokens;
    out_tokens += r.generated;
    preemptions += r.preemptions;
    const double t_ttft = as_ms(r.first_token - r.arrival);
    const double t_e2el = as_ms(r.finished - r.arrival);
    ttft.push_back(t_ttft);
    e2el.push_back(t_e2el);
    queue.push_back(as_ms(r.first_scheduled - r.arrival));
    if (r.transfer_end >= 0) {
      transfer.push_back(as_ms(r.transfer_end - r.transfer_start));
      transfer_wait.push_back(as_ms(r.transfer_start - r.prefill_done));
    }
    double t_tpot = 0;
    if (r.generated > r.first_text_token) {
      t_tpot = (t_e2el - t_ttft) / (r.generated - r.first_text_token);
      tpot.push_back(t_tpot);
    }
    const SlaSpec& sla = ctx.sla;
    if ((sla.ttft_ms <= 0 || t_ttft <= sla.ttft_ms) && (sla.tpot_ms <= 0 || t_tpot <= sla.tpot_ms) &&
        (sla.e2el_ms <= 0 || t_e2el <= sla.e2el_ms))
      ++good;
  }
  std::vector<std::pair<double, std::int64_t>> itl;
  itl.reserve(m.itl_runs().size());
  for (const auto& [ns, n] : m.itl_runs()) itl.emplace_back(as_ms(ns), n);

  const double dur = as_sec(ctx.makespan);
  const double per_s = dur > 0 ? 1.0 / dur : 0.0;
  nlohmann::ordered_json j;
  j["completed"] = completed;
  j["failed"] = failed;
  j["duration_s"] = dur;
  if (ctx.max_concurrency > 0) j["max_concurrency"] = ctx.max_concurrency;
  if (ctx.request_rate > 0) j["request_rate"] = ctx.request_rate;
  if (ctx.ttft_token > 0) {
    j["ttft_from"] = "first_text";
    j["ttft_token"] = ctx.ttft_token;
  }
  j["total_input_tokens"] = in_tokens;
  j["total_output_tokens"] = out_tokens;
  j["request_throughput"] = static_cast<double>(completed) * per_s;
  if (ctx.sla.any()) j["request_goodput"] = static_cast<double>(good) * per_s;
  j["output_throughput"] = static_cast<double>(out_tokens) * per_s;
  j["total_token_throughput"] = static_cast<double>(in_tokens + out_tokens) * per_s;
  put_stats(j, "ttft", compute_stats(ttft));
  put_stats(j, "tpot", compute_stats(tpot));
  put_stats(j, "itl", compute_weighted_stats(itl));
  put_stats(j, "e2el", compute_stats(e2el));
  put_stats(j, "queue", compute_stats(queue));
  if (!transfer.empty()) {
    // P/D only: KV transfer time, and the wait for decode-side blocks before it (back-pressure).
    put_stats(j, "kv_transfer", compute_stats(transfer));
    put_stats(j, "kv_transfer_wait", compute_stats(transfer_wait));
  }
  j["preemptions"] = preemptions;
  j["makespan_s"] = dur;
  j["num_gpus"] = ctx.num_gpus;
  j["usd_per_hour"] = ctx.usd_per_hour;
  const double usd = ctx.usd_per_hour * dur / 3600.0;
  j["usd_per_mtok_output"] = out_tokens > 0 ? usd / (static_cast<double>(out_tokens) / 1e6) : 0.0;
  j["output_throughput_per_gpu"] = ctx.num_gpus > 0 ? static_cast<double>(out_tokens) * per_s / ctx.num_gpus : 0.0;
  return j;
}

std::string format_benchmark_block(const nlohmann::ordered_json& s) {
  std::string out;
  char line[128];
  auto row = [&](const char* label, double v, int prec) {
    std::snprintf(line, sizeof line, "%-40s%-10.*f\n", label, prec, v);
    out += line;
  };
  auto rowi = [&](const char* label, long long v) {
    std::snprintf(line, sizeof line, "%-40s%-10lld\n", label, v);
    out += line;
  };
  auto head = [&](const char* title, char fill) {
    const int w = 50, t = static_cast<int>(std::string(title).size()) + 2;
    const int left = (w - t) / 2, right = w - t - left;
    out += std::string(left, fill) + " " + title + " " + std::string(right, fill) + "\n";
  };
  head("Serving Benchmark Result", '=');
  rowi("Successful requests:", s["completed"].get<long long>());
  if (s["failed"].get<long long>() > 0) rowi("Failed requests:", s["failed"].get<long long>());
  if (s.contains("max_concurrency")) rowi("Maximum request concurrency:", s["max_concurrency"].get<long long>());
  row("Benchmark duration (s):", s["duration_s"].get<double>(), 2);
  rowi("Total input tokens:", s["total_input_tokens"].get<long long>());
  rowi("Total generated tokens:", s["total_output_tokens"].get<long long>());
  row("Request throughput (req/s):", s["request_throughput"].get<double>(), 2);
  if (s.contains("request_goodput")) row("Request goodput (req/s):", s["request_goodput"].get<double>(), 2);
  row("Output token throughput (tok/s):", s["output_throughput"].get<double>(), 2);
  row("Total Token throughput (tok/s):", s["total_token_throughput"].get<double>(), 2);
  const struct {
    const char* title;
    const char* key;
    const char* label;
  } sections[] = {{"Time to First Token", "ttft", "TTFT"},
                  {"Time per Output Token (excl. 1st token)", "tpot", "TPOT"},
                  {"Inter-token Latency", "itl", "ITL"},
                  {"End-to-end Latency", "e2el", "E2EL"}};
  for (const auto& sec : sections) {
    head(sec.title, '-');
    const std::string k = sec.key, l = sec.label;
    row(("Mean " + l + " (ms):").c_str(), s["mean_" + k + "_ms"].get<double>(), 2);
    row(("Median " + l + " (ms):").c_str(), s["median_" + k + "_ms"].get<double>(), 2);
    row(("P99 " + l + " (ms):").c_str(), s["p99_" + k + "_ms"].get<double>(), 2);
  }
  head("Simulation", '-');
  rowi("Preemptions:", s["preemptions"].get<long long>());
  rowi("GPUs:", s["num_gpus"].get<long long>());
  row("Cost ($/Mtok output):", s["usd_per_mtok_output"].get<double>(), 3);
  out += std::string(50, '=') + "\n";
  return out;
}

}  // namespace servesim
