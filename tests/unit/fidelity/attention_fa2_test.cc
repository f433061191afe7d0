// Attention tests: FlashAttention-2 (vLLM's vllm_flash_attn and A100): split heuristic, split-KV decode, one-token prompts, HBM-bound unswapped decode.
#include "core/fidelity/attention_predictor.h"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "core/fidelity/op_table.h"
#include "tests/test_support.h"
#include "tests/unit/fidelity/attention_test_support.h"

using namespace servesim;
using namespace servesim::attention_test;

TEST_CASE("FlashAttention's split heuristic splits small batches of long requests only", "[fidelity][attention]") {
  CHECK(flash_num_splits(256, 1000, 132) == 1);  // the batch fills the slots
  CHECK(flash_num_splits(8, 1, 132) == 1);       // one key tile: nothing to split
  const int s = flash_num_splits(8, 512, 132);
  CHECK(s > 1);
  CHECK(s <= 128);
  SplitCache cache;
  CHECK(cache.splits(8, 512, 132) == s);
  CHECK(cache.splits(8, 512, 132) == s);  // memoised
  CHECK(cache.splits(8, 100000, 132) == flash_num_splits(8, 100000, 132));
}

TEST_CASE("FlashAttention-2 decode splits the batch over two CTAs per SM - a long request bounds it",
          "[fidelity][attention]") {
  AttentionGeometry g = geo(32, 8);
  set_split_rule(g, "vllm_flash_attn");
  CHECK(g.split_kv == AttentionGeometry::SplitKv::kBatch);
  CHECK(g.cta_slots_per_sm == 2);
  // 16 requests x 8 KV heads = 128 CTAs, under 80% of 2 x 132 slots: the heuristic splits. One request of 40960
  // keys (320 tiles) among 15 of 128 keys: 2 splits (efficiency 256 / 264), so its longest CTA holds 160 tiles,
  // far over the throughput share (320 + 15) x 8 / 132 = 20.3.
  auto f = decode_features(g, one_long(16));
  CHECK(flash_num_splits(128, 320, 264) == 2);
  CHECK(f[2] == Approx(160));
  CHECK(f[3] == Approx(16.0 * 8 * 2 / 132));  // CTAs / SMs
  CHECK(f[4] == Approx(16.0 * 32 / 132));     // combine work: every request was split
  // With one CTA per SM (the rule before), the same batch fills 80% of 132 and is not split.
  AttentionGeometry one = g;
  one.cta_slots_per_sm = 1;
  CHECK(decode_features(one, one_long(16))[2] == Approx(320));
  // 64 requests = 512 CTAs: no split, more CTAs than slots. The long request's 8 CTAs are spread through the launch
  // order, so the last one starts after all but 1 / 16 of the throughput work on average.
  f = decode_features(g, one_long(64));
  const double throughput = (320.0 + 63) * 8 / 132;
  CHECK(f[2] == Approx(throughput * (1 - 0.5 / 8) + 320));
  CHECK(f[4] == 0);
}

TEST_CASE("FlashAttention-2 runs decodes beside prompt tokens ungrouped and unsplit", "[fidelity][attention]") {
  AttentionGeometry fa2 = geo(32, 8);
  set_split_rule(fa2, "vllm_flash_attn");
  CHECK(fa2.ungrouped_beside_prefill);
  const double coef[kMaxWorkFeatures] = {8.0, 0.05, 0.9, 0.3, 0.2, 0.0};
  const OpGrid grid = synthetic_grid(true, fa2, coef);
  AttentionPredictor p;
  REQUIRE(p.build(grid, true, fa2));
  const std::vector<std::int32_t> decodes(8, 4096);
  // Ungrouped, the 8 requests' keys are read by 32 CTAs each instead of 8: four times the throughput work.
  CHECK(p.decode_us(decodes, nullptr, true) > 2.0 * p.decode_us(decodes));
  // FlashAttention-3 packs grouped heads in every call: the same price either way.
  AttentionGeometry fa3 = geo(32, 8);
  set_split_rule(fa3, "vllm_flash_attn_fa3");
  CHECK_FALSE(fa3.ungrouped_beside_prefill);
  const OpGrid fa3_grid = synthetic_grid(true, fa3, coef);  // the predictor reads the grid it was built on
  AttentionPredictor q;
  REQUIRE(q.build(fa3_grid, true, fa3));
  CHECK(q.decode_us(decodes, nullptr, true) == Approx(q.decode_us(decodes)));
}

