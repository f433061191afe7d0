#include "core/execution/trtllm_scheduler.h"

#include <catch2/catch.hpp>

#include "core/execution/scheduler_registry.h"
#include "core/execution/vllm_v1_scheduler.h"
#include "tests/scheduler_support.h"

using namespace servesim;

namespace {

using test::complete;
using test::limits;
using test::make_request;

/// Runs one step and applies its progress; finished requests free their blocks as the replica does.
void step(Scheduler& s, KvBlockManager& kv, const SchedulerLimits& lim, Batch& batch) {
  batch.clear();
  s.schedule(lim, kv, batch);
  complete(batch);
  for (const ScheduledItem& it : batch.items)
    if (it.req->generated == it.req->output_tokens) {
      it.req->state = RequestState::kFinished;
      kv.free(*it.req);
    }
  s.remove_finished();
}

}  // namespace

TEST_CASE("trtllm scheduler: a request starts only when its whole length fits the unbooked blocks",
          "[execution][scheduler]") {
  ClusterCounters counters;
  TrtllmScheduler s(&counters);
  // 10 blocks of 16 tokens. Each request needs 32 prompt + 64 output = 96 tokens = 6 blocks at the end, but only
  // 2 blocks (its prompt) at admission: vLLM admits both, TRT-LLM books 6 for the first and keeps the second out.
  KvBlockManager kv(10, 16, 0.0);
  Request a = make_request(0, 32, 64), b = make_request(1, 32, 64);
  s.add(&a);
  s.add(&b);
  Batch batch;
  step(s, kv, limits(1000, 16, true), batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &a);
  CHECK(kv.used_blocks() == 2);     // allocated: a's prompt only
  CHECK(s.booked_blocks(kv) == 4);  // the rest of a's length stays promised
  CHECK(counters.waiting == 1);
  // b waits until a finishes; no step preempts anything and a is never slowed.
  int steps = 0;
  while (a.state != RequestState::kFinished) {
    step(s, kv, limits(1000, 16, true), batch);
    CHECK(batch.preempted.empty());
    REQUIRE(batch.items.size() == 1);
    CHECK(batch.items[0].req == &a);
    ++steps;
  }
  CHECK(steps == 63);  // after its prompt's step, one step for each of its 63 other tokens
  // The step after a left: b's prompt.
  step(s, kv, limits(1000, 16, true), batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &b);
  CHECK(batch.items[0].num_tokens == 32);

  // The same two requests under vLLM's policy both start and one is preempted on the way.
  ClusterCounters c2;
  VllmV1Scheduler v(&c2);
  KvBlockManager kv2(10, 16, 0.0);
  Request x = make_request(0, 32, 64), y = make_request(1, 32, 64);
  v.add(&x);
  v.add(&y);
  int preempted = 0;
  for (int i = 0; i < 300 && v.has_work(); ++i) {
    step(v, kv2, limits(1000, 16, true), batch);
    preempted += static_cast<int>(batch.preempted.size());
  }
  CHECK(preempted > 0);
}

TEST_CASE("trtllm scheduler: admission is first come first served and stops at the first that does not fit",
          "[execution][scheduler]") {
  ClusterCounters counters;
  TrtllmScheduler s(&counters);
  KvBlockManager kv(10, 16, 0.0);
  // a books 4 blocks, b would need 8 (does not fit the 6 left), c needs 2 and would fit, but waits behind b.
  Request a = make_request(0, 32, 32), b = make_request(1, 64, 64), c = make_request(2, 16, 16);
  s.add(&a);
  s.add(&b);
  s.add(&c);
  Batch batch;
  s.schedule(limits(1000, 16, true), kv, batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &a);
  CHECK(s.num_waiting() == 2);
}

TEST_CASE("trtllm scheduler: decodes first, then prompts - a cut prompt is cut to whole blocks",
          "[execution][scheduler]") {
  ClusterCounters counters;
  TrtllmScheduler s(&counters);
  KvBlockManager kv(1000, 16, 0.0);
  Request a = make_request(0, 8, 100);
  s.add(&a);
  Batch batch;
  s.schedule(limits(100, 16, true), kv, batch);
  complete(batch);
  Request b = make_request(1, 60), c = make_request(2, 60), d = make_request(3, 3);
  s.add(&b);
  s.add(&c);
  s.add(&d);
  batch.clear();
  // Budget 100: a's token (1), b whole (60), c cut from 39 tokens left to 32 (two 16-token blocks), then d (3)
  // fits whole in the 7 left.
  s.schedule(limits(100, 16, true), kv, batch);
  REQUIRE(batch.items.size() == 4);
  CHECK(batch.items[0].req == &a);
  CHECK_FALSE(batch.items[0].prefill);
  CHECK(batch.items[1].num_tokens == 60);
  CHECK(batch.items[2].req == &c);
  CHECK(batch.items[2].num_tokens == 32);
  CHECK(batch.items[3].req == &d);
  CHECK(batch.items[3].num_tokens == 3);
  complete(batch);
  batch.clear();
  // Without chunking, the first prompt that does not fit the budget ends the step's prompts.
  ClusterCounters c2;
  TrtllmScheduler t(&c2);
  KvBlockManager kv2(1000, 16, 0.0);
  Request e = make_request(4, 60), f = make_request(5, 60), g = make_request(6, 3);
  t.add(&e);
  t.add(&f);
  t.add(&g);
  t.schedule(limits(100, 16, false), kv2, batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &e);
  CHECK(t.num_waiting() == 2);
}

TEST_CASE("trtllm scheduler: a prefill role books the prompt and one token", "[execution][scheduler]") {
  ClusterCounters counters;
  TrtllmScheduler s(&counters);
  s.set_handoff_after_prefill(true);
  // Two 64-token prompts with 1000-token outputs: a decode role could not hold either, a prefill role holds both.
  KvBlockManager kv(10, 16, 0.0);
  Request a = make_request(0, 64, 1000), b = make_request(1, 64, 1000);
  s.add(&a);
  s.add(&b);
  Batch batch;
  s.schedule(limits(1000, 16, true), kv, batch);
  CHECK(batch.items.size() == 2);
  CHECK(s.booked_blocks(kv) == 2);  // 65 tokens = 5 blocks each, 4 allocated
  CHECK(s.whole_request_blocks(kv, a) == 5);  // what a decode role would find unbooked before pulling its KV

  SchedulerKind k;
  REQUIRE(scheduler_from_string("trtllm", k));
  CHECK(std::string(scheduler_to_string(k)) == "trtllm");
}

TEST_CASE("kv block manager: a request's peak blocks count the sliding window under its largest step",
          "[execution][kv]") {
  KvBlockManager kv(1000, 16, 0.0);
  CHECK(kv.peak_blocks(100, 1) == 7);
  KvLayout l;
  l.full_groups = 1;
  l.sliding_groups = 1;
  l.window = 128;
  l.max_step_tokens = 8192;
  kv.set_layout(l);
  // 1000 tokens: 63 full-group blocks; the sliding group holds the window (127 keys) + the step + one block.
  CHECK(kv.peak_blocks(1000, 1) == 63 + 9);
  CHECK(kv.peak_blocks(1000, 512) == 63 + 41);
  CHECK(kv.peak_blocks(64, 1) == 4 + 4);  // shorter than the window: every block in both groups
}
