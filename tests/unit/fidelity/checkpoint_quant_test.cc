// Pre-quantised checkpoints: the measured grid each module is priced on, and the weight bytes it takes.
#include <string>

#include <catch2/catch.hpp>

#include "core/fidelity/memory_model.h"
#include "core/fidelity/table_cost_model.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

std::unique_ptr<CostModel> model(const std::string& name, int tp, int ep, const EngineOptions& e) {
  Parallelism p;
  p.tp_attn = tp;
  p.tp_ffn = tp / ep;
  p.ep_ffn = ep;
  std::string err;
  auto c = make_cost_model(test::bundled_model(name), test::bundled_gpu("H100-SXM"), p, e, &test::catalog(), 1, err);
  REQUIRE(err.empty());
  REQUIRE(c);
  return c;
}

}  // namespace

TEST_CASE("MiniMax-M2.5's block-FP8 checkpoint prices its projections and experts on the fp8_block grids",
          "[fidelity][quant]") {
  EngineOptions e;  // dtype bfloat16: the checkpoint's format is used all the same
  auto c = model("MiniMax-M2.5", 4, 4, e);
  auto* tm = dynamic_cast<TableCostModel*>(c.get());
  REQUIRE(tm != nullptr);
  CHECK(tm->weight_formats().from_checkpoint);
  CHECK(tm->weight_formats().attention == WeightFormat::kFp8Block);
  CHECK(tm->moe_grid_dtype() == "fp8_block");
  CHECK(c->source(OpFamily::kMoe) == PriceSource::kTable);
  CHECK(c->source(OpFamily::kGemm) == PriceSource::kTable);
  // One layer's projections at TP 4 (12 q / 2 kv heads of 128 per GPU): qkv and o. On vLLM's tables block-FP8
  // GEMMs are read from the per-tensor fp8 grid (vLLM's fp8_block grid carries a per-call floor, see make_gemm).
  const double H = 3072, qkv = (12 + 2 * 2) * 128.0, o_in = 12 * 128.0;
  for (double m : {8.0, 512.0}) {
    const double want = tm->gemm_us(m, qkv, H, WeightFormat::kFp8Block) + tm->gemm_us(m, H, o_in, WeightFormat::kFp8Block);
    CHECK(tm->attention_projections_us(m) == Approx(want).epsilon(1e-12));
    CHECK(want == Approx(tm->gemm_us(m, qkv, H, WeightFormat::kFp8) + tm->gemm_us(m, H, o_in, WeightFormat::kFp8)));
  }
  // TensorRT-LLM's fp8_block grid is kernel time: there the block-FP8 projections use it.
  EngineOptions trt;
  trt.backend = "trtllm";
  auto ct = model("MiniMax-M2.5", 4, 4, trt);
  auto* tt = dynamic_cast<TableCostModel*>(ct.get());
  REQUIRE(tt != nullptr);
  for (double m : {8.0, 512.0}) {
    const double block = tt->gemm_us(m, qkv, H, WeightFormat::kFp8Block) + tt->gemm_us(m, H, o_in, WeightFormat::kFp8Block);
    CHECK(tt->attention_projections_us(m) == Approx(block).epsilon(1e-12));
    CHECK(block != Approx(tt->gemm_us(m, qkv, H, WeightFormat::kFp8) + tt->gemm_us(m, H, o_in, WeightFormat::kFp8)));
  }
  CHECK_THAT(c->describe(), Catch::Contains("checkpoint weights: attention fp8_block, experts fp8_block"));
}

TEST_CASE("gpt-oss-120b's MXFP4 experts use the w4a16_mxfp4 MoE grid and its projections stay bf16",
          "[fidelity][quant]") {
  EngineOptions e;
  auto c = model("gpt-oss-120b", 2, 1, e);
  auto* tm = dynamic_cast<TableCostModel*>(c.get());
  REQUIRE(tm != nullptr);
  CHECK(tm->weight_formats().experts == WeightFormat::kMxfp4);
  CHECK(tm->weight_formats().attention == WeightFormat::kBf16);
  CHECK(tm->moe_grid_dtype() == "w4a16_mxfp4");
  CHECK(c->source(OpFamily::kMoe) == PriceSource::kTable);
  const double H = 2880, qkv = (32 + 2 * 4) * 64.0, o_in = 32 * 64.0;
  const double want = tm->gemm_us(64, qkv, H, WeightFormat::kBf16) + tm->gemm_us(64, H, o_in, WeightFormat::kBf16);
  CHECK(tm->attention_projections_us(64) == Approx(want).epsilon(1e-12));
}

TEST_CASE("checkpoint weight bytes: FP8 blocks carry their scales, MXFP4 experts 4.25 bits, the rest 16-bit",
          "[fidelity][memory][quant]") {
  EngineOptions e;
  Parallelism p;  // one GPU
  // gpt-oss-120b, by hand: 36 layers x 128 experts x 3 x 2880 x 2880 at 4.25 bits; attention 36 x (2880 x 4096 +
  // 2 x 2880 x 512 + 4096 x 2880), router 36 x 128 x 2880, norms 73 x 2880 and embedding + LM head 2 x 201088 x
  // 2880, all 16-bit.
  const ModelSpec g = test::bundled_model("gpt-oss-120b");
  const double experts = 36.0 * 128 * 3 * 2880 * 2880, attention = 36.0 * (2880.0 * 4096 * 2 + 2 * 2880.0 * 512);
  const double rest = 36.0 * 128 * 2880 + 73.0 * 2880 + 2.0 * 201088 * 2880;
  CHECK(weights_bytes_per_gpu(g, p, e) == Approx(experts * 4.25 / 8 + (attention + rest) * 2).epsilon(1e-12));
  // 65.2 GB: the checkpoint fits one 80 GB H100, as its card says.
  CHECK(weights_bytes_per_gpu(g, p, e) < 0.9 * test::bundled_gpu("H100-SXM").memory_bytes);

  // MiniMax-M2.5 at TP 4 / EP 4 (attention split over 4, each GPU 64 of the 256 experts): FP8 with one fp32 scale
  // per 128 x 128 block; router, norms, embedding and LM head 16-bit.
  const ModelSpec mm = test::bundled_model("MiniMax-M2.5");
  Parallelism p4;
  p4.tp_attn = 4;
  p4.tp_ffn = 1;
  p4.ep_ffn = 4;
  const double fp8 = 1.0 + 4.0 / (128 * 128);
  const double m_experts = 62.0 * 256 * 3 * 3072 * 1536, m_attn = 62.0 * (3072.0 * 6144 * 2 + 2 * 3072.0 * 1024);
  const double m_rest = 62.0 * 256 * 3072 + 125.0 * 3072, m_vocab = 2.0 * 200064 * 3072;
  CHECK(weights_bytes_per_gpu(mm, p4, e) ==
        Approx(m_experts / 4 * fp8 + m_attn / 4 * fp8 + m_rest / 4 * 2 + m_vocab / 4 * 2).epsilon(1e-12));
}