TEST_CASE("vLLM's FlashAttention-2 decode copies q and the output around its group swap", "[fidelity][attention]") {
  AttentionGeometry g = geo(8, 2);
  set_split_rule(g, "vllm_flash_attn");
  CHECK(decode_features(g, std::vector<std::int32_t>(1, 2))[6] == 0.0);  // one request: views only
  CHECK(decode_features(g, std::vector<std::int32_t>(2, 2))[6] == 1.0);
  AttentionGeometry one_kv = geo(8, 1);
  set_split_rule(one_kv, "vllm_flash_attn");
  CHECK(decode_features(one_kv, std::vector<std::int32_t>(4, 2))[6] == 0.0);  // one KV head: views only
  AttentionGeometry mha = geo(8, 8);
  set_split_rule(mha, "vllm_flash_attn");
  CHECK(decode_features(mha, std::vector<std::int32_t>(4, 2))[6] == 0.0);  // no groups, no swap
  AttentionGeometry local = g;
  local.window = 128;
  CHECK(decode_features(local, std::vector<std::int32_t>(4, 2))[6] == 0.0);  // no swap with a window
  AttentionGeometry fa3 = geo(8, 2);
  set_split_rule(fa3, "vllm_flash_attn_fa3");
  CHECK_FALSE(fa3.swapped_gqa_copies);
}

TEST_CASE("FlashAttention-2's split-KV decode pays its combine kernel's launch", "[fidelity][attention]") {
  AttentionGeometry g = a100_fa2_geo(4, 1);
  CHECK(decode_features(g, std::vector<std::int32_t>(1, 128))[7] == 0.0);  // one 128-key block: no split
  CHECK(decode_features(g, std::vector<std::int32_t>(1, 256))[7] == 1.0);  // two blocks, two splits
  CHECK(decode_features(g, std::vector<std::int32_t>(1024, 256))[7] == 0.0);  // enough CTAs: no split
  AttentionGeometry fa3 = geo(4, 1);
  set_split_rule(fa3, "vllm_flash_attn_fa3");
  CHECK(decode_features(fa3, std::vector<std::int32_t>(1, 4096))[7] == 0.0);
  // On A100's table (4 query heads over 1 KV head of 128) the step from 128 to 256 keys, 12.5 to 17.8 us at one
  // request, is predicted with 256 keys held out: within 10% (it came out 14.3 us, -19%, without the feature).
  const OpGrid a100 = test::bundled_grid("A100-80G/vllm", "generation_attention.json", {"bfloat16", "128", "4", "1"});
  const OpGrid* grid = &a100;
  const auto& S = grid->axes[1];
  const std::size_t at = static_cast<std::size_t>(std::find(S.begin(), S.end(), 256.0) - S.begin());
  REQUIRE(at < S.size());
  std::vector<bool> held(S.size(), false);
  held[at] = true;
  const OpGrid kept = drop_grid_lines(*grid, 1, held);  // the predictor reads the grid it was built on
  AttentionPredictor p;
  REQUIRE(p.build(kept, true, g, true));
  const double measured = grid->values[at];  // batch 1
  REQUIRE(grid->axes[0][0] == 1);
  CHECK(p.decode_us(std::vector<std::int32_t>{256}) == Approx(measured).epsilon(0.10));
}

