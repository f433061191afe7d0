// Which output token the client times as its first (workload.ttft_from): vllm bench serve times the first streamed
// token; AIPerf and genai-perf time the first one that carries text, which for gpt-oss comes after its 3-token
// harmony header (the model's response_preamble_tokens). The engine's work is the same either way.
#include <catch2/catch.hpp>

#include "core/api/session.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

nlohmann::json gpt_oss_scenario(int requests, int clients, int output_len) {
  auto s = nlohmann::json::parse(R"({
    "version": 1, "name": "ttft_from", "seed": 5, "model": "gpt-oss-120b", "hardware": {"gpu": "H100-SXM"},
    "deployment": {"roles": [{"role": "C", "replicas": 1, "tensor_parallel_size": 2}]},
    "workload": {"arrival": {"process": "closed_loop"},
                 "input_len": {"dist": "fixed", "value": 512}},
    "output": {"requests": true}
  })");
  s["workload"]["num_requests"] = requests;
  s["workload"]["arrival"]["max_concurrency"] = clients;
  s["workload"]["output_len"] = {{"dist", "fixed"}, {"value", output_len}};
  return s;
}

nlohmann::json run_with(nlohmann::json s, const char* ttft_from) {
  s["workload"]["ttft_from"] = ttft_from;
  return test::run_scenario(s.dump());
}

double summary(const nlohmann::json& r, const char* key) { return r["summary"][key].get<double>(); }

/// An inline model with a response preamble of `preamble` tokens.
nlohmann::json tiny_model(int preamble) {
  return {{"name", "tiny"},
          {"response_preamble_tokens", preamble},
          {"config",
           {{"hidden_size", 1024}, {"num_hidden_layers", 4}, {"num_attention_heads", 8}, {"intermediate_size", 2048},
            {"vocab_size", 32000}, {"max_position_embeddings", 4096}}}};
}

}  // namespace

TEST_CASE("a client timing the first text sees gpt-oss's first token after its 3-token harmony header",
          "[scenario][ttft_from]") {
  const auto s = gpt_oss_scenario(1, 1, 16);
  const auto token = run_with(s, "first_token");
  const auto text = run_with(s, "first_text");
  CHECK(text["model"]["response_preamble_tokens"] == 3);
  CHECK(text["summary"]["ttft_from"] == "first_text");
  CHECK(text["summary"]["ttft_token"] == 4);
  CHECK(text["requests"]["first_text_token"][0] == 4);
  CHECK_FALSE(token["summary"].contains("ttft_token"));
  CHECK_FALSE(token["requests"].contains("first_text_token"));
  // The engine did the same work: same end-to-end latency, same tokens.
  CHECK(summary(text, "mean_e2el_ms") == Approx(summary(token, "mean_e2el_ms")).epsilon(1e-12));
  CHECK(text["summary"]["total_output_tokens"] == 16);
  // A lone request's decode steps barely differ, so the three header tokens cost three TPOTs.
  const double ttft_token = summary(token, "mean_ttft_ms"), ttft_text = summary(text, "mean_ttft_ms");
  const double tpot_token = summary(token, "mean_tpot_ms");
  CHECK((ttft_text - ttft_token) / tpot_token == Approx(3.0).epsilon(0.03));
  // TPOT and ITL count from the first text token: 12 intervals after token 4.
  CHECK(summary(text, "mean_tpot_ms") * 12 + ttft_text == Approx(summary(text, "mean_e2el_ms")).epsilon(1e-9));
  CHECK(summary(text, "mean_itl_ms") == Approx(summary(text, "mean_tpot_ms")).epsilon(1e-3));
}

