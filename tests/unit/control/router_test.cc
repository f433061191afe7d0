#include "core/control/router.h"

#include <catch2/catch.hpp>

using namespace servesim;

namespace {

struct NoCost : CostModel {
  BatchCost price(const BatchShape&) override {
    BatchCost c;
    c.total = 1;
    return c;
  }
  PriceSource source(OpFamily) const override { return PriceSource::kRoofline; }
  std::string describe() const override { return "none"; }
};

struct NoObserver : ReplicaObserver {
  void on_iteration(const Replica&, const Batch&, SimTime, SimTime, const BatchCost&) override {}
  void on_token(const Request&, SimTime) override {}
  void on_finished(Simulator&, Request&) override {}
};

/// Replicas whose outstanding tokens are set by enqueuing requests (the simulator is never run).
struct Fleet {
  NoCost cost;
  NoObserver obs;
  ClusterCounters counters;
  Simulator sim;
  std::vector<std::unique_ptr<Replica>> owned;
  std::vector<Replica*> replicas;
  std::vector<std::unique_ptr<Request>> requests;
  explicit Fleet(int n) {
    for (int i = 0; i < n; ++i) {
      owned.push_back(std::make_unique<Replica>(i, 0, EngineOptions{}, 1000, &cost, &counters, &obs));
      replicas.push_back(owned.back().get());
    }
  }
  void load(int replica, std::int32_t prompt, std::int32_t output) {
    requests.push_back(std::make_unique<Request>());
    requests.back()->prompt_tokens = prompt;
    requests.back()->output_tokens = output;
    replicas[replica]->enqueue(sim, requests.back().get());
  }
};

}  // namespace

TEST_CASE("round robin cycles through the replicas in order", "[control][router]") {
  Fleet f(3);
  RoundRobinRouter rr;
  Request r;
  std::vector<std::size_t> picks;
  for (int i = 0; i < 7; ++i) picks.push_back(rr.pick(r, f.replicas));
  CHECK(picks == std::vector<std::size_t>{0, 1, 2, 0, 1, 2, 0});
  f.load(1, 5000, 5000);  // load does not matter to round robin
  CHECK(rr.pick(r, f.replicas) == 1);
}

TEST_CASE("least outstanding tokens picks the minimum and breaks ties toward the lowest index",
          "[control][router]") {
  Fleet f(4);
  LeastOutstandingTokensRouter lot;
  Request r;
  CHECK(lot.pick(r, f.replicas) == 0);  // all empty: lowest index
  f.load(0, 100, 10);                   // 110
  f.load(1, 50, 10);                    // 60
  f.load(2, 40, 20);                    // 60
  f.load(3, 70, 0);                     // 70
  REQUIRE(f.replicas[1]->outstanding_tokens() == 60);
  REQUIRE(f.replicas[2]->outstanding_tokens() == 60);
  CHECK(lot.pick(r, f.replicas) == 1);  // tie 1 vs 2 -> 1
  f.load(1, 1, 0);                      // 61
  CHECK(lot.pick(r, f.replicas) == 2);
  f.load(2, 10, 0);  // 70
  CHECK(lot.pick(r, f.replicas) == 1);  // 61 is now the minimum
  f.load(1, 9, 0);   // 70 for 1, 2, 3
  CHECK(lot.pick(r, f.replicas) == 1);
}

TEST_CASE("router names round-trip through the registry", "[control][router]") {
  RouterKind k;
  REQUIRE(router_from_string("least_outstanding_tokens", k));
  CHECK(k == RouterKind::kLeastOutstandingTokens);
  CHECK(std::string(router_to_string(RouterKind::kRoundRobin)) == "round_robin");
  CHECK_FALSE(router_from_string("random", k));
  CHECK(dynamic_cast<RoundRobinRouter*>(make_router(RouterKind::kRoundRobin).get()) != nullptr);
}