TEST_CASE("FlashAttention-2's one-token prompts are decode calls: they price only batches of one-token chunks",
          "[fidelity][attention]") {
  AttentionGeometry g = a100_fa2_geo(32, 8);
  set_prefill_tile(g, "vllm_flash_attn", "bfloat16", 128);
  CHECK(g.ungrouped_beside_prefill);
  AttentionGeometry fa3 = geo(32, 8);
  set_split_rule(fa3, "vllm_flash_attn_fa3");
  CHECK_FALSE(fa3.ungrouped_beside_prefill);
  // A100's vLLM table, 32 query heads over 8 KV heads of 128: 256 one-token prompts take 88.8 us, 16-token ones
  // 333.0 (the prefill kernel), 32-token ones 383.3.
  const OpGrid a100 = test::bundled_grid("A100-80G/vllm", "context_attention.json", {"bfloat16", "128", "32", "8"});
  const OpGrid* grid = &a100;
  const auto& B = grid->axes[0];
  const auto& S = grid->axes[1];
  REQUIRE(S[0] == 1);
  REQUIRE(S[1] == 16);
  const std::size_t b256 = static_cast<std::size_t>(std::find(B.begin(), B.end(), 256.0) - B.begin());
  REQUIRE(b256 < B.size());
  std::vector<bool> held(S.size(), false);
  held[1] = true;  // 16 tokens held out: read between 1 (a decode call) and 32 it came out 29% low
  const OpGrid kept = drop_grid_lines(*grid, 1, held);
  AttentionPredictor p;
  REQUIRE(p.build(kept, false, g, true));
  const double at16 = grid->values[b256 * S.size() + 1];
  CHECK(p.prefill_us(std::vector<PrefillChunk>(256, PrefillChunk{16, 16})) == Approx(at16).epsilon(0.10));
  // One-token prompts are still the measured decode calls, alone or as a uniform batch of any size.
  const double at1 = grid->values[b256 * S.size()];
  CHECK(p.prefill_us(std::vector<PrefillChunk>(256, PrefillChunk{1, 1})) == Approx(at1).epsilon(1e-9));
  // build_owned gives the same predictor (it keeps the split's own copies of the grid, not the one it was handed).
  AttentionPredictor owned;
  REQUIRE(owned.build_owned(kept, false, g, true));
  CHECK(owned.prefill_us(std::vector<PrefillChunk>(256, PrefillChunk{16, 16})) ==
        p.prefill_us(std::vector<PrefillChunk>(256, PrefillChunk{16, 16})));
  CHECK(owned.prefill_us(std::vector<PrefillChunk>(256, PrefillChunk{1, 1})) == Approx(at1).epsilon(1e-9));
  // A one-token chunk beside a longer one runs the prefill kernel with it: more than the longer one alone.
  const double with_one = p.prefill_us({PrefillChunk{32, 32}, PrefillChunk{1, 1}});
  CHECK(with_one >= p.prefill_us({PrefillChunk{32, 32}}));
}

TEST_CASE("FlashAttention-2 splits a decode's keys only when it swaps grouped heads into the rows",
          "[fidelity][attention]") {
  AttentionGeometry g = a100_fa2_geo(8, 8);
  CHECK(fa2_unswapped_decode(g));  // no grouping: no swap
  AttentionGeometry grouped = geo(32, 8);
  set_split_rule(grouped, "vllm_flash_attn");
  CHECK_FALSE(fa2_unswapped_decode(grouped));
  grouped.window = 4096;  // a window: no swap either
  CHECK(fa2_unswapped_decode(grouped));
  AttentionGeometry fa3 = geo(8, 8);
  set_split_rule(fa3, "vllm_flash_attn_fa3");
  CHECK_FALSE(fa2_unswapped_decode(fa3));
  // One request of 8192 keys (64 tiles) over 8 heads: 8 CTAs over its whole KV, no combine kernel, where the
  // heuristic would have split it (8 CTAs fill far under 80% of 216 slots).
  auto f = decode_features(g, std::vector<std::int32_t>(1, 8192));
  CHECK(flash_num_splits(8, 64, 216) > 1);
  CHECK(f[2] == Approx(64));
  CHECK(f[7] == 0.0);
  // HBM saturates at hbm_ctas one-row CTAs: 16 requests (128 CTAs) at 76 take 128 x 64 / 76 tile times, not the
  // longest CTA's 64.
  g.hbm_ctas = 76;
  f = decode_features(g, std::vector<std::int32_t>(16, 8192));
  CHECK(f[2] == Approx(16.0 * 64 * 8 / 76));
  CHECK(decode_features(g, std::vector<std::int32_t>(8, 8192))[2] == Approx(64));  // 64 CTAs: under it
  // Beside prompt tokens (ungrouped and unsplit, SplitKv::kNone) the same one-row CTAs take the same bound.
  AttentionGeometry beside = g;
  beside.split_kv = AttentionGeometry::SplitKv::kNone;
  CHECK(decode_features(beside, std::vector<std::int32_t>(16, 8192))[2] == Approx(16.0 * 64 * 8 / 76));
}

