// Invariants over randomly generated scenarios: every request ends (finished with all its tokens, or failed
// with a reason), timestamps are ordered, no KV block leaks, and heavy preemption still terminates.
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "core/fidelity/memory_model.h"
#include "core/spec/resource_catalog.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

/// splitmix64: a generator whose output is the same on every platform (std distributions are not).
struct Gen {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::int64_t range(std::int64_t lo, std::int64_t hi) { return lo + static_cast<std::int64_t>(next() % (hi - lo + 1)); }
  double unit() { return static_cast<double>(next() >> 11) / 9007199254740992.0; }
  bool coin() { return next() & 1; }
  template <typename T>
  T pick(std::initializer_list<T> xs) {
    return *(xs.begin() + range(0, static_cast<std::int64_t>(xs.size()) - 1));
  }
};

struct Case {
  nlohmann::json scenario;
  std::int64_t input = 0, output = 0, num_requests = 0;
};

const ModelSpec& llama8b() {
  static const ModelSpec m = [] {
    ModelSpec x;
    Errors e;
    read_model(Json("Llama-3.1-8B"), "/model", test::catalog(), x, e);
    return x;
  }();
  return m;
}

const GpuSpec& h100() {
  static const GpuSpec g = [] {
    GpuSpec x;
    Errors e;
    read_gpu(Json("H100-SXM"), "/hardware/gpu", test::catalog(), x, e);
    return x;
  }();
  return g;
}

/// gpu_memory_utilization that leaves exactly `blocks` KV blocks for these engine options (TP 1, `pp` stages).
double utilization_for_blocks(EngineOptions e, std::int64_t blocks, int pp = 1) {
  Parallelism par;
  par.pp = pp;
  e.gpu_memory_utilization = 1.0;
  const KvBudget b = compute_kv_budget(llama8b(), h100(), par, e);
  const double fixed = b.weights_bytes + b.activation_bytes + b.overhead_bytes;
  const double u = (fixed + (static_cast<double>(blocks) + 0.5) * b.kv_bytes_per_token * e.block_size) / b.device_bytes;
  e.gpu_memory_utilization = u;
  REQUIRE(compute_kv_budget(llama8b(), h100(), par, e).num_gpu_blocks == blocks);
  return u;
}

