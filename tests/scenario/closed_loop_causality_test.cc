// A closed-loop client's next request cannot ride in the batch its engine forms at the instant the previous
// response completes: every engine (vLLM V1's busy loop, SGLang's event loop, TRT-LLM's executor) forms that batch
// right after sending the step's outputs, before any client can have read them. With no think time the follow-up
// arrives at the completion's time but after that batch, so it waits for the next one. (Under async scheduling the
// batch after the next is formed at the completion too; the driver's unit test covers both: the follow-up is sent
// after the completion's call, never inside it.)
#include <catch2/catch.hpp>

#include "tests/test_support.h"

using namespace servesim;

namespace {

nlohmann::json two_clients() {
  auto s = test::small_scenario();
  s["engine"] = {{"async_scheduling", false}};
  s["workload"]["num_requests"] = 24;
  s["workload"]["arrival"] = {{"process", "closed_loop"}, {"max_concurrency", 2}};
  s["workload"]["input_len"] = {{"dist", "fixed"}, {"value", 256}};
  s["workload"]["output_len"] = {{"dist", "uniform"}, {"min", 4}, {"max", 40}};
  s["output"] = {{"requests", true}};
  return s;
}

}  // namespace

TEST_CASE("a closed-loop follow-up never joins the batch formed at its predecessor's completion",
          "[scenario][closed_loop]") {
  const auto res = test::run_scenario(two_clients().dump());
  REQUIRE(res["summary"]["completed"] == 24);
  const auto& q = res["requests"];
  const std::size_t n = q["arrival_ms"].size();
  int checked = 0;
  for (std::size_t i = 2; i < n; ++i) {
    const double arrival = q["arrival_ms"][i].get<double>();
    // Only follow-ups that arrive while the other client's request is still running: the engine is mid-run, so it
    // forms a batch at this instant, and that batch must not contain the newcomer (it did when the driver sent the
    // follow-up from inside the completion: first_scheduled == arrival).
    bool other_running = false;
    for (std::size_t j = 0; j < n; ++j)
      if (j != i && q["arrival_ms"][j].get<double>() < arrival && q["finished_ms"][j].get<double>() > arrival)
        other_running = true;
    if (!other_running) continue;
    ++checked;
    INFO("request " << i);
    CHECK(q["first_scheduled_ms"][i].get<double>() > arrival);
  }
  CHECK(checked >= 5);  // the uniform outputs put most completions mid-run
}
