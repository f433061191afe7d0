#include "core/fidelity/attention_model.h"

#include <algorithm>
#include <cmath>

#include "core/fidelity/interpolation.h"

namespace servesim {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Blocks of `bn` keys a decode at position ctx - 1 visits: with a window, blocks whose keys all precede it are
// skipped.
std::int64_t key_blocks_visited(std::int64_t ctx, std::int64_t window, std::int64_t bn) {
  if (ctx < 1) ctx = 1;
  const std::int64_t all = bn == 128 ? (ctx + 127) >> 7 : ceil_div(ctx, bn);
  if (window <= 0 || ctx <= window) return all;
  return all - (ctx - window) / bn;
}

// Keys a decode at position ctx - 1 reads: ctx, or the window's.
std::int64_t window_keys(const AttentionGeometry& g, std::int64_t ctx) {
  return g.window > 0 ? std::min<std::int64_t>(ctx, g.window) : ctx;
}

}  // namespace

std::int64_t decode_key_tiles(const AttentionGeometry& g, std::int64_t ctx) {
  return key_blocks_visited(ctx, g.window, g.block_n);
}

double uniform_pairs(std::int64_t window, double s) {
  if (window <= 0 || s <= static_cast<double>(window)) return s * (s + 1) / 2;
  const double w = static_cast<double>(window);
  return w * (w + 1) / 2 + (s - w) * w;
}

double uniform_length_for_pairs(std::int64_t window, double pairs) {
  const double w = static_cast<double>(window);
  if (window <= 0 || pairs <= w * (w + 1) / 2) return (std::sqrt(1.0 + 8.0 * pairs) - 1.0) / 2.0;
  return w + (pairs - w * (w + 1) / 2) / w;
}

namespace {

// The share of a full q tile's cost per key tile that a q tile of `rows` rows pays: the loads in full
// (kKeyTileLoadShare), the two products in proportion to its rows.
double q_tile_weight(double rows, std::int64_t bm) {
  return kKeyTileLoadShare + (1 - kKeyTileLoadShare) * rows / static_cast<double>(bm);
}

// Query heads packed into one tile's rows per KV head (PackGQA), or 1 when the prefill tiles each query head apart.
std::int64_t packed_group(const AttentionGeometry& g) {
  return g.pack_gqa_prefill && g.kv_heads > 0 && g.heads > g.kv_heads ? g.heads / g.kv_heads : 1;
}

}  // namespace

void PrefillWork::add(const AttentionGeometry& g, std::int64_t q, std::int64_t ctx) {
  if (q <= 0) return;
  if (ctx < q) ctx = q;
  const std::int64_t p = ctx - q;  // keys already in the cache before this chunk
  const bool local = g.window > 0 && ctx > g.window;
  ctx_tokens += static_cast<double>(local ? std::min(ctx, q + g.window - 1) : ctx);  // keys some row needs
  ++requests;
  if (local) {
    pairs += uniform_pairs(g.window, static_cast<double>(ctx)) - uniform_pairs(g.window, static_cast<double>(p));
  } else {
    const double qd = static_cast<double>(q);
    pairs += qd * static_cast<double>(p) + qd * (qd + 1) / 2;
  }
  max_q = std::max(max_q, q);
  max_ctx = std::max(max_ctx, ctx);
  q_tokens += static_cast<double>(q);
  if (fa3_prefill_grid(g)) {
    const std::int64_t nb = ceil_div(ctx, g.block_n);
    fa3_chunks.push_back({q, nb, 1.0});
    fa3_blocks += static_cast<double>(ceil_div(q * packed_group(g), g.block_m) * nb);
  }
  add_tiles(g, q, p, local, tiles, longest, ctas);
  if (g.one_wg_block_m > 0 && one_wg(g)) {  // a longer chunk puts the call on two warpgroups
    AttentionGeometry one = g;
    one.block_m = g.one_wg_block_m;
    one.block_n = g.one_wg_block_n;
    add_tiles(one, q, p, local, tiles_one_wg, longest_one_wg, ctas_one_wg);
  }
}

