// Attention tests: FlashAttention-3 splits a prefill call's keys where the call's blocks are few for the SMs.
#include "core/fidelity/attention_predictor.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "core/fidelity/op_table.h"
#include "tests/test_support.h"
#include "tests/unit/fidelity/attention_test_support.h"

using namespace servesim;
using namespace servesim::attention_test;

namespace {

/// vLLM's FlashAttention-3 prefill geometry of a table grid, bf16 (by default 12 query heads over 2 KV heads of 256).
AttentionGeometry fa3_prefill_geo(int heads = 12, int kv_heads = 2, int head_dim = 256) {
  AttentionGeometry g = geo(heads, kv_heads);
  g.head_dim = head_dim;
  set_split_rule(g, "vllm_flash_attn_fa3");
  set_prefill_tile(g, "vllm_flash_attn_fa3", "bfloat16", head_dim);
  return g;
}

PrefillWork prompts(const AttentionGeometry& g, const std::vector<std::int64_t>& lengths) {
  PrefillWork w;
  for (std::int64_t s : lengths) w.add(g, s, s);
  return w;
}

}  // namespace

TEST_CASE("FlashAttention-3 splits a prefill call's keys by its varlen scheduler", "[fidelity][attention]") {
  const AttentionGeometry g = fa3_prefill_geo();
  REQUIRE(fa3_prefill_grid(g));
  REQUIRE(g.block_m == 128);
  REQUIRE(g.block_n == 80);
  // One 1024-token prompt: 1024 x 6 packed rows make 48 q tiles per KV head, 13 key tiles. Static count (over 512
  // tokens: the heuristic for 2 x 48 = 96 q tiles on 132 SMs, 13 key tiles) 4; tiles per split
  // ceil(48 x 13 x 1.1 x 2 / 132) = 11, so two splits.
  CHECK(flash_num_splits(96, 13, 132) == 4);
  CHECK(fa3_prefill_static_splits(g, prompts(g, {1024})) == 4);
  CHECK(fa3_prefill_split_rows(g, prompts(g, {1024})) == Approx(1024));
  // Two of them: 21 tiles per split, none split (the static count is still 4).
  CHECK(fa3_prefill_static_splits(g, prompts(g, {1024, 1024})) == 4);
  CHECK(fa3_prefill_split_rows(g, prompts(g, {1024, 1024})) == 0);
  // One of 1536 tokens: 2 x 72 q tiles fill 80% of the SMs, static count 1.
  CHECK(fa3_prefill_static_splits(g, prompts(g, {1536})) == 1);
  CHECK(fa3_prefill_split_rows(g, prompts(g, {1536})) == 0);
  // Two 512-token prompts: static 5 (48 q tiles, 7 key tiles), 6 tiles per split, each splits in two.
  CHECK(fa3_prefill_static_splits(g, prompts(g, {512, 512})) == 5);
  CHECK(fa3_prefill_split_rows(g, prompts(g, {512, 512})) == Approx(1024));
  // A call of at most 512 tokens takes vLLM's static count (32) instead of the heuristic's, which splits nothing at
  // <= 4 key tiles: one 256-token prompt (4 key tiles of 80, 12 q tiles) splits in ceil(4 / ceil(48 x 2.2 / 132)).
  CHECK(fa3_prefill_static_splits(g, prompts(g, {256})) == kVllmFa3GraphSplits);
  CHECK(fa3_prefill_split_rows(g, prompts(g, {256})) == Approx(256));
  // A long prompt beside short ones: only the long one splits, its rows alone go through the partials.
  const PrefillWork mixed = prompts(g, {1024, 16, 16, 16});
  CHECK(fa3_prefill_split_rows(g, mixed) == Approx(1024));
  // The split is a feature (the combine's launch) and its traffic is priced at the split rows only.
  double f[kMaxWorkFeatures] = {};
  mixed.features(g, f);
  CHECK(f[5] == 1.0);
  prompts(g, {1024, 1024}).features(g, f);
  CHECK(f[5] == 0.0);
  AttentionGeometry priced = g;
  priced.split_out_us_per_element = fa3_split_out_us_per_element(3.35, 0.8);
  // (Beside it, the combine's pass over every row and head: 1072 tokens beyond vLLM's largest capture.)
  CHECK(fa3_prefill_combine_rows_us(priced, mixed) == Approx(fa3_combine_us_per_row_head(g.sms) * 1072 * 12));
  CHECK(fa3_prefill_split_output_us(priced, mixed) - fa3_prefill_combine_rows_us(priced, mixed) ==
        Approx(priced.split_out_us_per_element * 1024 * 12 * 256));
  CHECK(fa3_prefill_split_output_us(g, mixed) == 0);  // no per-element cost: not priced
  // A uniform batch prices the same through uniform_prefill_work as through its chunks.
  uniform_prefill_features(g, 2, 512, f);
  CHECK(f[5] == 1.0);
  CHECK(fa3_prefill_split_rows(g, uniform_prefill_work(g, 2, 512)) == Approx(1024));
  // Other kernels do not split prefill calls: FlashAttention-2, TensorRT-LLM, MLA.
  AttentionGeometry fa2 = geo(12, 2);
  set_split_rule(fa2, "vllm_flash_attn");
  CHECK(fa3_prefill_static_splits(fa2, prompts(fa2, {1024})) == 1);
  AttentionGeometry mla = geo(12, 2);
  set_split_rule(mla, "vllm_flash_attn_fa3", /*mla=*/true);
  CHECK(fa3_prefill_static_splits(mla, prompts(mla, {1024})) == 1);
}

