#include "core/spec/scenario.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/spec/errors.h"
#include "core/spec/resource_catalog.h"
#include "tests/test_support.h"

using namespace servesim;
using servesim::test::catalog;
using servesim::test::small_scenario;

namespace {

/// Parses `doc` and returns the errors (the scenario goes to `out` when given).
Errors parse(const Json& doc, Scenario* out = nullptr) {
  Scenario s;
  Errors e;
  parse_scenario(doc.dump(), catalog(), s, e);
  if (out) *out = s;
  return e;
}

/// Paths of all errors.
std::vector<std::string> paths(const Errors& e) {
  std::vector<std::string> p;
  for (const auto& x : e.list()) p.push_back(x.path);
  return p;
}

/// The message of the only error (fails when there is not exactly one).
std::string only_error(const Errors& e) {
  INFO(e.joined());
  REQUIRE(e.list().size() == 1);
  return e.list()[0].to_string();
}

/// Every bundled name of `folder`, to check an error lists them.
void check_lists_all(const std::string& message, const std::string& folder) {
  const auto names = catalog().list(folder);
  REQUIRE(names.size() >= 3);
  for (const auto& n : names) CHECK_THAT(message, Catch::Contains(n));
}

}  // namespace

TEST_CASE("the small valid scenario parses into the expected typed fields", "[spec][scenario]") {
  Scenario s;
  const Errors e = parse(small_scenario(), &s);
  INFO(e.joined());
  REQUIRE(e.ok());
  CHECK(s.version == 1);
  CHECK(s.name == "small");
  CHECK(s.seed == 7);
  CHECK(s.model.name == "Llama-3.1-8B");
  CHECK(s.model.hidden_size == 4096);
  CHECK(s.model.num_attention_heads == 32);
  CHECK(s.model.num_key_value_heads == 8);
  CHECK(s.model.head_dim == 128);
  CHECK(s.model.num_hidden_layers == 32);
  REQUIRE(s.deployment.roles.size() == 1);
  const RoleSpec& role = s.deployment.roles[0];
  CHECK(role.name == "C");
  CHECK(role.replicas == 1);
  CHECK(role.gpu.name == "H100-SXM");
  CHECK(role.gpu.memory_bytes == 85029158912.0);
  CHECK(role.engine.block_size == 16);
  CHECK(role.engine.max_num_seqs == 256);
  CHECK(s.workload.num_requests == 50);
  CHECK(s.workload.arrival.process == ArrivalSpec::Process::kPoisson);
  CHECK(s.workload.arrival.request_rate == 10.0);
  CHECK(s.workload.lengths.input.kind == LengthDist::Kind::kFixed);
  CHECK(s.workload.lengths.input.value == 512);
  CHECK(s.workload.lengths.output.value == 64);
  CHECK_FALSE(s.sla.any());
}

TEST_CASE("a block_size that is not a power of two is refused with its path and value", "[spec][scenario]") {
  auto doc = small_scenario();
  doc["engine"] = {{"block_size", 24}};
  CHECK(only_error(parse(doc)) == "/engine/block_size: must be a power of two between 1 and 256, got 24");

  auto role_level = small_scenario();
  role_level["deployment"]["roles"][0]["engine"] = {{"block_size", 512}};
  CHECK(only_error(parse(role_level)) ==
        "/deployment/roles/0/engine/block_size: must be a power of two between 1 and 256, got 512");

  Scenario s;
  auto ok = small_scenario();
  ok["engine"] = {{"block_size", 32}};
  REQUIRE(parse(ok, &s).ok());
  CHECK(s.deployment.roles[0].engine.block_size == 32);
}

TEST_CASE("front-end times are refused out of range or under an unknown key, naming the field", "[spec][scenario]") {
  auto neg = small_scenario();
  neg["engine"] = {{"frontend", {{"token_us", -1}}}};
  CHECK_THAT(only_error(parse(neg)), Catch::StartsWith("/engine/frontend/token_us: "));

  auto huge = small_scenario();
  huge["deployment"]["roles"][0]["engine"] = {{"frontend", {{"request_us", 1e30}}}};
  CHECK_THAT(only_error(parse(huge)), Catch::StartsWith("/deployment/roles/0/engine/frontend/request_us: "));

  auto wrong = small_scenario();
  wrong["engine"] = {{"frontend", {{"request_ms", 3}}}};
  CHECK_THAT(only_error(parse(wrong)), Catch::StartsWith("/engine/frontend/request_ms: unknown key"));

  auto not_object = small_scenario();
  not_object["engine"] = {{"frontend", 5}};
  CHECK_THAT(only_error(parse(not_object)), Catch::StartsWith("/engine/frontend: "));

  Scenario s;
  auto ok = small_scenario();
  ok["engine"] = {{"frontend", {{"request_us", 250.5}, {"token_us", 100}}}};
  REQUIRE(parse(ok, &s).ok());
  CHECK(s.deployment.roles[0].engine.frontend.request_us == 250.5);
  CHECK(s.deployment.roles[0].engine.frontend.token_us == 100);
}

