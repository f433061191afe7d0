// Pipeline parallelism in the replica: up to pp batches in flight, stage-end events chained with one p2p hop,
// requests in flight never scheduled twice, progress committed when a batch leaves the last stage.
#include <algorithm>
#include <map>

#include <catch2/catch.hpp>

#include "core/execution/replica.h"

using namespace servesim;

namespace {

/// Prices a batch as `stages` equal stages of `per_token_ns` x tokens each, plus fixed host and hop times.
/// With `serial` the same total is reported as one stage: the model before pipelining.
struct StageCost : CostModel {
  int stages = 4;
  bool serial = false;
  SimTime per_token_ns = 100'000;
  SimTime fixed_stage_ns = 0;
  SimTime host_ns = 0;
  SimTime hop_ns = 0;
  BatchCost price(const BatchShape& s) override {
    BatchCost c;
    const SimTime stage = fixed_stage_ns + per_token_ns * s.num_tokens;
    c.by_family[static_cast<int>(OpFamily::kGemm)] = stages * stage;
    c.by_family[static_cast<int>(OpFamily::kPipelineP2p)] = (stages - 1) * hop_ns;
    c.by_family[static_cast<int>(OpFamily::kOverhead)] = host_ns;
    for (SimTime t : c.by_family) c.total += t;
    split_pipeline(c, serial ? 1 : stages, 0);
    return c;
  }
  int pipeline_stages() const override { return serial ? 1 : stages; }
  PriceSource source(OpFamily) const override { return PriceSource::kRoofline; }
  std::string describe() const override { return "synthetic stages"; }
};

struct Span {
  SimTime start, end;
  SimTime full_depth;  // the batch's total cost: its latency through an empty pipeline
};

struct Recorder : ReplicaObserver {
  std::vector<SimTime> token_times;
  std::map<const Request*, std::vector<Span>> batches_of;  // every batch each request was in
  std::vector<Span> spans;
  int max_in_flight = 0;
  int finished = 0;
  void on_iteration(const Replica& rep, const Batch& b, SimTime start, SimTime end, const BatchCost& c) override {
    spans.push_back({start, end, c.total});
    for (const ScheduledItem& it : b.items) batches_of[it.req].push_back({start, end, c.total});
    max_in_flight = std::max(max_in_flight, rep.batches_in_flight());
  }
  void on_token(const Request&, SimTime now) override { token_times.push_back(now); }
  void on_finished(Simulator&, Request&) override { ++finished; }
};

EngineOptions decode_engine() {
  EngineOptions e;
  e.max_num_batched_tokens = 64;  // four 16-token prompts per batch: the burst spreads over micro-batches
  e.max_num_seqs = 256;
  e.enable_chunked_prefill = false;
  e.enforce_eager = true;
  e.block_size = 16;
  e.kv_watermark = 0.0;
  return e;
}

struct Run {
  Recorder obs;
  std::vector<Request> reqs;
  SimTime window_start = 0, window_end = 0;  // every request decoding: after the last first token, before a finish
  std::int64_t window_tokens = 0;
  std::int64_t busy = 0, iterations = 0, blocks_left = 0;
};

void run_burst(StageCost& cost, int n, int output, Run& out, bool host_overlaps = false) {
  EngineOptions e = decode_engine();
  e.host.overlaps_pipeline = host_overlaps;
  ClusterCounters counters;
  Replica rep(0, 0, e, 100'000, &cost, &counters, &out.obs);
  Simulator sim;
  out.reqs.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    out.reqs[i].id = i;
    out.reqs[i].prompt_tokens = 16;
    out.reqs[i].output_tokens = output;
    rep.enqueue(sim, &out.reqs[i]);
  }
  sim.run(10'000'000);
  SimTime last_first = 0, first_finish = kTimeInfinity;
  for (const Request& r : out.reqs) {
    REQUIRE(r.state == RequestState::kFinished);
    last_first = std::max(last_first, r.first_token);
    first_finish = std::min(first_finish, r.finished);
  }
  out.window_start = last_first;
  out.window_end = first_finish;
  for (SimTime t : out.obs.token_times)
    if (t > out.window_start && t <= out.window_end) ++out.window_tokens;
  out.busy = rep.busy_time();
  out.iterations = rep.iterations();
  out.blocks_left = rep.kv().used_blocks();
}

double window_rate(const Run& r) {
  return static_cast<double>(r.window_tokens) / static_cast<double>(r.window_end - r.window_start);
}

}  // namespace