void PrefillWork::add_tiles(const AttentionGeometry& g, std::int64_t q, std::int64_t p, bool local, double& tiles,
                            double& longest, double& ctas) {
  const std::int64_t ctx = p + q;
  if (packed_group(g) > 1) {
    add_packed_tiles(g, q, p, local, tiles, longest, ctas);
    return;
  }
  const std::int64_t bm = g.block_m, bn = g.block_n;
  const std::int64_t nt = ceil_div(q, bm);
  if (local) {
    // Local attention: query tile j (rows p + j BM .. p + min((j+1) BM, q) - 1) visits the key tiles from the one
    // holding its first row's earliest key (row - window + 1) to the one holding its last row.
    const std::int64_t w = g.window;
    double t = 0, longest_tile = 0;
    for (std::int64_t j = 0; j < nt; ++j) {
      const std::int64_t first = p + j * bm, last = p + std::min((j + 1) * bm, q) - 1;
      const std::int64_t lo = std::max<std::int64_t>(0, first - w + 1) / bn;
      const double n = static_cast<double>(last / bn - lo + 1);
      t += n;
      longest_tile = std::max(longest_tile, n);
    }
    tiles += t * g.heads;
    longest = std::max(longest, longest_tile);
    ctas += static_cast<double>(nt) * g.heads;
    return;
  }
  double t = 0;
  if (bm == bn) {
    // Query tile j < nt-1 sees p + (j+1) BM keys: ceil(p / B) + j + 1 tiles; the last tile sees all ctx keys.
    const double lead = static_cast<double>(ceil_div(p, bn));
    const double n1 = static_cast<double>(nt - 1);
    t = n1 * lead + n1 * (n1 + 1) / 2 + static_cast<double>(ceil_div(ctx, bn));
  } else {
    for (std::int64_t j = 0; j < nt; ++j) t += static_cast<double>(ceil_div(p + std::min((j + 1) * bm, q), bn));
  }
  // The last q tile holds q - (nt - 1) BM rows and weighs by them (q_tile_weight). The tile before it, full, may
  // then be the longest.
  const double k_last = static_cast<double>(ceil_div(ctx, bn));
  const double w = q_tile_weight(static_cast<double>(q - (nt - 1) * bm), bm);
  const double prev = nt > 1 ? static_cast<double>(ceil_div(p + (nt - 1) * bm, bn)) : 0.0;
  t += k_last * (w - 1);
  longest = std::max(longest, std::max(k_last * w, prev));
  tiles += t * g.heads;
  ctas += static_cast<double>(nt) * g.heads;
}

void PrefillWork::add_packed_tiles(const AttentionGeometry& g, std::int64_t q, std::int64_t p, bool local,
                                   double& tiles, double& longest, double& ctas) {
  const std::int64_t bm = g.block_m, bn = g.block_n;
  const std::int64_t group = g.heads / g.kv_heads;
  const std::int64_t rows = q * group;  // (token, head) rows of one KV head, token-major
  const std::int64_t nt = ceil_div(rows, bm);
  double t = 0, longest_tile = 0;
  for (std::int64_t j = 0; j < nt; ++j) {
    const std::int64_t r0 = j * bm, r1 = std::min((j + 1) * bm, rows) - 1;
    const std::int64_t first = p + r0 / group, last = p + r1 / group;  // the tile's first and last query token
    const std::int64_t lo = local ? std::max<std::int64_t>(0, first - g.window + 1) / bn : 0;
    double n = static_cast<double>(last / bn - lo + 1);
    if (r1 - r0 + 1 < bm) n *= q_tile_weight(static_cast<double>(r1 - r0 + 1), bm);  // a partial last tile
    t += n;
    longest_tile = std::max(longest_tile, n);
  }
  tiles += t * g.kv_heads;
  longest = std::max(longest, longest_tile);
  ctas += static_cast<double>(nt) * g.kv_heads;
}

bool PrefillWork::one_wg(const AttentionGeometry& g) const {
  return g.one_wg_rows > 0 && max_q * packed_group(g) <= g.one_wg_rows;
}

void PrefillWork::features(const AttentionGeometry& g, double* f) const {
  const double s = g.sms;
  const bool one = one_wg(g);
  const bool small_tile = one && g.one_wg_block_m > 0;
  f[0] = 1.0;
  f[1] = small_tile ? std::max(tiles_one_wg / s, longest_one_wg) : std::max(tiles / s, longest);
  // What a CTA costs whatever its keys: a launch's CTAs run in whole waves over the SMs, and the busiest SM pays it
  // per wave; FlashAttention-3's persistent scheduler hands the tiles out as SMs free up, which spreads it evenly.
  const double waves = (small_tile ? ctas_one_wg : ctas) / s;
  f[2] = fa3_prefill_grid(g) ? waves : std::ceil(waves);
  f[3] = ctx_tokens * g.kv_heads / s;
  // A FlashAttention-3 call on two MMA warpgroups pays more per tile than one on one, on the busiest SM's rounds of
  // CTAs, as does every call of a grid without the one-warpgroup kind (head size 192 or 256, or a window); a round
  // costs at most a full tile's share, a short prompt's partial tile less (q_tile_weight).
  const bool two_wg = !one && (g.one_wg_rows > 0 || fa3_prefill_grid(g));
  f[4] = two_wg ? std::ceil(waves) * std::min(1.0, longest) : 0.0;
  f[5] = fa3_prefill_split_rows(g, *this) > 0 ? 1.0 : 0.0;
  // FlashAttention-3 runs a call of one-token prompts on another path (it drops the causal mask, but for head size
  // 128 over a paged cache): a call with a longer prompt pays a step over it.
  f[6] = fa3_prefill_grid(g) && max_q > 1 ? 1.0 : 0.0;
}

