// P/D disaggregation end to end: KV transfers wait for decode-side blocks, TTFT includes the transfer,
// blocks on both sides are all returned, and every decode router serves every request.
#include <catch2/catch.hpp>

#include "tests/test_support.h"

using namespace servesim;

namespace {

nlohmann::json pd_scenario(const std::string& router, double d_mem_util) {
  auto s = nlohmann::json::parse(R"({
    "version": 1, "name": "pd", "seed": 9, "model": "Llama-3.1-8B", "hardware": {"gpu": "H100-SXM"},
    "deployment": {"roles": [{"role": "P", "replicas": 2}, {"role": "D", "replicas": 2}]},
    "workload": {"num_requests": 120, "arrival": {"process": "poisson", "request_rate": 20},
                 "input_len": {"dist": "uniform", "min": 256, "max": 4096},
                 "output_len": {"dist": "uniform", "min": 2, "max": 600}},
    "output": {"requests": true}
  })");
  s["deployment"]["decode_router"] = router;
  s["deployment"]["roles"][1]["engine"] = {{"gpu_memory_utilization", d_mem_util}};
  return s;
}

}  // namespace

TEST_CASE("every decode router serves every request and returns all KV blocks on both sides", "[scenario][pd]") {
  for (const char* router : {"round_robin", "least_load", "sibyl"}) {
    INFO(router);
    const auto r = test::run_scenario(pd_scenario(router, 0.9).dump());
    CHECK(r["status"] == "completed");
    CHECK(r["summary"]["completed"] == 120);
    CHECK(r["disaggregation"]["kv_transfers"] == 120);
    for (const auto& role : r["deployment"]["roles"]) CHECK(role["kv_blocks_in_use_at_end"] == 0);
    const auto& q = r["requests"];
    for (std::size_t i = 0; i < 120; ++i) {
      // The decode replica (indices 2, 3) finished every request.
      CHECK(q["replica"][i].get<int>() >= 2);
      CHECK(q["first_token_ms"][i].get<double>() >= q["first_scheduled_ms"][i].get<double>());
      CHECK(q["finished_ms"][i].get<double>() >= q["first_token_ms"][i].get<double>());
    }
  }
}

TEST_CASE("a decode role short of KV memory makes transfers wait for blocks instead of failing",
          "[scenario][pd]") {
  const auto roomy = test::run_scenario(pd_scenario("round_robin", 0.9).dump());
  // ~17.5 GiB usable on D: 15 GiB of weights leave room for only a few requests' KV.
  const auto tight = test::run_scenario(pd_scenario("round_robin", 0.22).dump());
  CHECK(tight["status"] == "completed");
  CHECK(tight["summary"]["failed"] == 0);
  CHECK(roomy["summary"]["p99_kv_transfer_wait_ms"].get<double>() == 0.0);
  CHECK(tight["summary"]["p99_kv_transfer_wait_ms"].get<double>() > 100.0);
  // Waiting for decode blocks shows up in TTFT, which includes the transfer.
  CHECK(tight["summary"]["mean_ttft_ms"].get<double>() > roomy["summary"]["mean_ttft_ms"].get<double>());
  for (const auto& role : tight["deployment"]["roles"]) CHECK(role["kv_blocks_in_use_at_end"] == 0);
}

TEST_CASE("TTFT of a disaggregated request includes its KV transfer", "[scenario][pd]") {
  auto s = pd_scenario("round_robin", 0.9);
  s["workload"] = nlohmann::json::parse(R"({"num_requests": 1, "arrival": {"process": "poisson", "request_rate": 1},
      "input_len": {"dist": "fixed", "value": 4000}, "output_len": {"dist": "fixed", "value": 10}})");
  s["deployment"]["kv_transfer"] = {{"bandwidth_gb_s", 1.0}, {"efficiency", 1.0}, {"latency_us", 0}};
  const auto r = test::run_scenario(s.dump());
  // 4000 tokens x 128 KiB of KV at 1 GB/s per GPU (one GPU per replica): 0.524 s of transfer.
  CHECK(r["summary"]["mean_kv_transfer_ms"].get<double>() == Approx(4000 * 131072 / 1e9 * 1e3).epsilon(1e-6));
  CHECK(r["summary"]["mean_ttft_ms"].get<double>() > 524.0);
}

