// Attention tests: FlashAttention-3 (vLLM on Hopper): per-request splits, static split count, split output, scheduler step, prefill tiles.
#include "core/fidelity/attention_predictor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "core/fidelity/op_table.h"
#include "tests/test_support.h"
#include "tests/unit/fidelity/attention_test_support.h"

using namespace servesim;
using namespace servesim::attention_test;

TEST_CASE("FlashAttention-3 decode splits each request by its own length", "[fidelity][attention]") {
  AttentionGeometry g = geo(32, 8);
  set_split_rule(g, "vllm_flash_attn_fa3");
  CHECK(g.split_kv == AttentionGeometry::SplitKv::kPerRequest);
  CHECK(g.cta_slots_per_sm == 1);
  CHECK(g.fa3_num_splits == kVllmFa3GraphSplits);
  g.fa3_num_splits = 0;  // the kernel's own heuristic caps the splits (an eager vLLM call)
  // One request of 320 tiles among 15 of one tile: tiles per split ceil(335 x 1.1 x 8 / 132) = 23, so the long one
  // takes ceil(320 / 23) = 14 splits (under the one-request cap, flash_num_splits(8, 320, 132) = 15) and the short
  // ones none: (14 + 15) x 8 CTAs, the longest holding ceil(320 / 14) = 23 tiles.
  const auto f = decode_features(g, one_long(16));
  CHECK(flash_num_splits(8, 320, 132) == 15);
  CHECK(f[2] == Approx(23));
  CHECK(f[3] == Approx((14.0 + 15) * 8 / 132));
  CHECK(f[4] == Approx(1.0 * 32 / 132));  // combine work: the one split request
  // A uniform batch prices the same through either path.
  const auto fu = decode_features(g, std::vector<std::int32_t>(12, 5000));
  double fc[kMaxWorkFeatures] = {};
  uniform_decode_features(g, 12, 5000, fc);
  for (int i = 0; i < kDecodeFeatures; ++i) CHECK(fu[static_cast<std::size_t>(i)] == Approx(fc[i]));
  // No split at <= 4 key tiles, nor over 992 requests.
  uniform_decode_features(g, 8, 512, fc);
  CHECK(fc[3] == Approx(8.0 * 8 / 132));
  uniform_decode_features(g, 993, 40960, fc);
  CHECK(fc[3] == Approx(993.0 * 8 / 132));
  CHECK(fc[4] == 0);
}

