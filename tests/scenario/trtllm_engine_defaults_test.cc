// A TRT-LLM role's engine defaults end to end: its KV budget follows TRT-LLM's arithmetic and its KV blocks are
// TRT-LLM's default tokens_per_block (32), unless the scenario sets block_size; a role that switches its backend
// back to vLLM gets vLLM's 16 and accounting. Chunked prefill is off, as TRT-LLM ships it, so a prompt longer than
// max_num_tokens is refused.
#include <catch2/catch.hpp>

#include "tests/test_support.h"

using namespace servesim;

TEST_CASE("a trtllm role reports TRT-LLM's KV accounting and 32-token blocks unless block_size is set",
          "[scenario][memory][trtllm]") {
  auto s = test::small_scenario();
  s["engine"] = {{"backend", "trtllm"}};
  const auto r = test::run_scenario(s.dump());
  const auto& kv = r["deployment"]["roles"][0]["kv_cache"];
  CHECK(kv["accounting"] == "trtllm");
  CHECK(kv["block_size"] == 32);
  CHECK(kv["kv_cache_tokens"].get<std::int64_t>() == kv["num_gpu_blocks"].get<std::int64_t>() * 32);
  // The free memory at the profiling peak is split between the KV cache and what is left free.
  CHECK(kv["kv_cache_gib"].get<double>() + kv["trtllm_left_free_gib"].get<double>() ==
        Approx(kv["free_at_profile_gib"].get<double>()));
  // An explicit block size is kept.
  s["engine"]["block_size"] = 16;
  CHECK(test::run_scenario(s.dump())["deployment"]["roles"][0]["kv_cache"]["block_size"] == 16);
  // A role whose engine turns the backend back to vLLM takes vLLM's defaults.
  s["engine"].erase("block_size");
  s["deployment"]["roles"][0]["engine"] = {{"backend", "vllm"}};
  const auto v = test::run_scenario(s.dump());
  CHECK(v["deployment"]["roles"][0]["kv_cache"]["block_size"] == 16);
  CHECK(v["deployment"]["roles"][0]["kv_cache"]["accounting"] == "vllm");
}

namespace {
bool has_adapter(const nlohmann::json& role, const std::string& name) {
  for (const auto& a : role["adapters"])
    if (a == name) return true;
  return false;
}
}  // namespace

TEST_CASE("a trtllm role prefills whole prompts and refuses one longer than max_num_batched_tokens",
          "[scenario][trtllm]") {
  auto s = test::small_scenario();
  s["engine"] = {{"backend", "trtllm"}, {"max_num_batched_tokens", 1024}};
  s["workload"]["num_requests"] = 6;
  s["workload"]["input_len"]["value"] = 1000;
  auto r = test::run_scenario(s.dump());
  CHECK_FALSE(has_adapter(r["deployment"]["roles"][0], "chunked_prefill"));
  CHECK(r["failures"].empty());
  CHECK(r["summary"]["completed"] == 6);
  // 1025 tokens do not fit one 1024-token step: TRT-LLM answers 400, the simulator fails the request and says why
  // (no start-up refusal, unlike vLLM's check that max_num_batched_tokens covers max_model_len).
  s["workload"]["input_len"]["value"] = 1025;
  r = test::run_scenario(s.dump());
  REQUIRE(r["failures"].size() == 1);
  CHECK(r["failures"][0]["count"] == 6);
  CHECK(r["failures"][0]["reason"].get<std::string>().find("max_num_batched_tokens (1024") != std::string::npos);
  // Chunked prefill on (TRT-LLM's enable_chunked_prefill: true) splits the prompt instead.
  s["engine"]["enable_chunked_prefill"] = true;
  r = test::run_scenario(s.dump());
  CHECK(has_adapter(r["deployment"]["roles"][0], "chunked_prefill"));
  CHECK(r["failures"].empty());
  // A role that switches the backend back to vLLM chunks by default.
  s["engine"].erase("enable_chunked_prefill");
  s["deployment"]["roles"][0]["engine"] = {{"backend", "vllm"}};
  r = test::run_scenario(s.dump());
  CHECK(has_adapter(r["deployment"]["roles"][0], "chunked_prefill"));
  CHECK(r["failures"].empty());
}
