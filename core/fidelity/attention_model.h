#pragma once
/// Attention cost from per-request work (FlashAttention-style tiling), calibrated on uniform-batch measurements.
///
/// The measured tables hold uniform batches only (b requests of one length). A serving batch mixes lengths, and a
/// token-count proxy misses by 30%+ (Frontier, section 2.2) because the kernel's partitioning reacts to each
/// request's length. The model here counts the work the kernel actually schedules:
///  - prefill (varlen, causal): one CTA per (request, q tile of BM rows, head); a CTA visits
///    ceil((prior + rows so far) / BN) key tiles (the last, partial q tile's weighted by its rows:
///    kKeyTileLoadShare). Time ~ t0 + a * max(total tiles / SMs, longest CTA)
///    + b * waves (CTAs / SMs, rounded up but under FlashAttention-3's persistent scheduler) + c * context tokens *
///    kv_heads / SMs (K/V loads) + d * the busiest SM's rounds of CTAs where vLLM's FlashAttention-3 runs the call on
///    two MMA warpgroups, not one (AttentionGeometry::one_wg_rows), or has no one-warpgroup kind, + e where it splits a
///    chunk's keys (its combine kernel; the split chunks' fp32 partials are priced apart, fa3_prefill_split_output_us).
///  - decode (split-KV): each request's KV is cut into chunks, one CTA per (request, kv head, chunk), by the
///    kernel's own rule (SplitKv below). Time ~ t0 + p * b + a * max(total key tiles * kv_heads / SMs,
///    start + longest chunk) + b * CTAs / SMs + c * combine work. start: with more CTAs than the GPU holds at
///    once, the longest request's last CTA is launched after most of the others' work (FlashAttention-2's grid
///    order); with one wave or less, or a scheduler that takes the longest work first (FlashAttention-3), at once.
/// The coefficients are fitted (non-negative least squares on relative error) per head configuration on the
/// uniform table. The cost model then prices a batch as table(uniform equivalent) x model(batch) /
/// model(uniform equivalent): exact on measured uniform batches, the model supplying the composition effect.
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/fidelity/batch_shape.h"
#include "core/fidelity/interpolation.h"
#include "core/fidelity/op_table.h"