TEST_CASE("vLLM passes FlashAttention-3 a static split count under full CUDA graphs", "[fidelity][attention]") {
  AttentionGeometry g = geo(8, 1);
  set_split_rule(g, "vllm_flash_attn_fa3");
  REQUIRE(g.fa3_num_splits == 32);
  REQUIRE(g.fa3_num_splits_max_tokens == 512);
  double f[kMaxWorkFeatures] = {};
  // One request of 131072 keys (1024 tiles): tiles per split ceil(1024 x 1.1 / 132) = 9 would give 114 splits; the
  // static count holds it to 32 (the heuristic for one request allows 109).
  uniform_decode_features(g, 1, 131072, f);
  CHECK(f[3] == Approx(32.0 / 132));
  CHECK(f[2] == Approx(32));  // the longest CTA: 1024 / 32 tiles
  // Short requests split too: the heuristic's "no split at <= 4 key tiles" is not consulted.
  uniform_decode_features(g, 8, 512, f);
  CHECK(f[3] == Approx(8.0 * 4 / 132));
  // Above the largest capture vLLM passes nothing and the heuristic caps again.
  g.fa3_num_splits_max_tokens = 4;
  uniform_decode_features(g, 8, 512, f);
  CHECK(f[3] == Approx(8.0 / 132));
  g.fa3_num_splits_max_tokens = 0;  // an eager role
  uniform_decode_features(g, 1, 131072, f);
  CHECK(f[3] == Approx(flash_num_splits(1, 1024, 132) / 132.0));
  // vLLM's H100 table, 8 query heads over 1 KV head of 256: 1, 2 and 4 requests of 16384-131072 keys. Every cell's
  // work model fitted on the whole grid predicts these long lines closer with the static count than with the
  // heuristic's, which splits one request across nearly every SM (100.2 / 108.7 / 192.7 us at 131072 keys).
  const OpTable t = test::bundled_table("H100-SXM/vllm", "generation_attention.json");
  const OpGrid* grid = t.find({"bfloat16", "256", "8", "1"});
  REQUIRE(grid);
  double err[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    AttentionGeometry gg = table_grid_geometry(*grid, 132, true);
    if (k == 1) gg.fa3_num_splits = 0;
    AttentionPredictor p;
    REQUIRE(p.build(*grid, true, gg));
    const auto& B = grid->axes[0];
    const auto& S = grid->axes[1];
    for (std::size_t i = 0; i < B.size() && B[i] <= 4; ++i)
      for (std::size_t j = 0; j < S.size(); ++j) {
        const double v = grid->values[i * S.size() + j];
        if (S[j] < 16384 || std::isnan(v)) continue;
        double fm[kMaxWorkFeatures] = {};
        uniform_decode_features(gg, static_cast<std::int64_t>(B[i]), static_cast<std::int64_t>(S[j]), fm);
        err[k] += std::fabs(std::log(p.model().eval(fm) / v));
      }
  }
  INFO("sum |log error| of the work model, static count " << err[0] << ", heuristic " << err[1]);
  CHECK(err[0] < 0.7 * err[1]);
}

TEST_CASE("FlashAttention-3's split kernel sends every output row through fp32 partials and the combine",
          "[fidelity][attention]") {
  AttentionGeometry g = geo(64, 1);
  set_split_rule(g, "vllm_flash_attn_fa3");
  g.split_out_us_per_element = fa3_split_out_us_per_element(3.35, 0.8);
  // 8 bytes per element at 0.8 x 3.35 TB/s, for every request of a call whose static split count exceeds 1.
  const double per_request_64 = 8.0 * 64 * 128 / (0.8 * 3.35e6);
  CHECK(fa3_split_output_us(g, 512, 2) == Approx(512 * per_request_64));
  CHECK(fa3_split_output_us(g, 993, 2) == 0);  // no split over 992 requests
  g.fa3_num_splits_max_tokens = 0;             // an eager call: the heuristic, no split at <= 4 key tiles
  CHECK(fa3_split_output_us(g, 512, 2) == 0);
  CHECK(fa3_split_output_us(g, 1, 131072) > 0);
  AttentionGeometry fa2 = geo(64, 1);
  set_split_rule(fa2, "vllm_flash_attn");
  fa2.split_out_us_per_element = g.split_out_us_per_element;
  CHECK(fa3_split_output_us(fa2, 512, 2) == 0);
  // vLLM's H100 table, 2 keys over 1 KV head of 128: from 1 to 64 query heads 512 requests (static count 32) grow
  // by 15.7 us, 1024 requests (no split kernel) by 4.5; the traffic accounts for 12.3 us of the first.
  const OpTable t = test::bundled_table("H100-SXM/vllm", "generation_attention.json");
  auto at = [&t](const char* heads, double b) {
    const OpGrid* grid = t.find({"bfloat16", "128", heads, "1"});
    REQUIRE(grid);
    const auto& B = grid->axes[0];
    const std::size_t i = static_cast<std::size_t>(std::find(B.begin(), B.end(), b) - B.begin());
    REQUIRE(i < B.size());
    REQUIRE(grid->axes[1][0] == 2);
    return grid->values[i * grid->axes[1].size()];
  };
  const double grow_512 = at("64", 512) - at("1", 512), grow_1024 = at("64", 1024) - at("1", 1024);
  CHECK(grow_1024 < 0.5 * grow_512);
  AttentionGeometry one = geo(1, 1);
  set_split_rule(one, "vllm_flash_attn_fa3");
  one.split_out_us_per_element = fa3_split_out_us_per_element(3.35, 0.8);
  g.fa3_num_splits_max_tokens = kVllmDefaultMaxCapture;
  const double traffic = fa3_split_output_us(g, 512, 2) - fa3_split_output_us(one, 512, 2);
  CHECK(traffic > 0.6 * grow_512);
  CHECK(traffic < 1.0 * grow_512);
}

