#include "tests/test_support.h"

#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

namespace servesim::test {

ResourceLoader profiles_loader() { return directory_loader(SERVESIM_SOURCE_PROFILES); }

const ResourceCatalog& catalog() {
  static const ResourceCatalog c(profiles_loader());
  return c;
}

std::string preset_text(const std::string& name) {
  std::ifstream in(std::string(SERVESIM_SOURCE_PRESETS) + "/" + name + ".json");
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string run_scenario_text(const std::string& scenario_json, const SessionOptions& options) {
  Errors errors;
  auto s = Session::create(scenario_json, profiles_loader(), errors, options);
  INFO(errors.joined());
  REQUIRE(s != nullptr);
  Progress p;
  do p = s->step(1'000'000);
  while (!p.finished);
  return s->result_json();
}

nlohmann::json run_scenario(const std::string& scenario_json, const SessionOptions& options) {
  return nlohmann::json::parse(run_scenario_text(scenario_json, options));
}

ModelSpec bundled_model(const std::string& name) {
  ModelSpec m;
  Errors errors;
  read_model(Json(name), "/model", catalog(), m, errors);
  INFO(errors.joined());
  REQUIRE(errors.ok());
  return m;
}

GpuSpec bundled_gpu(const std::string& name) {
  GpuSpec g;
  Errors errors;
  read_gpu(Json(name), "/hardware/gpu", catalog(), g, errors);
  INFO(errors.joined());
  REQUIRE(errors.ok());
  return g;
}

OpTable bundled_table(const std::string& folder, const std::string& file) {
  auto text = catalog().load_text(folder, file);
  REQUIRE(text);
  OpTable t;
  REQUIRE(parse_op_table(*text, t).empty());
  return t;
}

OpGrid bundled_grid(const std::string& folder, const std::string& file, const std::vector<std::string>& key) {
  const OpTable t = bundled_table(folder, file);
  const OpGrid* grid = t.find(key);
  REQUIRE(grid != nullptr);
  return *grid;
}

nlohmann::json small_scenario() {
  return nlohmann::json::parse(R"({
    "version": 1, "name": "small", "seed": 7, "model": "Llama-3.1-8B", "hardware": {"gpu": "H100-SXM"},
    "deployment": {"roles": [{"role": "C", "replicas": 1}]},
    "workload": {"num_requests": 50, "arrival": {"process": "poisson", "request_rate": 10},
                 "input_len": {"dist": "fixed", "value": 512}, "output_len": {"dist": "fixed", "value": 64}}
  })");
}

}  // namespace servesim::test
