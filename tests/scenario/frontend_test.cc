// engine.frontend: the serving front-end as one serial resource per replica in each direction. A request waits its
// turn of request_us before the engine sees it; a token its turn of token_us before the client sees it, so a step's
// tokens reach their clients one turn apart, latencies are the client's, and a closed loop cannot stream faster than
// one token per turn. Zero (the default) leaves every result as it was (the pinned result hash and the preset
// expectations cover that).
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "tests/test_support.h"

using namespace servesim;

namespace {

/// `n` clients that all send at time 0, fixed prompts of 64 tokens and `out` output tokens.
nlohmann::json burst(int n, int out) {
  auto s = test::small_scenario();
  s["workload"]["num_requests"] = n;
  s["workload"]["arrival"] = {{"process", "closed_loop"}, {"max_concurrency", n}};
  s["workload"]["input_len"] = {{"dist", "fixed"}, {"value", 64}};
  s["workload"]["output_len"] = {{"dist", "fixed"}, {"value", out}};
  s["output"] = {{"requests", true}};
  return s;
}

std::vector<double> column(const nlohmann::json& res, const char* name) {
  std::vector<double> v;
  for (const auto& x : res["requests"][name]) v.push_back(x.get<double>());
  return v;
}

}  // namespace

TEST_CASE("a step's tokens reach their clients one front-end turn apart", "[scenario][frontend]") {
  // Eight one-token requests share the first step: without a front-end every client sees its token when it ends.
  const auto plain = test::run_scenario(burst(8, 1).dump());
  const std::vector<double> at = column(plain, "first_token_ms");
  REQUIRE(at.size() == 8);
  for (double t : at) REQUIRE(t == Approx(at[0]).margin(1e-9));
  CHECK_FALSE(plain["deployment"]["roles"][0].contains("frontend"));

  auto s = burst(8, 1);
  s["engine"]["frontend"] = {{"token_us", 500}};
  const auto streamed = test::run_scenario(s.dump());
  std::vector<double> seen = column(streamed, "first_token_ms");
  std::sort(seen.begin(), seen.end());
  for (std::size_t k = 0; k < seen.size(); ++k) {
    INFO("token " << k);
    CHECK(seen[k] == Approx(at[0] + 0.5 * static_cast<double>(k + 1)).margin(1e-6));
  }
  // The client's view is what the result reports: the last request completes with its token.
  CHECK(column(streamed, "finished_ms") == column(streamed, "first_token_ms"));
  CHECK(streamed["summary"]["mean_ttft_ms"].get<double>() ==
        Approx(plain["summary"]["mean_ttft_ms"].get<double>() + 0.5 * 4.5).margin(1e-6));
  CHECK(streamed["deployment"]["roles"][0]["frontend"] == nlohmann::json({{"request_us", 0.0}, {"token_us", 500.0}}));
}

TEST_CASE("requests that arrive together reach the engine one front-end turn apart", "[scenario][frontend]") {
  auto s = burst(4, 4);
  s["engine"]["frontend"] = {{"request_us", 2000}};
  const auto res = test::run_scenario(s.dump());
  REQUIRE(res["summary"]["completed"] == 4);
  std::vector<double> scheduled = column(res, "first_scheduled_ms");
  std::sort(scheduled.begin(), scheduled.end());
  for (std::size_t k = 0; k < scheduled.size(); ++k) {
    INFO("request " << k);
    CHECK(scheduled[k] >= 2.0 * static_cast<double>(k + 1) - 1e-9);
  }
  // Each waits in the front-end, so TTFT (from the client's send) includes its turn.
  for (double t : column(res, "first_token_ms")) CHECK(t > 2.0);
}

TEST_CASE("a closed loop cannot stream faster than one token per front-end turn", "[scenario][frontend]") {
  // Sixteen clients of 64-token outputs: the engine alone streams Llama-3.1-8B faster than 1000 tokens/s on an H100.
  auto s = burst(16, 64);
  s["workload"]["num_requests"] = 64;
  s["output"] = nlohmann::json::object();
  const auto engine_only = test::run_scenario(s.dump());
  REQUIRE(engine_only["summary"]["output_throughput"].get<double>() > 1500.0);
  s["engine"]["frontend"] = {{"token_us", 1000}};
  const auto capped = test::run_scenario(s.dump());
  const double rate = capped["summary"]["output_throughput"].get<double>();
  CHECK(rate <= 1000.0 + 1e-6);
  CHECK(rate > 900.0);  // the engine keeps the front-end busy
  // Tokens queue behind the front-end, so the clients wait longer for their first token than the engine takes.
  CHECK(capped["summary"]["mean_ttft_ms"].get<double>() > 1.5 * engine_only["summary"]["mean_ttft_ms"].get<double>());
}