TEST_CASE("TRT-LLM FP8 on a 16-bit checkpoint warns which export is priced", "[spec][scenario]") {
  // The warnings about TensorRT-LLM's checkpoints (the bundled configs also report their unused keys).
  auto trt_warnings = [](nlohmann::json doc) {
    Scenario s;
    const Errors e = parse(doc, &s);
    INFO(e.joined());
    REQUIRE(e.ok());
    std::vector<std::string> out;
    for (const auto& w : s.warnings)
      if (w.find("TensorRT-LLM") != std::string::npos) out.push_back(w);
    return out;
  };
  auto trt = small_scenario();
  trt["engine"] = {{"backend", "trtllm"}, {"dtype", "fp8"}};
  const auto w = trt_warnings(trt);
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::StartsWith("roles C (trtllm, dtype fp8): TensorRT-LLM serves pre-quantised checkpoints"));
  CHECK_THAT(w[0], Catch::Contains("16-bit model Llama-3.1-8B is priced as a per-tensor FP8 export"));

  auto vllm = small_scenario();  // vLLM quantises a 16-bit checkpoint online: nothing to say
  vllm["engine"] = {{"dtype", "fp8"}};
  CHECK(trt_warnings(vllm).empty());
  auto bf16 = small_scenario();
  bf16["engine"] = {{"backend", "trtllm"}};
  CHECK(trt_warnings(bf16).empty());
  auto quantised = trt;  // the checkpoint names its format: it is priced as such
  quantised["model"] = "DeepSeek-V3";
  quantised["hardware"]["gpu"] = "H200-SXM";
  quantised["deployment"]["roles"][0]["parallelism"] = {{"tp_attn", 8}, {"tp_ffn", 8}};
  CHECK(trt_warnings(quantised).empty());
}

TEST_CASE("unknown keys are errors naming their path", "[spec][scenario]") {
  auto top = small_scenario();
  top["colour"] = "blue";
  const std::string m = only_error(parse(top));
  CHECK_THAT(m, Catch::StartsWith("/colour: unknown key (known keys here: "));
  CHECK_THAT(m, Catch::Contains("workload"));

  auto nested = small_scenario();
  nested["workload"]["arrival"]["foo"] = 1;
  CHECK_THAT(only_error(parse(nested)), Catch::StartsWith("/workload/arrival/foo: unknown key"));

  auto deep = small_scenario();
  deep["deployment"]["roles"][0]["engine"] = {{"blocksize", 16}};
  CHECK_THAT(only_error(parse(deep)), Catch::StartsWith("/deployment/roles/0/engine/blocksize: unknown key"));

  auto slash = small_scenario();
  slash["sla"] = {{"ttft/ms", 5}};
  CHECK_THAT(only_error(parse(slash)), Catch::StartsWith("/sla/ttft~1ms: unknown key"));
}

TEST_CASE("several problems are all reported at once", "[spec][scenario]") {
  auto doc = small_scenario();
  doc["engine"] = {{"block_size", 24}, {"gpu_memory_utilization", 1.5}};
  doc["workload"]["num_requests"] = 0;
  doc["workload"]["arrival"]["foo"] = true;
  doc["sla"] = {{"ttft_ms", -1}};
  doc["extra"] = 1;
  const Errors e = parse(doc);
  INFO(e.joined());
  CHECK(e.list().size() == 6);
  const auto p = paths(e);
  for (const char* want : {"/engine/block_size", "/engine/gpu_memory_utilization", "/workload/num_requests",
                           "/workload/arrival/foo", "/sla/ttft_ms", "/extra"})
    CHECK(std::find(p.begin(), p.end(), want) != p.end());
  // joined() prints one line per error.
  const std::string all = e.joined();
  CHECK(std::count(all.begin(), all.end(), '\n') == 6);
}

