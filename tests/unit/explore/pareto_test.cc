#include "core/explore/pareto.h"

#include <catch2/catch.hpp>

using namespace servesim;

TEST_CASE("the frontier keeps exactly the non-dominated points, sorted by x", "[explore][pareto]") {
  const std::vector<ParetoInput> pts = {
      {"a", "g", 10, 100, true}, {"b", "g", 20, 80, true}, {"c", "g", 15, 70, true},  // c dominated by b
      {"d", "g", 30, 30, true},  {"e", "g", 5, 90, true},                            // e dominated by a
  };
  const auto r = pareto_frontiers(pts);
  REQUIRE(r.frontiers.size() == 1);
  CHECK(r.frontiers[0].second == std::vector<std::string>{"a", "b", "d"});
  CHECK(r.best_id == "a");
}

TEST_CASE("equal points are both kept and ties for best go to higher x then lower id", "[explore][pareto]") {
  const std::vector<ParetoInput> pts = {{"z", "g", 10, 50, true}, {"y", "g", 10, 50, true}, {"x", "g", 12, 50, true}};
  const auto r = pareto_frontiers(pts);
  CHECK(r.frontiers[0].second == std::vector<std::string>{"x"});  // x dominates the two equal ones
  const auto eq = pareto_frontiers({{"z", "g", 10, 50, true}, {"y", "g", 10, 50, true}});
  CHECK(eq.frontiers[0].second == std::vector<std::string>{"y", "z"});
  CHECK(eq.best_id == "y");
}

TEST_CASE("points missing the SLA are excluded and groups get their own frontiers", "[explore][pareto]") {
  const std::vector<ParetoInput> pts = {{"a", "C", 10, 100, false}, {"b", "C", 5, 50, true},
                                        {"c", "PD", 8, 60, true}, {"d", "PD", 4, 40, true}};
  const auto r = pareto_frontiers(pts);
  REQUIRE(r.frontiers.size() == 2);
  CHECK(r.frontiers[0].first == "C");
  CHECK(r.frontiers[0].second == std::vector<std::string>{"b"});
  CHECK(r.frontiers[1].second == std::vector<std::string>{"c"});
  CHECK(r.best_id == "c");
  CHECK(pareto_frontiers({{"a", "C", 10, 100, false}}).best_id.empty());
}
