#include "core/spec/model_spec.h"

#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

#include "core/spec/resource_catalog.h"
#include "core/spec/scenario.h"
#include "core/spec/weight_format.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

// Errors of reading `config` as an HF config.json at "/c".
Errors read(const Json& config, ModelSpec& m) {
  Errors e;
  read_hf_config(config, "/c", m, e);
  return e;
}

Json tiny_moe() {
  return Json{{"hidden_size", 256},        {"num_hidden_layers", 4},   {"num_attention_heads", 4},
              {"num_key_value_heads", 2},   {"vocab_size", 1000},       {"intermediate_size", 128},
              {"num_local_experts", 8},     {"num_experts_per_tok", 2}, {"max_position_embeddings", 4096}};
}

}  // namespace

// Model cards: MiniMax-M2/M2.5 "230 billion total parameters with 10 billion active" (MiniMax's deployment guides);
// gpt-oss-120b "117B parameters with 5.1B active" (OpenAI's model page). The cards round to whole (MiniMax) or
// tenths of (gpt-oss) billions and count active parameters without the input embedding, which is a lookup, not a
// matrix product; param_count() leaves out norms' biases, attention/expert biases, QK-norm weights and MTP modules
// (each under 0.1%). Tolerances: total 1% (the rounding), active 5% for MiniMax (10 B rounded from 10.4 B) and 2%
// for gpt-oss.
TEST_CASE("MiniMax-M2.5 parses to its architecture, block-FP8 checkpoint and the card's parameter counts",
          "[spec][model]") {
  const ModelSpec m = test::bundled_model("MiniMax-M2.5");
  CHECK(m.hidden_size == 3072);
  CHECK(m.num_hidden_layers == 62);
  CHECK(m.num_attention_heads == 48);
  CHECK(m.num_key_value_heads == 8);
  CHECK(m.head_dim == 128);
  CHECK(m.num_experts == 256);
  CHECK(m.num_experts_per_tok == 8);
  CHECK(m.moe_intermediate_size == 1536);  // Mixtral-style: the experts are intermediate_size wide
  CHECK(m.moe_layers() == 62);
  CHECK(m.shared_expert_intermediate_size == 0);
  CHECK_FALSE(m.has_sliding_window());
  CHECK(m.quant_method == "fp8");
  CHECK(m.quant_block_n == 128);
  CHECK(m.quant_block_k == 128);
  CHECK(m.quant_not_converted == std::vector<std::string>{"gate", "e_score_correction_bias", "lm_head"});
  CHECK(m.qk_norm_across_heads);  // "use_qk_norm": true, "qk_norm_type": "per_layer"
  CHECK(m.param_count() == Approx(230e9).epsilon(0.01));
  const double embed = static_cast<double>(m.vocab_size) * m.hidden_size;
  CHECK(m.active_param_count() - embed == Approx(10e9).epsilon(0.05));
}

TEST_CASE("gpt-oss-120b parses to its sliding/full layers, MXFP4 experts and the card's parameter counts",
          "[spec][model]") {
  const ModelSpec m = test::bundled_model("gpt-oss-120b");
  CHECK(m.hidden_size == 2880);
  CHECK(m.num_hidden_layers == 36);
  CHECK(m.num_attention_heads == 64);
  CHECK(m.num_key_value_heads == 8);
  CHECK(m.head_dim == 64);
  CHECK(m.num_experts == 128);
  CHECK(m.num_experts_per_tok == 4);
  CHECK(m.moe_intermediate_size == 2880);
  REQUIRE(m.has_sliding_window());
  CHECK(m.sliding_window == 128);
  CHECK(m.sliding_layers == 18);
  CHECK(m.full_attention_layers() == 18);
  CHECK(m.quant_method == "mxfp4");
  CHECK(m.quant_block_n == 0);
  CHECK(m.param_count() == Approx(117e9).epsilon(0.01));
  const double embed = static_cast<double>(m.vocab_size) * m.hidden_size;
  CHECK(m.active_param_count() - embed == Approx(5.1e9).epsilon(0.02));
}

