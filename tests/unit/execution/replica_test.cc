#include "core/execution/replica.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>

using namespace servesim;

namespace {

/// Every iteration takes exactly 1 ms, whatever its shape.
struct FixedCost : CostModel {
  std::vector<BatchShape> shapes;
  BatchCost price(const BatchShape& shape) override {
    shapes.push_back(shape);
    BatchCost c;
    c.by_family[static_cast<int>(OpFamily::kOverhead)] = kNsPerMs;
    c.total = kNsPerMs;
    return c;
  }
  PriceSource source(OpFamily) const override { return PriceSource::kRoofline; }
  std::string describe() const override { return "fixed 1 ms"; }
};

struct Recorder : ReplicaObserver {
  std::vector<SimTime> token_times;
  std::vector<std::int64_t> blocks_after;  // KV blocks in use at the end of each iteration
  std::vector<std::pair<SimTime, SimTime>> spans;
  int finished = 0;
  void on_iteration(const Replica& replica, const Batch&, SimTime start, SimTime end, const BatchCost&) override {
    blocks_after.push_back(replica.kv().used_blocks());
    spans.emplace_back(start, end);
  }
  void on_token(const Request&, SimTime now) override { token_times.push_back(now); }
  void on_finished(Simulator&, Request&) override { ++finished; }
};

/// Request a (prompt 10, output 3) starts on an idle replica whose iterations take 1 ms each; b (prompt 20, output
/// 2) arrives while a's first iteration runs. The caller runs the simulation on.
struct MidRunArrival {
  EngineOptions e;
  FixedCost cost;
  Recorder obs;
  ClusterCounters counters;
  Simulator sim;
  Request a, b;
  Replica rep;
  explicit MidRunArrival(std::optional<bool> async_scheduling, const std::string& backend = "vllm")
      : e(options(async_scheduling, backend)), rep(0, 0, e, 100, &cost, &counters, &obs) {
    a.prompt_tokens = 10;
    a.output_tokens = 3;
    b.id = 1;
    b.prompt_tokens = 20;
    b.output_tokens = 2;
    rep.enqueue(sim, &a);  // idle replica: scheduled at once
    sim.run(1);            // start event: iteration 1 (a's prompt) runs 0..1 ms
    rep.enqueue(sim, &b);
  }
  static EngineOptions options(std::optional<bool> async_scheduling, const std::string& backend) {
    EngineOptions o;
    o.backend = backend;
    o.enable_chunked_prefill = true;
    o.async_scheduling = async_scheduling;
    o.max_num_batched_tokens = 64;
    o.enforce_eager = true;
    o.kv_watermark = 0.0;
    return o;
  }
};

}  // namespace

TEST_CASE("one request of prompt 100 and output 5 under a 64-token budget takes 2 prefill chunks then 4 decodes",
          "[execution][replica]") {
  EngineOptions e;
  e.max_num_batched_tokens = 64;
  e.max_num_seqs = 8;
  e.enable_chunked_prefill = true;
  e.enforce_eager = true;
  e.block_size = 16;
  e.kv_watermark = 0.0;
  FixedCost cost;
  Recorder obs;
  ClusterCounters counters;
  Replica rep(0, 0, e, 100, &cost, &counters, &obs);
  Simulator sim;
  Request r;
  r.prompt_tokens = 100;
  r.output_tokens = 5;
  rep.enqueue(sim, &r);
  CHECK(rep.outstanding_tokens() == 105);
  sim.run(1000);

  REQUIRE(cost.shapes.size() == 6);
  REQUIRE(cost.shapes[0].prefills.size() == 1);
  CHECK(cost.shapes[0].prefills[0].q == 64);
  CHECK(cost.shapes[0].num_sampled == 0);
  REQUIRE(cost.shapes[1].prefills.size() == 1);
  CHECK(cost.shapes[1].prefills[0].q == 36);
  CHECK(cost.shapes[1].prefills[0].context == 100);
  CHECK(cost.shapes[1].num_sampled == 1);
  for (int i = 2; i < 6; ++i) {
    CHECK(cost.shapes[i].num_decode == 1);
    CHECK(cost.shapes[i].prefills.empty());
    CHECK(cost.shapes[i].decode_context_sum == 100 + i - 1);  // token 101 attends to 101 keys, ...
  }

  CHECK(r.first_scheduled == 0);
  CHECK(r.first_token == 2 * kNsPerMs);  // TTFT: two iterations
  CHECK(obs.token_times == std::vector<SimTime>{2 * kNsPerMs, 3 * kNsPerMs, 4 * kNsPerMs, 5 * kNsPerMs, 6 * kNsPerMs});
  CHECK(r.finished == 6 * kNsPerMs);
  CHECK(r.last_token == 6 * kNsPerMs);
  CHECK(r.generated == r.output_tokens);
  CHECK(r.state == RequestState::kFinished);
  CHECK(r.prefill_chunks == 2);
  CHECK(r.preemptions == 0);
  CHECK(obs.finished == 1);

  CHECK(obs.blocks_after == std::vector<std::int64_t>{4, 7, 7, 7, 7, 0});  // 64 tokens, 100..104, freed
  CHECK(r.num_blocks == 0);
  CHECK(rep.kv().used_blocks() == 0);
  CHECK(rep.outstanding_tokens() == 0);
  CHECK(rep.iterations() == 6);
  CHECK(rep.busy_time() == 6 * kNsPerMs);
  CHECK(counters.running == 0);
  CHECK(counters.waiting == 0);
  CHECK(sim.idle());
  CHECK(sim.now() == 6 * kNsPerMs);
}