TEST_CASE("values of the wrong type are refused with what was given", "[spec][scenario]") {
  auto seed = small_scenario();
  seed["seed"] = "seven";
  CHECK(only_error(parse(seed)) == "/seed: must be an integer between 0 and 9007199254740992, got \"seven\"");

  auto rate = small_scenario();
  rate["workload"]["arrival"]["request_rate"] = "fast";
  CHECK(only_error(parse(rate)) ==
        "/workload/arrival/request_rate: must be a number greater than 0 and at most 1e+07, got \"fast\"");

  auto flag = small_scenario();
  flag["engine"] = {{"enable_chunked_prefill", 1}};
  CHECK(only_error(parse(flag)) == "/engine/enable_chunked_prefill: must be true or false, got 1");

  auto fractional = small_scenario();
  fractional["workload"]["num_requests"] = 2.5;
  CHECK(only_error(parse(fractional)) ==
        "/workload/num_requests: must be an integer between 1 and 10000000, got 2.5");

  auto model = small_scenario();
  model["model"] = 42;
  CHECK(only_error(parse(model)) == "/model: must be an object, got 42");

  auto roles = small_scenario();
  roles["deployment"]["roles"] = {{"role", "C"}};  // an object, not an array
  CHECK_THAT(only_error(parse(roles)), Catch::StartsWith("/deployment/roles: is required: an array of 1 to 16 roles"));

  Scenario s;
  Errors e;
  CHECK_FALSE(read_scenario(Json::array({1, 2}), catalog(), s, e));
  CHECK(only_error(e) == "/: must be an object, got an array");
}

TEST_CASE("an integral float is accepted where an integer is expected", "[spec][scenario]") {
  auto doc = small_scenario();
  doc["workload"]["num_requests"] = 40.0;
  Scenario s;
  const Errors e = parse(doc, &s);
  INFO(e.joined());
  REQUIRE(e.ok());
  CHECK(s.workload.num_requests == 40);
}

TEST_CASE("absurd sizes are refused", "[spec][scenario]") {
  auto n = small_scenario();
  n["workload"]["num_requests"] = 1e12;
  CHECK_THAT(only_error(parse(n)), Catch::StartsWith("/workload/num_requests: must be between 1 and 10000000, got "));

  auto big_int = small_scenario();
  big_int["workload"]["num_requests"] = 18446744073709551615ULL;
  CHECK_THAT(only_error(parse(big_int)),
             Catch::StartsWith("/workload/num_requests: must be between 1 and 10000000, got 18446744073709551615"));

  auto replicas = small_scenario();
  replicas["deployment"]["roles"][0]["replicas"] = 1e9;
  CHECK_THAT(only_error(parse(replicas)),
             Catch::StartsWith("/deployment/roles/0/replicas: must be between 1 and 65536, got "));

  auto gpus = small_scenario();
  gpus["deployment"]["roles"][0]["replicas"] = 65536;
  gpus["deployment"]["roles"][0]["tensor_parallel_size"] = 4;
  const Errors ge = parse(gpus);
  CHECK(paths(ge) == std::vector<std::string>{"/deployment/roles"});
  CHECK_THAT(ge.joined(), Catch::Contains("the deployment uses 262144 GPUs; at most 131072 are supported"));

  auto seqs = small_scenario();
  seqs["engine"] = {{"max_num_seqs", 0}};
  CHECK(only_error(parse(seqs)) == "/engine/max_num_seqs: must be between 1 and 65536, got 0");

  auto util = small_scenario();
  util["engine"] = {{"gpu_memory_utilization", 1.5}};
  CHECK(only_error(parse(util)) ==
        "/engine/gpu_memory_utilization: must be a number greater than 0 and at most 1, got 1.5");

  auto zero_util = small_scenario();
  zero_util["engine"] = {{"gpu_memory_utilization", 0}};
  CHECK_THAT(only_error(parse(zero_util)), Catch::StartsWith("/engine/gpu_memory_utilization: must be a number greater than 0"));

  auto len = small_scenario();
  len["workload"]["input_len"]["value"] = 1 << 23;
  CHECK(only_error(parse(len)) == "/workload/input_len/value: must be between 1 and 4194304, got 8388608");

  auto name = small_scenario();
  name["name"] = std::string(201, 'x');
  CHECK(only_error(parse(name)) == "/name: must be at most 200 characters, got 201");
}

TEST_CASE("a document over 16 MiB is refused before parsing", "[spec][scenario]") {
  auto doc = small_scenario();
  doc["description"] = "short";
  std::string text = doc.dump();
  text.insert(text.size() - 1, std::string(20u << 20, ' '));  // 20 MB of whitespace: still valid JSON
  Scenario s;
  Errors e;
  CHECK_FALSE(parse_scenario(text, catalog(), s, e));
  CHECK(only_error(e) == "/: the scenario is " + std::to_string(text.size()) + " bytes; at most 16777216 are accepted");
}

