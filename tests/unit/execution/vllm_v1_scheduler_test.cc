#include "core/execution/vllm_v1_scheduler.h"

#include <catch2/catch.hpp>

#include "tests/scheduler_support.h"

using namespace servesim;

namespace {

using test::complete;
using test::limits;
using test::make_request;

std::int64_t batch_tokens(const Batch& b) {
  std::int64_t n = 0;
  for (const auto& it : b.items) n += it.num_tokens;
  return n;
}

}  // namespace

TEST_CASE("running requests are scheduled before waiting ones", "[execution][scheduler]") {
  ClusterCounters counters;
  VllmV1Scheduler s(&counters);
  KvBlockManager kv(1000, 16, 0.0);
  Request a = make_request(0, 8), b = make_request(1, 8), c = make_request(2, 8);
  s.add(&a);
  Batch batch;
  s.schedule(limits(10, 16, false), kv, batch);
  REQUIRE(batch.items.size() == 1);  // b (added later) is not there yet
  complete(batch);
  s.add(&b);
  s.add(&c);
  batch.clear();
  // Budget 10: a's decode (1) first, then b's whole prompt (8); c does not fit the remaining 1.
  s.schedule(limits(10, 16, false), kv, batch);
  REQUIRE(batch.items.size() == 2);
  CHECK(batch.items[0].req == &a);
  CHECK(batch.items[0].num_tokens == 1);
  CHECK(batch.items[1].req == &b);
  CHECK(batch.items[1].num_tokens == 8);
  CHECK(s.num_running() == 2);
  CHECK(s.num_waiting() == 1);
  CHECK(counters.running == 2);
  CHECK(counters.waiting == 1);
}

TEST_CASE("a batch never exceeds the token budget and fills it exactly when work allows", "[execution][scheduler]") {
  ClusterCounters counters;
  VllmV1Scheduler s(&counters);
  KvBlockManager kv(1000, 16, 0.0);
  Request a = make_request(0, 60), b = make_request(1, 60), c = make_request(2, 60);
  s.add(&a);
  s.add(&b);
  s.add(&c);
  Batch batch;
  s.schedule(limits(100, 16, true), kv, batch);
  REQUIRE(batch.items.size() == 2);
  CHECK(batch.items[0].num_tokens == 60);
  CHECK(batch.items[1].num_tokens == 40);
  CHECK(batch_tokens(batch) == 100);
  CHECK(s.num_waiting() == 1);  // c got nothing: the budget is spent
  for (int step = 0; step < 20; ++step) {
    complete(batch);
    batch.clear();
    s.schedule(limits(100, 16, true), kv, batch);
    CHECK(batch_tokens(batch) <= 100);
  }
}

TEST_CASE("max_num_seqs caps the running set", "[execution][scheduler]") {
  ClusterCounters counters;
  VllmV1Scheduler s(&counters);
  KvBlockManager kv(1000, 16, 0.0);
  Request r[3] = {make_request(0, 10), make_request(1, 10), make_request(2, 10)};
  for (auto& x : r) s.add(&x);
  Batch batch;
  s.schedule(limits(1000, 2, true), kv, batch);
  CHECK(batch.items.size() == 2);
  CHECK(s.num_running() == 2);
  CHECK(s.num_waiting() == 1);
  CHECK(r[2].num_blocks == 0);
  complete(batch);
  batch.clear();
  s.schedule(limits(1000, 2, true), kv, batch);
  CHECK(batch.items.size() == 2);  // two decodes; the third still waits
  CHECK(s.num_running() == 2);
}