namespace servesim {

/// Kernel geometry shared by the features.
struct AttentionGeometry {
  int heads = 1;     ///< query heads on this GPU
  int kv_heads = 1;  ///< KV heads on this GPU
  int sms = 132;     ///< streaming multiprocessors
  int head_dim = 128;  ///< per head, of the grid a predictor was built on
  bool kv_fp8 = false;  ///< an FP8 KV cache (the grid's kv_cache_dtype)
  int block_m = 128; ///< query rows per CTA tile
  int block_n = 128; ///< keys per tile
  /// Sliding window (keys a query attends to, itself included); 0 = full attention. Tiles wholly outside every
  /// query row's window are skipped, as FlashAttention's local masking does.
  int window = 0;
  /// How the decode kernel cuts requests' keys into CTAs:
  ///  kBatch (FlashAttention-2): one split count for the whole batch, num_splits_heuristic on the longest
  ///    request over cta_slots_per_sm x SMs (FlashAttention-2 passes twice the SMs: 128-thread CTAs, two resident
  ///    per SM); CTAs launched in grid order.
  ///  kPerRequest (FlashAttention-3 varlen, vLLM on Hopper): prepare_varlen_num_blocks gives every request its own
  ///    split count, ceil(its key tiles / tiles per split) with tiles per split = ceil(1.1 x the batch's key tiles
  ///    x KV heads / SMs), capped by the static count: the caller's (fa3_num_splits) or the heuristic for one
  ///    request alone (get_num_splits "pretending that batch = 1": no split at <= 4 key tiles); none over 992
  ///    requests; a persistent scheduler.
  ///  kXqa (TensorRT-LLM's XQA decode): one multi-block count for the batch, from the longest history: a block per
  ///    128 tokens, at most round(sqrt(8 x that)), cut to at most 8 waves of CTAs over the SMs.
  ///  kNone: one CTA per (request, KV head) over its whole KV.
  enum class SplitKv { kBatch, kPerRequest, kXqa, kNone };
  SplitKv split_kv = SplitKv::kBatch;
  int cta_slots_per_sm = 2;
  /// FlashAttention-2 decodes it runs unswapped (fa2_unswapped_decode): how many one-row CTAs, each streaming its
  /// request's K and V, saturate HBM (0: the SMs). One per decode table (fit_fa2_hbm_ctas).
  double hbm_ctas = 0;
  /// FlashAttention-2 decodes it runs swapped (grouped heads): the same table constant, read as the CTAs below which
  /// a launch's last wave leaves HBM partly idle; 0: no last-wave term (set_fa2_hbm_ctas). The decode work feature
  /// of such a launch is the throughput bound plus the mean CTA's key tiles x (this - CTAs in the last wave) / SMs,
  /// a fluid reading where the resident CTAs stream at one rate, plus what the longest request's CTAs take under the
  /// launch-order rule beyond the mean CTA's larger reading (launch_features): 0 for a uniform batch. Without it
  /// that rule alone priced a uniform batch as if its last CTA ran alone after nearly all the work: A100's vLLM
  /// tables, 32 query heads over 8 KV heads of 128, 8192 keys, 8 / 16 / 32 requests take 187.3 / 342.0 / 816.4 us
  /// (192 / 384 / 256 CTAs of 22 / 22 / 64 key tiles over 216 slots: 16 requests' last wave holds 168 CTAs, 32
  /// requests' 40), where the rule put 16 requests at 2.5x the work of 8.
  double wave_hbm_ctas = 0;
  /// FlashAttention-2's varlen forward packs a KV head's query heads into one tile and splits the keys only when
  /// every query of the call is a decode (max_seqlen_q == 1, "only apply split-k for decoding"). Decodes that share
  /// one call with prompt tokens (vLLM's unified step) run ungrouped and unsplit: one CTA per (request, query head)
  /// over its whole KV. Measured: such a call took 2.54x its two parts alone at the median (1.94-3.73x with grouped
  /// heads, 0.96x without; docs/validation.md). For the same reason a prefill grid's one-token prompts are decode
  /// calls, unlike every longer prompt: the prefill predictor prices a batch of one-token chunks alone from the whole
  /// grid and any other batch from the grid without them (AttentionPredictor). A100's vLLM tables, 32 query heads over
  /// 8 KV heads of 128, 256 prompts: 88.8 us at 1 token, 333.0 at 16.
  bool ungrouped_beside_prefill = false;
  /// FlashAttention-3's varlen decode pays a fixed extra up to kFa3PrepareMaxRequests requests (the batch's
  /// scheduler metadata, prepare_varlen_num_blocks, in one 1024-thread block) and not above: vLLM's tables take
  /// 41.5 us at 1024 requests where 512 and 2048 take 33.1 and 73.7 (8 query heads over 1 KV head, 2 keys). The
  /// decode model's last feature; its fitted coefficient is the step.
  bool prepare_step = false;
  /// FlashAttention-3's static split count when its caller passes one (num_splits > 0 replaces get_num_splits'
  /// heuristic for one request, which also splits nothing at <= 4 key tiles; each request's split count stays
  /// ceil(its key tiles / tiles per split) up to it). vLLM passes VLLM_FLASH_ATTN_MAX_NUM_SPLITS_FOR_CUDA_GRAPH
  /// (kVllmFa3GraphSplits) for a call of at most its largest CUDA-graph capture size in full-graph mode, else 0.
  /// vLLM's H100 tables (8 query heads over 1 KV head of 256, 131072 keys): 1 / 2 / 4 requests take 100.2 / 108.7 /
  /// 192.7 us, 32 / 64 / 120 CTAs under a cap of 32, where the heuristic's 109 splits for one request would make it
  /// the fastest per key (docs/validation.md).
  int fa3_num_splits = 0;
  /// The largest call (query tokens) that passes fa3_num_splits; a decode call's requests are compared with it (the
  /// prompt tokens of a mixed step, which vLLM counts too, are not).
  std::int64_t fa3_num_splits_max_tokens = 0;
  /// FlashAttention-3 decodes whose static split count exceeds 1 run its split kernel: every request's output rows,
  /// split or not, go out as fp32 partials and come back through the combine kernel, which writes the result. The
  /// cost per (request x query head x head_dim) element; 0: not priced (fa3_split_output_us). From the GPU's HBM
  /// bandwidth (fa3_split_out_us_per_element).
  double split_out_us_per_element = 0;
  /// FlashAttention-3's prefill packs a KV head's query heads into the tile's rows (PackGQA: always with a paged KV
  /// cache whose pages are not whole key tiles, as vLLM's 16-token blocks): one CTA per 128 (token, head) rows of a
  /// KV head, so a prompt of s tokens with group g takes ceil(s g / 128) tiles per KV head, not ceil(s / 128) per
  /// query head. vLLM's H100 tables (8 query heads over 1 KV head, 256 prompts): 23.9 / 37.9 / 71.2 / 134.9 us at
  /// 16 / 32 / 64 / 128 tokens, in proportion to the packed tiles, where one tile per query head would be flat.
  bool pack_gqa_prefill = false;
  /// vLLM's FlashAttention-3 runs a prefill call on one MMA warpgroup when its longest chunk's (token, head) rows per
  /// KV head, max_seqlen_q x group, are at most this many (its use_one_mma_wg, head_dim 64 or 128, no window), on two
  /// above; 0: one kind only. The call-level step this makes is a prefill feature (f[4]). vLLM's H100 tables, 4
  /// requests: the latency steps where those rows pass 64 at every group and both KV dtypes, one query head per KV
  /// head (head_dim 128) between 64 and 128 tokens, four between 16 and 32 (bf16 11.9 -> 13.9 us, FP8 12.6 -> 16.5),
  /// eight between 1 and 16; the head_dim 192 and 256 grids step at the key tile instead, whatever the group.
  int one_wg_rows = 0;
  /// The one-warpgroup tile (tile_size_fwd_sm90 with use_one_mma_wg; bf16 only): 64 x 192 at head_dim 64, 64 x 128
  /// at 128; both 0: the same tile as two warpgroups (FP8).
  int one_wg_block_m = 0, one_wg_block_n = 0;
  /// vLLM's FlashAttention-2 varlen decode of grouped heads swaps the query length with the group
  /// (seqlenq_ngroups_swapped: q viewed as (requests x group) rows over the KV heads), and the transposes around it
  /// are views only when there is one request or one KV head: otherwise q and the output are copied, two more kernels.
  /// The A100 tables show it at every head count, 2 keys: 2-8 requests over 2-8 KV heads take 17.2-19.9 us, one
  /// request 12.2-12.7 us, like any batch of up to 16 over one KV head (12.1-13.3 us). A decode feature (f[6]).
  bool swapped_gqa_copies = false;
};

/// The decode kernel's split rule from a table's kernel name (OpGrid::kernel):
///  - FlashAttention-3 ("vllm_flash_attn_fa3") and MLA decode kernels (`mla`: FlashMLA's scheduler and vLLM's
///    FlashAttention-3 MLA also split each request by its own length): kPerRequest over the SMs; FlashAttention-3
///    (not MLA) with vLLM's static split count for its default largest capture (fa3_num_splits; on the MLA tables
///    the same count for FLASH_ATTN_MLA predicted held-out lines worse, docs/validation.md);
///  - FlashAttention-2 ("vllm_flash_attn", "aten._flash_attention_forward"): kBatch over two CTAs per SM;
///  - TensorRT-LLM's PyTorch flow ("torch_flow"), whose generation attention runs XQA: kXqa;
///  - other kernels: kBatch over the SMs.
/// FlashAttention-2 also sets ungrouped_beside_prefill.
/// The MLA and XQA choices were checked on the held-out uniform lines (docs/validation.md).
void set_split_rule(AttentionGeometry& g, const std::string& kernel, bool mla = false);

/// The prefill kernel's tile (block_m query rows x block_n keys) for a measured grid. FlashAttention-3 tables
/// (kernel "...fa3", not MLA) take tile_size_fwd_sm90's choice on Hopper with a paged KV cache whose pages are not
/// whole key tiles (vLLM's 16-token blocks, the collector's 64): by head size and element size (an FP8 KV cache
/// runs FP8 queries), causal, or local with a window (g.window, set first). bf16: 192 x 128 at head_dim 64 (local
/// 192 x 160), 128 x 128 at 128, 128 x 96 at 192, 128 x 80 at 256; fp8: 192 x 160, 128 x 160, 128 x 160,
/// 128 x 128. vLLM's FlashAttention-2 ("vllm_flash_attn", A100 and other sm8x GPUs) passes a block table, which
/// always takes FA2's split-KV kernel: 64 query rows over 256 / 128 / 64 keys (head_dim <= 64 / <= 128 / above).
/// Other kernels, and decode grids, keep 128 x 128: on vLLM's decode tables the kernel's key tiles predicted
/// held-out lengths worse (docs/validation.md), and the one-warpgroup 64-row tile FlashAttention-3 runs for short
/// head-128 prompts did as well.
void set_prefill_tile(AttentionGeometry& g, const std::string& kernel, const std::string& kv_dtype, int head_dim);

/// Key tiles a decode query at position ctx - 1 visits (its window's tiles with a window).
std::int64_t decode_key_tiles(const AttentionGeometry& g, std::int64_t ctx);
/// (query, key) pairs of a uniform prompt of s tokens: s(s+1)/2, or with a window w each row sees min(row + 1, w)
/// keys; and its inverse (the uniform-equivalent length of a batch's pairs per request).
double uniform_pairs(std::int64_t window, double s);
double uniform_length_for_pairs(std::int64_t window, double pairs);

/// Prefill: the share of a key tile's time a q tile pays whatever its rows (loading K and V); the rest scales with
/// the rows it holds (the two matrix products). Matters for a prompt's last, partial q tile, most of all for short
/// chunks over a long cached prefix. Not identifiable from prompts alone; chosen in steps of 0.1 on sweep_seed1's
/// prompts and chunks of mixed lengths (profiles/measured/H100-SXM/attention_mixed/, FlashAttention-2 on an H100),
/// more_seed2 held out (docs/validation.md). 1 = every q tile costs a full tile per key tile, the rule before.
constexpr double kKeyTileLoadShare = 0.6;

/// FlashAttention-3 varlen computes per-request splits (and runs its scheduler-metadata step) only up to this many
/// requests: prepare_varlen_num_blocks runs one 1024-thread block.
constexpr std::int64_t kFa3PrepareMaxRequests = 992;
/// vLLM's VLLM_FLASH_ATTN_MAX_NUM_SPLITS_FOR_CUDA_GRAPH default (AttentionGeometry::fa3_num_splits) and its default
/// largest CUDA-graph capture size (max_cudagraph_capture_size), the configuration AIConfigurator's tables ran.
constexpr int kVllmFa3GraphSplits = 32;
constexpr std::int64_t kVllmDefaultMaxCapture = 512;
/// vLLM's FlashAttention-3 takes one MMA warpgroup up to this many (token, head) rows per KV head in the call's longest
/// chunk (AttentionGeometry::one_wg_rows).
constexpr int kFa3OneWarpgroupRows = 64;
/// FlashAttention-3's split kernel writes each output element as an fp32 partial and its combine kernel reads it
/// back: 8 bytes more per element than the unsplit kernel's direct write (fa3_split_output_us). kSplitOutputFloor:
/// the least share of a measured cell left when that traffic is taken out of it.
constexpr double kFa3SplitOutBytes = 8;
/// One SM's share of FlashAttention-3's combine kernel per (query row x query head) of a prefill call that takes
/// its split path, us: 0.15 ns over an H100's 132 SMs. Read off vLLM's H100 and H200 prefill tables: a call of
/// 1024-token prompts with 16 query heads of 64 (or 12 of 128) is the one length of its grid with a static split
/// count above 1, and takes 96-113 ps per (token x head) more than its neighbours' lengths say whatever the batch
/// and the head size; the value is the one of 50-200 ps the complementary held-out split (every third interior
/// length from the second) favoured (docs/validation.md).
constexpr double kFa3CombineSmUsPerRowHead = 150e-6 * 132;
constexpr double kSplitOutputFloor = 0.3;
/// Candidate shares of the SMs for AttentionGeometry::hbm_ctas (0.3 to 1.5 in steps of 0.05; fit_fa2_hbm_ctas).
constexpr int kFa2HbmCtaShareSteps = 25;
constexpr double kFa2HbmCtaShareFirst = 0.3, kFa2HbmCtaShareStep = 0.05;

/// Prefill: 1, the key tiles (over the SMs, or the longest CTA's), the waves of CTAs (what a CTA costs whatever its
/// keys: a launch's CTAs run in whole waves over the SMs, CTAs over the SMs rounded up; FlashAttention-3's persistent
/// scheduler hands tiles out as SMs free up, CTAs over the SMs), keys loaded per KV head over the SMs, the busiest
/// SM's rounds of CTAs (CTAs over the SMs rounded up) when the call runs on two MMA warpgroups where one-warpgroup
/// calls exist (AttentionGeometry::one_wg_rows: the step grows with the batch, FP8 KV, 3 query heads per KV head of
/// 128 on the H100, 16 -> 32 tokens: 13.0 -> 17.2 us for one prompt, 51.1 -> 119.1 for 128) and on every call of a
/// FlashAttention-3 grid without them (head size 192 or 256, or a window), each round counted at most one full tile,
/// a short prompt's partial tile by its q_tile_weight (vLLM's H200 table, 2 query heads over 1 KV head of 256, one
/// CTA per prompt from 128 to 256 prompts: 16-token prompts, 32 of the tile's 128 rows, 18.8 -> 27.8 us; 64-token
/// prompts, a full tile, 31.2 -> 60.7 us), and 1 when FlashAttention-3 splits
/// a chunk's keys (fa3_prefill_split_rows: the combine kernel's launch; the partials' traffic is priced apart,
/// fa3_prefill_split_output_us), and 1 on a FlashAttention-3 call whose longest prompt exceeds one token (a call of
/// one-token prompts takes another path, FA3 dropping the causal mask but for head size 128 over a paged cache:
/// vLLM's tables sit 1.8-3.6 us lower at one token than at 16 for one prompt, at every head size).
constexpr int kPrefillFeatures = 7;
/// Decode: 1, requests, the longest CTA's key tiles (or the throughput bound), CTAs x KV heads / SMs, split combines,
/// the FlashAttention-3 scheduler step (AttentionGeometry::prepare_step); for FlashAttention-3 (not MLA), in f[6], a
/// longest request past one key block of its decode tile (with a window, the window's keys spanning two;
/// fa3_decode_key_block in the .cc). vLLM's H100 and H200 tables step by a median 1.4-2.0 us from 128 to 256 keys at up
/// to 16 requests where that takes a second block (bf16 head 64 and 128, FP8 head 64 and 256), and by 0.2-0.4 us at
/// bf16 head 192 and 256, already past one block at 128; FP8 head 128 and 192, with 160-key blocks, step by 0.2-0.4 us
/// too: the fitted coefficient carries each grid's own step. For vLLM's FlashAttention-2, in f[6], the copies around
/// its group swap (AttentionGeometry::swapped_gqa_copies), and in f[7] 1 when it splits the keys (SplitKv::kBatch):
/// the split path launches a second kernel, the combine. A100 vLLM table, 1 request, 4 query heads over 1 KV head of
/// 128: 12.5 us at 128 keys (one 128-key block, no split), 17.8 us at 256 (two blocks, two splits), 18.0 at 512.
/// For TensorRT-LLM (SplitKv::kXqa), the batches it runs on its masked multi-head attention kernel instead of XQA
/// (priced by its launch, mmha_launch): in f[5] multi-block mode, in f[8] the waves beyond the first, and in f[6] and
/// f[7] 1 and the longest request's key tiles (beside XQA's features, for a batch XQA would take with too few blocks);
/// for a grid XQA never takes, f[2..4] are the launch's own (the longest CTA's keys times the waves, or the keys over
/// the SMs; its CTAs; the partial results combined). XQA runs grouped heads only, 2 to 32 query heads per KV head
/// (supportConfigCommon, supportConfigHMMA), and takes a batch only when KV heads x requests x max(1, longest history
/// / 128), times 4, reach the SMs (DecoderXQAImplJIT::mayHavePerfGain), or always with an FP8 KV cache, which the
/// masked kernel does not read beside bf16 / fp16 queries (DecoderXQAImplJIT::shouldUse; the tables agree: FP8 grids
/// show no such step). H100 TRT-LLM table, 32 query heads over 2 KV heads of 128, 2-128 keys: 16 requests (32 blocks,
/// under 132 / 4) take 13.4-18.6 us, 32 requests (XQA) 10.0-10.3 us. On XQA's own batches, f[9] is its waves beyond
/// the first, its CTAs (one per request, KV head and block of the history) running one to an SM: the bf16 tables at 2
/// keys take about 10 us up to 128 CTAs, 15 at 256, 25 at 512, 44 at 1024 (H100, head 128, groups up to 24; groups
/// of 32 take 12, 20, 34 and 62); and in f[7] its blocks per request when there are more than one, whose partial
/// results the last CTA of each KV head reduces (FP8 table, 32 query heads over 4 KV heads, one request: 6.4 us at
/// 128 keys in one block, then 7.8 / 8.1 / 8.8 / 9.4 / 10.7 us at 2 / 4 / 8 / 11 / 16 blocks).
///
/// TensorRT-LLM's masked multi-head attention kernel: one CTA per (request, query head, block of keys). Its launch
/// (mmha_launch) follows the engine's rules: multi-block mode only while requests x query heads leave SMs free, with
/// at most ceil(SMs / those) blocks per request (the one wave of one large CTA per SM the engine sizes its buffers
/// for) and at most one per key loop of the CTA; a CTA of 256 threads, or up to 1024 by how far the batch is from
/// filling 4 per SM. Residency: kMmhaResidentThreadsPerSm threads an SM by the registers (read off the tables: the
/// steps fall where 1024-thread CTAs run one per SM and 256-thread ones four; at 8 per SM, 12 query heads over 12 KV
/// heads of 128 would take 4096 keys for 2 requests in one wave, where the H100 table steps from 17.1 us at 2048 keys
/// to 41.9), and fewer where a CTA's logits fill the shared memory (kMmhaSmemPerSm, Hopper's; a table moved to
/// another GPU keeps it). Every step the tables show falls on the launch: one request of 12 such heads steps from
/// 11.2 to 15.1 us at 512 keys (multi-block, a second key loop of 1024 threads) and from 17.0 to 28.8 us at 8192
/// (its 11 blocks, the most, reach 745 keys each); 40 heads at 4 requests (160 CTAs of 1024 threads, two waves) take
/// 14.5 us at 2 keys where 2 requests take 8.8.
constexpr int kMmhaResidentThreadsPerSm = 1024;
constexpr std::int64_t kMmhaSmemPerSm = 228 * 1024;

/// One launch of TensorRT-LLM's masked multi-head attention kernel: the longest request's context `max_ctx` is the
/// kernel's timestep (the tables step where kv_len + 1 keys pass a key loop, so their kv_len is that timestep).
struct MmhaLaunch {
  int threads = 256;              ///< per CTA
  std::int64_t tiles = 1;         ///< CTAs per (request, query head): the multi-block count
  std::int64_t keys_per_cta = 1;  ///< the longest request's keys per CTA (timesteps_per_block)
  std::int64_t ctas = 1;
  std::int64_t waves = 1;         ///< over the SMs at the residency above
};
MmhaLaunch mmha_launch(const AttentionGeometry& g, std::int64_t requests, std::int64_t max_ctx);

/// A TensorRT-LLM decode geometry XQA never takes (a vanilla multi-head layout, or groups over 32 query heads):
/// every batch runs on the masked multi-head attention kernel.
bool mmha_runs_whole(const AttentionGeometry& g);

constexpr int kDecodeFeatures = 10;
/// Room for either family's features.
constexpr int kMaxWorkFeatures = 10;

/// Prefill features of requests (q new tokens attending to ctx keys, ctx >= q), accumulated. With a window, tiles,
/// loaded keys and pairs count only keys inside some row's window.
struct PrefillWork {
  double tiles = 0;      ///< key tiles over all CTAs
  double longest = 0;    ///< key tiles of the longest CTA
  double ctas = 0;
  double ctx_tokens = 0; ///< keys loaded (sum of ctx)
  std::int64_t requests = 0;
  double pairs = 0;      ///< (query, key) pairs: sum q*(ctx-q) + q(q+1)/2
  std::int64_t max_q = 0;  ///< the longest chunk's new tokens (the call's max_seqlen_q)
  std::int64_t max_ctx = 0;  ///< the longest chunk's keys (the call's max_seqlen_k)
  double q_tokens = 0;       ///< new tokens of every chunk (the call's query rows per head)
  /// On a FlashAttention-3 grid (fa3_prefill_grid): each chunk's new tokens and key tiles, with how many chunks are
  /// alike (uniform_prefill_work keeps one chunk for a uniform batch), and the call's (packed q tile, key tile)
  /// blocks, which its varlen scheduler splits the keys by (fa3_prefill_split_rows).
  struct Fa3Chunk {
    std::int64_t q, n_blocks;
    double count;
  };
  std::vector<Fa3Chunk> fa3_chunks;
  double fa3_blocks = 0;
  /// tiles, longest and ctas in the one-warpgroup tile (AttentionGeometry::one_wg_block_m), which the call runs
  /// instead when its max_q x group rows are few enough; features() picks. Counted while every chunk fits it.
  double tiles_one_wg = 0, longest_one_wg = 0, ctas_one_wg = 0;
  void add(const AttentionGeometry& g, std::int64_t q, std::int64_t ctx);
  void features(const AttentionGeometry& g, double* f) const;
  /// Whether the call runs on one MMA warpgroup (AttentionGeometry::one_wg_rows).
  bool one_wg(const AttentionGeometry& g) const;