TEST_CASE("malformed JSON reports the byte of the syntax error", "[spec][scenario]") {
  Scenario s;
  Errors e;
  CHECK_FALSE(parse_scenario(R"({"version": 1,})", catalog(), s, e));
  // The 15th byte is the '}' that may not follow a comma.
  CHECK_THAT(only_error(e), Catch::StartsWith("/: not valid JSON: syntax error at byte 15"));

  Errors e2;
  CHECK_FALSE(parse_scenario("{\"a\": [1, 2", catalog(), s, e2));
  // Unterminated: the error is at the end of input, one past the 11 bytes of text.
  CHECK_THAT(only_error(e2), Catch::StartsWith("/: not valid JSON: syntax error at byte 12"));

  Errors e3;
  CHECK_FALSE(parse_scenario("", catalog(), s, e3));
  CHECK_THAT(only_error(e3), Catch::StartsWith("/: not valid JSON: syntax error at byte"));

  CHECK_THAT(json_syntax_error("[1, 2,, 3]"), Catch::StartsWith("syntax error at byte 7"));
}

TEST_CASE("unknown model, GPU and trace names list the bundled ones", "[spec][scenario]") {
  auto model = small_scenario();
  model["model"] = "GPT-9";
  const std::string mm = only_error(parse(model));
  CHECK_THAT(mm, Catch::StartsWith("/model: unknown model \"GPT-9\"; bundled models: DeepSeek-V3, "));
  check_lists_all(mm, "models");

  auto gpu = small_scenario();
  gpu["hardware"]["gpu"] = "TPU-v9";
  const std::string gm = only_error(parse(gpu));
  CHECK_THAT(gm, Catch::StartsWith("/hardware/gpu: unknown GPU \"TPU-v9\"; catalog: A100-80G, "));
  check_lists_all(gm, "gpus");

  auto role_gpu = small_scenario();
  role_gpu["deployment"]["roles"][0]["gpu"] = "V100";
  CHECK_THAT(only_error(parse(role_gpu)), Catch::StartsWith("/deployment/roles/0/gpu: unknown GPU \"V100\""));

  auto trace = small_scenario();
  trace["workload"]["arrival"] = {{"process", "trace"}, {"trace", "nope"}};
  const std::string tm = only_error(parse(trace));
  CHECK_THAT(tm, Catch::StartsWith("/workload/arrival/trace: unknown trace \"nope\"; bundled: azure_code_2023, "));
  check_lists_all(tm, "traces");

  auto cdf = small_scenario();
  cdf["workload"]["input_len"] = {{"dist", "cdf"}, {"cdf", "zipf"}};
  const std::string cm = only_error(parse(cdf));
  CHECK_THAT(cm, Catch::StartsWith("/workload/input_len/cdf: unknown length CDF \"zipf\"; bundled: "));
  check_lists_all(cm, "workloads");
}

TEST_CASE("hostile strings are plain text and never become file paths", "[spec][scenario]") {
  std::vector<std::string> requested;
  const ResourceLoader base = servesim::test::profiles_loader();
  const ResourceCatalog spy([&](const std::string& rel) {
    requested.push_back(rel);
    return base(rel);
  });
  auto run = [&](const Json& doc, Scenario& s) {
    Errors e;
    parse_scenario(doc.dump(), spy, s, e);
    return e;
  };

  Scenario s;
  auto html = small_scenario();
  html["name"] = "<script>alert(1)</script>";
  html["description"] = "\"; DROP TABLE runs; --";
  REQUIRE(run(html, s).ok());
  CHECK(s.name == "<script>alert(1)</script>");
  CHECK(s.description == "\"; DROP TABLE runs; --");

  for (const char* evil : {"../../etc/passwd", "/etc/passwd", "models/../../x", "a\\..\\b", "Llama-3.1-8B/../x", ".."}) {
    INFO(evil);
    requested.clear();
    auto doc = small_scenario();
    doc["model"] = evil;
    doc["hardware"]["gpu"] = evil;
    Scenario bad;
    const Errors e = run(doc, bad);
    CHECK(paths(e) == std::vector<std::string>{"/model", "/hardware/gpu"});
    CHECK_THAT(e.joined(), Catch::Contains("unknown model \"" + std::string(evil) + "\""));
    for (const auto& r : requested) {
      INFO("loader asked for " << r);
      CHECK(r.find("..") == std::string::npos);
      CHECK(r.find('\\') == std::string::npos);
      CHECK(r.find("etc") == std::string::npos);
    }
  }
  CHECK_FALSE(is_safe_resource_name("../x"));
  CHECK_FALSE(is_safe_resource_name("a/b"));
  CHECK_FALSE(is_safe_resource_name(""));
  CHECK_FALSE(is_safe_resource_name(std::string(129, 'a')));
  CHECK(is_safe_resource_name("Llama-3.1-8B.json"));

  // A very long model name is cut in the message.
  auto longname = small_scenario();
  longname["model"] = std::string(5000, 'A');
  const std::string m = only_error(parse(longname));
  CHECK_THAT(m, Catch::StartsWith("/model: unknown model \"" + std::string(64, 'A') + "\";"));
  CHECK(m.size() < 1000);
}

