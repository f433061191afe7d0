#include "core/metrics/cost_comparison.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace servesim;

namespace {
std::string result(double usd_per_hour, double tokens_per_s) {
  return nlohmann::json{{"scenario", {{"name", "x"}}},
                        {"summary", {{"usd_per_hour", usd_per_hour}, {"total_token_throughput", tokens_per_s}}}}
      .dump();
}
}  // namespace

TEST_CASE("spend ratio and cost efficiency follow Frontier's definitions", "[metrics][cost]") {
  std::string error;
  // Baseline: 8 H800 at $3.49; candidate: 4 H800 + 4 H20 at $1.59 with 10% less throughput.
  const auto doc = add_baseline_comparison(result(4 * 3.49 + 4 * 1.59, 900), result(8 * 3.49, 1000), error);
  REQUIRE(!doc.empty());
  const auto b = nlohmann::json::parse(doc)["baseline"];
  CHECK(b["spend_ratio"].get<double>() == Approx(27.92 / 20.32));
  CHECK(b["cost_efficiency"].get<double>() == Approx((900 / 20.32) / (1000 / 27.92)));
}

TEST_CASE("a missing price or a non-result document is an error, not a number", "[metrics][cost]") {
  std::string error;
  CHECK(add_baseline_comparison(result(0, 900), result(10, 1000), error).empty());
  CHECK_THAT(error, Catch::Contains("usd_per_hour"));
  CHECK(add_baseline_comparison("{}", result(10, 1000), error).empty());
  CHECK(add_baseline_comparison("not json", result(10, 1000), error).empty());
}