/// `tightness` = KV tokens per replica over one request's tokens (<= 0: the default 0.9 utilization).
Case make_case(std::uint64_t seed, double tightness) {
  Gen g{seed};
  Case c;
  c.input = g.coin() ? g.range(16, 512) : g.range(513, 8192);
  c.output = g.range(1, 300);
  c.num_requests = g.range(20, 60);
  EngineOptions e;
  e.enable_chunked_prefill = g.coin();
  e.enforce_eager = g.coin();
  e.block_size = g.pick({8, 16, 32});
  e.max_num_seqs = g.pick({4, 16, 64, 256});
  e.max_model_len = 8192 + 512;
  if (e.enable_chunked_prefill) {
    e.max_num_batched_tokens = std::max<std::int64_t>(e.max_num_seqs, g.pick({256, 512, 2048, 8192}));
    e.long_prefill_token_threshold = g.pick({0, 0, 128, 1024});
  } else {
    e.max_num_batched_tokens = g.pick({8704, 16384});
  }
  nlohmann::json engine = {{"enable_chunked_prefill", e.enable_chunked_prefill},
                           {"enforce_eager", e.enforce_eager},
                           {"block_size", e.block_size},
                           {"max_num_seqs", e.max_num_seqs},
                           {"max_model_len", e.max_model_len},
                           {"max_num_batched_tokens", e.max_num_batched_tokens},
                           {"long_prefill_token_threshold", e.long_prefill_token_threshold}};
  // Pipeline stages from a stream of their own, so the draws above (and the cases they make) stay as they were.
  Gen stages{seed ^ 0x5050505050505050ULL};
  const int pp = static_cast<int>(stages.pick({1, 2, 4}));
  if (tightness > 0) {
    const double tokens = tightness * static_cast<double>(c.input + c.output);
    engine["gpu_memory_utilization"] =
        utilization_for_blocks(e, static_cast<std::int64_t>(std::ceil(tokens / e.block_size)), pp);
  }
  nlohmann::json arrival;
  if (g.range(0, 3) == 0) {
    arrival = {{"process", "closed_loop"},
               {"max_concurrency", g.range(1, 32)},
               {"think_time_ms", g.pick({0, 0, 5, 50})}};
  } else {
    arrival = {{"process", "poisson"}, {"burstiness", g.pick({0.3, 1.0, 3.0})}};
    const int rate = g.pick({1, 10, 100, 0});
    if (rate == 0) arrival["request_rate"] = "inf";
    else arrival["request_rate"] = rate;
    if (g.coin()) arrival["max_concurrency"] = g.range(1, 64);
  }
  c.scenario = {
      {"version", 1},
      {"name", "invariants-" + std::to_string(seed)},
      {"seed", g.range(0, 1'000'000)},
      {"model", "Llama-3.1-8B"},
      {"hardware", {{"gpu", "H100-SXM"}}},
      {"engine", engine},
      {"deployment",
       {{"router", g.coin() ? "round_robin" : "least_outstanding_tokens"},
        {"roles", {{{"role", "C"}, {"replicas", g.range(1, 4)}, {"parallelism", {{"pp", pp}}}}}}}},
      {"workload",
       {{"num_requests", c.num_requests},
        {"arrival", arrival},
        {"input_len", {{"dist", "fixed"}, {"value", c.input}}},
        {"output_len", {{"dist", "fixed"}, {"value", c.output}}}}},
      {"output", {{"requests", true}}}};
  return c;
}

/// Checks every invariant on one run; returns its preemption count.
std::int64_t check_invariants(const Case& c) {
  INFO(c.scenario.dump());
  const auto r = test::run_scenario(c.scenario.dump());
  CHECK(r["status"] == "completed");
  const auto& q = r["requests"];
  REQUIRE(q["arrival_ms"].size() == static_cast<std::size_t>(c.num_requests));
  std::int64_t failed = 0, finished = 0, preemptions = 0;
  for (std::size_t i = 0; i < q["arrival_ms"].size(); ++i) {
    INFO("request " << i);
    CHECK(q["prompt_tokens"][i] == c.input);
    preemptions += q["preemptions"][i].get<std::int64_t>();
    if (q["failed"][i] == 1) {
      ++failed;
      continue;
    }
    ++finished;
    CHECK(q["output_tokens"][i] == c.output);
    const double arrival = q["arrival_ms"][i], sched = q["first_scheduled_ms"][i], first = q["first_token_ms"][i],
                 done = q["finished_ms"][i];
    CHECK(arrival >= 0);
    CHECK(arrival <= sched);
    CHECK(sched <= first);
    CHECK(first <= done);
    CHECK(q["replica"][i].get<int>() >= 0);
  }
  std::int64_t reasons = 0;
  for (const auto& f : r["failures"]) {
    CHECK_FALSE(f["reason"].get<std::string>().empty());
    reasons += f["count"].get<std::int64_t>();
  }
  CHECK(reasons == failed);
  CHECK(r["summary"]["completed"] == finished);
  CHECK(r["summary"]["failed"] == failed);
  CHECK(r["summary"]["preemptions"] == preemptions);
  CHECK(r["summary"]["total_output_tokens"] == finished * c.output);
  for (const auto& role : r["deployment"]["roles"]) CHECK(role["kv_blocks_in_use_at_end"] == 0);
  return preemptions;
}

}  // namespace

