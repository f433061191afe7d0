// Attention/FFN disaggregation end to end: P prefills, the KV cache moves to A, A and F ping-pong every decode
// iteration; every request finishes and KV blocks return on both sides of the transfer.
#include <catch2/catch.hpp>

#include "core/spec/errors.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

nlohmann::json pafd_scenario(int micro_batches, double a_mem_util) {
  auto s = nlohmann::json::parse(R"({
    "version": 1, "name": "pafd", "seed": 4, "model": "Qwen3-30B-A3B", "hardware": {"gpu": "H100-SXM"},
    "engine": {"moe_routing": "power_law"},
    "deployment": {"roles": [
      {"role": "P", "replicas": 2, "parallelism": {"tp_attn": 2, "tp_ffn": 1, "ep_ffn": 2}},
      {"role": "A", "replicas": 2, "parallelism": {"tp_attn": 2, "dp_attn": 2}},
      {"role": "F", "replicas": 2, "gpu": "H800", "parallelism": {"tp_ffn": 1, "ep_ffn": 8}}]},
    "workload": {"num_requests": 150, "arrival": {"process": "poisson", "request_rate": 30},
                 "input_len": {"dist": "uniform", "min": 128, "max": 3000},
                 "output_len": {"dist": "uniform", "min": 2, "max": 400}},
    "output": {"requests": true}
  })");
  s["deployment"]["afd"] = {{"micro_batches", micro_batches}};
  s["deployment"]["roles"][1]["engine"] = {{"gpu_memory_utilization", a_mem_util}};
  return s;
}

}  // namespace

TEST_CASE("a P + A + F deployment serves every request and returns KV blocks on P and A", "[scenario][afd]") {
  for (int m : {1, 2, 4}) {
    INFO("micro_batches " << m);
    const auto r = test::run_scenario(pafd_scenario(m, 0.9).dump());
    CHECK(r["status"] == "completed");
    CHECK(r["summary"]["completed"] == 150);
    CHECK(r["summary"]["failed"] == 0);
    CHECK(r["disaggregation"]["kv_transfers"] == 150);
    const auto& roles = r["deployment"]["roles"];
    REQUIRE(roles.size() == 3);
    for (const auto& role : roles) CHECK(role["kv_blocks_in_use_at_end"] == 0);
    CHECK(roles[2]["role"] == "F");
    CHECK(roles[2]["gpus"] == 16);
    CHECK(roles[2]["kv_cache"].is_null());
    CHECK(roles[2]["fidelity"]["kind"] == "datasheet-derived");  // H800 has no measured tables
    CHECK(r["deployment"]["total_gpus"] == 2 * 2 + 2 * 4 + 2 * 8);
    CHECK(r["time_share_by_op"]["af_transfer"].get<double>() > 0);
    // Each role's own shares: P prefills, A decodes and carries the A/F schedule (F's time is inside A's).
    const auto share = [&roles](int role, const char* op) { return roles[role]["time_share_by_op"][op].get<double>(); };
    CHECK(share(0, "attention_prefill") > 0);
    CHECK(share(0, "attention_decode") == 0);
    CHECK(share(0, "af_transfer") == 0);
    CHECK(share(1, "attention_decode") > 0);
    CHECK(share(1, "attention_prefill") == 0);
    CHECK(share(1, "af_transfer") > 0);
    CHECK(share(1, "moe") > 0);
    CHECK_FALSE(roles[2].contains("time_share_by_op"));
    for (int role : {0, 1}) {
      double sum = 0;
      for (const auto& [op, v] : roles[role]["time_share_by_op"].items()) sum += v.get<double>();
      CHECK(sum == Approx(1.0).epsilon(1e-9));
    }
    const auto& q = r["requests"];
    for (std::size_t i = 0; i < 150; ++i) {
      CHECK(q["replica"][i].get<int>() >= 2);  // A replicas (global indices 2, 3) finished every request
      CHECK(q["finished_ms"][i].get<double>() >= q["first_token_ms"][i].get<double>());
    }
  }
}

TEST_CASE("ping-pong micro-batches lower A/F decode time per token against one micro-batch", "[scenario][afd]") {
  const auto one = test::run_scenario(pafd_scenario(1, 0.9).dump());
  const auto two = test::run_scenario(pafd_scenario(2, 0.9).dump());
  CHECK(two["summary"]["mean_tpot_ms"].get<double>() < one["summary"]["mean_tpot_ms"].get<double>());
}

