// Attention/FFN disaggregation in the deployment spec: P + A + F, A/F pairing and the afd block.
#include <catch2/catch.hpp>

#include "core/spec/errors.h"
#include "core/spec/scenario.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

nlohmann::json afd_scenario() {
  return nlohmann::json::parse(R"({
    "version": 1, "name": "afd", "seed": 1, "model": "Qwen3-30B-A3B", "hardware": {"gpu": "H100-SXM"},
    "deployment": {"roles": [
      {"role": "P", "replicas": 1, "parallelism": {"tp_attn": 2, "tp_ffn": 1, "ep_ffn": 2}},
      {"role": "A", "replicas": 2, "parallelism": {"tp_attn": 2, "dp_attn": 2}},
      {"role": "F", "replicas": 2, "gpu": "H800", "parallelism": {"tp_ffn": 1, "ep_ffn": 8}}],
      "afd": {"micro_batches": 2, "link": "inter_node", "efficiency": 0.8, "latency_us": 10}},
    "workload": {"num_requests": 4, "arrival": {"process": "poisson", "request_rate": 1},
                 "input_len": {"dist": "fixed", "value": 100}, "output_len": {"dist": "fixed", "value": 10}}
  })");
}

Errors parse(const nlohmann::json& doc, Scenario* out = nullptr) {
  Scenario s;
  Errors e;
  parse_scenario(doc.dump(), test::catalog(), s, e);
  if (out) *out = s;
  return e;
}

std::string first_path(const Errors& e) {
  INFO(e.joined());
  REQUIRE_FALSE(e.list().empty());
  return e.list().front().path;
}

}  // namespace

TEST_CASE("a P + A + F deployment parses with each role's own domain and counts F's GPUs", "[spec][afd]") {
  Scenario s;
  const Errors e = parse(afd_scenario(), &s);
  INFO(e.joined());
  REQUIRE(e.ok());
  const auto& roles = s.deployment.roles;
  CHECK(roles[1].kind == RoleKind::kAttention);
  CHECK(roles[2].kind == RoleKind::kFfn);
  CHECK(roles[1].world_size() == 4);   // pp x tp_attn x dp_attn
  CHECK(roles[2].world_size() == 8);   // pp x tp_ffn x ep_ffn
  CHECK(s.deployment.total_gpus() == 2 + 2 * 4 + 2 * 8);
  CHECK(s.deployment.afd.micro_batches == 2);
  CHECK(s.deployment.attention_ffn());
}

TEST_CASE("invalid A/F deployments are refused at their JSON paths", "[spec][afd]") {
  auto a_without_f = afd_scenario();
  a_without_f["deployment"]["roles"].erase(2);
  a_without_f["deployment"].erase("afd");
  CHECK(first_path(parse(a_without_f)) == "/deployment/roles");

  auto counts = afd_scenario();
  counts["deployment"]["roles"][2]["replicas"] = 3;
  CHECK(first_path(parse(counts)) == "/deployment/roles/2/replicas");

  auto a_with_ep = afd_scenario();
  a_with_ep["deployment"]["roles"][1]["parallelism"]["ep_ffn"] = 4;
  CHECK(first_path(parse(a_with_ep)) == "/deployment/roles/1/parallelism/ep_ffn");

  auto f_with_dp = afd_scenario();
  f_with_dp["deployment"]["roles"][2]["parallelism"]["dp_attn"] = 2;
  CHECK(first_path(parse(f_with_dp)) == "/deployment/roles/2/parallelism/dp_attn");

  auto pp = afd_scenario();
  pp["deployment"]["roles"][2]["parallelism"]["pp"] = 2;
  CHECK(first_path(parse(pp)) == "/deployment/roles/2/parallelism/pp");

  auto mb = afd_scenario();
  mb["deployment"]["afd"]["micro_batches"] = 9;
  CHECK(first_path(parse(mb)) == "/deployment/afd/micro_batches");

  auto link = afd_scenario();
  link["deployment"]["afd"]["link"] = "pcie";
  CHECK(first_path(parse(link)) == "/deployment/afd/link");

  auto unknown = afd_scenario();
  unknown["deployment"]["afd"]["micro_batch"] = 2;
  CHECK(first_path(parse(unknown)) == "/deployment/afd/micro_batch");

  auto afd_on_pd = afd_scenario();
  afd_on_pd["deployment"]["roles"] = nlohmann::json::parse(R"([{"role": "P"}, {"role": "D"}])");
  CHECK(first_path(parse(afd_on_pd)) == "/deployment/afd");
}

TEST_CASE("an F role's GPU without inter_node_gb_s is refused while A <-> F runs over the network", "[spec][afd]") {
  auto doc = afd_scenario();
  auto gpu = nlohmann::json::parse(*test::catalog().load_text("gpus", "H800.json"));
  gpu["name"] = "H800 without a NIC";
  gpu.erase("inter_node_gb_s");
  doc["deployment"]["roles"][2]["gpu"] = gpu;  // F: no KV, but the activation link
  Errors e = parse(doc);
  INFO(e.joined());
  REQUIRE(e.list().size() == 1);
  CHECK(e.list()[0].to_string() ==
        "/deployment/roles/2/gpu/inter_node_gb_s: is required (network bandwidth per GPU, GB/s): role F exchanges "
        "activations over the network; or give /deployment/afd a bandwidth_gb_s (or link \"nvlink\")");
  doc["deployment"]["afd"]["link"] = "nvlink";
  CHECK(parse(doc).ok());
  // On A the KV from P is named first.
  doc = afd_scenario();
  doc["deployment"]["roles"][1]["gpu"] = gpu;
  e = parse(doc);
  REQUIRE(e.list().size() == 1);
  CHECK_THAT(e.list()[0].to_string(), Catch::StartsWith("/deployment/roles/1/gpu/inter_node_gb_s: is required"));
  CHECK_THAT(e.list()[0].to_string(), Catch::Contains("role A sends or receives KV over the network"));
}