TEST_CASE("transfers sharing a link split its bandwidth", "[scenario][pd]") {
  auto s = pd_scenario("round_robin", 0.9);
  s["deployment"]["roles"][0]["replicas"] = 1;
  s["deployment"]["roles"][1]["replicas"] = 1;
  s["workload"] = nlohmann::json::parse(R"({"num_requests": 2, "arrival": {"process": "poisson", "request_rate": "inf"},
      "input_len": {"dist": "fixed", "value": 2000}, "output_len": {"dist": "fixed", "value": 4}})");
  s["deployment"]["kv_transfer"] = {{"bandwidth_gb_s", 1.0}, {"efficiency", 1.0}, {"latency_us", 0}};
  const auto r = test::run_scenario(s.dump());
  // Both prompts finish prefill in one batch, so both transfers share the single link: each takes 2x alone.
  const double alone_ms = 2000 * 131072 / 1e9 * 1e3;
  CHECK(r["summary"]["mean_kv_transfer_ms"].get<double>() == Approx(2 * alone_ms).epsilon(1e-6));
}

TEST_CASE("random P/D scenarios under KV pressure always finish with every block returned", "[scenario][pd]") {
  const char* routers[] = {"round_robin", "least_load", "sibyl"};
  for (int i = 0; i < 12; ++i) {
    auto s = pd_scenario(routers[i % 3], 0.22 + 0.02 * (i % 5));
    s["seed"] = 100 + i;
    s["deployment"]["roles"][0]["replicas"] = 1 + i % 3;
    s["deployment"]["roles"][1]["replicas"] = 1 + (i / 3) % 3;
    s["deployment"]["roles"][1]["engine"]["max_num_seqs"] = 8 + 8 * (i % 4);
    s["workload"]["arrival"]["request_rate"] = 5 + 10 * (i % 4);
    s["workload"]["output_len"] = {{"dist", "lognormal"}, {"median", 300}, {"sigma", 1.0}, {"min", 1}, {"max", 3000}};
    INFO("scenario " << i << ": " << s.dump());
    const auto r = test::run_scenario(s.dump());
    CHECK(r["status"] == "completed");
    CHECK(r["summary"]["completed"].get<int>() + r["summary"]["failed"].get<int>() == 120);
    for (const auto& role : r["deployment"]["roles"]) CHECK(role["kv_blocks_in_use_at_end"] == 0);
  }
}

TEST_CASE("random P/D scenarios with pipelined roles finish with every block returned on both sides",
          "[scenario][pd][pipeline]") {
  // Prefill handoffs and decode-side arrivals both commit when a batch leaves the last stage.
  const int depths[] = {1, 2, 4};
  for (int i = 0; i < 9; ++i) {
    auto s = pd_scenario(i % 2 ? "sibyl" : "least_load", 0.22 + 0.02 * (i % 3));
    s["seed"] = 200 + i;
    s["deployment"]["roles"][0]["parallelism"] = {{"pp", depths[i % 3]}};
    s["deployment"]["roles"][1]["parallelism"] = {{"pp", depths[(i / 3) % 3]}};
    s["deployment"]["roles"][1]["engine"]["max_num_seqs"] = 8 + 8 * (i % 4);
    s["workload"]["output_len"] = {{"dist", "lognormal"}, {"median", 300}, {"sigma", 1.0}, {"min", 1}, {"max", 3000}};
    INFO("scenario " << i << ": " << s.dump());
    const auto r = test::run_scenario(s.dump());
    CHECK(r["status"] == "completed");
    CHECK(r["summary"]["completed"].get<int>() == 120);
    for (const auto& role : r["deployment"]["roles"]) {
      CHECK(role["kv_blocks_in_use_at_end"] == 0);
      CHECK(role["world_size"] == role["parallelism"]["pp"]);
    }
  }
}