TEST_CASE("random scenarios end every request, order its timestamps and leak no KV blocks", "[scenario][invariants]") {
  std::int64_t preempting = 0, with_failures = 0;
  for (std::uint64_t i = 0; i < 30; ++i) {
    // A third at the default memory share, the rest squeezed to 1.05 to 4 requests' worth of KV per replica,
    // and every tenth too small for even one request (all refused with a reason).
    const double tightness = i % 10 == 9 ? 0.8 : i % 3 == 0 ? 0.0 : 1.05 + 0.1 * static_cast<double>(i % 30);
    const Case c = make_case(1000 + i, tightness);
    const std::int64_t p = check_invariants(c);
    preempting += p > 0;
    if (tightness > 0 && tightness < 1) {
      const auto r = test::run_scenario(c.scenario.dump());
      CHECK(r["summary"]["failed"] == c.num_requests);
      REQUIRE(r["failures"].size() == 1);
      CHECK_THAT(r["failures"][0]["reason"].get<std::string>(), Catch::Contains("KV cache"));
      ++with_failures;
    }
  }
  CHECK(preempting >= 1);
  CHECK(with_failures == 3);
}

TEST_CASE("the random scenarios draw every pipeline depth", "[scenario][invariants]") {
  std::map<int, int> seen;
  for (std::uint64_t i = 0; i < 30; ++i)
    ++seen[make_case(1000 + i, 0.0).scenario["deployment"]["roles"][0]["parallelism"]["pp"].get<int>()];
  CHECK(seen.size() == 3);
  for (const auto& [pp, n] : seen) CHECK(n >= 3);
}

TEST_CASE("heavy preemption still terminates with every request served", "[scenario][invariants]") {
  Case c;
  c.input = 2000;
  c.output = 300;
  c.num_requests = 40;
  EngineOptions e;
  e.max_num_seqs = 64;
  e.max_num_batched_tokens = 2048;
  const std::int64_t blocks = (3 * (c.input + c.output)) / 2 / 16;  // room for ~1.5 requests
  c.scenario = test::small_scenario();
  c.scenario["engine"] = {{"max_num_seqs", 64},
                          {"max_num_batched_tokens", 2048},
                          {"gpu_memory_utilization", utilization_for_blocks(e, blocks)}};
  c.scenario["workload"] = {{"num_requests", c.num_requests},
                            {"arrival", {{"process", "poisson"}, {"request_rate", "inf"}}},
                            {"input_len", {{"dist", "fixed"}, {"value", c.input}}},
                            {"output_len", {{"dist", "fixed"}, {"value", c.output}}}};
  c.scenario["output"] = {{"requests", true}};
  const std::int64_t preemptions = check_invariants(c);
  CHECK(preemptions >= c.num_requests / 2);
}

TEST_CASE("heavy preemption with four batches in flight still serves every request", "[scenario][invariants]") {
  // Victims must come from requests outside the pipeline: their blocks are free to take back.
  Case c;
  c.input = 2000;
  c.output = 300;
  c.num_requests = 40;
  EngineOptions e;
  e.max_num_seqs = 64;
  e.max_num_batched_tokens = 2048;
  const std::int64_t blocks = (3 * (c.input + c.output)) / 2 / 16;
  c.scenario = test::small_scenario();
  c.scenario["engine"] = {{"max_num_seqs", 64},
                          {"max_num_batched_tokens", 2048},
                          {"gpu_memory_utilization", utilization_for_blocks(e, blocks, 4)}};
  c.scenario["deployment"] = {{"roles", {{{"role", "C"}, {"replicas", 1}, {"parallelism", {{"pp", 4}}}}}}};
  c.scenario["workload"] = {{"num_requests", c.num_requests},
                            {"arrival", {{"process", "poisson"}, {"request_rate", "inf"}}},
                            {"input_len", {{"dist", "fixed"}, {"value", c.input}}},
                            {"output_len", {{"dist", "fixed"}, {"value", c.output}}}};
  c.scenario["output"] = {{"requests", true}};
  const std::int64_t preemptions = check_invariants(c);
  CHECK(preemptions >= c.num_requests / 2);
}