TEST_CASE("under load every request's first text arrives after its first token, and nothing else moves",
          "[scenario][ttft_from]") {
  const auto s = gpt_oss_scenario(24, 6, 40);
  const auto token = run_with(s, "first_token");
  const auto text = run_with(s, "first_text");
  const auto& a = token["requests"];
  const auto& b = text["requests"];
  for (std::size_t i = 0; i < 24; ++i) {
    INFO(i);
    CHECK(b["arrival_ms"][i] == a["arrival_ms"][i]);
    CHECK(b["finished_ms"][i] == a["finished_ms"][i]);
    CHECK(b["first_token_ms"][i].get<double>() > a["first_token_ms"][i].get<double>());
  }
  CHECK(summary(text, "duration_s") == summary(token, "duration_s"));
}

TEST_CASE("a model whose first token is text gives the same latencies either way", "[scenario][ttft_from]") {
  auto s = test::small_scenario();
  const auto token = run_with(s, "first_token");
  const auto text = run_with(s, "first_text");
  CHECK(text["summary"]["ttft_token"] == 1);
  CHECK_FALSE(text["model"].contains("response_preamble_tokens"));
  for (const char* k : {"mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "mean_itl_ms", "p99_itl_ms", "mean_e2el_ms"})
    CHECK(summary(text, k) == summary(token, k));
}

TEST_CASE("an output shorter than the preamble is seen whole at its last token", "[scenario][ttft_from]") {
  const auto text = run_with(gpt_oss_scenario(3, 1, 2), "first_text");
  CHECK(text["summary"]["completed"] == 3);
  for (int i = 0; i < 3; ++i) CHECK(text["requests"]["first_text_token"][i] == 2);
  CHECK(summary(text, "mean_ttft_ms") == Approx(summary(text, "mean_e2el_ms")).epsilon(1e-12));
  CHECK(summary(text, "mean_tpot_ms") == 0.0);  // no interval after the first visible token
}

TEST_CASE("P/D: a client timing the first text waits for D to decode past the header", "[scenario][ttft_from][pd]") {
  auto s = gpt_oss_scenario(16, 4, 24);
  s["deployment"] = nlohmann::json::parse(R"({"kv_transfer": {"link": "nvlink"}, "roles": [
      {"role": "P", "replicas": 1, "tensor_parallel_size": 2},
      {"role": "D", "replicas": 1, "tensor_parallel_size": 2}]})");
  const auto token = run_with(s, "first_token");
  const auto text = run_with(s, "first_text");
  CHECK(text["summary"]["completed"] == 16);
  CHECK(text["disaggregation"]["kv_transfers"] == 16);
  // With the first token the client sees it when the KV lands on D; the first text three D decode steps later.
  const double gap = summary(text, "mean_ttft_ms") - summary(token, "mean_ttft_ms");
  CHECK(gap > 2.5 * summary(token, "mean_tpot_ms"));
  CHECK(gap < 3.5 * summary(token, "mean_tpot_ms"));
  CHECK(summary(text, "mean_e2el_ms") == summary(token, "mean_e2el_ms"));
}

TEST_CASE("ttft_from and response_preamble_tokens are validated at their paths", "[spec][ttft_from]") {
  auto s = test::small_scenario();
  s["workload"]["ttft_from"] = "first_byte";
  Errors e;
  CHECK(Session::create(s.dump(), test::profiles_loader(), e) == nullptr);
  CHECK(e.joined().find("/workload/ttft_from") != std::string::npos);
  CHECK(e.joined().find("first_text") != std::string::npos);

  for (int bad : {-1, 65}) {
    auto m = test::small_scenario();
    m["model"] = tiny_model(bad);
    Errors me;
    CHECK(Session::create(m.dump(), test::profiles_loader(), me) == nullptr);
    INFO(me.joined());
    CHECK(me.joined().find("/model/response_preamble_tokens") != std::string::npos);
  }
  auto ok = test::small_scenario();
  ok["model"] = tiny_model(2);
  ok["workload"]["ttft_from"] = "first_text";
  const auto r = test::run_scenario(ok.dump());
  CHECK(r["summary"]["ttft_token"] == 3);
  CHECK(r["model"]["response_preamble_tokens"] == 2);
}
