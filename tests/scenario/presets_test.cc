// Every preset runs and its headline metrics match tests/scenario/expected_presets.json within the recorded
// relative tolerance. After a deliberate model change: scripts/update_scenario_expectations.
#include <cmath>
#include <fstream>

#include <catch2/catch.hpp>

#include "tests/test_support.h"

using namespace servesim;

namespace {
nlohmann::json expected() {
  std::ifstream in(std::string(SERVESIM_SOURCE_PRESETS) + "/../tests/scenario/expected_presets.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}
}  // namespace

TEST_CASE("every preset's headline metrics match the recorded expectations", "[scenario][presets]") {
  const auto exp = expected();
  const double tol = exp["tolerance_rel"].get<double>();
  for (const auto& [name, metrics] : exp["presets"].items()) {
    const auto result = test::run_scenario(test::preset_text(name));
    INFO("preset " << name);
    CHECK(result["status"] == "completed");
    for (const auto& [key, want] : metrics.items()) {
      INFO("metric " << key);
      const double got = result["summary"][key].get<double>();
      const double w = want.get<double>();
      CHECK(std::fabs(got - w) <= tol * std::fabs(w) + 1e-9);
    }
  }
}

TEST_CASE("the default preset serves every request with the memory vLLM would give it", "[scenario][presets]") {
  const auto result = test::run_scenario(test::preset_text("default"));
  CHECK(result["summary"]["failed"] == 0);
  const auto& kv = result["deployment"]["roles"][0]["kv_cache"];
  // Llama-3.1-8B in bf16 on an 80 GB H100 at 0.9: ~15 GiB of weights leave ~50 GiB of KV cache.
  CHECK(kv["weights_gib"].get<double>() == Approx(14.96).epsilon(0.01));
  CHECK(kv["kv_cache_gib"].get<double>() > 45.0);
  CHECK(kv["kv_cache_gib"].get<double>() < 60.0);
}

TEST_CASE("every preset validates through the CLI path", "[scenario][presets]") {
  for (const char* name : {"default", "closed_loop_h100", "azure_trace", "multi_replica"}) {
    INFO(name);
    const auto v = nlohmann::json::parse(validate_scenario_json(test::preset_text(name), test::profiles_loader()));
    CHECK(v["ok"] == true);
  }
}
