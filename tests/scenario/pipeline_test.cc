// Pipeline parallelism end to end with the measured tables: batches overlapping in the trace on lanes of
// their own, busy time that does not count them twice, and the result's GPU accounting.
#include <algorithm>
#include <map>

#include <catch2/catch.hpp>

#include "tests/test_support.h"

using namespace servesim;

namespace {

nlohmann::json llama8b_pp(int pp) {
  auto s = test::small_scenario();
  s["deployment"]["roles"][0]["parallelism"] = {{"pp", pp}};
  s["workload"]["num_requests"] = 200;
  s["workload"]["arrival"] = {{"process", "poisson"}, {"request_rate", "inf"}};
  return s;
}

}  // namespace

TEST_CASE("a pp=4 replica keeps four batches in flight and the trace gives each its own lane", "[scenario][pipeline]") {
  SessionOptions opt;
  opt.keep_trace = true;
  Errors errors;
  auto session = Session::create(llama8b_pp(4).dump(), test::profiles_loader(), errors, opt);
  REQUIRE(session);
  while (!session->step(100000).finished) {
  }
  const auto result = nlohmann::json::parse(session->result_json());
  CHECK(result["summary"]["completed"] == 200);
  const auto& role = result["deployment"]["roles"][0];
  CHECK(role["world_size"] == 4);
  CHECK(role["gpus_per_stage"] == 1);
  CHECK(role["gpus"] == 4);
  CHECK(role["max_batches_in_flight"] == 4);
  CHECK(result["deployment"]["total_gpus"] == 4);
  CHECK(role["kv_blocks_in_use_at_end"] == 0);

  const auto trace = nlohmann::json::parse(session->chrome_trace_json());
  std::map<int, std::vector<std::pair<double, double>>> lanes;
  for (const auto& e : trace["traceEvents"])
    if (e["name"] == "iteration") {
      // Trace times are microseconds printed with nanosecond digits: compare in integer ns.
      const auto ns = [](double us) { return static_cast<std::int64_t>(us * 1000 + 0.5); };
      lanes[e["tid"].get<int>()].push_back({static_cast<double>(ns(e["ts"].get<double>())),
                                            static_cast<double>(ns(e["ts"].get<double>() + e["dur"].get<double>()))});
    }
  CHECK(lanes.size() == 4);
  // Overlap: the batches' latencies add up to well over the time the replica ran (one batch at a time: at most
  // 1x; measured 2.6x, below 4x because stage 0 also carries the host time, which dominates an 8B model).
  double latency_sum = 0, last_end = 0;
  for (const auto& [tid, spans] : lanes)
    for (const auto& sp : spans) {
      latency_sum += sp.second - sp.first;
      last_end = std::max(last_end, sp.second);
    }
  CHECK(latency_sum > 2.0 * last_end);
  // busy_s is stage-0 occupancy: below the makespan although the batches overlap.
  CHECK(role["busy_s"].get<double>() * 1e9 <= last_end);
  for (auto& [tid, spans] : lanes) {
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) {
      INFO("lane " << tid << " slice " << i);
      CHECK(spans[i].first >= spans[i - 1].second - 1);  // 1 ns of print rounding
    }
  }
}

TEST_CASE("a pipelined run is deterministic: the same scenario and seed give byte-identical results",
          "[scenario][pipeline]") {
  auto s = llama8b_pp(4);
  s["engine"] = {{"host", {{"overlaps_pipeline", true}}}};
  s["workload"]["arrival"] = {{"process", "poisson"}, {"request_rate", 40}};
  const std::string a = test::run_scenario_text(s.dump());
  const std::string b = test::run_scenario_text(s.dump());
  CHECK(a == b);
  SessionOptions other;
  other.seed = 8;
  CHECK(test::run_scenario_text(s.dump(), other) != a);  // the arrivals do depend on the seed
}