TEST_CASE("FlashAttention-3 decode pays its scheduler step up to 992 requests - interpolation keeps it off the "
          "batches above",
          "[fidelity][attention]") {
  AttentionGeometry g = geo(8, 1);
  set_split_rule(g, "vllm_flash_attn_fa3");
  CHECK(g.prepare_step);
  double f[kMaxWorkFeatures] = {};
  uniform_decode_features(g, 992, 64, f);
  CHECK(f[5] == 1);
  uniform_decode_features(g, 993, 64, f);
  CHECK(f[5] == 0);
  AttentionGeometry mla = geo(16, 1);
  set_split_rule(mla, "flashmla", true);
  CHECK_FALSE(mla.prepare_step);

  // Batches 128 .. 2048 with a step of 9 us up to 992 requests; 1024 not measured.
  const double coef[kMaxWorkFeatures] = {5.0, 0.03, 0.9, 0.3, 0.2, 9.0};
  OpGrid grid;
  grid.key = {"bfloat16", "128", "8", "1"};
  grid.axes = {{128, 256, 512, 2048}, {16, 64, 256, 1024}};
  for (const auto& a : grid.axes) {
    std::vector<double> l;
    for (double v : a) l.push_back(std::log(v));
    grid.log_axes.push_back(l);
  }
  grid.strides = {4, 1};
  auto truth = [&](std::int64_t b, std::int64_t s) {
    double x[kMaxWorkFeatures] = {};
    uniform_decode_features(g, b, s, x);
    double v = 0;
    for (int i = 0; i < kDecodeFeatures; ++i) v += coef[i] * x[i];
    return v;
  };
  for (double b : grid.axes[0])
    for (double s : grid.axes[1]) {
      grid.values.push_back(truth(static_cast<std::int64_t>(b), static_cast<std::int64_t>(s)));
      grid.log_values.push_back(std::log(grid.values.back()));
    }
  AttentionPredictor p;
  REQUIRE(p.build(grid, true, g));
  CHECK(p.model().coef[5] == Approx(9.0).epsilon(1e-6));
  // Read raw between 512 and 2048 (affine in the batch), 1024 requests come out at the step-free line: without
  // the step taken off the 512 line first, the 9 us would be spread a third of the way up.
  p.set_interp(AttentionPredictor::Interp::kRawAffine);
  const double at1024 = p.decode_us(std::vector<std::int32_t>(1024, 16));
  const double line = truth(512, 16) - 9.0 + (truth(2048, 16) - truth(512, 16) + 9.0) * (1024.0 - 512) / 1536;
  CHECK(at1024 == Approx(line).epsilon(1e-9));
  const double spread = truth(512, 16) + (truth(2048, 16) - truth(512, 16)) / 3;
  CHECK(spread - at1024 == Approx(6.0).epsilon(1e-6));  // two thirds of the step
  // At 512 (measured) the step is there.
  CHECK(p.decode_us(std::vector<std::int32_t>(512, 16)) == Approx(truth(512, 16)).epsilon(1e-9));
}