TEST_CASE("a tensor parallel size that does not divide the heads names the role's field", "[spec][scenario]") {
  auto doc = small_scenario();
  doc["deployment"]["roles"][0]["tensor_parallel_size"] = 3;
  const Errors e = parse(doc);
  INFO(e.joined());
  REQUIRE(e.list().size() == 2);
  CHECK(e.list()[0].to_string() ==
        "/deployment/roles/0/tensor_parallel_size: must divide num_attention_heads (32), got 3");
  CHECK(e.list()[1].to_string() ==
        "/deployment/roles/0/tensor_parallel_size: must divide or be a multiple of num_key_value_heads (8), got 3");

  Scenario s;
  auto ok = small_scenario();
  ok["deployment"]["roles"][0]["tensor_parallel_size"] = 16;  // 16 divides 32 heads and is a multiple of 8 KV heads
  REQUIRE(parse(ok, &s).ok());
  CHECK(s.deployment.roles[0].parallelism.tp_attn == 16);
  CHECK(s.deployment.total_gpus() == 16);

  auto pp = small_scenario();
  pp["deployment"]["roles"][0]["pipeline_parallel_size"] = 64;
  CHECK(only_error(parse(pp)) == "/deployment/roles/0/pipeline_parallel_size: must not exceed num_hidden_layers (32)");
}

TEST_CASE("role mixes other than C alone, P plus D or P plus A plus F are refused with a message saying what to use",
          "[spec][scenario]") {
  auto lone_p = small_scenario();
  lone_p["deployment"]["roles"][0]["role"] = "P";
  CHECK(only_error(parse(lone_p)) ==
        "/deployment/roles: must be one co-located role C, one prefill role P and one decode role D, or one P, one "
        "attention role A and one FFN role F; got 0 C, 1 P, 0 D, 0 A, 0 F");

  auto a_without_f = small_scenario();
  a_without_f["deployment"]["roles"] = {{{"role", "P"}}, {{"role", "A"}}};
  CHECK_THAT(parse(a_without_f).list().front().to_string(),
             Catch::StartsWith("/deployment/roles: must be one co-located role C, one prefill role P and one decode "
                               "role D, or one P, one attention role A and one FFN role F; got 0 C, 1 P, 0 D, 1 A, 0 F"));

  auto unknown = small_scenario();
  unknown["deployment"]["roles"][0]["role"] = "X";
  CHECK_THAT(parse(unknown).list().front().to_string(),
             Catch::StartsWith("/deployment/roles/0/role: must be one of: C, P, D, A, F; got \"X\""));

  auto dup = small_scenario();
  dup["deployment"]["roles"].push_back({{"role", "C"}});
  CHECK_THAT(parse(dup).list().front().to_string(),
             Catch::StartsWith("/deployment/roles/1/name: duplicate role name \"C\""));

  auto pd = small_scenario();
  pd["deployment"]["roles"] = {{{"role", "P"}}, {{"role", "D"}}};
  pd["deployment"]["decode_router"] = "sibyl";
  CHECK(parse(pd).ok());

  auto colocated_with_decode_router = small_scenario();
  colocated_with_decode_router["deployment"]["decode_router"] = "sibyl";
  CHECK(only_error(parse(colocated_with_decode_router)) ==
        "/deployment/decode_router: decode_router, kv_transfer and sibyl apply only to disaggregated (P + D, P + A + F) "
        "deployments");
}