TEST_CASE("a second request arriving mid-run joins the running batch at the next iteration (synchronous scheduling)",
          "[execution][replica]") {
  MidRunArrival t(false);  // b arrives while busy at t=0: waits for the iteration to end
  t.sim.run(1000);
  // t=1: a's first token; iteration 2 = a decode + b prompt; t=2: a token 2, b token 1; t=3: both finish.
  CHECK(t.a.first_token == 1 * kNsPerMs);
  CHECK(t.b.first_scheduled == 1 * kNsPerMs);
  CHECK(t.b.first_token == 2 * kNsPerMs);
  CHECK(t.a.finished == 3 * kNsPerMs);
  CHECK(t.b.finished == 3 * kNsPerMs);
  CHECK(t.rep.iterations() == 3);
  CHECK(t.rep.kv().used_blocks() == 0);
  CHECK(t.obs.finished == 2);
}

TEST_CASE("with async scheduling a request arriving mid-run joins the batch after the next one",
          "[execution][replica]") {
  // vLLM --async-scheduling: batch 2 was formed when batch 1 launched, so b (arriving during batch 1) waits for 3.
  // TRT-LLM's and SGLang's overlap schedulers, on by default, form batches the same way.
  const auto [async_scheduling, backend] = GENERATE(table<std::optional<bool>, std::string>(
      {{true, "vllm"}, {std::nullopt, "vllm"}, {std::nullopt, "trtllm"}, {std::nullopt, "sglang"}}));
  INFO(backend);
  MidRunArrival t(async_scheduling, backend);
  CHECK(t.counters.waiting == 0);  // held, not yet seen by the scheduler
  CHECK(t.rep.outstanding_tokens() == 10 + 3 + 20 + 2);
  t.sim.run(1000);
  // t=1: a's first token, batch 2 = a's decode alone; t=2: batch 3 = a's last decode + b's prompt.
  CHECK(t.a.first_scheduled == 0);
  CHECK(t.a.first_token == 1 * kNsPerMs);
  CHECK(t.b.first_scheduled == 2 * kNsPerMs);
  CHECK(t.b.first_token == 3 * kNsPerMs);
  CHECK(t.a.finished == 3 * kNsPerMs);
  CHECK(t.b.finished == 4 * kNsPerMs);
  CHECK(t.rep.iterations() == 4);
  CHECK(t.rep.kv().used_blocks() == 0);
  CHECK(t.obs.finished == 2);
  CHECK(t.sim.idle());
}

TEST_CASE("a request held for a later batch keeps its TRT-LLM booking", "[execution][replica][trtllm]") {
  // A decode replica under TRT-LLM's scheduler and overlap: b's KV lands while a's batch runs, so b waits for the
  // batch after the next. Its whole length stays booked meanwhile, or a KV pull or an admission could take the
  // blocks it will decode into.
  EngineOptions e = MidRunArrival::options(std::nullopt, "trtllm");  // eager, 64-token budget, no watermark
  e.scheduler = "trtllm";
  FixedCost cost;
  Recorder obs;
  ClusterCounters counters;
  Replica rep(0, 0, e, 100, &cost, &counters, &obs);
  Simulator sim;
  Request a, b;
  a.prompt_tokens = 10;
  a.output_tokens = 3;
  b.id = 1;
  b.prompt_tokens = 32;
  b.output_tokens = 64;
  rep.enqueue(sim, &a);
  sim.run(1);  // a's prompt runs 0..1 ms
  const std::int64_t before = rep.booked_blocks();
  REQUIRE(rep.kv_mutable().allocate(b, b.prompt_tokens + 1, false));  // its KV arrived from a prefill role
  rep.enqueue_prefilled(sim, &b);
  // 96 tokens in blocks of 16 = 6 blocks, 3 of them allocated with the prompt: 3 more booked while b is held.
  CHECK(rep.booked_blocks() == before + 3);
  CHECK(rep.scheduler().booked_blocks(rep.kv()) == before);
  sim.run(1000);
  CHECK(b.generated == b.output_tokens);
  CHECK(rep.booked_blocks() == 0);
}
