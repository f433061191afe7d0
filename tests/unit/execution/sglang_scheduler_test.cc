#include "core/execution/sglang_scheduler.h"

#include <catch2/catch.hpp>

#include "core/execution/scheduler_registry.h"
#include "tests/scheduler_support.h"

using namespace servesim;

namespace {

using test::complete;
using test::limits;
using test::make_request;

}  // namespace

TEST_CASE("sglang scheduler: a waiting prompt pauses the running decodes", "[execution][scheduler]") {
  ClusterCounters counters;
  SglangScheduler s(&counters);
  KvBlockManager kv(1000, 16, 0.0);
  Request a = make_request(0, 8), b = make_request(1, 8);
  s.add(&a);
  Batch batch;
  s.schedule(limits(100, 16, true), kv, batch);
  complete(batch);
  s.add(&b);
  batch.clear();
  // a is decoding, b waits: this step is b's prompt alone (vLLM would add a's decode token).
  s.schedule(limits(100, 16, true), kv, batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &b);
  CHECK(batch.items[0].num_tokens == 8);
  CHECK(batch.items[0].prefill);
  complete(batch);
  batch.clear();
  // Nothing waits any more: both decode together, one token each.
  s.schedule(limits(100, 16, true), kv, batch);
  REQUIRE(batch.items.size() == 2);
  CHECK(batch.items[0].req == &a);
  CHECK(batch.items[1].req == &b);
  CHECK(batch.items[0].num_tokens == 1);
  CHECK_FALSE(batch.items[1].prefill);
  CHECK(counters.running == 2);
  CHECK(counters.waiting == 0);
}

TEST_CASE("sglang scheduler: a chunked prompt continues first and the prefill budget bounds each batch",
          "[execution][scheduler]") {
  ClusterCounters counters;
  SglangScheduler s(&counters);
  KvBlockManager kv(1000, 16, 0.0);
  Request a = make_request(0, 60), b = make_request(1, 60), c = make_request(2, 60);
  s.add(&a);
  s.add(&b);
  s.add(&c);
  Batch batch;
  s.schedule(limits(100, 16, true), kv, batch);
  REQUIRE(batch.items.size() == 2);  // a whole, b chunked at the 40 tokens left
  CHECK(batch.items[0].num_tokens == 60);
  CHECK(batch.items[1].req == &b);
  CHECK(batch.items[1].num_tokens == 40);
  complete(batch);
  batch.clear();
  // b's remaining 20 first, then c; a (decoding) waits since prompts are still pending.
  s.schedule(limits(100, 16, true), kv, batch);
  REQUIRE(batch.items.size() == 2);
  CHECK(batch.items[0].req == &b);
  CHECK(batch.items[0].num_tokens == 20);
  CHECK(batch.items[1].req == &c);
  CHECK(batch.items[1].num_tokens == 60);
  for (const auto& it : batch.items) CHECK(it.req != &a);
  complete(batch);
  batch.clear();
  s.schedule(limits(100, 16, true), kv, batch);
  CHECK(batch.items.size() == 3);  // all three decode
}

TEST_CASE("sglang scheduler: without chunking a prompt that does not fit the budget waits", "[execution][scheduler]") {
  ClusterCounters counters;
  SglangScheduler s(&counters);
  KvBlockManager kv(1000, 16, 0.0);
  Request a = make_request(0, 60), b = make_request(1, 60);
  s.add(&a);
  s.add(&b);
  Batch batch;
  s.schedule(limits(100, 16, false), kv, batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &a);
  CHECK(s.num_waiting() == 1);
}

TEST_CASE("sglang scheduler: max_prefill_tokens bounds a prefill batch as SGLang 0.5's PrefillAdder counts it",
          "[execution][scheduler]") {
  ClusterCounters counters;
  SglangScheduler s(&counters);
  KvBlockManager kv(1000, 16, 0.0);
  // AIConfigurator's rule for isl 1024: --max-prefill-tokens 1024 + 1500. The first prompt leaves 1500, the second
  // (1024 < 1500) leaves 476, the third (1024 >= 476) waits for the next prefill batch.
  Request a = make_request(0, 1024), b = make_request(1, 1024), c = make_request(2, 1024);
  s.add(&a);
  s.add(&b);
  s.add(&c);
  SchedulerLimits lim = limits(8192, 16, true);
  lim.max_prefill_tokens = 2524;
  Batch batch;
  s.schedule(lim, kv, batch);
  REQUIRE(batch.items.size() == 2);
  CHECK(batch.items[0].req == &a);
  CHECK(batch.items[1].req == &b);
  CHECK(s.num_waiting() == 1);
  complete(batch);
  batch.clear();
  // c goes next, alone; a and b pause (prefill-first).
  s.schedule(lim, kv, batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &c);
  complete(batch);
  batch.clear();

  // A batch's first prompt always goes in, whatever its length; nothing follows once the bound is spent.
  SglangScheduler s2(&counters);
  KvBlockManager kv2(1000, 16, 0.0);
  Request d = make_request(3, 3000), e = make_request(4, 8);
  s2.add(&d);
  s2.add(&e);
  s2.schedule(lim, kv2, batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &d);
  CHECK(batch.items[0].num_tokens == 3000);
  CHECK(s2.num_waiting() == 1);
  batch.clear();

  // Without the bound (0) the token budget alone decides: all three 1024-token prompts in one batch.
  SglangScheduler s3(&counters);
  KvBlockManager kv3(1000, 16, 0.0);
  Request f = make_request(5, 1024), g = make_request(6, 1024), h = make_request(7, 1024);
  s3.add(&f);
  s3.add(&g);
  s3.add(&h);
  s3.schedule(limits(8192, 16, true), kv3, batch);
  CHECK(batch.items.size() == 3);
}