TEST_CASE("an A role short of KV memory makes transfers wait and still finishes every request", "[scenario][afd]") {
  const auto tight = test::run_scenario(pafd_scenario(2, 0.2).dump());
  CHECK(tight["status"] == "completed");
  CHECK(tight["summary"]["completed"] == 150);
  for (const auto& role : tight["deployment"]["roles"]) CHECK(role["kv_blocks_in_use_at_end"] == 0);
  CHECK(test::run_scenario_text(pafd_scenario(2, 0.2).dump()) == test::run_scenario_text(pafd_scenario(2, 0.2).dump()));
}

TEST_CASE("an F role whose share of the experts does not fit is refused at its role path", "[scenario][afd]") {
  auto s = pafd_scenario(2, 0.9);
  s["model"] = "Qwen3-235B-A22B";
  s["deployment"]["roles"][0]["parallelism"] = {{"tp_attn", 8}, {"tp_ffn", 1}, {"ep_ffn", 8}};
  s["deployment"]["roles"][1]["parallelism"] = {{"tp_attn", 4}, {"dp_attn", 2}};
  s["deployment"]["roles"][2]["parallelism"] = {{"tp_ffn", 1}, {"ep_ffn", 2}};  // ~220 GiB of experts per GPU
  Errors errors;
  auto session = Session::create(s.dump(), test::profiles_loader(), errors);
  CHECK_FALSE(session);
  INFO(errors.joined());
  REQUIRE(errors.list().size() == 1);
  CHECK(errors.list()[0].path == "/deployment/roles/2");
  CHECK_THAT(errors.list()[0].message, Catch::Contains("FFN weights need"));
  CHECK_THAT(errors.list()[0].message, Catch::Contains("gpu_memory_utilization x memory"));
  // Under SGLang the room is mem_fraction_static x the memory left by the CUDA context and the communicators.
  s["engine"]["backend"] = "sglang";
  Errors sglang_errors;
  CHECK_FALSE(Session::create(s.dump(), test::profiles_loader(), sglang_errors));
  INFO(sglang_errors.joined());
  REQUIRE(sglang_errors.list().size() == 1);
  CHECK(sglang_errors.list()[0].path == "/deployment/roles/2");
  CHECK_THAT(sglang_errors.list()[0].message, Catch::Contains("mem_fraction_static (gpu_memory_utilization)"));
}

TEST_CASE("random P + A + F scenarios under KV pressure finish with every block returned on P and A",
          "[scenario][afd]") {
  // The core invariants for the A/F role mix: every request ends, KV blocks return on both sides of the transfer,
  // for micro-batch counts, pipeline depths, instance counts, decode routers and A-side KV pressure drawn per case.
  const char* routers[] = {"round_robin", "least_load", "sibyl"};
  const int depths[] = {1, 2, 4};
  int waited = 0;
  for (int i = 0; i < 9; ++i) {
    auto s = pafd_scenario(1 + i % 4, 0.045 + 0.005 * (i % 3));  // ~2-4k A-side blocks: transfers wait
    s["seed"] = 300 + i;
    s["deployment"]["decode_router"] = routers[i % 3];
    const int pp = depths[(i / 3) % 3];
    s["deployment"]["roles"][1]["parallelism"]["pp"] = pp;
    s["deployment"]["roles"][2]["parallelism"]["pp"] = pp;
    s["deployment"]["roles"][1]["replicas"] = 1 + i % 2;
    s["deployment"]["roles"][2]["replicas"] = 1 + i % 2;
    s["deployment"]["roles"][1]["engine"]["max_num_seqs"] = 8 + 16 * (i % 3);
    s["workload"]["output_len"] = {{"dist", "lognormal"}, {"median", 200}, {"sigma", 1.0}, {"min", 1}, {"max", 2000}};
    INFO("scenario " << i << ": " << s.dump());
    const auto r = test::run_scenario(s.dump());
    CHECK(r["status"] == "completed");
    CHECK(r["summary"]["completed"].get<int>() + r["summary"]["failed"].get<int>() == 150);
    CHECK(r["summary"]["failed"] == 0);
    for (const auto& role : r["deployment"]["roles"]) CHECK(role["kv_blocks_in_use_at_end"] == 0);
    CHECK(r["deployment"]["roles"][1]["max_batches_in_flight"] == pp);
    waited += r["summary"]["p99_kv_transfer_wait_ms"].get<double>() > 0 ? 1 : 0;
  }
  CHECK(waited > 0);  // the A-side budgets are tight enough that some transfers wait for blocks
}
