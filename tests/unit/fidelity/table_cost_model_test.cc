#include "core/fidelity/table_cost_model.h"

#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "tests/test_support.h"

using namespace servesim;

namespace {

std::unique_ptr<CostModel> model_for(const std::string& model, const std::string& gpu, int tensor_parallel,
                                     EngineOptions e = {}) {
  std::string err;
  auto c = make_cost_model(test::bundled_model(model), test::bundled_gpu(gpu), test::tp_dp(tensor_parallel), e,
                           &test::catalog(), 1, err);
  REQUIRE(err.empty());
  REQUIRE(c);
  return c;
}

BatchShape decode_batch(int n, int ctx, bool graph) {
  BatchShape s;
  s.num_tokens = n;
  s.num_decode = n;
  s.num_sampled = n;
  for (int i = 0; i < n; ++i) s.decode_contexts.push_back(ctx);
  s.decode_context_sum = static_cast<std::int64_t>(n) * ctx;
  s.decode_context_max = ctx;
  s.cuda_graph = graph;
  return s;
}

double fam(const BatchCost& c, OpFamily f) { return static_cast<double>(c.by_family[static_cast<int>(f)]); }

// The same step priced for two variants of a model (with and without some feature) on H100 at TP `tp`.
std::pair<BatchCost, BatchCost> price_both(const ModelSpec& with, const ModelSpec& without, int tp, EngineOptions e,
                                           const BatchShape& s) {
  std::string err;
  auto a = make_cost_model(with, test::bundled_gpu("H100-SXM"), test::tp_dp(tp), e, &test::catalog(), 1, err);
  auto b = make_cost_model(without, test::bundled_gpu("H100-SXM"), test::tp_dp(tp), e, &test::catalog(), 1, err);
  REQUIRE(err.empty());
  return {a->price(s), b->price(s)};
}

}  // namespace

TEST_CASE("GPUs with tables price GEMMs, attention, all-reduce and the LM head from them", "[fidelity][table]") {
  auto c = model_for("Qwen3-32B", "H100-SXM", 4);
  for (OpFamily f : {OpFamily::kGemm, OpFamily::kAttentionPrefill, OpFamily::kAttentionDecode, OpFamily::kAllReduce,
                     OpFamily::kLmHead})
    CHECK(c->source(f) == PriceSource::kTable);
  CHECK(c->source(OpFamily::kNorm) == PriceSource::kRoofline);
  CHECK(c->source(OpFamily::kOverhead) == PriceSource::kCalibrated);
  const FidelityReport r = c->report();
  CHECK(r.kind == "table");
  CHECK(r.profile == "H100-SXM/vllm");
  CHECK(r.profile_version == "0.24.0");
  CHECK_THAT(c->describe(), Catch::Contains("measured tables H100-SXM/vllm"));
}

TEST_CASE("the report names the host constants a role runs with and where they came from", "[fidelity][table]") {
  const BackendConstants vllm = backend_constants("vllm");
  const FidelityReport calibrated = model_for("Qwen3-32B", "H100-SXM", 4)->report();
  REQUIRE(calibrated.host.known);
  CHECK(calibrated.host.source == "calibrated (vllm)");
  CHECK(calibrated.host.iteration_us == vllm.cpu_iteration_us);
  CHECK(calibrated.host.per_request_us == vllm.cpu_per_request_us);
  CHECK(calibrated.host.launch_us == vllm.launch_us);
  CHECK(calibrated.host.hidden_under_gpu);  // vLLM's async scheduling, on by default at pp 1

  EngineOptions e;
  e.backend = "trtllm";
  e.host.per_request_us = 7.5;
  e.async_scheduling = true;
  const FidelityReport overridden = model_for("Qwen3-32B", "H100-SXM", 4, e)->report();
  CHECK(overridden.host.source == "engine.host");
  CHECK(overridden.host.per_request_us == 7.5);
  CHECK(overridden.host.iteration_us == backend_constants("trtllm").cpu_iteration_us);
  CHECK_FALSE(overridden.host.hidden_under_gpu);  // only vLLM's constants hide under the GPU
}

