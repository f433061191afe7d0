#include "core/workload/workload_driver.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

using namespace servesim;

namespace {

/// Records submissions; optionally completes each request after a service time and tells the driver.
struct StubSink : RequestSink, EventHandler {
  WorkloadDriver* driver = nullptr;
  std::vector<Request>* pool = nullptr;
  std::vector<SimTime> service;  ///< per request id; empty = never completes
  std::vector<SimTime> submit_times;
  std::vector<std::int64_t> ids;
  std::vector<SimTime> finish_times;  ///< per id, -1 until done
  std::int64_t in_flight = 0, max_in_flight = 0;
  bool completing = false;            ///< inside a completion callback
  std::vector<bool> sent_in_completion;

  void submit(Simulator& sim, Request& req) override {
    CHECK(req.arrival == sim.now());
    submit_times.push_back(sim.now());
    ids.push_back(req.id);
    sent_in_completion.push_back(completing);
    ++in_flight;
    max_in_flight = std::max(max_in_flight, in_flight);
    if (!service.empty()) sim.schedule_in(service[static_cast<std::size_t>(req.id) % service.size()], this, 0, req.id);
  }
  void on_event(Simulator& sim, const Event& ev) override {
    --in_flight;
    Request& r = (*pool)[static_cast<std::size_t>(ev.arg)];
    r.state = RequestState::kFinished;
    r.finished = sim.now();
    finish_times.push_back(sim.now());
    completing = true;
    driver->on_request_done(sim, r);
    completing = false;
  }
};

struct Run {
  std::vector<Request> pool;
  StubSink sink;
  Simulator sim;
};

/// Runs a driver over `n` requests to the end; returns the sink's record.
void run(Run& run, const WorkloadSpec& spec, std::size_t n, const TraceTable* trace = nullptr,
         std::uint64_t seed = 1) {
  run.pool.assign(n, Request{});
  run.sink.pool = &run.pool;
  WorkloadDriver d(spec, seed, run.pool, LengthSampler(spec.lengths, nullptr, nullptr, nullptr, nullptr), trace,
                   &run.sink);
  run.sink.driver = &d;
  d.start(run.sim);
  run.sim.run(100'000'000);
  CHECK(d.sent() == static_cast<std::int64_t>(n));
  run.sink.driver = nullptr;
}

/// Inter-arrival gaps in seconds.
std::vector<double> gaps(const std::vector<SimTime>& t) {
  std::vector<double> g;
  for (std::size_t i = 1; i < t.size(); ++i) g.push_back(as_sec(t[i] - t[i - 1]));
  return g;
}
double mean(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}
double cv(const std::vector<double>& x) {
  const double m = mean(x);
  double sq = 0;
  for (double v : x) sq += (v - m) * (v - m);
  return std::sqrt(sq / static_cast<double>(x.size())) / m;
}

WorkloadSpec poisson(double rate, double burstiness = 1.0) {
  WorkloadSpec w;
  w.arrival.process = ArrivalSpec::Process::kPoisson;
  w.arrival.request_rate = rate;
  w.arrival.burstiness = burstiness;
  return w;
}

}  // namespace

