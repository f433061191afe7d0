#include <catch2/catch.hpp>

#include "core/explore/prefilter.h"
#include "core/explore/sweep_runner.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {
std::string sweep_text(int total_gpus = 8) {
  auto base = test::small_scenario();
  base["workload"]["num_requests"] = 20;
  Json s = {{"version", 1}, {"name", "t"}, {"total_gpus", total_gpus}, {"group_by", "arch"},
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

SweepSpec parsed(const std::string& text) {
  SweepSpec spec;
  Errors errors;
  INFO(errors.joined());
  REQUIRE(parse_sweep(text, spec, errors));
  return spec;
}
}  // namespace

TEST_CASE("expansion is a fixed-order product with ids that depend only on the assignment", "[explore][sweep]") {
  const auto pts = expand_sweep(parsed(sweep_text()));
  REQUIRE(pts.size() == 6);
  CHECK(pts[0].assignment == Json({{"arch", "C"}, {"tp", 1}}));
  CHECK(pts[1].assignment == Json({{"arch", "C"}, {"tp", 2}}));
  CHECK(pts[3].assignment == Json({{"arch", "PD"}, {"tp", 1}}));
  CHECK(pts[3].group == "PD");
  CHECK(pts[0].id == "pt-" + fnv1a_hex(R"({"arch":"C","tp":1})"));
  // GPU shares resolve against the budget and the role's world size.
  CHECK(pts[0].scenario["deployment"]["roles"][0]["replicas"] == 8);
  CHECK(pts[1].scenario["deployment"]["roles"][0]["replicas"] == 4);
  CHECK(pts[4].scenario["deployment"]["roles"][1]["replicas"] == 2);
  CHECK(pts[4].scenario["deployment"]["roles"][1]["tensor_parallel_size"] == 2);
  // tp 16 on a budget of 4 GPUs per role gives no replica: the point carries the reason.
  CHECK_THAT(pts[5].error, Catch::Contains("gives no replica"));
}

TEST_CASE("set_json_pointer creates members, unescapes tokens and refuses missing array elements", "[explore][sweep]") {
  Json doc = {{"a", Json::array({1, 2})}};
  std::string err;
  CHECK(set_json_pointer(doc, "/b/c~1d", 5, err));
  CHECK(doc["b"]["c/d"] == 5);
  CHECK(set_json_pointer(doc, "/a/1", 7, err));
  CHECK(doc["a"][1] == 7);
  CHECK_FALSE(set_json_pointer(doc, "/a/5", 7, err));
  CHECK_THAT(err, Catch::Contains("no array element"));
}

TEST_CASE("the pre-filter counts why points cannot run", "[explore][sweep]") {
  auto pts = expand_sweep(parsed(sweep_text()));
  CHECK(prefilter_point(pts[0], 8, test::catalog()).empty());
  CHECK(prefilter_point(pts[5], 8, test::catalog()).rfind("unbuildable", 0) == 0);
  pts[0].scenario["model"] = "Llama-3.1-70B";  // 140 GB of weights on one 80 GB GPU
  CHECK(prefilter_point(pts[0], 8, test::catalog()).rfind("weights do not fit", 0) == 0);
  pts[1].scenario["deployment"]["roles"][0]["replicas"] = 9;
  CHECK(prefilter_point(pts[1], 8, test::catalog()).rfind("over budget", 0) == 0);
}

TEST_CASE("merging shards gives the same document as one run, whatever the split", "[explore][sweep]") {
  const std::string text = sweep_text();
  const SweepSpec spec = parsed(text);
  const auto pts = expand_sweep(spec);
  std::vector<Json> records;
  for (const auto& p : pts) records.push_back(evaluate_point(spec, p, test::profiles_loader()));
  std::string error;
  const std::string single = merge_shards({make_shard(spec, text, 0, 1, 6, records).dump()}, error);
  REQUIRE(!single.empty());
  std::vector<Json> even, odd;
  for (std::size_t i = 0; i < records.size(); ++i) (i % 2 ? odd : even).push_back(records[i]);
  const std::string split = merge_shards({make_shard(spec, text, 1, 2, 6, odd).dump(),
                                          make_shard(spec, text, 0, 2, 6, even).dump()}, error);
  CHECK(split == single);
  const Json m = Json::parse(single);
  CHECK(m["ran"] == 4);  // tp 16 leaves no replica in either architecture
  CHECK(m["filtered_by_reason"]["unbuildable"] == 2);
  CHECK(!m["best"].get<std::string>().empty());
  // A missing shard is an error, not a smaller frontier.
  CHECK(merge_shards({make_shard(spec, text, 0, 2, 6, even).dump()}, error).empty());
  CHECK_THAT(error, Catch::Contains("missing"));
  CHECK_THAT(sweep_csv(single), Catch::StartsWith("id,group,arch,tp,tokens_per_s_per_user"));
}

TEST_CASE("bad sweep documents are refused with their paths", "[explore][sweep]") {
  SweepSpec spec;
  Errors errors;
  CHECK_FALSE(parse_sweep(R"({"version": 1, "base": {}, "axes": [{"name": "x", "values": [1]}]})", spec, errors));
  CHECK_THAT(errors.joined(), Catch::Contains("/axes/0: an axis has either"));
  Errors e2;
  Json big = Json::parse(sweep_text());
  big["axes"] = Json::array();
  for (int i = 0; i < 6; ++i) big["axes"].push_back({{"name", "a" + std::to_string(i)}, {"path", "/seed"}, {"values", Json::array({1, 2, 3, 4, 5, 6, 7, 8})}});
  CHECK_FALSE(parse_sweep(big.dump(), spec, e2));
  CHECK_THAT(e2.joined(), Catch::Contains("more than 100000 points"));
}

TEST_CASE("GPU shares of an F role resolve against its FFN-domain world size", "[explore][sweep]") {
  Json s = Json::parse(sweep_text(16));
  s["axes"] = Json::parse(R"([
    {"name": "arch", "variants": [
      {"label": "AF", "set": {"/deployment/roles": [
        {"role": "P", "replicas": {"gpu_share": 0.5}},
        {"role": "A", "replicas": {"gpu_share": 0.25}, "parallelism": {"tp_attn": 2}},
        {"role": "F", "replicas": {"gpu_share": 0.25}, "parallelism": {"pp": 2, "tp_ffn": 1, "ep_ffn": 1}}]}}]},
    {"name": "tp", "paths": ["/deployment/roles/0/tensor_parallel_size"], "values": [2]}
  ])");
  const auto pts = expand_sweep(parsed(s.dump()));
  REQUIRE(pts.size() == 1);
  REQUIRE(pts[0].error.empty());
  const Json& roles = pts[0].scenario["deployment"]["roles"];
  CHECK(roles[0]["replicas"] == 4);  // 8 GPUs / tp 2
  CHECK(roles[1]["replicas"] == 2);  // 4 GPUs / tp_attn 2
  CHECK(roles[2]["replicas"] == 2);  // 4 GPUs / (pp 2 x tp_ffn 1 x ep_ffn 1)
}