TEST_CASE("without chunking a prompt larger than the remaining budget waits, with chunking it is split",
          "[execution][scheduler]") {
  SECTION("no chunking: whole prompts only, FCFS head-of-line") {
    ClusterCounters counters;
    VllmV1Scheduler s(&counters);
    KvBlockManager kv(1000, 16, 0.0);
    Request a = make_request(0, 60), b = make_request(1, 50), c = make_request(2, 10);
    s.add(&a);
    s.add(&b);
    s.add(&c);
    Batch batch;
    s.schedule(limits(100, 16, false), kv, batch);
    REQUIRE(batch.items.size() == 1);
    CHECK(batch.items[0].req == &a);
    CHECK(batch.items[0].num_tokens == 60);
    CHECK(b.num_blocks == 0);
    CHECK(c.num_blocks == 0);  // c would fit but waits behind b
    CHECK(s.num_waiting() == 2);
    complete(batch);
    batch.clear();
    s.schedule(limits(100, 16, false), kv, batch);
    REQUIRE(batch.items.size() == 3);  // a decodes, b and c whole: 1 + 50 + 10
    CHECK(batch.items[1].num_tokens == 50);
    CHECK(batch.items[2].num_tokens == 10);
  }
  SECTION("chunking: the second prompt gets exactly the remaining budget, then its rest") {
    ClusterCounters counters;
    VllmV1Scheduler s(&counters);
    KvBlockManager kv(1000, 16, 0.0);
    Request a = make_request(0, 60), b = make_request(1, 50);
    s.add(&a);
    s.add(&b);
    Batch batch;
    s.schedule(limits(100, 16, true), kv, batch);
    REQUIRE(batch.items.size() == 2);
    CHECK(batch.items[1].req == &b);
    CHECK(batch.items[1].num_tokens == 40);
    CHECK(batch.items[1].prefill);
    CHECK(b.num_blocks == 3);  // 40 tokens
    complete(batch);
    CHECK(b.generated == 0);
    batch.clear();
    s.schedule(limits(100, 16, true), kv, batch);
    REQUIRE(batch.items.size() == 2);
    CHECK(batch.items[0].num_tokens == 1);
    CHECK_FALSE(batch.items[0].prefill);
    CHECK(batch.items[1].req == &b);
    CHECK(batch.items[1].num_tokens == 10);
    CHECK(batch.items[1].prefill);
    complete(batch);
    CHECK(b.generated == 1);
    CHECK(b.num_computed == 50);
  }
}

TEST_CASE("long_prefill_token_threshold caps each request's chunk", "[execution][scheduler]") {
  ClusterCounters counters;
  VllmV1Scheduler s(&counters);
  KvBlockManager kv(1000, 16, 0.0);
  Request a = make_request(0, 100), b = make_request(1, 50), c = make_request(2, 20), d = make_request(3, 40);
  for (Request* r : {&a, &b, &c, &d}) s.add(r);
  Batch batch;
  s.schedule(limits(100, 16, true, 32), kv, batch);
  REQUIRE(batch.items.size() == 4);
  CHECK(batch.items[0].num_tokens == 32);
  CHECK(batch.items[1].num_tokens == 32);
  CHECK(batch.items[2].num_tokens == 20);
  CHECK(batch.items[3].num_tokens == 16);  // min(40, 32, remaining budget 16)
  complete(batch);
  batch.clear();
  s.schedule(limits(100, 16, true, 32), kv, batch);
  REQUIRE(batch.items.size() == 4);
  CHECK(batch.items[0].num_tokens == 32);  // a: 32 of its remaining 68
  CHECK(batch.items[1].num_tokens == 18);  // b: its last 18
  CHECK(batch.items[2].num_tokens == 1);   // c decodes
  CHECK(batch.items[3].num_tokens == 24);  // d: its last 24 (budget left 49)
}

