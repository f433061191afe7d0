#include "core/fidelity/mla_module_table.h"

#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/fidelity/table_cost_model.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

EngineOptions fp8_engine() {
  EngineOptions e;
  e.dtype = "fp8";
  e.kv_cache_dtype = "fp8";
  return e;
}

std::unique_ptr<CostModel> deepseek(int tp, const EngineOptions& e, const std::string& gpu = "H100-SXM") {
  Parallelism p;
  p.tp_attn = p.tp_ffn = tp;
  std::string err;
  auto c = make_cost_model(test::bundled_model("DeepSeek-V3"), test::bundled_gpu(gpu), p, e, &test::catalog(), 1,
                           err);
  REQUIRE(err.empty());
  REQUIRE(c);
  return c;
}

OpTable table(const std::string& file, const std::string& folder = "H100-SXM/vllm") {
  auto text = test::catalog().load_text(folder, file);
  REQUIRE(text);
  OpTable t;
  REQUIRE(parse_op_table(*text, t).empty());
  return t;
}

double cell(const OpGrid& g, double b, double s) {
  std::size_t i = 0, j = 0;
  while (i < g.axes[0].size() && g.axes[0][i] != b) ++i;
  while (j < g.axes[1].size() && g.axes[1][j] != s) ++j;
  REQUIRE(i < g.axes[0].size());
  REQUIRE(j < g.axes[1].size());
  return g.values[i * g.axes[1].size() + j];
}

// DeepSeek-V3 MLA projections of one layer at TP 8 (16 heads per GPU), as build_gemms prices them: on the grid of
// the checkpoint's 128x128 block-scaled FP8 weights (quantization_config).
double projections_us(TableCostModel& tm, double m) {
  const double H = 7168, heads = 16;
  const WeightFormat f = tm.weight_formats().attention;
  REQUIRE(f == WeightFormat::kFp8Block);
  return tm.gemm_us(m, 1536 + 512 + 64, H, f) + tm.gemm_us(m, heads * (128 + 64), 1536, f) +
         tm.gemm_us(m, heads * (128 + 128), 512, f) + tm.gemm_us(m, H, heads * 128, f);
}

}  // namespace

TEST_CASE("DeepSeek-V3 attention is priced from the MLA module tables and the result names them", "[fidelity][mla]") {
  auto c = deepseek(8, fp8_engine());
  CHECK(c->source(OpFamily::kAttentionPrefill) == PriceSource::kTable);
  CHECK(c->source(OpFamily::kAttentionDecode) == PriceSource::kTable);
  CHECK(c->report().kind == "table");
  CHECK_THAT(c->describe(), Catch::Contains("mla_generation[FLASHMLA fp8 kv, fp8_block, 16 heads]"));
  CHECK_THAT(c->describe(),
             Catch::Contains("mla_context[FLASHMLA (prompts <= 128 tokens) + FLASH_ATTN fp8 kv, fp8_block, 16 heads]"));
}

TEST_CASE("the module grids of one configuration are joined across kernels", "[fidelity][mla]") {
  const OpTable t = table("mla_context.json");
  MlaModuleGrid g;
  REQUIRE(select_mla_module_grid(t, "bfloat16", "bfloat16", 16, g));
  CHECK(g.kernels == "FLASH_ATTN+FLASH_ATTN_MLA");
  CHECK_FALSE(g.approx);
  const OpGrid* long_isl = t.find({"FLASH_ATTN", "bfloat16", "bfloat16", "16", "1"});
  const OpGrid* short_isl = t.find({"FLASH_ATTN_MLA", "bfloat16", "bfloat16", "16", "1"});
  REQUIRE(long_isl != nullptr);
  REQUIRE(short_isl != nullptr);
  CHECK(cell(g.grid, 4, 512) == cell(*short_isl, 4, 512));
  CHECK(cell(g.grid, 4, 8192) == cell(*long_isl, 4, 8192));
  // A head count the data lacks takes the nearest one and is flagged.
  MlaModuleGrid near;
  REQUIRE(select_mla_module_grid(t, "bfloat16", "bfloat16", 12, near));
  CHECK(near.heads == 16);
  CHECK(near.approx);
}