TEST_CASE("FlashAttention-3 prefill packs a KV head's query heads into the tile's rows", "[fidelity][attention]") {
  AttentionGeometry fa3 = geo(8, 1);
  set_split_rule(fa3, "vllm_flash_attn_fa3");
  CHECK(fa3.pack_gqa_prefill);
  AttentionGeometry fa2 = geo(8, 1);
  set_split_rule(fa2, "vllm_flash_attn");
  CHECK_FALSE(fa2.pack_gqa_prefill);
  // 16 tokens x 8 heads fill one 128-row tile of the KV head; 32 tokens two. Unpacked, each query head has one tile.
  for (std::int64_t s : {16, 32, 64, 128}) {
    PrefillWork packed, unpacked;
    packed.add(fa3, s, s);
    unpacked.add(fa2, s, s);
    CHECK(packed.ctas == Approx(static_cast<double>(s) * 8 / 128));
    CHECK(unpacked.ctas == Approx(8));
    CHECK(packed.pairs == Approx(unpacked.pairs));
  }
  // A packed tile of rows (token, head), token-major: tile j of 300 tokens holds tokens 16 j .. 16 j + 15, so it
  // sees ceil((16 (j + 1)) / 128) key tiles; the last tile (tokens 288..299, 96 rows) weighs by its rows.
  PrefillWork w;
  w.add(fa3, 300, 300);
  double tiles = 0;
  for (std::int64_t j = 0; j < 19; ++j) {
    const std::int64_t last_token = std::min<std::int64_t>(16 * (j + 1), 300) - 1;
    const double n = static_cast<double>(last_token / 128 + 1);
    tiles += j < 18 ? n : n * (kKeyTileLoadShare + (1 - kKeyTileLoadShare) * 96.0 / 128);
  }
  CHECK(w.ctas == Approx(19));
  CHECK(w.tiles == Approx(tiles));
  // Without grouping there is nothing to pack: the same tiles as FlashAttention-2.
  AttentionGeometry mha3 = geo(8, 8), mha2 = geo(8, 8);
  set_split_rule(mha3, "vllm_flash_attn_fa3");
  set_split_rule(mha2, "vllm_flash_attn");
  PrefillWork a, b;
  a.add(mha3, 1000, 3000);
  b.add(mha2, 1000, 3000);
  CHECK(a.tiles == Approx(b.tiles));
  CHECK(a.ctas == Approx(b.ctas));
}

TEST_CASE("vLLM's FlashAttention prefill runs the tile its head size and element size select",
          "[fidelity][attention]") {
  struct Case {
    const char* dtype;
    int head_dim, window, bm, bn;
    int one_wg_rows, one_wg_bm, one_wg_bn;  // AttentionGeometry::one_wg_rows and its tile (0: none / the same)
  };
  // tile_size_fwd_sm90 with a paged KV cache whose pages are not whole key tiles; one MMA warpgroup (use_one_mma_wg)
  // at head_dim 64 and 128 without a window, in a 64-row tile for 16-bit elements only.
  const Case cases[] = {{"bfloat16", 64, 0, 192, 128, 64, 64, 192}, {"bfloat16", 64, 128, 192, 160, 0, 0, 0},
                        {"bfloat16", 128, 0, 128, 128, 64, 64, 128}, {"bfloat16", 192, 0, 128, 96, 0, 0, 0},
                        {"bfloat16", 256, 0, 128, 80, 0, 0, 0},      {"fp8", 64, 0, 192, 160, 64, 0, 0},
                        {"fp8", 128, 0, 128, 160, 64, 0, 0},         {"fp8", 192, 0, 128, 160, 0, 0, 0},
                        {"fp8", 256, 0, 128, 128, 0, 0, 0},          {"fp8", 256, 128, 128, 64, 0, 0, 0}};
  for (const Case& c : cases) {
    AttentionGeometry g = geo(8, 1);
    g.window = c.window;
    set_split_rule(g, "vllm_flash_attn_fa3");
    set_prefill_tile(g, "vllm_flash_attn_fa3", c.dtype, c.head_dim);
    INFO(c.dtype << " head_dim " << c.head_dim << " window " << c.window);
    CHECK(g.block_m == c.bm);
    CHECK(g.block_n == c.bn);
    CHECK(g.one_wg_rows == c.one_wg_rows);
    CHECK(g.one_wg_block_m == c.one_wg_bm);
    CHECK(g.one_wg_block_n == c.one_wg_bn);
  }
  // vLLM's FlashAttention-2 runs its split-KV kernel (a block table): 64 rows, keys by head size.
  for (const auto& [hd, bn] : {std::pair<int, int>{64, 256}, {128, 128}, {256, 64}}) {
    AttentionGeometry g = geo(8, 1);
    set_prefill_tile(g, "vllm_flash_attn", "bfloat16", hd);
    CHECK(g.block_m == 64);
    CHECK(g.block_n == bn);
  }
  // Other kernels keep 128 x 128 (PyTorch's FlashAttention-2 without a block table, TensorRT-LLM's).
  for (const char* k : {"aten._flash_attention_forward", "torch_flow"}) {
    AttentionGeometry g = geo(8, 1, 64, 64);
    set_prefill_tile(g, k, "bfloat16", 64);
    CHECK(g.block_m == 128);
    CHECK(g.block_n == 128);
  }
  // At head size 64 a 1024-token prompt of one head fills 6 tiles of 192 rows (the last holds 64), where 1536 tokens
  // fill 8 whole ones: the step from 1024 to 1536 tokens adds fewer tiles than the one from 512 (3 tiles) to 1024.
  AttentionGeometry g = geo(1, 1);
  set_split_rule(g, "vllm_flash_attn_fa3");
  set_prefill_tile(g, "vllm_flash_attn_fa3", "bfloat16", 64);
  std::array<double, 3> ctas{};
  for (int i = 0; i < 3; ++i) {
    PrefillWork w;
    w.add(g, 512 * (i + 1), 512 * (i + 1));
    ctas[static_cast<std::size_t>(i)] = w.ctas;
  }
  CHECK(ctas[0] == 3);
  CHECK(ctas[1] == 6);
  CHECK(ctas[2] == 8);
}