TEST_CASE("the table model's GEMM equals the measurement at a measured shape", "[fidelity][table]") {
  auto text = test::catalog().load_text("H100-SXM/vllm", "gemm.json");
  REQUIRE(text);
  OpTable t;
  REQUIRE(parse_op_table(*text, t).empty());
  const OpGrid* g = t.find({"bfloat16"});
  REQUIRE(g != nullptr);
  // n = 6144, k = 4096, m = 1024: grid values
  std::size_t i = 0, j = 0;
  while (g->axes[0][i] != 6144) ++i;
  while (g->axes[1][j] != 4096) ++j;
  std::size_t k = 0;
  while (g->axes[2][k] != 1024) ++k;
  const double measured = g->values[i * g->strides[0] + j * g->strides[1] + k];
  EngineOptions e;
  TableCostModel* tm = nullptr;
  auto c = model_for("Llama-3.1-8B", "H100-SXM", 1, e);
  tm = dynamic_cast<TableCostModel*>(c.get());
  REQUIRE(tm != nullptr);
  bool ex = false;
  CHECK(tm->gemm_us(1024, 6144, 4096, false, &ex) == Approx(measured).epsilon(1e-12));
  CHECK_FALSE(ex);
  // Beyond the largest measured m the curve scales linearly and flags it.
  tm->gemm_us(65536, 6144, 4096, false, &ex);
  CHECK(ex);
}

TEST_CASE("CUDA-graph replays price kernels only - eager steps pay the launches", "[fidelity][table]") {
  EngineOptions e;
  e.enforce_eager = true;
  e.host.launch_us = 30;  // a slow host: 12 ops x 30 us per layer outlast a one-token layer's kernels
  auto eager_model = model_for("Llama-3.1-8B", "H100-SXM", 1, e);
  auto graph_model = model_for("Llama-3.1-8B", "H100-SXM", 1);
  const BatchCost graph = graph_model->price(decode_batch(1, 512, true));
  const BatchCost eager = eager_model->price(decode_batch(1, 512, false));
  CHECK(graph.total < eager.total);
  // The kernels themselves are the same; the difference is host time.
  CHECK(fam(graph, OpFamily::kGemm) == fam(eager, OpFamily::kGemm));
  CHECK(fam(graph, OpFamily::kOverhead) < fam(eager, OpFamily::kOverhead));
  // A large batch's kernels outlast the launches: no launch floor.
  const BatchCost big = eager_model->price(decode_batch(256, 2048, false));
  const BatchCost big_graph = graph_model->price(decode_batch(256, 2048, true));
  CHECK(fam(big, OpFamily::kOverhead) - fam(big_graph, OpFamily::kOverhead) < 1e3);
}

TEST_CASE("decode cost grows with context and batch - long contexts beyond the grid are counted as extrapolated",
          "[fidelity][table]") {
  auto c = model_for("Llama-3.1-8B", "H100-SXM", 1);
  const double a = fam(c->price(decode_batch(16, 1024, true)), OpFamily::kAttentionDecode);
  const double b = fam(c->price(decode_batch(16, 8192, true)), OpFamily::kAttentionDecode);
  const double d = fam(c->price(decode_batch(64, 8192, true)), OpFamily::kAttentionDecode);
  CHECK(a < b);
  CHECK(b < d);
  c->price(decode_batch(64, 131072, true));  // batch 64 at 128k tokens was not measured
  const FidelityReport r = c->report();
  bool found = false;
  for (std::size_t i = 0; i < r.families.size(); ++i)
    if (r.families[i] == "attention_decode") {
      found = true;
      CHECK(r.lookups[i] == 4);
      CHECK(r.extrapolated[i] >= 1);
    }
  CHECK(found);
}

TEST_CASE("GPUs without tables are datasheet-derived", "[fidelity][table]") {
  auto c = model_for("Llama-3.1-8B", "B200", 1);
  CHECK(c->report().kind == "datasheet-derived");
  CHECK(c->source(OpFamily::kGemm) == PriceSource::kDatasheet);
  CHECK(c->source(OpFamily::kAttentionDecode) == PriceSource::kDatasheet);
  CHECK_THAT(c->describe(), Catch::Contains("datasheet-derived"));
  // A B200 decodes faster than an H100 (more bandwidth), by less than the bandwidth ratio plus slack.
  auto h = model_for("Llama-3.1-8B", "H100-SXM", 1);
  const double b200 = static_cast<double>(c->price(decode_batch(32, 2048, true)).total);
  const double h100 = static_cast<double>(h->price(decode_batch(32, 2048, true)).total);
  CHECK(b200 < h100);
  CHECK(b200 > 0.25 * h100);
}

TEST_CASE("MoE layers are priced from the MoE table with a sampled routing", "[fidelity][table]") {
  EngineOptions e;
  auto c = model_for("Qwen3-30B-A3B", "H100-SXM", 1, e);
  CHECK(c->source(OpFamily::kMoe) == PriceSource::kTable);
  BatchShape s = decode_batch(64, 1024, true);
  const double uniform = fam(c->price(s), OpFamily::kMoe);
  CHECK(uniform > 0);
  e.moe_routing = "power_law";
  auto skewed = model_for("Qwen3-30B-A3B", "H100-SXM", 1, e);
  BatchShape big = decode_batch(256, 1024, false);
  double sk = 0, un = 0;
  for (int i = 0; i < 4; ++i) {
    sk += fam(skewed->price(big), OpFamily::kMoe);
    un += fam(c->price(big), OpFamily::kMoe);
  }
  CHECK(sk != un);
}

