#include "core/metrics/summary.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace servesim;

namespace {

Request finished(SimTime arrival, SimTime scheduled, SimTime first, SimTime done, int prompt, int generated) {
  Request r;
  r.arrival = arrival;
  r.first_scheduled = scheduled;
  r.first_token = first;
  r.last_token = done;
  r.finished = done;
  r.prompt_tokens = prompt;
  r.output_tokens = generated;
  r.generated = generated;
  r.state = RequestState::kFinished;
  return r;
}

/// Feeds `count` inter-token latencies of `gap` to the collector, as replicas do per token.
void feed_itl(MetricsCollector& m, SimTime start, SimTime gap, int count) {
  Request r;
  r.generated = 1;
  r.last_token = start;
  for (int i = 0; i < count; ++i) {
    m.on_token(r, r.last_token + gap);
    r.last_token += gap;
    ++r.generated;
  }
}

/// Three finished requests, one failed, one never sent; by hand:
///   R0: TTFT 100, E2EL 500, 5 tokens -> TPOT 400/4 = 100, queue 0
///   R1: TTFT 200, E2EL 200, 1 token  -> no TPOT,            queue 10
///   R2: TTFT 300, E2EL 800, 11 tokens -> TPOT 500/10 = 50, queue 50, 2 preemptions
std::vector<Request> pool() {
  std::vector<Request> p;
  p.push_back(finished(0, 0, from_ms(100), from_ms(500), 100, 5));
  p.push_back(finished(from_ms(1000), from_ms(1010), from_ms(1200), from_ms(1200), 50, 1));
  p.push_back(finished(from_ms(2000), from_ms(2050), from_ms(2300), from_ms(2800), 200, 11));
  p.back().preemptions = 2;
  Request failed;
  failed.arrival = from_ms(3000);
  failed.state = RequestState::kFailed;
  failed.prompt_tokens = 999999;
  failed.generated = 3;
  p.push_back(failed);
  Request pending;
  pending.prompt_tokens = 77;
  p.push_back(pending);
  return p;
}

SummaryContext context(bool with_sla) {
  SummaryContext c;
  c.makespan = from_sec(4);
  c.num_gpus = 2;
  c.usd_per_hour = 7.2;
  c.max_concurrency = 8;
  if (with_sla) {
    c.sla.ttft_ms = 250;
    c.sla.tpot_ms = 80;
  }
  return c;
}

}  // namespace

TEST_CASE("the summary of a hand-built pool has the hand-computed counts and throughputs", "[metrics][summary]") {
  MetricsCollector m(OutputSpec{}, false);
  const auto s = build_summary(pool(), m, context(false));
  CHECK(s["completed"] == 3);
  CHECK(s["failed"] == 1);
  CHECK(s["duration_s"].get<double>() == 4.0);
  CHECK(s["max_concurrency"] == 8);
  CHECK_FALSE(s.contains("request_rate"));
  CHECK_FALSE(s.contains("request_goodput"));  // no SLA, no goodput
  CHECK(s["total_input_tokens"] == 350);      // failed and pending requests are not counted
  CHECK(s["total_output_tokens"] == 17);
  CHECK(s["request_throughput"].get<double>() == Approx(0.75));
  CHECK(s["output_throughput"].get<double>() == Approx(4.25));
  CHECK(s["total_token_throughput"].get<double>() == Approx(91.75));
  CHECK(s["preemptions"] == 2);
  CHECK(s["num_gpus"] == 2);
  // $7.2/h for 4 s = $0.008 for 17 output tokens.
  CHECK(s["usd_per_mtok_output"].get<double>() == Approx(0.008 / 17e-6));
  CHECK(s["output_throughput_per_gpu"].get<double>() == Approx(2.125));
}

TEST_CASE("the summary latencies equal the hand-computed TTFT, TPOT, E2EL and queue stats", "[metrics][summary]") {
  MetricsCollector m(OutputSpec{}, false);
  const auto s = build_summary(pool(), m, context(false));
  CHECK(s["mean_ttft_ms"].get<double>() == Approx(200.0));
  CHECK(s["median_ttft_ms"].get<double>() == Approx(200.0));
  CHECK(s["std_ttft_ms"].get<double>() == Approx(81.64965809277261));  // sqrt(20000 / 3)
  CHECK(s["p99_ttft_ms"].get<double>() == Approx(298.0));
  // TPOT excludes the 1-token request: mean of {100, 50}, not of {100, 0, 50}.
  CHECK(s["mean_tpot_ms"].get<double>() == Approx(75.0));
  CHECK(s["median_tpot_ms"].get<double>() == Approx(75.0));
  CHECK(s["p90_tpot_ms"].get<double>() == Approx(95.0));
  CHECK(s["p99_tpot_ms"].get<double>() == Approx(99.5));
  CHECK(s["std_tpot_ms"].get<double>() == Approx(25.0));
  CHECK(s["mean_e2el_ms"].get<double>() == Approx(500.0));
  CHECK(s["p90_e2el_ms"].get<double>() == Approx(740.0));  // index 1.8 of [200, 500, 800]
  CHECK(s["mean_queue_ms"].get<double>() == Approx(20.0));
  CHECK(s["median_queue_ms"].get<double>() == Approx(10.0));
  // No ITLs were reported: zeros.
  CHECK(s["mean_itl_ms"].get<double>() == 0.0);
}