TEST_CASE("Poisson arrivals have the requested mean rate within 3% and CV 1", "[workload][workload_driver]") {
  Run r;
  run(r, poisson(20.0), 50'000);
  REQUIRE(r.sink.submit_times.size() == 50'000);
  CHECK(r.sink.submit_times[0] == 0);  // the first request goes at t = 0
  const auto g = gaps(r.sink.submit_times);
  CHECK(mean(g) == Approx(0.05).epsilon(0.03));
  CHECK(cv(g) == Approx(1.0).epsilon(0.03));
  CHECK(std::is_sorted(r.sink.submit_times.begin(), r.sink.submit_times.end()));
  // Ids are sequential and lengths are set before submission.
  for (std::size_t i = 0; i < 100; ++i) {
    REQUIRE(r.sink.ids[i] == static_cast<std::int64_t>(i));
    REQUIRE(r.pool[i].prompt_tokens == 128);
    REQUIRE(r.pool[i].output_tokens == 128);
  }
}

TEST_CASE("burstiness below 1 gives burstier arrivals at the same mean rate", "[workload][workload_driver]") {
  Run poisson_run, bursty_run, smooth_run;
  run(poisson_run, poisson(10.0, 1.0), 40'000);
  run(bursty_run, poisson(10.0, 0.5), 40'000);
  run(smooth_run, poisson(10.0, 4.0), 40'000);
  const auto gp = gaps(poisson_run.sink.submit_times);
  const auto gb = gaps(bursty_run.sink.submit_times);
  const auto gs = gaps(smooth_run.sink.submit_times);
  // Gamma(k) gaps have CV 1/sqrt(k): sqrt(2) for k = 0.5, 0.5 for k = 4.
  CHECK(cv(gb) > cv(gp));
  CHECK(cv(gb) == Approx(std::sqrt(2.0)).epsilon(0.05));
  CHECK(cv(gs) == Approx(0.5).epsilon(0.05));
  CHECK(mean(gb) == Approx(0.1).epsilon(0.03));
  CHECK(mean(gs) == Approx(0.1).epsilon(0.03));
}

TEST_CASE("an infinite request rate sends everything at time zero", "[workload][workload_driver]") {
  Run r;
  run(r, poisson(std::numeric_limits<double>::infinity()), 100);
  REQUIRE(r.sink.submit_times.size() == 100);
  CHECK(r.sink.submit_times.back() == 0);
}

TEST_CASE("the same seed gives the same arrivals and another seed different ones", "[workload][workload_driver]") {
  Run a, b, c;
  run(a, poisson(5.0), 200, nullptr, 9);
  run(b, poisson(5.0), 200, nullptr, 9);
  run(c, poisson(5.0), 200, nullptr, 10);
  CHECK(a.sink.submit_times == b.sink.submit_times);
  CHECK(a.sink.submit_times != c.sink.submit_times);
}

TEST_CASE("a closed loop keeps N requests in flight and sends the next when one finishes, after the completion",
          "[workload][workload_driver]") {
  WorkloadSpec w;
  w.arrival.process = ArrivalSpec::Process::kClosedLoop;
  w.arrival.max_concurrency = 4;
  Run r;
  r.sink.service = {from_ms(10), from_ms(25), from_ms(7)};
  run(r, w, 60);
  const auto& s = r.sink;
  REQUIRE(s.submit_times.size() == 60);
  CHECK(s.max_in_flight == 4);
  for (std::size_t i = 0; i < 60; ++i) {
    INFO("request " << i);
    if (i < 4) {
      CHECK(s.submit_times[i] == 0);
      CHECK_FALSE(s.sent_in_completion[i]);
    } else {
      // Sent at the (i-4)th completion's time but not from inside it: the engine forms its next batch in that call,
      // before any client can have seen the response.
      CHECK_FALSE(s.sent_in_completion[i]);
      CHECK(s.submit_times[i] == s.finish_times[i - 4]);
    }
  }
  CHECK(s.finish_times.size() == 60);
}

TEST_CASE("a closed loop with think time waits that long after each response", "[workload][workload_driver]") {
  WorkloadSpec w;
  w.arrival.process = ArrivalSpec::Process::kClosedLoop;
  w.arrival.max_concurrency = 2;
  w.arrival.think_time_ms = 5;
  Run r;
  r.sink.service = {from_ms(10)};
  run(r, w, 6);
  // Two clients in lockstep: send at 0, finish at 10, think to 15, ...
  CHECK(r.sink.submit_times == std::vector<SimTime>{0, 0, from_ms(15), from_ms(15), from_ms(30), from_ms(30)});
  CHECK(r.sink.max_in_flight == 2);
}

TEST_CASE("an open-loop client cap delays arrivals until a slot frees", "[workload][workload_driver]") {
  WorkloadSpec w = poisson(std::numeric_limits<double>::infinity());
  w.arrival.max_concurrency = 3;
  Run r;
  r.sink.service = {from_ms(100)};
  run(r, w, 7);
  CHECK(r.sink.max_in_flight == 3);
  CHECK(r.sink.submit_times ==
        std::vector<SimTime>{0, 0, 0, from_ms(100), from_ms(100), from_ms(100), from_ms(200)});
}

TEST_CASE("trace arrivals keep the trace's gaps scaled by time_scale", "[workload][workload_driver]") {
  TraceTable t;
  t.arrival_ms = {100, 150, 400, 1000, 5000};
  t.input_tokens = {1, 1, 1, 1, 1};
  t.output_tokens = {1, 1, 1, 1, 1};
  WorkloadSpec w;
  w.arrival.process = ArrivalSpec::Process::kTrace;
  w.arrival.time_scale = 0.5;
  Run r;
  run(r, w, 4, &t);  // only the first 4 rows are used
  CHECK(r.sink.submit_times == std::vector<SimTime>{0, from_ms(25), from_ms(150), from_ms(450)});

  w.arrival.time_scale = 1.0;
  Run unscaled;
  run(unscaled, w, 4, &t);
  CHECK(unscaled.sink.submit_times == std::vector<SimTime>{0, from_ms(50), from_ms(300), from_ms(900)});
}

TEST_CASE("trace arrivals re-timed by request_rate have that mean rate and the trace's shape",
          "[workload][workload_driver]") {
  TraceTable t;
  t.arrival_ms = {100, 150, 400, 1000};
  t.input_tokens = {1, 1, 1, 1};
  t.output_tokens = {1, 1, 1, 1};
  WorkloadSpec w;
  w.arrival.process = ArrivalSpec::Process::kTrace;
  w.arrival.trace_rate = 10.0;  // 3 gaps over 0.9 s of trace: scale = 3 / (10 * 0.9) = 1/3
  Run r;
  run(r, w, 4, &t);
  // 50 ms / 3 = 16.666667 ms, 300 ms / 3 = 100 ms, 900 ms / 3 = 300 ms; 3 gaps in 0.3 s = 10 req/s.
  CHECK(r.sink.submit_times == std::vector<SimTime>{0, 16'666'667, 100'000'000, 300'000'000});
}