void DecodeWork::clear() {
  requests = 0;
  key_tiles = 0;
  max_ctx = 0;
  ctx_sum = 0;
  keys = 0;
  tiles.clear();
}

void DecodeWork::add(const AttentionGeometry& g, std::int64_t ctx) {
  if (ctx < 1) ctx = 1;
  ++requests;
  const std::int64_t t = decode_key_tiles(g, ctx);
  key_tiles += static_cast<double>(t);
  if (g.split_kv == AttentionGeometry::SplitKv::kPerRequest) tiles.push_back(static_cast<std::int32_t>(t));
  if (ctx > max_ctx) max_ctx = ctx;
  ctx_sum += static_cast<double>(ctx);
  keys += static_cast<double>(window_keys(g, ctx));
}

int flash_num_splits(std::int64_t mblocks, std::int64_t n_blocks, int slots, int max_splits, bool fa2) {
  // FlashAttention's num_splits_heuristic: no split once the batch fills 80% of the slots; otherwise the smallest
  // (eligible) split count whose wave efficiency is within 85% of the best (eligible) one.
  if (mblocks <= 0 || n_blocks <= 1) return 1;
  if (static_cast<double>(mblocks) >= 0.8 * slots) return 1;
  const int limit = static_cast<int>(std::min<std::int64_t>({static_cast<std::int64_t>(max_splits), slots, n_blocks}));
  auto eligible = [&](std::int64_t s) {
    return !fa2 || s == 1 || ceil_div(n_blocks, s) != ceil_div(n_blocks, s - 1);
  };
  double best = 0;
  double eff[130];
  for (int s = 1; s <= limit && s < 130; ++s) {
    const double waves = static_cast<double>(mblocks) * s / slots;
    eff[s] = eligible(s) ? waves / std::ceil(waves) : 0.0;
    best = std::max(best, eff[s]);
  }
  for (int s = 1; s <= limit && s < 130; ++s)
    if (eligible(s) && eff[s] >= 0.85 * best) return s;
  return 1;
}

int SplitCache::splits(std::int64_t mblocks, std::int64_t n_blocks, int slots, bool fa2) {
  // No split once the batch fills 80% of the slots; below that the heuristic sees n_blocks only up to the cap
  // (under the FA2 rule up to kFa2AllSplitsEligibleBlocks, memoised apart past the cap).
  if (mblocks <= 0 || n_blocks <= 1 || static_cast<double>(mblocks) >= 0.8 * slots) return 1;
  const std::int64_t cap = std::min(slots, 128) + 1;
  if (fa2 && n_blocks > cap) {
    const std::int64_t nb = std::min(n_blocks, kFa2AllSplitsEligibleBlocks);
    std::uint8_t& s = long_fa2[mblocks * (kFa2AllSplitsEligibleBlocks + 1) + nb];
    if (s == 0) s = static_cast<std::uint8_t>(flash_num_splits(mblocks, nb, slots, 128, true));
    return s;
  }
  const std::int64_t nb = std::min(n_blocks, cap);
  const std::size_t idx = static_cast<std::size_t>(mblocks * cap + nb);
  if (idx >= v.size()) v.resize(static_cast<std::size_t>((static_cast<std::int64_t>(0.8 * slots) + 2) * cap), 0);
  if (v[idx] == 0) v[idx] = static_cast<std::uint8_t>(flash_num_splits(mblocks, nb, slots, 128, fa2));
  return v[idx];
}