TEST_CASE("vLLM's FlashAttention-3 runs a prefill call of few rows per KV head on one MMA warpgroup",
          "[fidelity][attention]") {
  // Which grids have it: the tile test above. FlashAttention-2 has no such switch.
  AttentionGeometry other = geo(8, 1);
  set_split_rule(other, "vllm_flash_attn");
  set_prefill_tile(other, "vllm_flash_attn", "bfloat16", 128);
  CHECK(other.one_wg_rows == 0);

  // The step feature f[4] (the busiest SM's rounds of CTAs, here one, each at most a full tile's share) starts once
  // the longest chunk's rows pass 64: 4 query heads per KV head at 16 / 17 tokens, one at 64 / 65; a mixed call takes
  // its longest chunk.
  for (const auto& [heads, last_one] : {std::pair<int, int>{32, 16}, {8, 64}}) {
    AttentionGeometry g = geo(heads, 8);
    set_split_rule(g, "vllm_flash_attn_fa3");
    set_prefill_tile(g, "vllm_flash_attn_fa3", "bfloat16", 128);
    double f[kMaxWorkFeatures] = {};
    uniform_prefill_features(g, 4, last_one, f);
    CHECK(f[4] == 0);
    uniform_prefill_features(g, 4, last_one + 1, f);
    const double rows = static_cast<double>((last_one + 1) * heads / 8);  // of the 128-row tile
    CHECK(f[4] == Approx(kKeyTileLoadShare + (1 - kKeyTileLoadShare) * rows / 128));
    PrefillWork mixed;
    mixed.add(g, 1, 900);
    mixed.add(g, last_one + 1, last_one + 1);
    CHECK_FALSE(mixed.one_wg(g));
  }
  // In the one-warpgroup call a 64-row chunk fills its 64-row tile: one tile per KV head, not a partial 128-row one.
  AttentionGeometry g = geo(32, 8);
  set_split_rule(g, "vllm_flash_attn_fa3");
  set_prefill_tile(g, "vllm_flash_attn_fa3", "bfloat16", 128);
  double f[kMaxWorkFeatures] = {};
  uniform_prefill_features(g, 1, 16, f);
  CHECK(f[1] == Approx(1.0));  // the longest CTA: one whole key tile
  CHECK(f[2] == Approx(8.0 / 132));
  AttentionGeometry two = g;
  two.one_wg_rows = 0;
  uniform_prefill_features(two, 1, 16, f);
  CHECK(f[1] == Approx(kKeyTileLoadShare + (1 - kKeyTileLoadShare) * 64.0 / 128));

  // vLLM's H100 table, FP8 KV, 4 query heads over 1 KV head of 128: 16-token prompts (64 rows, one warpgroup) cost
  // about what one-token prompts do and 32 tokens (128 rows) about 4 us more at small batches. With the 16-token line
  // held out, the predictor fitted with the step predicts it closer than without.
  const OpTable t = test::bundled_table("H100-SXM/vllm", "context_attention.json");
  const OpGrid* grid = t.find({"fp8", "128", "4", "1"});
  REQUIRE(grid);
  const auto& S = grid->axes[1];
  std::vector<bool> held(S.size(), false);
  std::size_t at = 0;
  for (std::size_t j = 0; j < S.size(); ++j)
    if (S[j] == 16) held[j] = true, at = j;
  REQUIRE(held[at]);
  const OpGrid kept = drop_grid_lines(*grid, 1, held);
  double err[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    AttentionGeometry gg = table_grid_geometry(*grid, 132, false);
    REQUIRE(gg.one_wg_rows == 64);
    if (k == 1) gg.one_wg_rows = 0;
    AttentionPredictor p;
    REQUIRE(p.build(kept, false, gg));
    for (std::size_t i = 0; i < grid->axes[0].size(); ++i) {
      const double v = grid->values[i * S.size() + at];
      if (std::isnan(v)) continue;
      const auto b = static_cast<std::size_t>(grid->axes[0][i]);
      err[k] += std::fabs(std::log(p.prefill_us(std::vector<PrefillChunk>(b, PrefillChunk{16, 16})) / v));
    }
  }
  INFO("sum |log error| on the held-out 16-token line, with the step " << err[0] << ", without " << err[1]);
  CHECK(err[0] < 0.7 * err[1]);
}