// A100's FlashAttention-2 decode grids of one kind (`swapped`: grouped heads, else unswapped), every third interior
// batch line held out of each as servesim_opcheck holds them out, the HBM constant fitted on the lines the whole
// table keeps: the summed |log error| of model x residual on the held-out cells with the constant set
// (set_fa2_hbm_ctas) and without it, and how many cells.
namespace {

struct HeldOutBatchError {
  double with_constant = 0, without = 0;
  int n = 0;
};

HeldOutBatchError a100_decode_batch_holdout(bool swapped) {
  const OpTable t = test::bundled_table("A100-80G/vllm", "generation_attention.json");
  auto every_third = [](std::size_t n) {  // interior lines 1, 4, 7, ...
    std::vector<bool> h(n, false);
    for (std::size_t i = 1; i + 1 < n; i += 3) h[i] = true;
    return h;
  };
  OpTable kept = t;
  for (OpGrid& g : kept.grids) g = drop_grid_lines(g, 0, every_third(g.axes[0].size()));
  const double hbm = fit_fa2_hbm_ctas(kept, 108, [](const OpGrid& g) { return g; });
  HeldOutBatchError out;
  for (const OpGrid& full : t.grids) {
    const AttentionGeometry base = table_grid_geometry(full, 108, true);
    if (!fa2_decode(base) || fa2_unswapped_decode(base) == swapped) continue;
    const auto held = every_third(full.axes[0].size());
    const OpGrid train = drop_grid_lines(full, 0, held);
    const auto& B = full.axes[0];
    const auto& S = full.axes[1];
    for (int k = 0; k < 2; ++k) {
      AttentionGeometry g = base;
      if (k == 0) set_fa2_hbm_ctas(g, hbm);
      AttentionPredictor p;
      REQUIRE(p.build(train, true, g));
      for (std::size_t i = 0; i < B.size(); ++i)
        for (std::size_t j = 0; j < S.size(); ++j) {
          const double v = full.values[i * S.size() + j];
          if (!held[i] || std::isnan(v)) continue;
          const double pr = p.decode_us(std::vector<std::int32_t>(static_cast<std::size_t>(B[i]),
                                                                   static_cast<std::int32_t>(S[j])));
          (k == 0 ? out.with_constant : out.without) += std::fabs(std::log(pr / v));
          if (k == 0) ++out.n;
        }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("A100's unswapped decode grids share where HBM saturates, and it places their batch steps",
          "[fidelity][attention]") {
  const OpTable t = test::bundled_table("A100-80G/vllm", "generation_attention.json");
  // The grids without grouping (1, 2, 4 and 8 heads) are flat until about 64 CTAs and then grow with them
  // (8 heads, 8192 keys: 204.5 us at 8 requests, 378.1 at 16, 805.0 at 32): HBM saturates well below 108.
  const double whole = fit_fa2_hbm_ctas(t, 108, [](const OpGrid& g) { return g; });
  CHECK(whole > 0.5 * 108);
  CHECK(whole < 0.9 * 108);
  // Held-out batch lines of the unswapped grids: closer with the constant than with the SMs as the bound.
  const HeldOutBatchError e = a100_decode_batch_holdout(false);
  REQUIRE(e.n > 100);
  INFO("mean |log error| at the fitted constant " << e.with_constant / e.n << ", at the SMs " << e.without / e.n);
  CHECK(e.with_constant < 0.9 * e.without);
}

TEST_CASE("FlashAttention-2's split heuristic skips split counts that cut the keys no finer than one fewer",
          "[fidelity][attention]") {
  // 128 CTAs on 216 slots over 4 key tiles: 3 splits are 2 tiles each as 2 splits are, so FA2 goes to 4
  // (2.37 waves, 79% efficient); FA3's heuristic has no such rule and takes 3 (89%).
  CHECK(flash_num_splits(128, 4, 216) == 3);
  CHECK(flash_num_splits(128, 4, 216, 128, true) == 4);
  // Far past 128 x 127 tiles every count is eligible: the rule changes nothing.
  CHECK(flash_num_splits(8, 100000, 216, 128, true) == flash_num_splits(8, 100000, 216));
  // The memo agrees with the heuristic under the rule past its cap too, and holds 128 splits.
  SplitCache cache;
  for (std::int64_t mb : {1, 7, 64, 128, 172})
    for (std::int64_t nb : {2, 4, 100, 129, 130, 200, 1000, 5000, 16255, 16256, 16257, 40000}) {
      INFO("mblocks " << mb << ", key tiles " << nb);
      CHECK(cache.splits(mb, nb, 216, true) == flash_num_splits(mb, nb, 216, 128, true));
    }
  CHECK(cache.splits(1, 128, 216, true) == 128);
  // A decode of the FA2 kernel takes the rule; 16 requests over 8 KV heads and 4 tiles split in 4 (512 CTAs).
  AttentionGeometry g = a100_fa2_geo(32, 8);
  CHECK(decode_features(g, std::vector<std::int32_t>(16, 512))[3] == Approx(16.0 * 8 * 4 / 108));
}

TEST_CASE("A swapped FlashAttention-2 decode pays for a thin last wave, not for its last CTA running alone",
          "[fidelity][attention]") {
  AttentionGeometry g = a100_fa2_geo(32, 8);
  const double h = 75.6;
  AttentionGeometry tail = g;
  set_fa2_hbm_ctas(tail, h);
  CHECK(tail.wave_hbm_ctas == h);
  CHECK(tail.hbm_ctas == 0);
  // 16 requests of 8192 keys (64 tiles) split in 3: 384 CTAs of 22 tiles, a last wave of 168 (at least h): the
  // throughput bound. The launch-order rule alone put the last CTA after nearly all the work.
  const double thr16 = 16.0 * 64 * 8 / 108;
  CHECK(decode_features(tail, std::vector<std::int32_t>(16, 8192))[2] == Approx(thr16));
  CHECK(decode_features(g, std::vector<std::int32_t>(16, 8192))[2] == Approx(thr16 * (1 - 0.5 / 24) + 22));
  // 32 requests, unsplit: 256 CTAs of 64 tiles, 40 in the last wave: h - 40 CTAs' share of HBM idle for one CTA.
  CHECK(decode_features(tail, std::vector<std::int32_t>(32, 8192))[2] ==
        Approx(2 * thr16 + 64 * (h - 40) / 108));
  // A ragged batch adds what its longest request's CTAs take over the mean CTA under the launch-order rule: one
  // request of 64 tiles among 15 of 8, split in 3: 384 CTAs, the longest 22 tiles, the mean (rounded up) 4.
  std::vector<std::int32_t> ragged(15, 1024);
  ragged.push_back(8192);
  const double thr = (64.0 + 15 * 8) * 8 / 108, start = thr * (1 - 0.5 / 24);
  CHECK(decode_features(tail, ragged)[2] == Approx(thr + (start + 22) - (start + 4)));
  // Unswapped and beside prompt tokens the grid keeps its one-row bound (hbm_ctas), not this term.
  AttentionGeometry flat = a100_fa2_geo(8, 8);
  set_fa2_hbm_ctas(flat, h);
  CHECK(flat.hbm_ctas == h);
  CHECK(flat.wave_hbm_ctas == 0);
}

TEST_CASE("A100's swapped decode grids: held-out batch lines closer with FA2's split rule and the last-wave term",
          "[fidelity][attention]") {
  const HeldOutBatchError e = a100_decode_batch_holdout(true);
  REQUIRE(e.n > 500);
  INFO("mean |log error| with the last-wave term " << e.with_constant / e.n << ", without " << e.without / e.n);
  CHECK(e.with_constant < 0.9 * e.without);
}