namespace {

// FlashAttention-3 caps a varlen request's splits by the static count: the caller's (vLLM under full CUDA graphs,
// AttentionGeometry::fa3_num_splits, for a call of at most fa3_num_splits_max_tokens query tokens) or its heuristic
// for one request of the longest length (get_num_splits with batch 1: `mblocks`, the KV heads x that request's q
// tiles, over the SMs; no split at <= 4 key tiles); it splits nothing beyond 992 requests (prepare_varlen_num_blocks
// runs one 1024-thread block). A decode call's tokens are its requests and its q tiles one per KV head.
int fa3_static_splits(const AttentionGeometry& g, std::int64_t requests, double tokens, std::int64_t mblocks,
                      std::int64_t nb_max, SplitCache* cache) {
  if (requests > kFa3PrepareMaxRequests) return 1;
  if (g.fa3_num_splits > 0 && tokens <= static_cast<double>(g.fa3_num_splits_max_tokens)) return g.fa3_num_splits;
  if (nb_max <= 4) return 1;
  return cache ? cache->splits(mblocks, nb_max, g.sms) : flash_num_splits(mblocks, nb_max, g.sms);
}
int fa3_static_splits(const AttentionGeometry& g, std::int64_t requests, std::int64_t nb_max, SplitCache* cache) {
  return fa3_static_splits(g, requests, static_cast<double>(requests), g.kv_heads, nb_max, cache);
}

// TensorRT-LLM's XQA multi-block count (computeMultiBlockCount): one block per 128 tokens of the longest history,
// at most round(sqrt(8 x that)), cut so the CTAs make at most 8 waves over the SMs, and at most 6000 sub-sequences
// over the batch.
std::int64_t xqa_multi_block(const AttentionGeometry& g, std::int64_t requests, std::int64_t max_ctx) {
  double mb = static_cast<double>(max_ctx / 128);
  mb = std::min(mb, std::round(std::sqrt(mb * 8.0)));
  mb = std::max(mb, 1.0);
  const double adj = static_cast<double>(requests) * g.kv_heads * mb / g.sms / 8.0;
  if (adj > 1.0) mb = std::floor(mb / adj);
  mb = std::max(mb, 1.0);
  return std::max<std::int64_t>(std::min<std::int64_t>(static_cast<std::int64_t>(mb), 6000 / std::max<std::int64_t>(requests, 1)), 1);
}

bool xqa_falls_back_to_mmha(const AttentionGeometry& g, std::int64_t requests, std::int64_t max_ctx) {
  // DecoderXQAImplJIT::mayHavePerfGain: XQA only when KV heads x requests x max(1, history / 128) blocks, times 4,
  // reach the SMs.
  const double blocks = static_cast<double>(g.kv_heads) * static_cast<double>(requests) *
                        static_cast<double>(std::max<std::int64_t>(1, max_ctx / 128));
  return blocks * 4.0 < static_cast<double>(g.sms);
}

// XQA's kernels take grouped heads only: a vanilla multi-head layout (as many KV heads as query heads) or groups
// over 32 query heads run on the masked multi-head attention kernel (supportConfigCommon / supportConfigHMMA).
bool xqa_supports(const AttentionGeometry& g) {
  return g.kv_heads > 0 && g.heads != g.kv_heads && g.heads % g.kv_heads == 0 && g.heads / g.kv_heads <= 32;
}

}  // namespace

bool mmha_runs_whole(const AttentionGeometry& g) {
  return g.split_kv == AttentionGeometry::SplitKv::kXqa && !xqa_supports(g);
}

// TensorRT-LLM's masked multi-head attention launch (AttentionOp's generation enqueue, mmha_launch_kernel_ex,
// multi_block_grid_setup), multi-block mode on as TensorRT-LLM runs it: one CTA per (request, query head, block of
// keys).
//  - Blocks per sequence only when request x query heads leave SMs free: at most ceil(SMs / those), the one wave of
//    one large CTA per SM the engine sizes its buffers for (getMaxNumSeqLenTile), and at most one per key loop of the
//    CTA (its threads / threads per value, times an unroll of 8 keys; threads per value = head size rounded up to a
//    power of two x 2 bytes / 16).
//  - CTA size: 256 threads when the CTAs fill 4 per SM without splitting; otherwise scaled up towards 1024 threads by
//    how far the batch is from that (256, 512 or 1024).
//  - Register-bound residency: 1024 threads an SM (kMmhaResidentThreadsPerSm), so one 1024-thread CTA, two of 512,
//    four of 256; CTAs beyond that run in further waves.
MmhaLaunch mmha_launch(const AttentionGeometry& g, std::int64_t requests, std::int64_t max_ctx) {
  MmhaLaunch l;
  const std::int64_t sms = std::max(1, g.sms);
  const std::int64_t total = std::max<std::int64_t>(1, requests) * std::max(1, g.heads);
  const std::int64_t per_sm_256 = kMmhaResidentThreadsPerSm / 256;
  const bool multi = total < sms;
  if (!multi && total >= per_sm_256 * sms) {
    l.threads = 256;
  } else {
    const std::int64_t factor = std::min(ceil_div(sms * per_sm_256, total), per_sm_256);
    const std::int64_t dyn = std::min<std::int64_t>(256 * factor, 1024);
    l.threads = dyn < 512 ? 256 : dyn < 1024 ? 512 : 1024;
  }
  const std::int64_t keys = window_keys(g, max_ctx) + 1;
  if (multi) {
    std::int64_t dh = 1;
    while (dh < g.head_dim) dh *= 2;
    const std::int64_t per_value = std::max<std::int64_t>(1, dh * 2 / 16);
    const std::int64_t loop = ceil_div(l.threads, per_value) * 8;
    l.tiles = std::max<std::int64_t>(1, std::min(ceil_div(sms, total), ceil_div(keys, loop)));
  }
  l.keys_per_cta = ceil_div(keys, l.tiles);
  l.ctas = total * l.tiles;
  // Shared memory: the CTA's logits, 16 bytes per 4 timesteps in fp32 plus their 16-bit copy (smem_size_in_bytes:
  // the block's timesteps + 1 in multi-block mode, the keys otherwise), and the 1 KiB the driver reserves per CTA;
  // long single-CTA requests fit fewer per SM than the registers allow.
  const std::int64_t smem = ceil_div(l.keys_per_cta + (l.tiles > 1 ? 1 : 0), 4) * 24 + 1024;
  const std::int64_t by_smem = std::max<std::int64_t>(1, kMmhaSmemPerSm / smem);
  l.waves = ceil_div(l.ctas, sms * std::min<std::int64_t>(kMmhaResidentThreadsPerSm / l.threads, by_smem));
  return l;
}