 private:
  /// add()'s tiles in the tile of `g` (block_m x block_n) into these accumulators.
  static void add_tiles(const AttentionGeometry& g, std::int64_t q, std::int64_t p, bool local, double& tiles,
                        double& longest, double& ctas);
  /// add_tiles under AttentionGeometry::pack_gqa_prefill: tiles of block_m (token, head) rows per KV head. `p`:
  /// keys cached before the chunk; `local`: the window cuts this chunk's keys.
  static void add_packed_tiles(const AttentionGeometry& g, std::int64_t q, std::int64_t p, bool local,
                               double& tiles, double& longest, double& ctas);
};

/// Memo of flash_num_splits for one slot count and one rule (`fa2`: FlashAttention-2's eligibility). Without the
/// rule the heuristic looks at n_blocks only up to min(slots, 128); with it up to kFa2AllSplitsEligibleBlocks.
struct SplitCache {
  std::vector<std::uint8_t> v;  ///< [mblocks * stride + min(n_blocks, cap)], 0 = not computed (splits <= 128)
  std::unordered_map<std::int64_t, std::uint8_t> long_fa2;  ///< FA2 rule, n_blocks past the cap: [mblocks, n_blocks]
  int splits(std::int64_t mblocks, std::int64_t n_blocks, int slots, bool fa2 = false);
};

/// Decode features of requests each attending to ctx keys (with a window: the window's tiles; ctx_sum stays the
/// whole length, which is the tables' axis).
struct DecodeWork {
  std::int64_t requests = 0;
  double key_tiles = 0;  ///< sum over requests of ceil(ctx / block_n)
  std::int64_t max_ctx = 0;
  double ctx_sum = 0;
  double keys = 0;  ///< sum over requests of the keys read: ctx, or the window's keys
  std::vector<std::int32_t> tiles;  ///< per request, kept for SplitKv::kPerRequest only
  void clear();
  void add(const AttentionGeometry& g, std::int64_t ctx);
  void features(const AttentionGeometry& g, double* f, SplitCache* cache = nullptr) const;