TEST_CASE("without a catalog the roofline prices every op", "[fidelity][table]") {
  std::string err;
  auto c = make_cost_model(test::bundled_model("Llama-3.1-8B"), test::bundled_gpu("H100-SXM"), test::tp_dp(1), {},
                           nullptr, 1, err);
  REQUIRE(c);
  CHECK(c->source(OpFamily::kGemm) == PriceSource::kRoofline);
  CHECK(c->report().kind == "roofline");
}

TEST_CASE("a QK norm over all heads adds one small all-reduce per layer under TP, none without TP",
          "[fidelity][table]") {
  // MiniMax-M2.5 ("qk_norm_type": "per_layer"): vLLM all-reduces q's and k's sums of squares together (two fp32
  // values per token).
  const ModelSpec with = test::bundled_model("MiniMax-M2.5");
  REQUIRE(with.qk_norm_across_heads);
  ModelSpec without = with;
  without.qk_norm_across_heads = false;
  for (int t : {1, 4}) {
    for (bool eager : {false, true}) {
      EngineOptions e;
      e.enforce_eager = eager;  // eager: the all-reduces' eager prices; else a decode step replays a CUDA graph
      const auto [ca, cb] = price_both(with, without, t, e, decode_batch(8, 1024, !eager));
      const double extra_us = (fam(ca, OpFamily::kAllReduce) - fam(cb, OpFamily::kAllReduce)) / 1e3;
      std::string err;
      auto a = make_cost_model(with, test::bundled_gpu("H100-SXM"), test::tp_dp(t), e, &test::catalog(), 1, err);
      REQUIRE(err.empty());
      const double expected_us = dynamic_cast<TableCostModel*>(a.get())->qk_norm_all_reduces_us(8, !eager);
      if (t == 1) {
        CHECK(extra_us == 0);
        CHECK(expected_us == 0);
      } else {
        CHECK(expected_us > 62 * 1.0);  // 62 layers x 1 all-reduce of at least a microsecond
        CHECK(extra_us == Approx(expected_us).margin(0.01));
      }
      CHECK(fam(ca, OpFamily::kGemm) == fam(cb, OpFamily::kGemm));
    }
  }
}

TEST_CASE("a per-head QK norm adds one kernel reading and writing q and k per layer, none where TRT-LLM fuses it",
          "[fidelity][table]") {
  const ModelSpec with = test::bundled_model("Qwen3-32B");
  REQUIRE(with.qk_norm_per_head);
  ModelSpec without = with;
  without.qk_norm_per_head = false;
  const BatchShape s = decode_batch(8, 1024, true);
  for (const char* backend : {"vllm", "sglang", "trtllm"}) {
    EngineOptions e;
    e.backend = backend;
    const auto [ca, cb] = price_both(with, without, 4, e, s);
    const double extra_us = (fam(ca, OpFamily::kNorm) - fam(cb, OpFamily::kNorm)) / 1e3;
    if (std::string(backend) == "trtllm") {
      CHECK(extra_us == 0);
    } else {
      // 64 layers x (3 us fixed + 8 tokens x (16 q + 2 k heads) x 128 x 2 bytes read and written, ~0.03 us).
      CHECK(extra_us == Approx(64 * 3.03).epsilon(0.02));
    }
    CHECK(fam(ca, OpFamily::kGemm) == fam(cb, OpFamily::kGemm));
  }
  // A norm over all heads (MiniMax-M2.5) takes two kernels: the sum of squares, then the scaling.
  const ModelSpec mm = test::bundled_model("MiniMax-M2.5");
  ModelSpec mm_without = mm;
  mm_without.qk_norm_across_heads = false;
  const auto [ma, mb] = price_both(mm, mm_without, 4, {}, s);
  const double extra_us = (fam(ma, OpFamily::kNorm) - fam(mb, OpFamily::kNorm)) / 1e3;
  CHECK(extra_us == Approx(62 * 2 * 3.0).epsilon(0.02));
}