TEST_CASE("sglang scheduler: the running cap bounds admissions", "[execution][scheduler]") {
  ClusterCounters counters;
  SglangScheduler s(&counters);
  KvBlockManager kv(1000, 16, 0.0);
  Request a = make_request(0, 8), b = make_request(1, 8);
  s.add(&a);
  s.add(&b);
  Batch batch;
  s.schedule(limits(100, 1, true), kv, batch);
  REQUIRE(batch.items.size() == 1);
  complete(batch);
  batch.clear();
  // b cannot be admitted (cap 1), so the step decodes a instead of idling.
  s.schedule(limits(100, 1, true), kv, batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &a);
  CHECK_FALSE(batch.items[0].prefill);
}

TEST_CASE("sglang scheduler: a decode step short of KV retracts the newest running request", "[execution][scheduler]") {
  ClusterCounters counters;
  SglangScheduler s(&counters);
  KvBlockManager kv(3, 16, 0.0);  // three blocks of 16 tokens
  // Bookings of 15 + 8 tokens each fit 48 (23, then 23 < 25 left), so both are admitted; their KV does not.
  Request a = make_request(0, 15, 8), b = make_request(1, 15, 8);
  s.add(&a);
  s.add(&b);
  Batch batch;
  s.schedule(limits(100, 16, true), kv, batch);
  REQUIRE(batch.items.size() == 2);
  complete(batch);
  batch.clear();
  s.schedule(limits(100, 16, true), kv, batch);  // token 16 still fits each one's first block
  REQUIRE(batch.items.size() == 2);
  complete(batch);
  batch.clear();
  // Each needs a second block for token 17; only one is free: b (newest) is retracted for a.
  s.schedule(limits(100, 16, true), kv, batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &a);
  REQUIRE(batch.preempted.size() == 1);
  CHECK(batch.preempted[0] == &b);
  CHECK(b.num_computed == 0);
  CHECK(b.preemptions == 1);
  CHECK(s.num_waiting() == 1);
  CHECK(counters.waiting == 1);
  CHECK(counters.running == 1);
}

TEST_CASE("sglang scheduler: requests in a batch still in the pipeline are skipped", "[execution][scheduler]") {
  ClusterCounters counters;
  SglangScheduler s(&counters);
  KvBlockManager kv(1000, 16, 0.0);
  Request a = make_request(0, 8), b = make_request(1, 8);
  s.add(&a);
  s.add(&b);
  Batch batch;
  s.schedule(limits(100, 16, true), kv, batch);
  complete(batch);
  a.in_flight = true;
  batch.clear();
  s.schedule(limits(100, 16, true), kv, batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &b);
}

TEST_CASE("sglang scheduler is selectable by name", "[execution][scheduler]") {
  SchedulerKind k = SchedulerKind::kVllmV1;
  REQUIRE(scheduler_from_string("sglang", k));
  CHECK(k == SchedulerKind::kSglang);
  CHECK(std::string(scheduler_to_string(k)) == "sglang");
  ClusterCounters counters;
  CHECK(dynamic_cast<SglangScheduler*>(make_scheduler(k, &counters).get()) != nullptr);
}

TEST_CASE("sglang scheduler: a prompt is admitted only while it and its whole output fit the unbooked KV",
          "[execution][scheduler]") {
  ClusterCounters counters;
  SglangScheduler s(&counters);
  KvBlockManager kv(100, 16, 0.0);  // 1,600 tokens
  // Each books 500 prompt + 300 output tokens: the first leaves 800, the second needs 800 and waits (SGLang's
  // check is total >= remaining), although its prompt alone would fit.
  Request a = make_request(0, 500, 300), b = make_request(1, 500, 300);
  s.add(&a);
  s.add(&b);
  Batch batch;
  s.schedule(limits(4096, 16, true), kv, batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &a);
  CHECK(s.num_waiting() == 1);
  complete(batch);
  batch.clear();
  // Running, a books its remaining 299 outputs x new_token_ratio 0.7 (209.3): 1,600 - 512 KV - 209.3 = 878.7 >= 800.
  s.schedule(limits(4096, 16, true), kv, batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &b);
  CHECK(s.num_waiting() == 0);
}

TEST_CASE("sglang scheduler: an output longer than the pool is clipped so an idle replica still admits it",
          "[execution][scheduler]") {
  ClusterCounters counters;
  SglangScheduler s(&counters);
  KvBlockManager kv(10, 16, 0.0);          // 160 tokens
  Request a = make_request(0, 100, 1000);  // SGLang clips max_new_tokens to 160 - 1 - 100
  s.add(&a);
  Batch batch;
  s.schedule(limits(4096, 16, true), kv, batch);
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &a);
}