TEST_CASE("an inline model with an HF config works and reports the ignored config keys", "[spec][scenario]") {
  auto doc = small_scenario();
  doc["model"] = {{"name", "tiny"},
                  {"hf_id", "me/tiny"},
                  {"config",
                   {{"hidden_size", 1024},
                    {"num_hidden_layers", 4},
                    {"num_attention_heads", 16},
                    {"num_key_value_heads", 4},
                    {"vocab_size", 32000},
                    {"intermediate_size", 4096},
                    {"max_position_embeddings", 4096},
                    {"rope_theta", 10000.0},
                    {"architectures", {"LlamaForCausalLM"}}}}};
  Scenario s;
  const Errors e = parse(doc, &s);
  INFO(e.joined());
  REQUIRE(e.ok());
  CHECK(s.model.name == "tiny");
  CHECK(s.model.hf_id == "me/tiny");
  CHECK(s.model.head_dim == 64);
  CHECK(s.model.num_key_value_heads == 4);
  CHECK_FALSE(s.model.is_moe());
  CHECK(s.model.architecture == "LlamaForCausalLM");  // read: SGLang's memory rules go by the class
  auto bad = doc;
  bad["model"]["config"]["architectures"] = "LlamaForCausalLM";  // a string, not a list
  CHECK_THAT(parse(bad).joined(), Catch::Contains("/model/config/architectures: must be an array of class names"));
  CHECK(s.model.ignored_config_keys == std::vector<std::string>{"rope_theta"});
  CHECK(s.warnings == std::vector<std::string>{"model config keys not used by the simulator: rope_theta"});
  // 2 * 32000 * 1024 embeddings+head, 4 layers x (attention 2*1024*1024 + 2*1024*256 + FFN 3*1024*4096), norms 9*1024.
  const double want = 2.0 * 32000 * 1024 + 4 * (2.0 * 1024 * 1024 + 2.0 * 1024 * 256 + 3.0 * 1024 * 4096) + 9.0 * 1024;
  CHECK(s.model.param_count() == want);

  auto missing = doc;
  missing["model"]["config"].erase("hidden_size");
  missing["model"]["config"].erase("vocab_size");
  const Errors me = parse(missing);
  CHECK(paths(me) == std::vector<std::string>{"/model/config/hidden_size", "/model/config/vocab_size"});
  CHECK(me.list()[0].message == "is required (an integer between 1 and 1048576)");

  auto no_config = small_scenario();
  no_config["model"] = {{"name", "tiny"}};
  CHECK(only_error(parse(no_config)) == "/model/config: is required (the model's Hugging Face config.json object)");

  auto kv = doc;
  kv["model"]["config"]["num_key_value_heads"] = 5;
  CHECK(only_error(parse(kv)) == "/model/config/num_key_value_heads: must divide num_attention_heads (16), got 5");
}

TEST_CASE("missing required fields are named", "[spec][scenario]") {
  for (const char* key : {"model", "deployment", "workload", "version"}) {
    INFO(key);
    auto doc = small_scenario();
    doc.erase(key);
    const Errors e = parse(doc);
    REQUIRE(e.list().size() == 1);
    CHECK(e.list()[0].path == std::string("/").append(key));
    CHECK_THAT(e.list()[0].message, Catch::StartsWith("is required"));
  }
  auto arrival = small_scenario();
  arrival["workload"].erase("arrival");
  CHECK_THAT(only_error(parse(arrival)), Catch::StartsWith("/workload/arrival: is required"));

  auto n = small_scenario();
  n["workload"].erase("num_requests");
  CHECK(only_error(parse(n)) == "/workload/num_requests: is required (an integer between 1 and 10000000)");

  auto out_len = small_scenario();
  out_len["workload"].erase("output_len");
  CHECK_THAT(only_error(parse(out_len)), Catch::StartsWith("/workload/output_len: is required with the other length"));

  // The other arrival keys are known even when the process is missing or wrong: only the process is reported.
  auto process = small_scenario();
  process["workload"]["arrival"].erase("process");
  CHECK(only_error(parse(process)) == "/workload/arrival/process: is required (one of: poisson, closed_loop, trace)");
  auto typo = small_scenario();
  typo["workload"]["arrival"]["process"] = "poison";
  CHECK(only_error(parse(typo)) ==
        "/workload/arrival/process: must be one of: poisson, closed_loop, trace; got \"poison\"");
  auto dist = small_scenario();
  dist["workload"]["input_len"].erase("dist");
  CHECK(only_error(parse(dist)) == "/workload/input_len/dist: is required (one of: fixed, uniform, lognormal, cdf)");
  auto source = small_scenario();
  source["workload"].erase("input_len");
  source["workload"].erase("output_len");
  source["workload"]["lengths"] = {{"sourc", "trace"}, {"trace", "sharegpt_llama2"}};
  const Errors se = parse(source);
  CHECK(paths(se) == std::vector<std::string>{"/workload/lengths/source", "/workload/lengths/sourc"});

  auto clients = small_scenario();
  clients["workload"]["arrival"] = {{"process", "closed_loop"}};
  CHECK(only_error(parse(clients)) ==
        "/workload/arrival/max_concurrency: is required (an integer between 1 and 1000000)");

  auto gpu = small_scenario();
  gpu.erase("hardware");
  CHECK_THAT(only_error(parse(gpu)), Catch::StartsWith("/deployment/roles/0/gpu: is required (or set /hardware/gpu"));
}

TEST_CASE("another scenario format version is refused", "[spec][scenario]") {
  auto doc = small_scenario();
  doc["version"] = 2;
  CHECK(only_error(parse(doc)) == "/version: this simulator reads scenario format 1, got 2");
}