TEST_CASE("a uniform MLA batch costs exactly the module measurement at grid points", "[fidelity][mla]") {
  auto c = deepseek(8, fp8_engine());
  auto* tm = dynamic_cast<TableCostModel*>(c.get());
  REQUIRE(tm != nullptr);
  const OpTable gen = table("mla_generation.json");
  const OpGrid* g = gen.find({"FLASHMLA", "fp8", "fp8_block", "16", "1"});
  REQUIRE(g != nullptr);
  for (int b : {8, 64}) {
    const double module = cell(*g, b, 4096);
    bool ex = false;
    const double core = tm->decode_attention_us(std::vector<std::int32_t>(static_cast<std::size_t>(b), 4096), &ex);
    CHECK_FALSE(ex);
    CHECK(core > kMlaCoreFloorShare * module);  // the subtraction, not the floor, set this cell
    // The module was timed repeated, its latent KV left in L2; the role reads it cold (l2_warmth.h).
    const double cold = tm->cold_l2_us(b * 4096.0);
    CHECK((cold > 0) == (b == 8));  // 18 MiB of fp8 latent fits the L2, 144 MiB does not
    CHECK(core - cold + tm->attention_projections_us(b) == Approx(module).epsilon(1e-9));
  }
  const OpTable ctx = table("mla_context.json");
  const OpGrid* p = ctx.find({"FLASH_ATTN", "fp8", "fp8_block", "16", "1"});
  REQUIRE(p != nullptr);
  const double module = cell(*p, 2, 1024);
  std::vector<PrefillChunk> chunks(2);
  for (PrefillChunk& ch : chunks) ch.q = ch.context = 1024;
  bool ex = false;
  const double core = tm->prefill_attention_us(chunks, &ex);
  CHECK_FALSE(ex);
  CHECK(core + tm->attention_projections_us(2048) == Approx(module).epsilon(1e-9));
  // vLLM's fp8_block GEMM grid would put the four projections of a small decode batch above the whole measured
  // module (its per-call floor, see make_gemm); priced on the per-tensor fp8 grid they fit inside it and the cap
  // does not bind.
  CHECK(projections_us(*tm, 8) < cell(*g, 8, 4096));
  CHECK(tm->attention_projections_us(8) == Approx(projections_us(*tm, 8)).epsilon(1e-12));
}

TEST_CASE("MLA decode cost grows with context and batch", "[fidelity][mla]") {
  auto c = deepseek(8, fp8_engine());
  auto* tm = dynamic_cast<TableCostModel*>(c.get());
  REQUIRE(tm != nullptr);
  double last = 0;
  for (int ctx : {512, 2048, 8192, 32768}) {
    const double us = tm->decode_attention_us(std::vector<std::int32_t>(32, ctx));
    CHECK(us > last);
    last = us;
  }
  CHECK(tm->decode_attention_us(std::vector<std::int32_t>(64, 8192)) >
        tm->decode_attention_us(std::vector<std::int32_t>(32, 8192)));
  // A mixed batch costs more than its short uniform batch; with split-KV the long requests' CTAs set the time,
  // so it may come close to the long uniform batch, but not beyond it by more than the residual's spread.
  std::vector<std::int32_t> mixed(32, 512);
  for (int i = 0; i < 16; ++i) mixed[static_cast<std::size_t>(i)] = 8192;
  const double m = tm->decode_attention_us(mixed);
  CHECK(m > tm->decode_attention_us(std::vector<std::int32_t>(32, 512)));
  CHECK(m < 1.05 * tm->decode_attention_us(std::vector<std::int32_t>(32, 8192)));
}