TEST_CASE("quantization_config is read into the checkpoint's weight formats", "[spec][model][quant]") {
  ModelSpec none;
  Json c = tiny_moe();
  c["quantization_config"] = nullptr;
  REQUIRE(read(c, none).ok());
  CHECK(none.quant_method.empty());
  CHECK(weight_formats(none, "bfloat16").experts == WeightFormat::kBf16);
  CHECK(weight_formats(none, "fp8").attention == WeightFormat::kFp8);  // online FP8: the engine dtype decides
  CHECK_FALSE(weight_formats(none, "fp8").from_checkpoint);

  ModelSpec block;
  c["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}, {"fmt", "e4m3"}};
  REQUIRE(read(c, block).ok());
  const WeightFormats fb = weight_formats(block, "bfloat16");  // the checkpoint wins over the engine dtype
  CHECK(fb.from_checkpoint);
  CHECK(fb.attention == WeightFormat::kFp8Block);
  CHECK(fb.experts == WeightFormat::kFp8Block);
  CHECK(weight_format_bytes(fb.experts, block) == 1.0 + 4.0 / (128 * 128));
  CHECK(std::string(gemm_table_dtype(fb.attention)) == "fp8_block");
  CHECK(std::string(moe_table_dtype(fb.experts)) == "fp8_block");

  ModelSpec tensor;
  c["quantization_config"] = {{"quant_method", "fp8"}, {"modules_to_not_convert", {"model.layers.*.self_attn"}}};
  REQUIRE(read(c, tensor).ok());
  const WeightFormats ft = weight_formats(tensor, "bfloat16");
  CHECK(ft.experts == WeightFormat::kFp8);         // per-tensor scales: the fp8 grids
  CHECK(ft.attention == WeightFormat::kBf16);      // self_attn not converted

  ModelSpec mx;
  c["quantization_config"] = {{"quant_method", "mxfp4"},
                              {"modules_to_not_convert", {"model.layers.*.self_attn", "lm_head"}}};
  REQUIRE(read(c, mx).ok());
  const WeightFormats fm = weight_formats(mx, "bfloat16");
  CHECK(fm.experts == WeightFormat::kMxfp4);
  CHECK(fm.attention == WeightFormat::kBf16);
  CHECK(weight_format_bytes(fm.experts, mx) == 4.25 / 8);
  CHECK(std::string(moe_table_dtype(fm.experts)) == "w4a16_mxfp4");
}

TEST_CASE("an unknown or malformed quantization_config is an error naming the field", "[spec][model][quant]") {
  Json c = tiny_moe();
  c["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4}};
  ModelSpec m;
  Errors e = read(c, m);
  REQUIRE(e.list().size() == 1);
  CHECK(e.list()[0].path == "/c/quantization_config/quant_method");
  CHECK_THAT(e.list()[0].message, Catch::Contains("\"awq\"") && Catch::Contains("fp8") && Catch::Contains("mxfp4"));

  c["quantization_config"] = {{"bits", 4}};
  ModelSpec m2;
  e = read(c, m2);
  REQUIRE_FALSE(e.ok());
  CHECK(e.list()[0].path == "/c/quantization_config/quant_method");

  c["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128}}};
  ModelSpec m3;
  e = read(c, m3);
  REQUIRE_FALSE(e.ok());
  CHECK(e.list()[0].path == "/c/quantization_config/weight_block_size");

  c["quantization_config"] = {{"quant_method", "fp8"}, {"modules_to_not_convert", "lm_head"}};
  ModelSpec m4;
  e = read(c, m4);
  REQUIRE_FALSE(e.ok());
  CHECK(e.list()[0].path == "/c/quantization_config/modules_to_not_convert");

  Json dense = tiny_moe();
  dense.erase("num_local_experts");
  dense.erase("num_experts_per_tok");
  dense["quantization_config"] = {{"quant_method", "mxfp4"}};
  ModelSpec m5;
  e = read(dense, m5);
  REQUIRE_FALSE(e.ok());
  CHECK(e.list()[0].path == "/c/quantization_config/quant_method");
}

TEST_CASE("layer_types and sliding_window are checked", "[spec][model]") {
  Json c = tiny_moe();
  c["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "full_attention"};
  c["sliding_window"] = 64;
  ModelSpec ok;
  REQUIRE(read(c, ok).ok());
  CHECK(ok.sliding_layers == 2);
  CHECK(ok.sliding_window == 64);

  Json short_list = c;
  short_list["layer_types"] = {"sliding_attention", "full_attention"};
  ModelSpec m1;
  Errors e = read(short_list, m1);
  REQUIRE_FALSE(e.ok());
  CHECK(e.list()[0].path == "/c/layer_types");

  Json bad = c;
  bad["layer_types"][1] = "linear_attention";
  ModelSpec m2;
  e = read(bad, m2);
  REQUIRE_FALSE(e.ok());
  CHECK(e.list()[0].path == "/c/layer_types/1");

  Json no_window = c;
  no_window.erase("sliding_window");
  ModelSpec m3;
  e = read(no_window, m3);
  REQUIRE_FALSE(e.ok());
  CHECK(e.list()[0].path == "/c/sliding_window");

  // Without layer_types a sliding_window key is not applied (Qwen2 ships one with use_sliding_window false).
  Json qwen2 = tiny_moe();
  qwen2["sliding_window"] = 131072;
  ModelSpec m4;
  REQUIRE(read(qwen2, m4).ok());
  CHECK_FALSE(m4.has_sliding_window());
}

TEST_CASE("engine dtype fp8 on an MXFP4 checkpoint is refused at /engine/dtype", "[spec][model][quant]") {
  nlohmann::json doc = test::small_scenario();
  doc["model"] = "gpt-oss-120b";
  doc["engine"]["dtype"] = "fp8";
  Scenario s;
  Errors e;
  parse_scenario(doc.dump(), test::catalog(), s, e);
  REQUIRE_FALSE(e.ok());
  bool found = false;
  for (const SpecError& x : e.list()) found = found || (x.path.find("/engine/dtype") != std::string::npos &&
                                                       x.message.find("MXFP4") != std::string::npos);
  CHECK(found);
}

TEST_CASE("a QK norm over all heads is read from use_qk_norm and qk_norm_type - per-head norms are local",
          "[spec][model]") {
  Json c = tiny_moe();
  ModelSpec plain;
  REQUIRE(read(c, plain).ok());
  CHECK_FALSE(plain.qk_norm_across_heads);
  c["use_qk_norm"] = true;
  CHECK_FALSE(plain.qk_norm_per_head);
  ModelSpec per_head;
  REQUIRE(read(c, per_head).ok());  // qk_norm_type absent: per head (Qwen3-style, no all-reduce)
  CHECK_FALSE(per_head.qk_norm_across_heads);
  CHECK(per_head.qk_norm_per_head);
  c["qk_norm_type"] = "per_layer";
  ModelSpec per_layer;
  REQUIRE(read(c, per_layer).ok());
  CHECK(per_layer.qk_norm_across_heads);
  CHECK_FALSE(per_layer.qk_norm_per_head);
  CHECK(std::find(per_layer.ignored_config_keys.begin(), per_layer.ignored_config_keys.end(), "qk_norm_type") ==
        per_layer.ignored_config_keys.end());
  c["use_qk_norm"] = false;
  ModelSpec off;
  REQUIRE(read(c, off).ok());
  CHECK_FALSE(off.qk_norm_across_heads);
  c["qk_norm_type"] = "per_group";
  ModelSpec bad;
  const Errors e = read(c, bad);
  CHECK_FALSE(e.ok());
  CHECK(e.joined().find("/c/qk_norm_type") != std::string::npos);
}

TEST_CASE("Qwen3 architectures norm q and k per head without a config flag - others do not", "[spec][model]") {
  // Qwen3's config.json has no use_qk_norm: its modelling code always applies q_norm and k_norm (RMSNorm over
  // head_dim) before RoPE.
  CHECK(test::bundled_model("Qwen3-32B").qk_norm_per_head);
  CHECK(test::bundled_model("Qwen3-30B-A3B").qk_norm_per_head);
  CHECK_FALSE(test::bundled_model("Llama-3.1-70B").qk_norm_per_head);
  CHECK_FALSE(test::bundled_model("gpt-oss-120b").qk_norm_per_head);
  CHECK_FALSE(test::bundled_model("MiniMax-M2.5").qk_norm_per_head);  // its norm spans all heads
  Json c = tiny_moe();
  c["architectures"] = Json::array({"Qwen3MoeForCausalLM"});
  ModelSpec m;
  REQUIRE(read(c, m).ok());
  CHECK(m.qk_norm_per_head);
}