TEST_CASE("workload variants parse: inf rate, trace arrivals with trace lengths, SLA and limits", "[spec][scenario]") {
  Scenario s;
  auto inf = small_scenario();
  inf["workload"]["arrival"]["request_rate"] = "inf";
  inf["sla"] = {{"ttft_ms", 200}, {"tpot_ms", 50}};
  inf["limits"] = {{"max_events", 5000}};
  REQUIRE(parse(inf, &s).ok());
  CHECK(std::isinf(s.workload.arrival.request_rate));
  CHECK(s.sla.any());
  CHECK(s.sla.ttft_ms == 200);
  CHECK(s.sla.tpot_ms == 50);
  CHECK(s.limits.max_events == 5000);

  auto trace = small_scenario();
  trace["workload"] = {{"arrival", {{"process", "trace"}, {"trace", "azure_conv_2023"}, {"time_scale", 0.5}}}};
  Scenario t;
  const Errors te = parse(trace, &t);
  INFO(te.joined());
  REQUIRE(te.ok());
  CHECK(t.workload.num_requests == 0);
  CHECK(t.workload.arrival.time_scale == 0.5);
  CHECK(t.workload.lengths_from_arrival_trace);
  CHECK(t.workload.lengths.trace == "azure_conv_2023");
  CHECK_FALSE(t.workload.lengths.shuffle);

  auto both = trace;
  both["workload"]["arrival"]["request_rate"] = 3;
  CHECK(only_error(parse(both)) ==
        "/workload/arrival/request_rate: give either time_scale or request_rate for a trace, not both");
}

TEST_CASE("an inline GPU may name the GPU whose tables price it and its compute capability", "[spec][scenario]") {
  auto doc = small_scenario();
  auto gpu = Json::parse(*catalog().load_text("gpus", "H100-SXM.json"));
  gpu["name"] = "my H100";
  gpu["tables_from"] = "H200-SXM";
  doc["hardware"]["gpu"] = gpu;
  Scenario s;
  const Errors ok = parse(doc, &s);
  INFO(ok.joined());
  REQUIRE(ok.ok());
  CHECK(s.deployment.roles[0].gpu.tables_from == "H200-SXM");
  CHECK(s.deployment.roles[0].gpu.compute_capability == "9.0");

  gpu["tables_from"] = "H800";  // a GPU without measured tables
  doc["hardware"]["gpu"] = gpu;
  std::string msg = only_error(parse(doc));
  CHECK_THAT(msg, Catch::Contains("/hardware/gpu/tables_from"));
  CHECK_THAT(msg, Catch::Contains("GPUs with tables: A100-80G, H100-SXM, H200-SXM"));

  gpu["tables_from"] = "../../etc/passwd";
  doc["hardware"]["gpu"] = gpu;
  CHECK_THAT(only_error(parse(doc)), Catch::Contains("/hardware/gpu/tables_from"));

  gpu.erase("tables_from");
  gpu["compute_capability"] = "nine";
  doc["hardware"]["gpu"] = gpu;
  msg = only_error(parse(doc));
  CHECK_THAT(msg, Catch::Contains("/hardware/gpu/compute_capability"));
  CHECK_THAT(msg, Catch::Contains("\"9.0\""));
}

TEST_CASE("datasheet figures and link rates too small to mean anything are refused with their field",
          "[spec][scenario]") {
  auto gpu = Json::parse(*catalog().load_text("gpus", "H100-SXM.json"));
  gpu["name"] = "slow";
  auto with_gpu = [&](const char* key, double v) {
    auto doc = small_scenario();
    auto g = gpu;
    g[key] = v;
    doc["hardware"]["gpu"] = g;
    return only_error(parse(doc));
  };
  // Each made a step or a transfer outlast the clock: the run aborted on a broken invariant (time went negative).
  CHECK(with_gpu("bf16_tflops", 1e-300) ==
        "/hardware/gpu/bf16_tflops: must be a number at least 1 and at most 100000, got 1e-300");
  CHECK(with_gpu("hbm_tb_s", 1e-4) ==
        "/hardware/gpu/hbm_tb_s: must be a number at least 0.01 and at most 1000, got 0.0001");
  CHECK(with_gpu("fp8_tflops", 1e-300) ==
        "/hardware/gpu/fp8_tflops: must be 0 (none) or a number at least 1 and at most 100000, got 1e-300");
  CHECK_THAT(with_gpu("nvlink_gb_s", 1e-300), Catch::StartsWith("/hardware/gpu/nvlink_gb_s: must be 0 (none) or"));
  CHECK_THAT(with_gpu("inter_node_gb_s", 0.01),
             Catch::StartsWith("/hardware/gpu/inter_node_gb_s: must be 0 (none) or"));
  {
    auto doc = small_scenario();
    auto g = gpu;
    g["fp8_tflops"] = 0;  // none: still a GPU
    doc["hardware"]["gpu"] = g;
    CHECK(parse(doc).ok());
  }
  auto pd = small_scenario();
  pd["deployment"]["roles"] = Json::parse(R"([{"role": "P", "replicas": 1}, {"role": "D", "replicas": 1}])");
  pd["deployment"]["kv_transfer"] = {{"bandwidth_gb_s", 1e-6}};
  CHECK(only_error(parse(pd)) ==
        "/deployment/kv_transfer/bandwidth_gb_s: must be a number at least 0.1 and at most 100000, got 1e-06");
  pd["deployment"]["kv_transfer"] = {{"efficiency", 1e-300}};
  CHECK_THAT(only_error(parse(pd)),
             Catch::StartsWith("/deployment/kv_transfer/efficiency: must be a number at least 0.01"));
}