 private:
  /// TensorRT-LLM's masked multi-head attention kernel (SplitKv::kXqa batches XQA does not take): f[5] and f[6..9];
  /// f[0..4] too for a geometry XQA never takes (`whole`).
  void mmha_features(const AttentionGeometry& g, bool whole, double* f) const;
};

/// FlashAttention-2's varlen forward splits a decode's keys only when it swaps a KV head's query heads into the rows
/// (seqlenq_ngroups_swapped: grouped heads, no window; "only apply split-k for decoding" in mha_varlen_fwd).
/// Without grouping, or with a window, every (request, head) is one CTA over its whole KV, one query row each.
bool fa2_unswapped_decode(const AttentionGeometry& g);
/// FlashAttention-2's decode (split rule kBatch, ungrouped beside prompt tokens), swapped or not.
bool fa2_decode(const AttentionGeometry& g);
/// A decode table's fitted HBM constant (fit_fa2_hbm_ctas) onto one of its grids' geometry: hbm_ctas on a grid run
/// unswapped, wave_hbm_ctas on one run swapped, nothing on other kernels.
void set_fa2_hbm_ctas(AttentionGeometry& g, double ctas);

/// The geometry of an attention table's grid, keyed (kv dtype, head_dim, heads, KV heads[, window]), on `sms` SMs:
/// its kernel's split rule and, for a context grid, its prefill tile.
AttentionGeometry table_grid_geometry(const OpGrid& g, int sms, bool decode, int window = 0);

/// The HBM constant of a decode table's FlashAttention-2 grids (hbm_ctas on those that run unswapped, wave_hbm_ctas
/// on the others: set_fa2_hbm_ctas), fitted on the unswapped grids: the share of the SMs (from
/// kFa2HbmCtaShareFirst, kFa2HbmCtaShareSteps steps) at which the work models fitted on those grids fit them best
/// together (summed squared log error); 0 when the table has none. One constant per table rather than per
/// grid: a grid's own batch lines, powers of two, rarely pin where HBM saturates, the table's grids together do
/// (their CTAs per request differ). `prepare` gives the grid the predictors are built on (read_cold where the tables
/// are read cold).
double fit_fa2_hbm_ctas(const OpTable& decode_table, int sms, const std::function<OpGrid(const OpGrid&)>& prepare);

/// FlashAttention-3's split-kernel output traffic for a decode call of `requests` requests, the longest of
/// `max_ctx` keys (AttentionGeometry::split_out_us_per_element): 0 unless the call's static split count exceeds 1.
/// vLLM's H100 tables: at 512 requests (static count 32) a 2-key decode grows with the query heads, 31.1 / 33.1 /
/// 38.5 / 46.8 us at 1 / 8 / 32 / 64 heads over 1 KV head of 128, where 1024 requests (no split kernel) take
/// 41.4 / 41.5 / 41.9 / 45.9.
/// Whether `g` prices that traffic at all (an FA3 grid, not MLA, with a per-element cost); a predictor built
/// on such a grid fits the grid less the traffic and adds it to the batches it prices. `cache`: as
/// DecodeWork::features takes it.
bool fa3_split_output_priced(const AttentionGeometry& g);
double fa3_split_output_us(const AttentionGeometry& g, std::int64_t requests, std::int64_t max_ctx,
                           SplitCache* cache = nullptr);
/// A prefill grid of FlashAttention-3 (not MLA): its calls split keys as below.
inline bool fa3_prefill_grid(const AttentionGeometry& g) { return g.pack_gqa_prefill && g.prepare_step; }
/// FlashAttention-3 splits a prefill call's keys too, as its decodes (SplitKv::kPerRequest): a static count from
/// get_num_splits "pretending that batch = 1" (the KV heads x packed q tiles of the longest chunk, max_seqlen_q x
/// group rows, over the SMs; the longest chunk's key tiles; none at <= 4) or the caller's, fa3_num_splits for a call
/// of at most fa3_num_splits_max_tokens query tokens; then prepare_varlen_num_blocks cuts each chunk into
/// min(ceil(its key tiles / tiles per split), static) with tiles per split = ceil(1.1 x the call's (q tile, key
/// tile) blocks x KV heads / SMs). So a prompt splits only where the call's blocks are few for the SMs: vLLM's H100
/// table, 12 query heads over 2 KV heads of 256 (bf16, 128 x 80 tiles), one 1024-token prompt (48 x 13 blocks per KV
/// head: two splits) takes 60.1 us where one of 1536 tokens (static count 1) takes 53.0, and two 512-token prompts
/// (two splits each) 56.3 us where two of 1024 (13 tiles against 21 per split: none) take 52.1.
/// fa3_prefill_static_splits: the static count (1 on other kernels); fa3_prefill_split_rows: the query rows of the
/// chunks it splits (0: none).
int fa3_prefill_static_splits(const AttentionGeometry& g, const PrefillWork& w);
double fa3_prefill_split_rows(const AttentionGeometry& g, const PrefillWork& w);
/// The split chunks' output traffic: their rows of every query head through fp32 partials and the combine
/// (split_out_us_per_element per element, as fa3_split_output_us prices a decode's).
double fa3_prefill_split_output_us(const AttentionGeometry& g, const PrefillWork& w);
/// The combine kernel's pass over every query row and head of a call whose static split count exceeds 1, split or
/// not (fa3_combine_us_per_row_head of the GPU's SMs each), for calls beyond fa3_num_splits_max_tokens, where the
/// split output is priced (fa3_split_output_priced); fa3_prefill_split_output_us adds it. 0 otherwise.
double fa3_prefill_combine_rows_us(const AttentionGeometry& g, const PrefillWork& w);
/// us per output element of that traffic at `hbm_tb_s` TB/s: kFa3SplitOutBytes at `memory_efficiency` of it (the
/// roofline's achieved share, RooflineConstants::memory_efficiency).
inline double fa3_split_out_us_per_element(double hbm_tb_s, double memory_efficiency) {
  return hbm_tb_s > 0 && memory_efficiency > 0 ? kFa3SplitOutBytes / (memory_efficiency * hbm_tb_s * 1e6) : 0;
}
/// FlashAttention-3's combine kernel per (query row x query head) on a GPU of `sms` SMs: kFa3CombineSmUsPerRowHead
/// over the SMs (0 without SMs).
inline double fa3_combine_us_per_row_head(int sms) { return sms > 0 ? kFa3CombineSmUsPerRowHead / sms : 0.0; }

/// FlashAttention's split-KV heuristic: splits for `mblocks` CTAs over `n_blocks` key tiles on `slots` CTA slots
/// (FlashAttention-2 passes 2 x SMs, FlashAttention-3 the SMs). `fa2`: FlashAttention-2's num_splits_heuristic also
/// skips a split count that gives the same key tiles per split as one fewer (is_split_eligible: 4 tiles in 3 splits
/// are 2 per split, as in 2 splits), both when it finds the best efficiency and when it picks; FlashAttention-3's
/// does not. A100's vLLM tables, 128 requests over 1 KV head of 128 (128 CTAs on 216 slots): 512 keys take 4 splits
/// under the rule (3 without), and 69.3 us where 256 keys (no split) take 23.5.
int flash_num_splits(std::int64_t mblocks, std::int64_t n_blocks, int slots, int max_splits = 128, bool fa2 = false);
/// From this many key tiles on, every split count up to 128 is eligible (128 x 127): the FA2 rule changes nothing.
inline constexpr std::int64_t kFa2AllSplitsEligibleBlocks = 128 * 127;

/// Uniform-batch work and features (b requests of length s): prefill (q = ctx = s) or decode (ctx = s).
PrefillWork uniform_prefill_work(const AttentionGeometry& g, std::int64_t b, std::int64_t s);
void uniform_prefill_features(const AttentionGeometry& g, std::int64_t b, std::int64_t s, double* f);
void uniform_decode_features(const AttentionGeometry& g, std::int64_t b, std::int64_t s, double* f,
                             SplitCache* cache = nullptr);

/// Whether every chunk is one token (true for none): a FlashAttention-2 call of such queries, decodes beside them or
/// not, runs its decode path (AttentionGeometry::ungrouped_beside_prefill).
bool all_one_token(const std::vector<PrefillChunk>& chunks);

/// Whether `prompts` (at least one, every one a single token) run in a decode call priced by a decode grid of
/// geometry `g`: FlashAttention-2's (ungrouped_beside_prefill), whose max_seqlen_q == 1 path is its decode kernel.
/// The call's requests are then `contexts` and the prompts, each a decode of its context (decode_call_contexts).
bool one_token_prompts_decode(const AttentionGeometry& g, const std::vector<PrefillChunk>& prompts);
std::vector<std::int32_t> decode_call_contexts(const std::vector<std::int32_t>& contexts,
                                               const std::vector<PrefillChunk>& prompts);

/// A linear model over non-negative features with non-negative coefficients.
struct WorkModel {
  int n = 0;
  double coef[kMaxWorkFeatures] = {};
  bool ok = false;
  double eval(const double* f) const;
};

/// Non-negative least squares minimising sum ((x.coef - y) / y)^2 (relative error), by active-set elimination
/// of negative coefficients. rows: n features each.
WorkModel fit_work_model(const std::vector<double>& x, const std::vector<double>& y, int n);

}  // namespace servesim