namespace {

// FlashAttention-3's key block for a decode over vLLM's paged cache (tile_size_fwd_sm90, one query row so not
// causal, pages not whole key blocks so no TMA): bf16 192 (one MMA warpgroup; 160 with two) at head 64, 128 at 128,
// 96 at 192, 80 at 256; FP8 160 up to head 192, 128 at 256.
int fa3_decode_key_block(const AttentionGeometry& g) {
  if (g.kv_fp8) return g.head_dim <= 192 ? 160 : 128;
  return g.head_dim <= 64 ? 192 : g.head_dim <= 128 ? 128 : g.head_dim <= 192 ? 96 : 80;
}

// A launch's wave features: f[2] the longest CTA's work, or the throughput bound; with more CTAs than `slots` the
// longest request's CTAs are spread through the launch order, so its last one starts after all but 1 / (2 copies)
// of the throughput work on average (`copies`: CTAs of one request). With `wave_hbm_ctas`
// (AttentionGeometry::wave_hbm_ctas) the batch is the throughput bound plus the HBM a last wave of fewer CTAs leaves
// idle, read at the mean CTA (`mean`: its key tiles, whole), and that rule prices only what the longest CTA takes
// beyond the mean CTA's larger reading. f[3] CTAs per SM, f[4] the split combines.
void launch_features(const AttentionGeometry& g, double throughput, double longest, double copies, double ctas,
                     double slots, double splits, std::int64_t requests, double* f, double wave_hbm_ctas = 0,
                     double mean = 0) {
  const double start = ctas > slots ? throughput * (1.0 - 0.5 / copies) : 0.0;
  f[2] = std::max(throughput, start + longest);
  if (wave_hbm_ctas > 0 && ctas > 0) {
    const double last = ctas - (std::ceil(ctas / slots) - 1.0) * slots;
    const double fluid = throughput + mean * std::max(0.0, wave_hbm_ctas - last) / g.sms;
    f[2] = fluid + std::max(0.0, f[2] - std::max(std::max(throughput, start + mean), fluid));
  }
  f[3] = ctas / g.sms;
  f[4] = splits > 1 ? static_cast<double>(requests) * g.heads / g.sms : 0.0;
}

int fa3_splits_for(std::int64_t tiles, std::int64_t per_split, int cap) {
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(ceil_div(tiles, per_split), cap)));
}

std::int64_t fa3_tiles_per_split(const AttentionGeometry& g, double key_tiles) {
  // In single precision, as the kernel computes it (ceilf(float(total_blocks) * 1.1f * float(num_head) / float(num_sm))).
  const float v = std::ceil(static_cast<float>(key_tiles) * 1.1f * static_cast<float>(g.kv_heads) /
                            static_cast<float>(g.sms));
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(v));
}

}  // namespace

