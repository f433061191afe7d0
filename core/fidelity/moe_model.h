#pragma once
/// MoE cost from a sampled token-to-expert assignment, priced per EP rank with the slowest rank deciding.
///
/// Per rank r (experts split contiguously over EP ranks), the fused-experts kernel streams the weights of
/// every expert that received a token and runs padded row blocks of BLOCK_M tokens through each:
///   F_r = t0 + t_weight * active_experts_r + t_block(BLOCK_M) * sum_e ceil(tokens_e / BLOCK_M)
/// (t_weight: one expert's weight bytes over HBM bandwidth; t_block: one block's FLOPs at tensor peak, in
/// proportion to its rows; both from the datasheet, so only their ratio matters). BLOCK_M follows the mean tokens
/// per expert (the next power of two, 16 to 128), as the Triton grouped GEMMs size their row tile: the measured
/// balanced curves are flat while T x topk / E stays within one such block and step where it crosses one (vLLM's
/// gpt-oss MXFP4 curve at TP 4: 0.50 ms at 3072 and 4096 tokens, 0.92 ms at 6144, 0.95 ms at 8192). Balanced
/// loads at those counts fill every block; a sampled assignment spreads around the mean and pads about half the
/// experts by a block. The measured table gives the latency of the reference routing
/// (AIConfigurator's "balanced" assignment, or its power-law one where no balanced rows exist) against tokens;
/// a batch with a sampled assignment costs table(T) x max_r F_r / F_reference(T).
#include <cstdint>
#include <string>
#include <vector>

#include "core/fidelity/interpolation.h"
#include "core/fidelity/op_table.h"
#include "core/sim/rng.h"

