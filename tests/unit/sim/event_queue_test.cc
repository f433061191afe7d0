#include "core/sim/event_queue.h"

#include <catch2/catch.hpp>

#include "core/sim/simulator.h"

using namespace servesim;

namespace {
struct Recorder : EventHandler {
  std::vector<std::int64_t> seen;
  std::vector<SimTime> times;
  void on_event(Simulator& sim, const Event& ev) override {
    seen.push_back(ev.arg);
    times.push_back(sim.now());
  }
};
}  // namespace

TEST_CASE("events pop in time order and ties keep insertion order", "[sim]") {
  EventQueue q;
  Recorder r;
  q.push(30, &r, 0, 1);
  q.push(10, &r, 0, 2);
  q.push(10, &r, 0, 3);
  q.push(20, &r, 0, 4);
  q.push(10, &r, 0, 5);
  std::vector<std::int64_t> order;
  while (!q.empty()) order.push_back(q.pop().arg);
  CHECK(order == std::vector<std::int64_t>{2, 3, 5, 4, 1});
}

TEST_CASE("the simulator advances the clock to each event and stops at the budget", "[sim]") {
  Simulator sim;
  Recorder r;
  sim.schedule(5, &r, 0, 1);
  sim.schedule(2, &r, 0, 2);
  sim.schedule(9, &r, 0, 3);
  CHECK(sim.run(2) == 2);
  CHECK(r.seen == std::vector<std::int64_t>{2, 1});
  CHECK(sim.now() == 5);
  CHECK(sim.run(10, 8) == 0);  // next event lies after the time limit
  CHECK(sim.run(10) == 1);
  CHECK(r.times == std::vector<SimTime>{2, 5, 9});
  CHECK(sim.idle());
}