void DecodeWork::features(const AttentionGeometry& g, double* f, SplitCache* cache) const {
  const double s = g.sms;
  const std::int64_t nb_max = decode_key_tiles(g, max_ctx);
  const double throughput = key_tiles * g.kv_heads / s;
  f[0] = 1.0;
  f[1] = static_cast<double>(requests);
  f[5] = g.prepare_step && requests <= kFa3PrepareMaxRequests ? 1.0 : 0.0;
  f[6] = f[7] = f[8] = f[9] = 0.0;
  bool on_xqa = false;
  if (g.split_kv == AttentionGeometry::SplitKv::kXqa) {
    // TensorRT-LLM runs its masked multi-head attention kernel where XQA has no kernel (the whole grid) or would
    // launch too few blocks with a bf16 / fp16 KV cache (a fallback beside XQA's own features below; with an FP8
    // cache XQA takes every batch).
    const bool whole = mmha_runs_whole(g);
    const bool fallback = !whole && !g.kv_fp8 && xqa_falls_back_to_mmha(g, requests, max_ctx);
    if (whole || fallback) mmha_features(g, whole, f);
    if (whole) return;
    on_xqa = !fallback;
  }
  if (g.swapped_gqa_copies && requests >= 2 && g.kv_heads >= 2 && g.heads > g.kv_heads && g.window <= 0)
    f[6] = 1.0;  // FlashAttention-2's copies of q and the output around its seqlen-q / group swap
  if (g.split_kv == AttentionGeometry::SplitKv::kPerRequest && g.prepare_step)
    f[6] = key_blocks_visited(max_ctx, g.window, fa3_decode_key_block(g)) > 1 ? 1.0 : 0.0;  // past one FA3 block
  if (g.split_kv == AttentionGeometry::SplitKv::kPerRequest) {
    // FlashAttention-3: each request's own split count; a uniform batch (no per-request tiles) splits alike.
    const int cap = fa3_static_splits(g, requests, nb_max, cache);
    const std::int64_t per = fa3_tiles_per_split(g, key_tiles);
    double ctas = static_cast<double>(requests), combined = 0, longest = static_cast<double>(nb_max);
    if (!tiles.empty() && cap > 1 && per < nb_max) {
      // Requests over `per` tiles split; the rest run whole (one CTA, their own tiles).
      const auto per32 = static_cast<std::uint32_t>(per);
      const auto cap32 = static_cast<std::uint32_t>(cap);
      std::uint32_t extra = 0, split = 0, worst = 0;
      for (std::int32_t t : tiles) {
        const auto u = static_cast<std::uint32_t>(t);
        if (u <= per32) {
          worst = std::max(worst, u);
          continue;
        }
        // ceil(u / per) capped, counted up: a request's splits are few (per >= 1.1 u KV heads / SMs).
        std::uint32_t sp = 2;
        for (std::uint64_t covered = 2ULL * per32; covered < u && sp < cap32; covered += per32) ++sp;
        extra += sp - 1;
        ++split;
        worst = std::max(worst, (u + sp - 1) / sp);
      }
      ctas += extra;
      combined = split;
      longest = worst;
    } else if (cap > 1) {
      // A uniform batch, or every request at most `per` tiles: all split alike.
      const int sp = fa3_splits_for(nb_max, per, cap);
      ctas *= sp;
      combined = sp > 1 ? static_cast<double>(requests) : 0.0;
      longest = static_cast<double>(ceil_div(nb_max, sp));
    }
    f[2] = std::max(throughput, longest);
    f[3] = ctas * g.kv_heads / s;
    f[4] = combined * g.heads / s;
    return;
  }
  const int slots = g.sms * g.cta_slots_per_sm;
  const bool unswapped = fa2_unswapped_decode(g);
  const int splits = g.split_kv == AttentionGeometry::SplitKv::kNone || unswapped ? 1
                     : g.split_kv == AttentionGeometry::SplitKv::kXqa
                         ? static_cast<int>(std::min<std::int64_t>(xqa_multi_block(g, requests, max_ctx), nb_max))
                     : cache ? cache->splits(requests * g.kv_heads, nb_max, slots, fa2_decode(g))
                             : flash_num_splits(requests * g.kv_heads, nb_max, slots, 128, fa2_decode(g));
  // Unswapped (or ungrouped beside prompt tokens, SplitKv::kNone), each CTA streams one query row's K and V: the
  // launch is bound by the longest CTA until hbm_ctas of them saturate HBM (fitted on the table), not by the SMs.
  const bool one_row = unswapped || g.split_kv == AttentionGeometry::SplitKv::kNone;
  const double bound = one_row && g.hbm_ctas > 0 ? key_tiles * g.kv_heads / g.hbm_ctas : throughput;
  const std::int64_t ctas = requests * g.kv_heads * splits;
  launch_features(g, bound, static_cast<double>(ceil_div(nb_max, splits)), static_cast<double>(g.kv_heads) * splits,
                  static_cast<double>(ctas), slots, splits, requests, f, one_row ? 0.0 : g.wave_hbm_ctas,
                  std::ceil(key_tiles / (static_cast<double>(requests) * splits)));
  // FlashAttention-2's split-KV path launches a second kernel, the combine: a step whatever the batch.
  if (g.split_kv == AttentionGeometry::SplitKv::kBatch && splits > 1) f[7] = 1.0;
  // XQA's CTAs, one per (request, KV head, block of the history), run one to an SM (its cta_slots_per_sm): waves
  // beyond the first. With more than one block the last CTA of each KV head reduces the blocks' partial results: a
  // tail in their count.
  if (on_xqa) {
    f[9] = static_cast<double>(ceil_div(ctas, slots) - 1);
    if (splits > 1) f[7] = static_cast<double>(splits);
  }
}