namespace servesim {

/// How tokens pick experts.
enum class MoeRouting : std::uint8_t {
  kUniform,   ///< each token picks top-k distinct experts uniformly at random (an unbiased router)
  kBalanced,  ///< AIConfigurator's deterministic round-robin assignment (perfect balance)
  kPowerLaw,  ///< AIConfigurator's power-law expert popularity with exponent alpha (1.01 or 1.2 measured)
};

/// The row-block range of moe_block_rows used for every MoE table: chosen by the power-law curves of the measured
/// tables predicted from their balanced ones (servesim_opcheck's "skew"; docs/validation.md).
constexpr int kMoeBlockRowsMin = 16;
constexpr int kMoeBlockRowsMax = 128;

/// Draws of a power-law reference's mean slowest-rank cost per measured token count (MoePredictor::build). One
/// draw takes 19 / 35 / 113 us for 128 / 256 / 896 experts (this build, 2-core dev machine, -O2), so a curve of 25
/// counts adds 15-90 ms to building a role's cost model, once per run.
constexpr int kMoeReferenceDraws = 32;

/// The kernel's per-rank cost terms (us).
struct MoeRankCost {
  double t0 = 10;        ///< fixed kernel time (launches, routing sort, reduction)
  double t_weight = 1;   ///< per active expert (weight streaming)
  double t_block = 0.1;  ///< per padded row block of block_m rows
  int block_m = 64;      ///< rows per block (t_block's block); the smallest block when block_m_max > block_m
  int block_m_max = 0;   ///< > block_m: the kernel sizes its row block to the mean tokens per expert (power of two)
};

/// The per-rank terms from the datasheet (only their ratio enters a price): an expert's three weight matrices
/// (hidden x inter_per_rank each, `weight_bytes` per weight) streamed at 80% of `hbm_tb_s`, and one row block of the
/// smallest size (kMoeBlockRowsMin, growing to kMoeBlockRowsMax with the rows per expert) through them at 70% of
/// `peak_tflops`; t0 = 0, set from the table by MoePredictor::build.
MoeRankCost moe_rank_cost(double hidden, double inter_per_rank, double weight_bytes, double hbm_tb_s,
                          double peak_tflops);

/// Rows per block for a mean of `mean_rows` tokens per expert: block_m, or with block_m_max the next power of two
/// of the mean clamped to [block_m, block_m_max].
int moe_block_rows(const MoeRankCost& k, double mean_rows);

/// One MoE layer under expert parallelism as a chain of three phases: the dispatch all-to-all sends every routed
/// row to its expert's rank, each rank runs its experts, and the combine all-to-all starts only when the slowest
/// rank is done (the barrier), so layer = dispatch + max_r(rank compute) + combine.
struct MoeLayerTime {
  double dispatch_us = 0;  ///< dispatch all-to-all (0 without EP)
  double experts_us = 0;   ///< the slowest rank's expert compute
  double combine_us = 0;   ///< combine all-to-all (0 without EP)
  double combine_start_us() const { return dispatch_us + experts_us; }
  double total_us() const { return dispatch_us + experts_us + combine_us; }
};

/// The distribution field of AIConfigurator's MoE rows measured with power-law exponent `alpha`
/// ("power_law_1.01", "power_law_1.2"); empty for an exponent it did not measure.
std::string measured_power_law_key(double alpha);

/// Expert loads for `tokens` tokens: counts[e] = tokens routed to expert e (sum = tokens * topk).
void moe_loads(MoeRouting routing, double alpha, std::int64_t tokens, int experts, int topk, Rng& rng,
               std::vector<std::int64_t>& counts);
/// AIConfigurator's balanced assignment (token i, slot j -> expert (i + j*stride) mod E, stride = ceil(E/topk)).
void moe_balanced_loads(std::int64_t tokens, int experts, int topk, std::vector<std::int64_t>& counts);

/// Cost (us, model units) of the slowest of `ep` ranks for these loads.
double moe_slowest_rank(const MoeRankCost& k, const std::vector<std::int64_t>& counts, int ep);

/// One MoE configuration's latency from its measured curve (tokens) and the per-rank model.
///
/// Between measured token counts a balanced curve is read one of three ways, chosen per curve by cross-validation
/// on the curve it is given (every other interior point held out and predicted from the rest; the smallest mean
/// squared log error wins, ties to the earlier): log-log (kRaw); affine where latency rises (kAffine: t0 + c T is
/// linear in T, log-log bends it); or the slowest-rank model of the balanced assignment times the log-log
/// interpolated residual measured / model (kProduct), which puts a step where the model's row blocks step (a kernel
/// whose latency is flat while T x topk / E stays within one block: vLLM's FlashInfer CUTLASS FP8 MoE with 512
/// experts and top-22 on H100, 14.3 ms at 2048 tokens, 30.5 / 29.0 ms at 3072 / 4096, 44.9 ms at 6144). A curve of
/// a power-law reference (a scenario's power-law routing with a measured exponent; A100, which has no balanced rows)
/// stays log-log: it is a mean over a few of AIConfigurator's draws, and a batch's sampled loads scale it by their
/// slowest rank against the mean of the model's own draws. Except across the generator's switch: AIConfigurator's
/// power-law generator draws its expert weights from another range once tokens x topk exceeds the experts
/// (moe_loads), and the measured curves bend there (128 experts, top 8, alpha 1.01: 182 / 230 / 364 us at 8 / 16 /
/// 32 tokens). Between two measured counts on either side of it a count is read as the model's mean over draws at
/// that count itself times the log-log interpolated residual measured / model. Either model reading stays inside
/// the range of the two measured counts around it for a batch routed as the curve's reference was
/// (set_batch_routing): the model's reference swings between counts where the kernel does not (docs/validation.md).
/// Past the largest measured count the curve is read affinely from it and the largest count at most half of it,
/// between flat and proportional (past_edge_us, as GEMM shapes past their grid's edge), and flagged.
class MoePredictor {
 public:
  enum class Interp { kRaw, kAffine, kProduct };
  /// `grid`: one table of the measured `reference` routing (axis: tokens). rank.t0 is set from the table when <= 0.
  /// `choose`: pick the Interp by cross-validation for a balanced reference (else kRaw).
  bool build(const OpGrid& grid, MoeRouting reference, double reference_alpha, MoeRankCost rank, int experts, int topk,
             int ep, bool choose = true);
  bool ok() const { return !curve_.empty(); }
  Interp interp() const { return interp_; }
  /// Forces a reading (the validation's fixed-reading comparisons).
  void set_interp(Interp how) { interp_ = how; }
  /// Latency (us) of one MoE layer for `tokens` tokens with these expert loads (empty: the reference routing).
  double us(std::int64_t tokens, const std::vector<std::int64_t>& loads, bool* extrapolated = nullptr) const;
  /// The reference routing's slowest-rank model value at `tokens` (deterministic): the balanced assignment's, or
  /// for a sampled (power-law) reference the mean over kMoeReferenceDraws draws at each measured count, read
  /// log-log between them (across the generator's switch: the mean over draws at `tokens` itself) and in proportion
  /// to the tokens above the last.
  double reference_rank_cost(std::int64_t tokens) const;
  /// True where `tokens` lies strictly between two measured counts on either side of the power-law generator's
  /// switch (lower count x topk <= experts < upper count x topk); false for a balanced reference.
  bool across_generator_switch(double tokens) const;
  const MoeRankCost& rank_cost() const { return rank_; }
  /// How the batches given to us() are routed (after build). Batches routed as the table's reference was (balanced
  /// on a balanced curve, power-law with the curve's exponent on a power-law one) are priced as the table reads
  /// between its counts, kept inside the range of the measured counts around them; others, like the default, keep
  /// the model reading's residual unbounded, since their loads do not swing with the reference's.
  void set_batch_routing(MoeRouting routing, double alpha);

 private:
  LogCurve curve_, residual_;
  /// The reference routing's slowest-rank cost at the measured counts (a sampled reference's: its mean over
  /// draws), read between them as the table is.
  LogCurve ref_counts_;
  double switch_lo_ = 0, switch_hi_ = 0;    ///< the measured counts either side of the generator's switch (0: none)
  mutable std::vector<double> switch_ref_;  ///< the mean over draws at each count between them, filled when asked
  Interp interp_ = Interp::kRaw;
  MoeRouting ref_ = MoeRouting::kBalanced;
  double ref_alpha_ = 1.01;
  MoeRankCost rank_;
  int experts_ = 0, topk_ = 0, ep_ = 1;
  bool batches_routed_as_reference_ = false;  ///< set_batch_routing
  mutable std::vector<std::int64_t> ref_loads_;
  /// Mean slowest-rank cost over kMoeReferenceDraws draws of the reference routing at `tokens` (a fixed seed per
  /// count, so the same value whenever asked).
  double mean_over_draws(std::int64_t tokens) const;
  /// The table at `t` read through the reference's model cost `ref` there: ref x the log-log interpolated residual
  /// measured / model, with `bounded` kept inside the range of the two measured counts around t.
  double read_through_model(double t, double ref, bool* clamped, bool bounded) const;
};

}  // namespace servesim
