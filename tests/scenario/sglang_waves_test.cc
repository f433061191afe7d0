// The sglang scheduler end to end: in a closed loop of identical requests its prefill-first policy keeps a wave
// of clients together (they decode in the same steps and come back at the same instant), while vLLM V1's mixed
// batches stagger them. This is what the SGLang validation rows depend on (docs/validation.md).
#include <set>

#include <catch2/catch.hpp>

#include "tests/test_support.h"

using namespace servesim;

namespace {

nlohmann::json closed_loop(const std::string& scheduler) {
  auto s = test::small_scenario();
  s["engine"] = {{"scheduler", scheduler}, {"max_num_batched_tokens", 2048}};
  s["workload"]["num_requests"] = 32;
  s["workload"]["arrival"] = {{"process", "closed_loop"}, {"max_concurrency", 8}};
  s["workload"]["input_len"] = {{"dist", "fixed"}, {"value", 1024}};
  s["workload"]["output_len"] = {{"dist", "fixed"}, {"value", 16}};
  s["output"] = {{"requests", true}};
  return s;
}

std::set<double> arrival_times(const nlohmann::json& result) {
  std::set<double> t;
  for (const auto& a : result["requests"]["arrival_ms"]) t.insert(a.get<double>());
  return t;
}

}  // namespace

TEST_CASE("under the sglang scheduler a closed loop of identical clients stays in waves", "[scenario][scheduler]") {
  const auto sglang = test::run_scenario(closed_loop("sglang").dump());
  REQUIRE(sglang["summary"]["completed"] == 32);
  CHECK(sglang["deployment"]["roles"][0]["scheduler"] == "sglang");
  // 32 requests from 8 clients: 4 waves, each arriving at one instant.
  CHECK(arrival_times(sglang).size() == 4);
  // vLLM V1 mixes the later prompts' chunks into the first ones' decodes: the first wave finishes staggered.
  const auto vllm = test::run_scenario(closed_loop("vllm_v1").dump());
  REQUIRE(vllm["summary"]["completed"] == 32);
  CHECK(arrival_times(vllm).size() > 4);
  // Every wave under sglang pays for the whole wave's prefill, so its mean TTFT is above vLLM V1's.
  CHECK(sglang["summary"]["mean_ttft_ms"].get<double>() > vllm["summary"]["mean_ttft_ms"].get<double>());
}

TEST_CASE("an unknown scheduler is refused naming the field", "[scenario][scheduler]") {
  auto s = closed_loop("fifo");
  Errors errors;
  auto session = Session::create(s.dump(), test::profiles_loader(), errors);
  CHECK(session == nullptr);
  CHECK(errors.joined().find("/engine/scheduler") != std::string::npos);
}

TEST_CASE("the trtllm scheduler refuses vLLM's per-request chunk cap naming the field", "[scenario][scheduler]") {
  auto s = closed_loop("trtllm");
  s["engine"]["long_prefill_token_threshold"] = 512;
  Errors errors;
  auto session = Session::create(s.dump(), test::profiles_loader(), errors);
  CHECK(session == nullptr);
  CHECK(errors.joined().find("/engine/long_prefill_token_threshold") != std::string::npos);
  s["engine"].erase("long_prefill_token_threshold");
  const auto r = test::run_scenario(s.dump());
  CHECK(r["summary"]["completed"] == 32);
  CHECK(r["deployment"]["roles"][0]["scheduler"] == "trtllm");
}

TEST_CASE("max_prefill_tokens is SGLang's and refused under other schedulers naming the field",
          "[scenario][scheduler]") {
  for (const char* scheduler : {"vllm_v1", "trtllm"}) {
    auto s = closed_loop(scheduler);
    s["engine"]["max_prefill_tokens"] = 2524;
    Errors errors;
    auto session = Session::create(s.dump(), test::profiles_loader(), errors);
    CHECK(session == nullptr);
    CHECK(errors.joined().find("/engine/max_prefill_tokens") != std::string::npos);
  }
  // Under sglang a bound of one prompt's worth splits each wave's prefill into one batch per prompt (the 2048-token
  // budget alone takes two): a wave's first prompt no longer shares its step, so the mean TTFT falls.
  auto bounded = closed_loop("sglang");
  bounded["engine"]["max_prefill_tokens"] = 1024;
  const auto r = test::run_scenario(bounded.dump());
  REQUIRE(r["summary"]["completed"] == 32);
  const auto whole = test::run_scenario(closed_loop("sglang").dump());
  CHECK(r["summary"]["mean_ttft_ms"].get<double>() < whole["summary"]["mean_ttft_ms"].get<double>());
}