bool fa3_split_output_priced(const AttentionGeometry& g) {
  return g.split_out_us_per_element > 0 && g.split_kv == AttentionGeometry::SplitKv::kPerRequest && g.prepare_step;
}

double fa3_split_output_us(const AttentionGeometry& g, std::int64_t requests, std::int64_t max_ctx,
                           SplitCache* cache) {
  if (!fa3_split_output_priced(g) || requests < 1) return 0;
  if (fa3_static_splits(g, requests, decode_key_tiles(g, max_ctx), cache) <= 1) return 0;
  return g.split_out_us_per_element * static_cast<double>(requests) * g.heads * g.head_dim;
}

int fa3_prefill_static_splits(const AttentionGeometry& g, const PrefillWork& w) {
  if (!fa3_prefill_grid(g) || w.requests < 1) return 1;
  return fa3_static_splits(g, w.requests, w.q_tokens, g.kv_heads * ceil_div(w.max_q * packed_group(g), g.block_m),
                           ceil_div(w.max_ctx, g.block_n), nullptr);
}

namespace {

// The split chunks' query rows under the static count `cap` (0 unless it exceeds 1).
double prefill_split_rows(const AttentionGeometry& g, const PrefillWork& w, int cap) {
  if (cap <= 1) return 0;
  const std::int64_t per = fa3_tiles_per_split(g, w.fa3_blocks);
  double rows = 0;
  for (const PrefillWork::Fa3Chunk& c : w.fa3_chunks)
    if (fa3_splits_for(c.n_blocks, per, cap) > 1) rows += static_cast<double>(c.q) * c.count;
  return rows;
}

// The combine's pass over every row and head under the static count `cap`. Only on the heuristic's count: a call
// within vLLM's largest CUDA-graph capture takes its fixed count, and its combine is left to the fitted split
// indicator (docs/validation.md).
double prefill_combine_rows_us(const AttentionGeometry& g, const PrefillWork& w, int cap) {
  if (cap <= 1 || !fa3_split_output_priced(g) || w.q_tokens <= static_cast<double>(g.fa3_num_splits_max_tokens))
    return 0;
  return fa3_combine_us_per_row_head(g.sms) * w.q_tokens * g.heads;
}

}  // namespace

double fa3_prefill_split_rows(const AttentionGeometry& g, const PrefillWork& w) {
  return prefill_split_rows(g, w, fa3_prefill_static_splits(g, w));
}

double fa3_prefill_combine_rows_us(const AttentionGeometry& g, const PrefillWork& w) {
  return prefill_combine_rows_us(g, w, fa3_prefill_static_splits(g, w));
}

double fa3_prefill_split_output_us(const AttentionGeometry& g, const PrefillWork& w) {
  if (!fa3_split_output_priced(g)) return 0;
  const int cap = fa3_prefill_static_splits(g, w);  // once for both terms
  return g.split_out_us_per_element * prefill_split_rows(g, w, cap) * g.heads * g.head_dim +
         prefill_combine_rows_us(g, w, cap);
}

void DecodeWork::mmha_features(const AttentionGeometry& g, bool whole, double* f) const {
  const double s = g.sms;
  const MmhaLaunch l = mmha_launch(g, requests, max_ctx);
  // The critical path: waves of the longest CTA's keys (key by key, so keys, not 128-key tiles).
  const double path = static_cast<double>(l.waves) * static_cast<double>(l.keys_per_cta) / g.block_n;
  f[5] = l.tiles > 1 ? 1.0 : 0.0;  // multi-block mode: partial outputs and their reduction
  f[8] = static_cast<double>(l.waves - 1);
  if (!whole) {
    // A batch XQA would take with too few blocks: the fallback's own fixed and per-key cost beside XQA's.
    f[6] = 1.0;
    f[7] = static_cast<double>(decode_key_tiles(g, max_ctx));
    return;
  }
  f[2] = std::max(keys / g.block_n * g.heads / s, path);
  f[3] = static_cast<double>(l.ctas) / s;
  f[4] = l.tiles > 1 ? static_cast<double>(requests) * g.heads / s : 0.0;
}

bool all_one_token(const std::vector<PrefillChunk>& chunks) {
  return std::all_of(chunks.begin(), chunks.end(), [](const PrefillChunk& c) { return c.q == 1; });
}

bool one_token_prompts_decode(const AttentionGeometry& g, const std::vector<PrefillChunk>& prompts) {
  return g.ungrouped_beside_prefill && !prompts.empty() && all_one_token(prompts);
}

std::vector<std::int32_t> decode_call_contexts(const std::vector<std::int32_t>& contexts,
                                               const std::vector<PrefillChunk>& prompts) {
  std::vector<std::int32_t> all(contexts);
  for (const PrefillChunk& c : prompts) all.push_back(static_cast<std::int32_t>(c.context));
  return all;
}