TEST_CASE("vLLM's FlashAttention-3 prefill table steps up where the scheduler splits a prompt's keys",
          "[fidelity][attention]") {
  // The evidence the split rule is read against: 12 query heads over 2 KV heads of 256 on the H100.
  const OpTable t = test::bundled_table("H100-SXM/vllm", "context_attention.json");
  const OpGrid* grid = t.find({"bfloat16", "256", "12", "2"});
  REQUIRE(grid);
  auto at = [grid](double b, double s) {
    const auto& B = grid->axes[0];
    const auto& S = grid->axes[1];
    const auto i = static_cast<std::size_t>(std::find(B.begin(), B.end(), b) - B.begin());
    const auto j = static_cast<std::size_t>(std::find(S.begin(), S.end(), s) - S.begin());
    REQUIRE(i < B.size());
    REQUIRE(j < S.size());
    return grid->values[i * S.size() + j];
  };
  // One prompt of 1024 tokens (split) takes longer than one of 1536 (not); two of 512 (split) longer than two of
  // 1024 (not).
  CHECK(at(1, 1024) > at(1, 1536));
  CHECK(at(2, 512) > at(2, 1024));
  // Held out, the predictor built on the grid without the 1024-token line reads the split prompt above its
  // unsplit neighbours' interpolation.
  AttentionGeometry g = table_grid_geometry(*grid, 132, false);
  g.split_out_us_per_element = fa3_split_out_us_per_element(3.35, 0.8);
  std::vector<bool> held(grid->axes[1].size(), false);
  held[static_cast<std::size_t>(std::find(grid->axes[1].begin(), grid->axes[1].end(), 1024.0) -
                                grid->axes[1].begin())] = true;
  AttentionPredictor p;
  REQUIRE(p.build_owned(drop_grid_lines(*grid, 1, held), false, g, true));
  const double pred = p.prefill_us({PrefillChunk{1024, 1024}});
  CHECK(std::abs(pred - at(1, 1024)) / at(1, 1024) < 0.30);
  AttentionGeometry unsplit = g;
  unsplit.split_out_us_per_element = 0;
  unsplit.prepare_step = false;  // not an FA3 grid: no split
  AttentionPredictor q;
  REQUIRE(q.build_owned(drop_grid_lines(*grid, 1, held), false, unsplit, true));
  CHECK(pred > q.prefill_us({PrefillChunk{1024, 1024}}));
}