TEST_CASE("when blocks run out the newest running request is preempted and nothing is admitted that step",
          "[execution][scheduler]") {
  ClusterCounters counters;
  VllmV1Scheduler s(&counters);
  KvBlockManager kv(5, 4, 0.0);  // 5 blocks of 4 tokens
  Request a = make_request(0, 8), b = make_request(1, 3), c = make_request(2, 8), d = make_request(3, 2);
  for (Request* r : {&a, &b, &c, &d}) s.add(r);
  Batch batch;
  s.schedule(limits(100, 3, true), kv, batch);  // a, b, c admitted (2 + 1 + 2 blocks); d over max_num_seqs
  REQUIRE(batch.items.size() == 3);
  REQUIRE(kv.free_blocks() == 0);
  complete(batch);  // a: 9 tokens, b: 4, c: 9

  batch.clear();
  // Threshold 4 would let a readmitted c take one block: the rule, not the pool, keeps it out.
  s.schedule(limits(100, 3, true, 4), kv, batch);
  REQUIRE(batch.preempted.size() == 1);
  CHECK(batch.preempted[0] == &c);
  CHECK(c.num_blocks == 0);
  CHECK(c.num_computed == 0);
  CHECK(c.preemptions == 1);
  CHECK(c.state == RequestState::kWaiting);
  CHECK(a.preemptions == 0);
  CHECK(b.preemptions == 0);
  REQUIRE(batch.items.size() == 2);
  CHECK(batch.items[0].req == &a);
  CHECK(batch.items[0].num_tokens == 1);
  CHECK_FALSE(batch.items[0].prefill);
  CHECK(batch.items[1].req == &b);
  CHECK_FALSE(batch.items[1].prefill);
  CHECK(a.num_blocks == 3);
  CHECK(kv.free_blocks() == 1);  // c's 2 back, 1 taken by a
  CHECK(s.num_running() == 2);
  CHECK(s.num_waiting() == 2);
  CHECK(counters.running == 2);
  CHECK(counters.waiting == 2);

  // Once a and b finish, c (at the front) is readmitted before d and recomputes prompt + generated.
  complete(batch);
  for (Request* r : {&a, &b}) {
    kv.free(*r);
    r->state = RequestState::kFinished;
  }
  s.remove_finished();
  CHECK(counters.running == 0);
  batch.clear();
  s.schedule(limits(100, 3, true), kv, batch);
  REQUIRE(batch.items.size() == 2);
  CHECK(batch.items[0].req == &c);
  CHECK(batch.items[0].num_tokens == 9);
  CHECK(batch.items[0].prefill);
  CHECK(batch.items[1].req == &d);
  CHECK(batch.items[1].num_tokens == 2);
  CHECK(kv.free_blocks() == 5 - 3 - 1);
}

TEST_CASE("a running request that cannot grow and is itself the newest preempts itself", "[execution][scheduler]") {
  ClusterCounters counters;
  VllmV1Scheduler s(&counters);
  KvBlockManager kv(2, 4, 0.0);
  Request a = make_request(0, 4), b = make_request(1, 4);
  s.add(&a);
  s.add(&b);
  Batch batch;
  s.schedule(limits(100, 8, true), kv, batch);
  REQUIRE(batch.items.size() == 2);
  complete(batch);  // each now has 5 tokens: a second block needed, none free
  batch.clear();
  s.schedule(limits(100, 8, true), kv, batch);
  // a needs a block: b (newest) is preempted, a grows.
  REQUIRE(batch.items.size() == 1);
  CHECK(batch.items[0].req == &a);
  REQUIRE(batch.preempted.size() == 1);
  CHECK(batch.preempted[0] == &b);
  CHECK(a.num_blocks == 2);
  CHECK(b.num_blocks == 0);
  complete(batch);
  // a alone needs a third block: it is the only (newest) running request and preempts itself.
  for (int i = 0; i < 3; ++i) {
    batch.clear();
    s.schedule(limits(100, 8, true), kv, batch);
    complete(batch);
  }
  CHECK(a.num_tokens() == 9);  // 9 tokens need a third block
  batch.clear();
  s.schedule(limits(100, 8, true), kv, batch);
  CHECK(batch.items.empty());
  REQUIRE(batch.preempted.size() == 1);
  CHECK(batch.preempted[0] == &a);
  CHECK(a.preemptions == 1);
  CHECK(kv.free_blocks() == 2);
  CHECK(s.num_running() == 0);
  CHECK(s.num_waiting() == 2);
  CHECK(s.has_work());
}