TEST_CASE("a prefill role whose KV is held by handed-off requests waits for transfers instead of stalling",
          "[scenario][pd]") {
  // Qwen3-32B on an 80 GB H800 leaves little KV on P, so held prompts fill it until D pulls them.
  auto s = nlohmann::json::parse(R"({
    "version": 1, "name": "het", "seed": 5, "model": "Qwen3-32B",
    "deployment": {"roles": [{"role": "P", "replicas": 2, "gpu": "H800"}, {"role": "D", "replicas": 2, "gpu": "H20"}]},
    "workload": {"num_requests": 150, "arrival": {"process": "poisson", "request_rate": 6},
                 "input_len": {"dist": "fixed", "value": 2000}, "output_len": {"dist": "fixed", "value": 300}}
  })");
  const auto r = test::run_scenario(s.dump());
  CHECK(r["status"] == "completed");
  CHECK(r["summary"]["completed"] == 150);
  for (const auto& role : r["deployment"]["roles"]) CHECK(role["kv_blocks_in_use_at_end"] == 0);
  // Heterogeneous roles are priced per role: 2 H800 at $3.49 and 2 H20 at $1.59.
  CHECK(r["summary"]["usd_per_hour"].get<double>() == Approx(2 * 3.49 + 2 * 1.59));
}

TEST_CASE("the timeline phases of a P/D run include each request's KV transfer", "[scenario][pd]") {
  auto s = pd_scenario("sibyl", 0.22);
  s["output"]["phases"] = true;
  const auto r = test::run_scenario(s.dump());
  const auto& ph = r["phases"];
  int transfers = 0, waits = 0, prefills = 0;
  for (std::size_t k = 0; k < ph["kind"].size(); ++k) {
    const std::string kind = ph["kind"][k];
    transfers += kind == "kv_transfer";
    waits += kind == "kv_wait";
    prefills += kind == "prefill";
    CHECK(ph["end_ms"][k].get<double>() >= ph["start_ms"][k].get<double>());
  }
  CHECK(transfers == 120);
  CHECK(waits > 0);  // the tight decode role makes some transfers wait for blocks
  CHECK(prefills >= 120);
}

TEST_CASE("under the trtllm scheduler a decode role books whole requests and never preempts", "[scenario][pd]") {
  // Outputs long enough that a decode role short of memory runs out of blocks mid-generation under vLLM's
  // admission (which only needs room for the prompt) and preempts; TRT-LLM's GUARANTEED_NO_EVICT pulls a request's
  // KV only when its whole length is booked, so it waits before the transfer instead.
  auto s = pd_scenario("round_robin", 0.22);
  s["workload"]["output_len"] = {{"dist", "uniform"}, {"min", 400}, {"max", 1200}};
  s["workload"]["arrival"]["request_rate"] = 40;
  const auto vllm = test::run_scenario(s.dump());
  s["engine"] = {{"backend", "trtllm"}, {"scheduler", "trtllm"}};
  const auto trt = test::run_scenario(s.dump());
  s["engine"] = {{"backend", "trtllm"}};
  const auto trt_vllm_policy = test::run_scenario(s.dump());
  REQUIRE(trt["status"] == "completed");
  CHECK(trt["summary"]["completed"] == 120);
  CHECK(trt["deployment"]["roles"][1]["scheduler"] == "trtllm");
  CHECK(vllm["summary"]["preemptions"].get<long long>() > 0);
  CHECK(trt_vllm_policy["summary"]["preemptions"].get<long long>() > 0);
  CHECK(trt["summary"]["preemptions"] == 0);
  // The wait moves ahead of the transfer: longer transfer waits, no slower tokens than with preemption.
  CHECK(trt["summary"]["p99_kv_transfer_wait_ms"].get<double>() >
        trt_vllm_policy["summary"]["p99_kv_transfer_wait_ms"].get<double>());
  CHECK(trt["summary"]["p99_tpot_ms"].get<double>() <= trt_vllm_policy["summary"]["p99_tpot_ms"].get<double>());
  for (const auto& role : trt["deployment"]["roles"]) CHECK(role["kv_blocks_in_use_at_end"] == 0);
}