TEST_CASE("FlashAttention-3 decode marks requests past one key block", "[fidelity][attention]") {
  AttentionGeometry g = geo(8, 1);
  set_split_rule(g, "vllm_flash_attn_fa3");
  g.head_dim = 128;  // bf16: 128-key blocks over a paged cache
  CHECK(decode_features(g, std::vector<std::int32_t>(4, 128))[6] == 0.0);
  CHECK(decode_features(g, std::vector<std::int32_t>(4, 129))[6] == 1.0);
  std::vector<std::int32_t> mixed(3, 100);
  mixed.push_back(200);  // the longest request decides
  CHECK(decode_features(g, mixed)[6] == 1.0);
  g.head_dim = 64;  // 192-key blocks
  CHECK(decode_features(g, std::vector<std::int32_t>(4, 192))[6] == 0.0);
  CHECK(decode_features(g, std::vector<std::int32_t>(4, 193))[6] == 1.0);
  // A 128-key window: one block where it fits in one (keys 3872-3999 in block 20), two where it straddles.
  AttentionGeometry local = g;
  local.window = 128;
  CHECK(decode_features(local, std::vector<std::int32_t>(4, 4000))[6] == 0.0);
  CHECK(decode_features(local, std::vector<std::int32_t>(4, 4096))[6] == 1.0);
  g.kv_fp8 = true;  // FP8: 160
  CHECK(decode_features(g, std::vector<std::int32_t>(4, 161))[6] == 1.0);
  // MLA decode kernels have no such feature.
  AttentionGeometry mla = geo(16, 1);
  set_split_rule(mla, "flashmla", true);
  CHECK(decode_features(mla, std::vector<std::int32_t>(4, 4096))[6] == 0.0);
}
