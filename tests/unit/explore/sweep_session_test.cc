#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "core/explore/sweep_runner.h"
#include "core/explore/sweep_session.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {
std::string sweep_text() {
  auto base = test::small_scenario();
  base["workload"]["num_requests"] = 20;
  Json s = {{"version", 1}, {"name", "t"}, {"total_gpus", 8}, {"group_by", "arch"},
            {"sla", {{"ttft_ms", 5000}, {"tpot_ms", 200}}}, {"base", base}};
  s["axes"] = Json::parse(R"([
    {"name": "arch", "variants": [
      {"label": "C", "set": {"/deployment/roles": [{"role": "C", "replicas": {"gpu_share": 1.0}}]}},
      {"label": "PD", "set": {"/deployment/roles": [{"role": "P", "replicas": {"gpu_share": 0.5}},
                                                   {"role": "D", "replicas": {"gpu_share": 0.5}}]}}]},
    {"name": "tp", "paths": ["/deployment/roles/0/tensor_parallel_size", "/deployment/roles/1/tensor_parallel_size"],
     "skip_missing": true, "values": [1, 2, 16]}
  ])");
  return s.dump();
}
}  // namespace

TEST_CASE("a sweep session expands without scenarios and merges like servesim sweep", "[explore][sweep]") {
  const std::string text = sweep_text();
  SweepSession session;
  const Json loaded = Json::parse(session.load(text));
  REQUIRE(loaded["ok"] == true);
  CHECK(loaded["errors"].empty());
  REQUIRE(loaded["points"].size() == 6);
  CHECK(loaded["axes"] == Json({"arch", "tp"}));
  CHECK(loaded["points"][1] == Json({{"index", 1}, {"id", loaded["points"][1]["id"]}, {"group", "C"},
                                     {"assignment", {{"arch", "C"}, {"tp", 2}}}}));
  CHECK_FALSE(loaded["points"][0].contains("scenario"));
  CHECK(Json::parse(session.scenario(3))["deployment"]["roles"][0]["role"] == "P");
  CHECK(session.scenario(6).empty());
  CHECK(session.evaluate(-1, test::profiles_loader()).empty());

  // Records evaluated in any order, merged here, equal the CLI's single-shard merge byte for byte.
  SweepSpec spec;
  Errors errors;
  REQUIRE(parse_sweep(text, spec, errors));
  std::vector<Json> native;
  for (const auto& p : expand_sweep(spec)) native.push_back(evaluate_point(spec, p, test::profiles_loader()));
  std::string error;
  const std::string expected = merge_shards({make_shard(spec, text, 0, 1, 6, native).dump()}, error);
  REQUIRE(!expected.empty());
  std::vector<std::string> recs;
  for (std::int64_t i = 5; i >= 0; --i) recs.push_back(session.evaluate(i, test::profiles_loader()));
  std::string array = "[";
  for (const auto& r : recs) array += (array.size() > 1 ? "," : "") + r;
  array += "]";
  const Json merged = Json::parse(session.merge(array));
  REQUIRE(merged["ok"] == true);
  CHECK(merged["merged"] == expected);
  CHECK(merged["csv"] == sweep_csv(expected));

  // Missing points and bad input are errors, not exceptions.
  CHECK(Json::parse(session.merge("[" + recs[0] + "]"))["ok"] == false);
  CHECK(Json::parse(session.merge("{"))["error"] == "records: expected a JSON array");
  CHECK(Json::parse(session.merge("[{\"index\": 0}]"))["ok"] == false);
}

TEST_CASE("a sweep session reports a bad sweep with paths and holds no points", "[explore][sweep]") {
  SweepSession session;
  const Json loaded = Json::parse(session.load(R"({"version": 1, "axes": []})"));
  CHECK(loaded["ok"] == false);
  CHECK(loaded["points"].empty());
  CHECK(std::any_of(loaded["errors"].begin(), loaded["errors"].end(),
                    [](const Json& e) { return e["path"] == "/base"; }));
  CHECK(session.size() == 0);
  CHECK(Json::parse(session.merge("[]"))["error"] == "no sweep is loaded");
  CHECK(Json::parse(session.load("\xff"))["ok"] == false);
}

TEST_CASE("reframing a merged sweep under another SLA equals merging a sweep run with that SLA", "[explore][sweep]") {
  const std::string text = sweep_text();
  SweepSession session;
  REQUIRE(Json::parse(session.load(text))["ok"] == true);
  std::string array = "[";
  for (std::int64_t i = 0; i < session.size(); ++i)
    array += (i ? "," : "") + session.evaluate(i, test::profiles_loader());
  array += "]";
  const std::string merged = Json::parse(session.merge(array))["merged"];

  // Under the sweep's own view the document comes back byte for byte.
  const Json same = Json::parse(SweepSession::reframe(merged, R"({"percentile": "p95", "sla": {"ttft_ms": 5000, "tpot_ms": 200}})"));
  REQUIRE(same["ok"] == true);
  CHECK(same["merged"] == merged);

  // Under a p50 TPOT bound just below the best point's own: the same as running the sweep with that SLA (apart
  // from the sweep's hash), and the best point changes.
  const Json merged_doc = Json::parse(merged);
  double tpot = 0;
  for (const auto& p : merged_doc["points"])
    if (p["id"] == merged_doc["best"]) tpot = std::nextafter(p["metrics"]["p50_tpot_ms"].get<double>(), 0.0);
  REQUIRE(tpot > 0);
  Json other = Json::parse(text);
  other["percentile"] = "p50";
  other["sla"] = {{"ttft_ms", 5000}, {"tpot_ms", tpot}};
  SweepSpec spec;
  Errors errors;
  REQUIRE(parse_sweep(other.dump(), spec, errors));
  std::vector<Json> native;
  for (const auto& p : expand_sweep(spec)) native.push_back(evaluate_point(spec, p, test::profiles_loader()));
  std::string error;
  Json expected = Json::parse(merge_shards({make_shard(spec, other.dump(), 0, 1, 6, native).dump()}, error));
  const Json view = {{"percentile", "p50"}, {"sla", {{"ttft_ms", 5000}, {"tpot_ms", tpot}}}};
  const Json re = Json::parse(SweepSession::reframe(merged, view.dump()));
  REQUIRE(re["ok"] == true);
  Json got = Json::parse(re["merged"].get<std::string>());
  CHECK(got["sweep_hash"] != expected["sweep_hash"]);
  got["sweep_hash"] = expected["sweep_hash"];
  CHECK(got == expected);
  CHECK(got["best"] != merged_doc["best"]);  // the tighter SLA moves the best point
  CHECK(re["csv"] == sweep_csv(re["merged"]));

  // Bad views and documents are errors that name the field.
  const Json bad = Json::parse(SweepSession::reframe(merged, R"({"percentile": "p42", "sla": {"tpot_ms": -1}})"));
  CHECK(bad["ok"] == false);
  std::vector<std::string> paths;
  for (const auto& e : bad["errors"]) paths.push_back(e["path"]);
  CHECK(paths == std::vector<std::string>{"/percentile", "/sla/tpot_ms"});
  CHECK(Json::parse(SweepSession::reframe("{}", R"({"percentile": "p50"})"))["errors"][0]["message"] ==
        "not a merged sweep document");
  CHECK(Json::parse(SweepSession::reframe(merged, "{"))["ok"] == false);
}