TEST_CASE("a uniform TRT-LLM MLA batch costs the module measurement also where the GEMM-table projections exceed it",
          "[fidelity][mla]") {
  EngineOptions e = fp8_engine();
  e.backend = "trtllm";
  auto c = deepseek(8, e);
  auto* tm = dynamic_cast<TableCostModel*>(c.get());
  REQUIRE(tm != nullptr);
  const OpTable gen = table("mla_generation.json", "H100-SXM/trtllm");
  MlaModuleGrid m;
  REQUIRE(select_mla_module_grid(gen, "fp8", "fp8_block", 16, m));
  REQUIRE_FALSE(m.approx);
  const OpGrid& g = m.grid;
  int over = 0, cells = 0;
  for (std::size_t i = 0; i < g.axes[0].size(); ++i)
    for (std::size_t j = 0; j < g.axes[1].size(); ++j) {
      const double module = g.values[i * g.axes[1].size() + j];
      if (std::isnan(module)) continue;
      const double b = g.axes[0][i];
      const auto kv = static_cast<std::int32_t>(g.axes[1][j]);
      // Where the uncapped GEMM-table projections alone exceed the module, the cap decides.
      if (projections_us(*tm, b) > module) ++over;
      ++cells;
      const double core = tm->decode_attention_us(std::vector<std::int32_t>(static_cast<std::size_t>(b), kv));
      const double cold = tm->cold_l2_us(static_cast<double>(b) * kv);
      CHECK(core - cold >= kMlaCoreFloorShare * module * (1 - 1e-12));
      CHECK(core - cold + tm->attention_projections_us(b) == Approx(module).epsilon(1e-9));
    }
  CHECK(cells > 100);
  // On TRT-LLM's fp8_block GEMM table (the checkpoint's format, as in the module) no cell needs the cap; it did on
  // the per-tensor fp8 table used before the checkpoint's quantization_config was read.
  CHECK(over == 0);
  // Context cells too (tokens = batch x isl).
  const OpTable ctx = table("mla_context.json", "H100-SXM/trtllm");
  MlaModuleGrid p;
  REQUIRE(select_mla_module_grid(ctx, "fp8", "fp8_block", 16, p));
  for (std::size_t i = 0; i < p.grid.axes[0].size(); ++i)
    for (std::size_t j = 0; j < p.grid.axes[1].size(); ++j) {
      const double module = p.grid.values[i * p.grid.axes[1].size() + j];
      if (std::isnan(module)) continue;
      const auto b = static_cast<std::size_t>(p.grid.axes[0][i]);
      const auto isl = static_cast<std::int32_t>(p.grid.axes[1][j]);
      const double core = tm->prefill_attention_us(std::vector<PrefillChunk>(b, PrefillChunk{isl, isl}));
      CHECK(core + tm->attention_projections_us(static_cast<double>(b) * isl) == Approx(module).epsilon(1e-9));
    }
}

TEST_CASE("the MLA projection cap is a non-decreasing bound below every module of at least as many tokens",
          "[fidelity][mla]") {
  OpGrid g;
  g.axes = {{1, 4}, {2, 64}};
  g.values = {100, 120, 90, 300};  // b=1: 100, 120; b=4: 90 (below the b=1 cells), 300
  MlaProjectionCap cap;
  cap.add(g, true);
  cap.finish();
  const double s = 1 - kMlaCoreFloorShare;
  CHECK(cap.cap_us(1) == Approx(90 * s));  // 4 tokens measured at 90 us bound 1 token too
  CHECK(cap.cap_us(4) == Approx(90 * s));
  CHECK(cap.cap_us(2) == Approx(90 * s));
  CHECK(std::isinf(cap.cap_us(5)));  // no module of 5 or more tokens
  MlaProjectionCap none;
  none.finish();
  CHECK(std::isinf(none.cap_us(1)));
}

TEST_CASE("A100's per-kernel MLA tables are validated but do not price MLA (their floor is host time)",
          "[fidelity][mla]") {
  // The tables load and select (servesim_opcheck validates them), but every cell carries a floor of eager host
  // time: even one request of two keys costs >= 241 us, against tens of us for A100's FlashAttention decode.
  const OpTable gen = table("mla_generation.json", "A100-80G/vllm");
  MlaModuleGrid g;
  REQUIRE(select_mla_module_grid(gen, "bfloat16", "bfloat16", 16, g));
  CHECK_FALSE(g.module);
  double floor_us = 1e30;
  for (double v : g.grid.values)
    if (!std::isnan(v)) floor_us = std::min(floor_us, v);
  CHECK(floor_us > 200);
  const OpTable fa = table("generation_attention.json", "A100-80G/vllm");
  REQUIRE_FALSE(fa.grids.empty());
  double fa_floor = 1e30;
  for (const OpGrid& x : fa.grids)
    for (double v : x.values)
      if (!std::isnan(v)) fa_floor = std::min(fa_floor, v);
  CHECK(fa_floor * 10 < floor_us);
  // So A100 MLA attention is datasheet-derived, and its projections are the A100 GEMM table's.
  EngineOptions e;  // bf16 weights and KV cache: A100 has no FP8
  auto c = deepseek(8, e, "A100-80G");
  auto* tm = dynamic_cast<TableCostModel*>(c.get());
  REQUIRE(tm != nullptr);
  CHECK(c->source(OpFamily::kAttentionPrefill) == PriceSource::kDatasheet);
  CHECK(c->source(OpFamily::kAttentionDecode) == PriceSource::kDatasheet);
  CHECK(c->source(OpFamily::kGemm) == PriceSource::kTable);
  const double one = tm->decode_attention_us(std::vector<std::int32_t>(1, 2));
  CHECK(one > 0);
  CHECK(one < floor_us);
  const double H = 7168, heads = 16;
  const double proj = tm->gemm_us(256, 1536 + 512 + 64, H, false) + tm->gemm_us(256, heads * (128 + 64), 1536, false) +
                      tm->gemm_us(256, heads * (128 + 128), 512, false) + tm->gemm_us(256, H, heads * 128, false);
  CHECK(tm->attention_projections_us(256) == Approx(proj).epsilon(1e-12));
}