PrefillWork uniform_prefill_work(const AttentionGeometry& g, std::int64_t b, std::int64_t s) {
  PrefillWork one;
  one.add(g, s, s);
  PrefillWork all;
  const double bd = static_cast<double>(b);
  all.tiles = one.tiles * bd;
  all.longest = one.longest;
  all.ctas = one.ctas * bd;
  all.ctx_tokens = one.ctx_tokens * bd;
  all.requests = b;
  all.pairs = one.pairs * bd;
  all.max_q = one.max_q;
  all.max_ctx = one.max_ctx;
  all.q_tokens = one.q_tokens * bd;
  all.tiles_one_wg = one.tiles_one_wg * bd;
  all.longest_one_wg = one.longest_one_wg;
  all.ctas_one_wg = one.ctas_one_wg * bd;
  all.fa3_blocks = one.fa3_blocks * bd;
  all.fa3_chunks = one.fa3_chunks;
  for (auto& c : all.fa3_chunks) c.count = bd;
  return all;
}

void uniform_prefill_features(const AttentionGeometry& g, std::int64_t b, std::int64_t s, double* f) {
  uniform_prefill_work(g, b, s).features(g, f);
}

void uniform_decode_features(const AttentionGeometry& g, std::int64_t b, std::int64_t s, double* f,
                             SplitCache* cache) {
  DecodeWork w;
  w.requests = b;
  w.key_tiles = static_cast<double>(b) * static_cast<double>(decode_key_tiles(g, s));
  w.max_ctx = s;
  w.ctx_sum = static_cast<double>(b) * static_cast<double>(s);
  w.keys = static_cast<double>(b) * static_cast<double>(window_keys(g, s));
  w.features(g, f, cache);
}

double WorkModel::eval(const double* f) const {
  double t = 0;
  for (int i = 0; i < n; ++i) t += coef[i] * f[i];
  return t;
}

namespace {

// Solves the weighted normal equations restricted to `active`; false when singular.
bool solve_active(const std::vector<double>& x, const std::vector<double>& y, int n, const bool* active, double* out) {
  int idx[kMaxWorkFeatures];
  int m = 0;
  for (int i = 0; i < n; ++i)
    if (active[i]) idx[m++] = i;
  double a[kMaxWorkFeatures][kMaxWorkFeatures + 1] = {};
  const std::size_t rows = y.size();
  for (std::size_t r = 0; r < rows; ++r) {
    const double w = 1.0 / (y[r] * y[r]);
    const double* xr = &x[r * static_cast<std::size_t>(n)];
    for (int i = 0; i < m; ++i) {
      a[i][m] += w * xr[idx[i]] * y[r];
      for (int j = 0; j < m; ++j) a[i][j] += w * xr[idx[i]] * xr[idx[j]];
    }
  }
  for (int c = 0; c < m; ++c) {
    int piv = c;
    for (int r = c + 1; r < m; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
    if (std::fabs(a[piv][c]) < 1e-300) return false;
    if (piv != c)
      for (int k = 0; k <= m; ++k) std::swap(a[c][k], a[piv][k]);
    for (int r = 0; r < m; ++r) {
      if (r == c) continue;
      const double fct = a[r][c] / a[c][c];
      for (int k = c; k <= m; ++k) a[r][k] -= fct * a[c][k];
    }
  }
  for (int i = 0; i < n; ++i) out[i] = 0;
  for (int i = 0; i < m; ++i) out[idx[i]] = a[i][m] / a[i][i];
  return true;
}

}  // namespace

WorkModel fit_work_model(const std::vector<double>& x, const std::vector<double>& y, int n) {
  WorkModel wm;
  wm.n = n;
  if (n <= 0 || n > kMaxWorkFeatures || y.empty()) return wm;
  bool active[kMaxWorkFeatures];
  for (int i = 0; i < n; ++i) {
    active[i] = false;
    for (std::size_t r = 0; r < y.size(); ++r)
      if (x[r * static_cast<std::size_t>(n) + static_cast<std::size_t>(i)] != 0) active[i] = true;
  }
  for (int iter = 0; iter < n; ++iter) {
    double c[kMaxWorkFeatures];
    if (!solve_active(x, y, n, active, c)) {
      // Drop the last active feature (collinear) and retry.
      for (int i = n - 1; i >= 0; --i)
        if (active[i]) {
          active[i] = false;
          break;
        }
      continue;
    }
    int worst = -1;
    for (int i = 0; i < n; ++i)
      if (active[i] && c[i] < 0 && (worst < 0 || c[i] < c[worst])) worst = i;
    if (worst < 0) {
      for (int i = 0; i < n; ++i) wm.coef[i] = c[i];
      wm.ok = true;
      return wm;
    }
    active[worst] = false;
  }
  return wm;
}

}  // namespace servesim