TEST_CASE("a pp=4 replica decodes about 4x the tokens per second of the serial model at full-depth TPOT",
          "[execution][pipeline]") {
  StageCost pipelined, serial;
  serial.serial = true;
  Run p, s;
  // 48 requests: the serial model admits them all within its 64-token budget, so both runs reach a window
  // where every request decodes.
  run_burst(pipelined, 48, 300, p);
  run_burst(serial, 48, 300, s);
  REQUIRE(p.window_end > p.window_start);
  REQUIRE(s.window_end > s.window_start);
  const double ratio = window_rate(p) / window_rate(s);
  INFO("pipelined " << window_rate(p) * 1e9 << " tok/s, serial " << window_rate(s) * 1e9 << " tok/s");
  CHECK(ratio > 3.5);  // 3.69 measured: uneven micro-batches leave a few bubbles
  CHECK(ratio < 4.01);
  CHECK(p.obs.max_in_flight == 4);
  CHECK(s.obs.max_in_flight == 1);

  // Per-token latency of a steady-state batch is its full pipeline depth (its total cost), not a stage time.
  double latency = 0, depth = 0;
  int n = 0;
  for (const Span& sp : p.obs.spans)
    if (sp.start >= p.window_start && sp.end <= p.window_end) {
      latency += static_cast<double>(sp.end - sp.start);
      depth += static_cast<double>(sp.full_depth);
      ++n;
    }
  REQUIRE(n > 100);
  CHECK(latency / depth == Approx(1.0).epsilon(0.1));

  // Busy time is stage-0 occupancy: a quarter of the summed batch depths, never more than the makespan.
  SimTime depths = 0, makespan = 0;
  for (const Span& sp : p.obs.spans) {
    depths += sp.full_depth;
    makespan = std::max(makespan, sp.end);
  }
  CHECK(p.busy * 4 == depths);
  CHECK(p.busy <= makespan);
  CHECK(p.blocks_left == 0);
  CHECK(p.obs.finished == 48);
}

TEST_CASE("a request is never in two batches in flight at once", "[execution][pipeline]") {
  StageCost cost;
  cost.fixed_stage_ns = 300'000;
  cost.hop_ns = 20'000;
  cost.host_ns = 50'000;
  Run p;
  run_burst(cost, 40, 50, p);
  CHECK(p.obs.max_in_flight == 4);
  std::int64_t batches = 0;
  for (auto& [req, spans] : p.obs.batches_of) {
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
    for (std::size_t i = 1; i < spans.size(); ++i) {
      INFO("request " << req->id << " batch " << i);
      CHECK(spans[i].start >= spans[i - 1].end);
    }
    batches += static_cast<std::int64_t>(spans.size());
    CHECK(static_cast<std::int64_t>(spans.size()) == req->output_tokens);  // one prompt batch, then one per token
  }
  CHECK(batches == 40 * 50);
  CHECK(p.blocks_left == 0);
}

TEST_CASE("with one request a pp=4 iteration period is the full pipeline depth", "[execution][pipeline]") {
  StageCost cost;
  cost.per_token_ns = 0;
  cost.fixed_stage_ns = 1'000'000;
  cost.hop_ns = 50'000;
  cost.host_ns = 100'000;
  const SimTime depth = 100'000 + 4 * 1'000'000 + 3 * 50'000;
  Run p;
  run_burst(cost, 1, 6, p);
  REQUIRE(p.obs.token_times.size() == 6);
  for (std::size_t i = 0; i < p.obs.token_times.size(); ++i)
    CHECK(p.obs.token_times[i] == static_cast<SimTime>(i + 1) * depth);
  CHECK(p.obs.max_in_flight == 1);
  CHECK(p.iterations == 6);
  CHECK(p.busy == 6 * (100'000 + 1'000'000));  // host + stage 0 per iteration
}

TEST_CASE("a host that overlaps the pipeline lets stage 0 take a batch per stage time instead of per host plus stage",
          "[execution][pipeline]") {
  StageCost cost;
  cost.per_token_ns = 0;
  cost.fixed_stage_ns = 1'000'000;
  cost.host_ns = 1'000'000;
  Run on_stage0, overlapped;
  run_burst(cost, 48, 200, on_stage0);
  run_burst(cost, 48, 200, overlapped, true);
  REQUIRE(overlapped.window_end > overlapped.window_start);
  // Batches form one host time apart (1 ms) instead of one host plus stage-0 time (2 ms).
  auto min_gap = [](const Run& r) {
    std::vector<SimTime> starts;
    for (const Span& sp : r.obs.spans) starts.push_back(sp.start);
    std::sort(starts.begin(), starts.end());
    SimTime g = kTimeInfinity;
    for (std::size_t i = 1; i < starts.size(); ++i) g = std::min(g, starts[i] - starts[i - 1]);
    return g;
  };
  CHECK(min_gap(overlapped) == 1'000'000);
  CHECK(min_gap(on_stage0) == 2'000'000);
  // Measured 9594 against 8000 tok/s: what 3 micro-batches per round give, max(3 x 1 ms, 5 ms depth) = 5 ms
  // against 3 x 2 ms = 6 ms. At most 4 batches in flight over 5 serial resources caps the gain below 2x.
  const double ratio = window_rate(overlapped) / window_rate(on_stage0);
  INFO("overlapped " << window_rate(overlapped) * 1e9 << " tok/s, on stage 0 " << window_rate(on_stage0) * 1e9);
  CHECK(ratio > 1.15);
  CHECK(ratio < 2.01);
  CHECK(overlapped.busy == overlapped.iterations * 1'000'000);  // stage-0 kernels only
  CHECK(on_stage0.busy == on_stage0.iterations * 2'000'000);
  CHECK(overlapped.blocks_left == 0);

  // A lone request still waits the full depth per token.
  Run one;
  run_burst(cost, 1, 3, one, true);
  CHECK(one.obs.token_times == std::vector<SimTime>{5'000'000, 10'000'000, 15'000'000});
}