TEST_CASE("vLLM's per-tensor FP8 GEMMs drop the input quantisation the engine fuses into the norms and SiLU-and-mul",
          "[fidelity][table]") {
  // The fp8 grid times each GEMM with its scaled_fp8_quant kernel; a compiled vLLM fuses it into the RMSNorm before
  // the QKV and gate/up projections and into the SiLU-and-mul before the down projection (not the o projection).
  // SGLang prices the same grid without that fusion, so the GEMM time differs by the three quantisations per layer.
  for (const char* dtype : {"fp8", "bfloat16"}) {
    for (int m : {8, 4096}) {
      double gemm[2];
      for (int i = 0; i < 2; ++i) {
        EngineOptions e;
        e.backend = i == 0 ? "vllm" : "sglang";
        e.dtype = dtype;
        auto c = model_for("Llama-3.1-70B", "H100-SXM", 4, e);
        gemm[i] = fam(c->price(decode_batch(m, 1024, false)), OpFamily::kGemm) / 1e3;
      }
      const double H = 8192, inter = 28672.0 / 4;
      const double bw = 3.35e12 * 0.8;  // H100's HBM at the roofline's achieved share
      auto quant_us = [&](double k) { return 3.0 + 3 * m * k / bw * 1e6; };
      const double expected = 80 * (2 * quant_us(H) + quant_us(inter));
      if (std::string(dtype) == "fp8")
        CHECK(gemm[1] - gemm[0] == Approx(expected).epsilon(0.02));
      else
        CHECK(gemm[1] == gemm[0]);
    }
  }
}

TEST_CASE("vLLM on FlashAttention-2 prices decodes beside prompt tokens ungrouped - FlashAttention-3 and other engines do not",
          "[fidelity][table][attention]") {
  // A step of 16 decodes at 4096 keys with one 512-token prompt chunk, against the decodes alone.
  BatchShape mixed = decode_batch(16, 4096, false);
  mixed.prefills.push_back(PrefillChunk{512, 512});
  mixed.num_tokens += 512;
  const BatchShape alone = decode_batch(16, 4096, false);
  auto ratio = [&](const std::string& gpu, const std::string& backend) {
    EngineOptions e;
    e.backend = backend;
    auto c = model_for("Llama-3.1-8B", gpu, 1, e);
    return fam(c->price(mixed), OpFamily::kAttentionDecode) / fam(c->price(alone), OpFamily::kAttentionDecode);
  };
  // A100's vLLM tables measure FlashAttention-2 (kernel vllm_flash_attn): Llama-3.1-8B's 32 query heads over 8 KV
  // heads read their KV once per query head beside a prompt.
  CHECK(ratio("A100-80G", "vllm") > 1.5);
  CHECK(ratio("H100-SXM", "vllm") == Approx(1.0));    // FlashAttention-3 packs grouped heads in every call
  CHECK(ratio("A100-80G", "sglang") == Approx(1.0));  // prompts and decodes in separate calls
  // Beside one-token chunks only, every query of the call is one token: FlashAttention-2's decode path, grouped,
  // over the decodes and the prompts alike (one call, priced by the decode grid).
  mixed.prefills = {PrefillChunk{1, 512}, PrefillChunk{1, 4000}};
  mixed.num_tokens = alone.num_tokens + 2;
  BatchShape as_decodes = decode_batch(16, 4096, false);
  as_decodes.decode_contexts.insert(as_decodes.decode_contexts.end(), {512, 4000});
  as_decodes.num_decode += 2;
  EngineOptions vllm;
  vllm.backend = "vllm";
  auto a100 = model_for("Llama-3.1-8B", "A100-80G", 1, vllm);
  const BatchCost one_call = a100->price(mixed);
  // The lookup counts of the fidelity report: one decode-attention lookup, no prefill one.
  const FidelityReport rep = a100->report();
  auto lookups = [&rep](const char* family) {
    for (std::size_t i = 0; i < rep.families.size(); ++i)
      if (rep.families[i] == family) return rep.lookups[i];
    return std::int64_t{0};
  };
  CHECK(lookups(op_family_name(OpFamily::kAttentionDecode)) == 1);
  CHECK(lookups(op_family_name(OpFamily::kAttentionPrefill)) == 0);
  CHECK(fam(one_call, OpFamily::kAttentionPrefill) == 0);
  CHECK(fam(one_call, OpFamily::kAttentionDecode) == fam(a100->price(as_decodes), OpFamily::kAttentionDecode));
  CHECK(fam(one_call, OpFamily::kAttentionDecode) > fam(a100->price(alone), OpFamily::kAttentionDecode));
  // One-token prompts alone: the decode grid's price of them, in the prefill family.
  BatchShape prompts;
  prompts.prefills = mixed.prefills;
  prompts.num_tokens = 2;
  prompts.num_sampled = 2;
  BatchShape two = decode_batch(2, 0, false);
  two.decode_contexts = {512, 4000};
  CHECK(fam(a100->price(prompts), OpFamily::kAttentionPrefill) == fam(a100->price(two), OpFamily::kAttentionDecode));
  // SGLang runs prompts and decodes apart: the prompts keep their own call.
  EngineOptions sglang;
  sglang.backend = "sglang";
  CHECK(fam(model_for("Llama-3.1-8B", "A100-80G", 1, sglang)->price(mixed), OpFamily::kAttentionPrefill) > 0);
}