TEST_CASE("in a mixed MLA batch longer requests cost more", "[fidelity][mla]") {
  EngineOptions e = fp8_engine();
  for (const char* backend : {"trtllm", "vllm"}) {
    e.backend = backend;
    auto c = deepseek(8, e);
    auto* tm = dynamic_cast<TableCostModel*>(c.get());
    REQUIRE(tm != nullptr);
    std::vector<std::int32_t> shorter(32, 1024), longer(32, 1024);
    for (int i = 0; i < 8; ++i) longer[static_cast<std::size_t>(i)] = 16384;
    CHECK(tm->decode_attention_us(longer) > tm->decode_attention_us(shorter));
    // Prefill chunks of 512 tokens: one continuing a long prompt (8192 keys) costs more than a fresh one.
    std::vector<PrefillChunk> fresh(4, PrefillChunk{512, 512}), continued = fresh;
    continued[0].context = 8192;
    CHECK(tm->prefill_attention_us(continued) > tm->prefill_attention_us(fresh));
  }
}

TEST_CASE("vLLM's MLA context grids split where its backends send prompts to the decode path", "[fidelity][mla]") {
  CHECK(mla_decode_path("FLASHMLA").max_query == 128);
  CHECK(mla_decode_path("FLASHMLA").uniform);
  CHECK(mla_decode_path("FLASH_ATTN_MLA").max_query == 512);
  CHECK_FALSE(mla_decode_path("FLASH_ATTN_MLA").uniform);
  CHECK_FALSE(mla_decode_path("FLASH_ATTN").ok());
  CHECK_FALSE(mla_decode_path("default").ok());
  // vLLM's collector measured each kernel on exactly its side of the threshold.
  const OpTable t = table("mla_context.json");
  MlaModuleGrid fp8, bf16;
  REQUIRE(select_mla_module_grid(t, "fp8", "fp8_block", 16, fp8));
  CHECK(fp8.decode_path.max_query == 128);
  CHECK(fp8.short_kernel == "FLASHMLA");
  CHECK(fp8.long_kernel == "FLASH_ATTN");
  REQUIRE(select_mla_module_grid(t, "bfloat16", "bfloat16", 16, bf16));
  CHECK(bf16.decode_path.max_query == 512);
  CHECK(bf16.short_kernel == "FLASH_ATTN_MLA");
  OpGrid shorter, longer;
  split_mla_context_grid(fp8, fp8.grid, shorter, longer);
  CHECK(shorter.kernel == "FLASHMLA");
  CHECK(longer.kernel == "FLASH_ATTN");
  REQUIRE_FALSE(shorter.axes[1].empty());
  REQUIRE_FALSE(longer.axes[1].empty());
  CHECK(shorter.axes[1].back() == 128);
  CHECK(longer.axes[1].front() == 256);
  const OpGrid* mla = t.find({"FLASHMLA", "fp8", "fp8_block", "16", "1"});
  const OpGrid* fa = t.find({"FLASH_ATTN", "fp8", "fp8_block", "16", "1"});
  REQUIRE(mla != nullptr);
  REQUIRE(fa != nullptr);
  CHECK(shorter.axes == mla->axes);
  CHECK(cell(shorter, 8, 64) == cell(*mla, 8, 64));
  CHECK(cell(longer, 8, 2048) == cell(*fa, 8, 2048));
  // One kernel for every length: TRT-LLM's tables, and every generation grid.
  MlaModuleGrid trt, gen;
  REQUIRE(select_mla_module_grid(table("mla_context.json", "H100-SXM/trtllm"), "fp8", "fp8_block", 16, trt));
  CHECK_FALSE(trt.decode_path.ok());
  REQUIRE(select_mla_module_grid(table("mla_generation.json"), "fp8", "fp8_block", 16, gen));
  CHECK_FALSE(gen.decode_path.ok());
}