TEST_CASE("a FlashAttention-3 prefill call with a static split count pays the combine over every row and head",
          "[fidelity][attention]") {
  // vLLM's H100 geometry for 16 query heads over 2 KV heads of 64 (192 x 128 tiles, packed 8 heads per KV head).
  AttentionGeometry g = fa3_prefill_geo(16, 2, 64);
  g.fa3_num_splits_max_tokens = kVllmDefaultMaxCapture;
  g.split_out_us_per_element = fa3_split_out_us_per_element(3.35, 0.8);
  REQUIRE(g.block_m == 192);
  CHECK(fa3_combine_us_per_row_head(g.sms) == Approx(150e-6));
  // 64 prompts of 1024 tokens: 2 KV heads x ceil(8192 / 192) = 86 q tiles for one prompt, under 80% of 132 SMs,
  // over 8 key tiles: a static count of 3; the batch's key tiles leave every prompt whole (no split rows), yet the
  // combine passes over all 65,536 rows of 16 heads: 157.3 us.
  const PrefillWork w = prompts(g, std::vector<std::int64_t>(64, 1024));
  CHECK(fa3_prefill_static_splits(g, w) == 3);
  CHECK(fa3_prefill_split_rows(g, w) == 0);
  CHECK(fa3_prefill_combine_rows_us(g, w) == Approx(150e-6 * 65536 * 16));
  CHECK(fa3_prefill_split_output_us(g, w) == Approx(150e-6 * 65536 * 16));
  // 1536-token prompts: 128 q tiles fill 80% of the SMs, static count 1, no combine.
  CHECK(fa3_prefill_combine_rows_us(g, prompts(g, std::vector<std::int64_t>(64, 1536))) == 0);
  // Within vLLM's largest capture (512 tokens) the call takes vLLM's 32 and the term is not priced.
  CHECK(fa3_prefill_combine_rows_us(g, prompts(g, {256, 256})) == 0);
  // Not priced where the split output is not (no HBM bandwidth for it).
  AttentionGeometry off = g;
  off.split_out_us_per_element = 0;
  CHECK(fa3_prefill_combine_rows_us(off, w) == 0);
}

TEST_CASE("vLLM's FA3 prefill table is slower at the one length whose static split count exceeds 1",
          "[fidelity][attention]") {
  // 16 query heads over 2 KV heads of 64 on the H100, 64 prompts: 1024 tokens take longer than 512 and 1536 say,
  // against 24 heads (no split at any length).
  const OpTable t = test::bundled_table("H100-SXM/vllm", "context_attention.json");
  auto at = [&t](const char* heads, double s) {
    const OpGrid* grid = t.find({"bfloat16", "64", heads, "2"});
    REQUIRE(grid);
    const auto& B = grid->axes[0];
    const auto& S = grid->axes[1];
    const auto i = static_cast<std::size_t>(std::find(B.begin(), B.end(), 64.0) - B.begin());
    const auto j = static_cast<std::size_t>(std::find(S.begin(), S.end(), s) - S.begin());
    REQUIRE(i < B.size());
    REQUIRE(j < S.size());
    return grid->values[i * S.size() + j];
  };
  // The geometric midpoint of the neighbouring lengths' times over the 1024-token one: 16 heads 0.72, 24 heads 0.85
  // (both below 1: time grows faster than the length).
  const double split = std::sqrt(at("16", 512) * at("16", 1536)) / at("16", 1024);
  const double smooth = std::sqrt(at("24", 512) * at("24", 1536)) / at("24", 1024);
  CHECK(split < 0.75);
  CHECK(smooth > 0.8);
}

TEST_CASE("a FlashAttention-3 call with a prompt longer than one token pays the causal path's step",
          "[fidelity][attention]") {
  const AttentionGeometry g = fa3_prefill_geo(8, 2, 64);
  double one[kMaxWorkFeatures] = {}, sixteen[kMaxWorkFeatures] = {};
  uniform_prefill_features(g, 4, 1, one);
  uniform_prefill_features(g, 4, 16, sixteen);
  CHECK(one[6] == 0);
  CHECK(sixteen[6] == 1);
  // One two-token prompt among one-token ones: the call's longest query decides.
  PrefillWork w = prompts(g, {1, 1, 2});
  double mixed[kMaxWorkFeatures] = {};
  w.features(g, mixed);
  CHECK(mixed[6] == 1);
  // Not a FlashAttention-3 grid: no such step.
  AttentionGeometry trt = geo(8, 2);
  trt.head_dim = 64;
  set_split_rule(trt, "trtllm_fmha");
  double other[kMaxWorkFeatures] = {};
  uniform_prefill_features(trt, 4, 16, other);
  CHECK(other[6] == 0);
  // The evidence: one prompt of 16 tokens takes 1.8-3.2 us longer than one of 1 on vLLM's H100 tables (8 query heads
  // over 2 KV heads of 64: 10.3 -> 12.4 us), where 16 -> 32 tokens add 0.4.
  const OpTable t = test::bundled_table("H100-SXM/vllm", "context_attention.json");
  const OpGrid* grid = t.find({"bfloat16", "64", "8", "2"});
  REQUIRE(grid);
  const auto& S = grid->axes[1];
  REQUIRE(S.size() > 2);
  REQUIRE(S[0] == 1);
  REQUIRE(S[1] == 16);
  REQUIRE(S[2] == 32);
  CHECK(grid->values[1] - grid->values[0] > 1.5);
  CHECK(grid->values[2] - grid->values[1] < 1.0);
}