TEST_CASE("a GPU without inter_node_gb_s is refused where the deployment sends anything between nodes",
          "[spec][scenario]") {
  Json gpu = {
      {"name", "no NIC"}, {"memory_bytes", 8.5e10}, {"bf16_tflops", 900}, {"hbm_tb_s", 3}, {"nvlink_gb_s", 450}};
  auto doc = small_scenario();
  doc["hardware"]["gpu"] = gpu;
  doc["deployment"]["roles"][0]["tensor_parallel_size"] = 8;  // one node: fine
  CHECK(parse(doc).ok());
  // P -> D KV over the network (the default link): the run aborted when its transfer took forever.
  auto pd = small_scenario();
  pd["hardware"]["gpu"] = gpu;
  pd["deployment"]["roles"] = Json::parse(R"([{"role": "P", "replicas": 1}, {"role": "D", "replicas": 1}])");
  const std::string msg = only_error(parse(pd));
  CHECK_THAT(msg, Catch::StartsWith("/hardware/gpu/inter_node_gb_s: is required (network bandwidth per GPU, GB/s): "
                                    "role P sends or receives KV over the network"));
  CHECK_THAT(msg, Catch::Contains("/deployment/kv_transfer"));
  pd["deployment"]["kv_transfer"] = {{"link", "nvlink"}};
  CHECK(parse(pd).ok());
  pd["deployment"]["kv_transfer"] = {{"bandwidth_gb_s", 25}};
  CHECK(parse(pd).ok());
  // A role over two nodes; the role's own GPU is the one named.
  auto wide = small_scenario();
  wide["hardware"]["gpu"] = "H100-SXM";
  wide["deployment"]["roles"][0]["gpu"] = gpu;
  wide["deployment"]["roles"][0]["tensor_parallel_size"] = 8;
  wide["deployment"]["roles"][0]["pipeline_parallel_size"] = 2;
  CHECK(only_error(parse(wide)) ==
        "/deployment/roles/0/gpu/inter_node_gb_s: is required (network bandwidth per GPU, "
        "GB/s): role C spans nodes (16 GPUs, 8 per node)");
}

TEST_CASE("arrivals meant to span more simulated time than a run reaches are refused", "[spec][scenario]") {
  auto rate = small_scenario();  // 50 requests
  rate["workload"]["arrival"]["request_rate"] = 1e-300;
  CHECK_THAT(
      only_error(parse(rate)),
      Catch::StartsWith("/workload/arrival/request_rate: with 50 requests the arrivals would span about 4.9e+301 "
                        "s of simulated time, more than the 1e+08 s a run may; raise it"));
  rate["workload"]["arrival"]["request_rate"] = 49e-8;  // exactly 1e8 s
  CHECK(parse(rate).ok());
  auto burst = small_scenario();
  burst["workload"]["arrival"]["burstiness"] = 1e-300;
  CHECK(only_error(parse(burst)) ==
        "/workload/arrival/burstiness: must be a number at least 0.001 and at most 1000, got 1e-300");
  auto think = small_scenario();
  think["workload"]["arrival"] = {{"process", "closed_loop"}, {"max_concurrency", 4}, {"think_time_ms", 1e9}};
  CHECK(parse(think).ok());  // 13 rounds of 1e6 s each
  think["workload"]["num_requests"] = 1000;
  CHECK(only_error(parse(think)) ==
        "/workload/arrival/think_time_ms: with 1000 requests the arrivals would span "
        "about 2.5e+08 s of simulated time, more than the 1e+08 s a run may; shorten it or "
        "send fewer requests");
  auto trace = small_scenario();
  trace["workload"]["arrival"] = {{"process", "trace"}, {"trace", "azure_conv_2023"}, {"request_rate", 1e-300}};
  CHECK_THAT(only_error(parse(trace)),
             Catch::StartsWith("/workload/arrival/request_rate: must be a number at least 0.001"));
}