TEST_CASE("which prompts vLLM runs on an MLA backend's decode path", "[fidelity][mla]") {
  auto chunks = [](std::vector<std::int32_t> q) {
    std::vector<PrefillChunk> out;
    for (std::int32_t x : q) out.push_back(PrefillChunk{x, x});
    return out;
  };
  using V = std::vector<char>;
  const MlaDecodePath varlen = mla_decode_path("FLASH_ATTN_MLA"), uniform = mla_decode_path("FLASHMLA");
  // VARLEN: every prompt up to the threshold, beside decodes or not.
  CHECK(mla_decode_path_prompts(varlen, chunks({1, 300, 512, 513, 2000}), false) == V{1, 1, 1, 0, 0});
  CHECK(mla_decode_path_prompts(varlen, chunks({1, 300, 512, 513, 2000}), true) == V{1, 1, 1, 0, 0});
  // UNIFORM without decodes: the run of the first short prompt's length; a long prompt does not break it.
  CHECK(mla_decode_path_prompts(uniform, chunks({64, 300, 64, 32, 64}), false) == V{1, 0, 1, 0, 0});
  // Beside decodes (one token each) only one-token prompts join them.
  CHECK(mla_decode_path_prompts(uniform, chunks({1, 64, 1, 129}), true) == V{1, 0, 1, 0});
  CHECK(mla_decode_path_prompts(MlaDecodePath(), chunks({1, 64}), false) == V{0, 0});
}

TEST_CASE("vLLM MLA prompts are priced on the kernel vLLM runs them on", "[fidelity][mla]") {
  auto c = deepseek(8, fp8_engine());  // fp8 KV cache: FlashMLA decode path up to 128 tokens, FLASH_ATTN above
  auto* tm = dynamic_cast<TableCostModel*>(c.get());
  REQUIRE(tm != nullptr);
  const OpTable ctx = table("mla_context.json");
  const OpGrid* mla = ctx.find({"FLASHMLA", "fp8", "fp8_block", "16", "1"});
  REQUIRE(mla != nullptr);
  // Exact on the decode-path kernel's own cells.
  for (int isl : {16, 64}) {
    const std::vector<PrefillChunk> uniform(4, PrefillChunk{isl, isl});
    bool ex = false;
    const double core = tm->prefill_attention_us(uniform, &ex);
    CHECK_FALSE(ex);
    CHECK(core + tm->attention_projections_us(4.0 * isl) == Approx(cell(*mla, 4, isl)).epsilon(1e-9));
  }
  // Beside decodes a 64-token prompt is not in FlashMLA's uniform call: FLASH_ATTN runs it, below its measured
  // lengths (flagged).
  const std::vector<PrefillChunk> one(1, PrefillChunk{64, 64});
  bool alone_ex = false, beside_ex = false;
  const double alone = tm->prefill_attention_us(one, &alone_ex);
  const double beside = tm->prefill_attention_us(one, &beside_ex, /*beside_decodes=*/true);
  CHECK_FALSE(alone_ex);
  CHECK(beside_ex);
  CHECK(beside != Approx(alone).epsilon(1e-6));
  // A 200-token prompt is FLASH_ATTN's with or without decodes.
  const std::vector<PrefillChunk> longer(1, PrefillChunk{200, 200});
  CHECK(tm->prefill_attention_us(longer) == tm->prefill_attention_us(longer, nullptr, true));
  // bf16 KV cache: FlashAttention-MLA is VARLEN, so a 64-token prompt takes its decode path beside decodes too.
  EngineOptions e;
  e.dtype = "fp8";
  auto b = deepseek(8, e);
  auto* tb = dynamic_cast<TableCostModel*>(b.get());
  REQUIRE(tb != nullptr);
  CHECK(tb->prefill_attention_us(one) == tb->prefill_attention_us(one, nullptr, true));
}