TEST_CASE("the summary's ITL stats come from the collector's token reports", "[metrics][summary]") {
  MetricsCollector m(OutputSpec{}, false);
  feed_itl(m, from_ms(100), from_ms(100), 4);    // R0's 4 gaps of 100 ms
  feed_itl(m, from_ms(2300), from_ms(50), 10);   // R2's 10 gaps of 50 ms
  Request first;                                 // a first token has no inter-token latency
  m.on_token(first, from_ms(5));
  const auto s = build_summary(pool(), m, context(false));
  CHECK(s["mean_itl_ms"].get<double>() == Approx(900.0 / 14));
  CHECK(s["median_itl_ms"].get<double>() == Approx(50.0));  // index 6.5 of ten 50s then four 100s
  CHECK(s["p90_itl_ms"].get<double>() == Approx(100.0));
  CHECK(s["p99_itl_ms"].get<double>() == Approx(100.0));
}

TEST_CASE("goodput counts the requests meeting every SLA objective", "[metrics][summary]") {
  MetricsCollector m(OutputSpec{}, false);
  // TTFT <= 250 and TPOT <= 80: R0 misses TPOT (100), R2 misses TTFT (300), R1 meets both (no TPOT).
  const auto s = build_summary(pool(), m, context(true));
  CHECK(s["request_goodput"].get<double>() == Approx(0.25));
  SummaryContext loose = context(true);
  loose.sla.tpot_ms = 100;  // R0 now meets it exactly
  CHECK(build_summary(pool(), m, loose)["request_goodput"].get<double>() == Approx(0.5));
  SummaryContext e2el = context(false);
  e2el.sla.e2el_ms = 600;  // R0 (500) and R1 (200)
  CHECK(build_summary(pool(), m, e2el)["request_goodput"].get<double>() == Approx(0.5));
}

TEST_CASE("an empty run gives zeros, not NaN", "[metrics][summary]") {
  MetricsCollector m(OutputSpec{}, false);
  SummaryContext c;
  const auto s = build_summary({}, m, c);
  CHECK(s["completed"] == 0);
  CHECK(s["request_throughput"].get<double>() == 0.0);
  CHECK(s["mean_ttft_ms"].get<double>() == 0.0);
  CHECK(s["usd_per_mtok_output"].get<double>() == 0.0);
  CHECK(s["output_throughput_per_gpu"].get<double>() == 0.0);
  CHECK_FALSE(s.contains("max_concurrency"));
}

TEST_CASE("the benchmark block has vLLM's layout and the summary's numbers", "[metrics][summary]") {
  MetricsCollector m(OutputSpec{}, false);
  feed_itl(m, 0, from_ms(100), 4);
  feed_itl(m, 0, from_ms(50), 10);
  const std::string b = format_benchmark_block(build_summary(pool(), m, context(true)));
  CHECK_THAT(b, Catch::StartsWith("============ Serving Benchmark Result ============\n"));
  CHECK_THAT(b, Catch::EndsWith("\n" + std::string(50, '=') + "\n"));
  // Labels are padded to 40 columns, values left-aligned in 10.
  CHECK_THAT(b, Catch::Contains("Successful requests:" + std::string(20, ' ') + "3         \n"));
  CHECK_THAT(b, Catch::Contains("Failed requests:" + std::string(24, ' ') + "1         \n"));
  CHECK_THAT(b, Catch::Contains("Maximum request concurrency:" + std::string(12, ' ') + "8         \n"));
  CHECK_THAT(b, Catch::Contains("Benchmark duration (s):" + std::string(17, ' ') + "4.00      \n"));
  CHECK_THAT(b, Catch::Contains("Total input tokens:" + std::string(21, ' ') + "350"));
  CHECK_THAT(b, Catch::Contains("Total generated tokens:" + std::string(17, ' ') + "17"));
  CHECK_THAT(b, Catch::Contains("Request throughput (req/s):" + std::string(13, ' ') + "0.75"));
  CHECK_THAT(b, Catch::Contains("Request goodput (req/s):" + std::string(16, ' ') + "0.25"));
  CHECK_THAT(b, Catch::Contains("Output token throughput (tok/s):" + std::string(8, ' ') + "4.25"));
  CHECK_THAT(b, Catch::Contains("Total Token throughput (tok/s):" + std::string(9, ' ') + "91.75"));
  CHECK_THAT(b, Catch::Contains(std::string(14, '-') + " Time to First Token " + std::string(15, '-') + "\n"));
  CHECK_THAT(b, Catch::Contains("Mean TTFT (ms):" + std::string(25, ' ') + "200.00    \n"));
  CHECK_THAT(b, Catch::Contains("P99 TTFT (ms):" + std::string(26, ' ') + "298.00"));
  CHECK_THAT(b, Catch::Contains("Mean TPOT (ms):" + std::string(25, ' ') + "75.00"));
  CHECK_THAT(b, Catch::Contains("Mean ITL (ms):" + std::string(26, ' ') + "64.29"));
  CHECK_THAT(b, Catch::Contains("Median E2EL (ms):" + std::string(23, ' ') + "500.00"));
  CHECK_THAT(b, Catch::Contains("Preemptions:" + std::string(28, ' ') + "2"));
  CHECK_THAT(b, Catch::Contains("Cost ($/Mtok output):" + std::string(19, ' ') + "470.588"));
  // Without failures or a cap, those lines are left out.
  SummaryContext plain;
  plain.makespan = from_sec(1);
  std::vector<Request> ok = pool();
  ok.resize(3);
  const std::string p = format_benchmark_block(build_summary(ok, m, plain));
  CHECK_THAT(p, !Catch::Contains("Failed requests:"));
  CHECK_THAT(p, !Catch::Contains("Maximum request concurrency:"));
  CHECK_THAT(p, !Catch::Contains("goodput"));
}
