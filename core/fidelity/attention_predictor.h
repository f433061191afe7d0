#pragma once
/// AttentionPredictor: attention latency of any batch from one measured uniform grid, through the work model of
/// attention_model.h (model x interpolated residual, or the grid's raw latency, chosen per grid).

#include <memory>
#include <vector>

#include "core/fidelity/attention_model.h"
#include "core/fidelity/interpolation.h"
#include "core/fidelity/op_table.h"

namespace servesim {

/// Attention latency of any batch from one measured uniform grid (one head configuration).
///   latency(batch) = model(batch) x residual(uniform equivalent)
/// where residual = measured / model on the grid, interpolated in log space at the batch's uniform equivalent
/// (as many requests; prefill: the same (query, key) pairs per request, s(s+1)/2 = pairs/b; decode: the mean
/// KV length); prefill reads it along equal tokens b x s (residual_along_tokens), decode halfway between that reading
/// along equal keys b x kv_len and the plain one (the two averaged in log). On a measured uniform batch this is
/// the measurement. Beyond the grid the residual is clamped to the nearest measured cell (large batches of long
/// requests: the largest measured batch at that length) and the model carries the scaling; such lookups are flagged.
///
/// How the uniform-equivalent latency is read off the grid (`Interp`): model x interpolated residual (kProduct),
/// the interpolated latency itself (kRaw: log-log; kRawAffine: linear in b and s where latency rises with them,
/// interp_pair_affine), or the geometric mean of kProduct and kRaw (kBlend); the batch's composition enters as
/// model(batch) / model(uniform equivalent) in all four. Which one suits a grid depends on how well the work
/// model's structure matches the kernel (FlashAttention's split-KV fits vLLM, not TRT-LLM's XQA decode), so
/// build() can choose it for a decode grid by cross-validation on the grid it is given: every other interior length
/// line, then every other interior batch line, held out and predicted from the rest; the smallest mean squared log
/// error wins. (A split of the grid passed in, so a caller that held lines out of the measurements never sees them.)
/// A prefill grid always reads kProduct, its residual along equal tokens (residual_along_tokens): that beat the
/// per-grid choice on every backend's held-out lines (docs/validation.md).
class AttentionPredictor {
 public:
  enum class Interp { kProduct, kRaw, kBlend, kRawAffine };
  /// `grid` axes: (batch, isl) for prefill, (batch, kv_len) for decode. `geo`: the grid's heads and KV heads and
  /// the GPU's SMs. Fits the work model on every measured cell. `choose`: pick a decode grid's Interp by
  /// cross-validation (else, and for prefill, kProduct). False when the grid is unusable.
  bool build(const OpGrid& grid, bool decode, const AttentionGeometry& geo, bool choose = false);
  /// build() on a grid the predictor keeps (shared by its copies), for a grid made for it (read_cold).
  bool build_owned(OpGrid grid, bool decode, const AttentionGeometry& geo, bool choose = false);
  Interp interp() const { return interp_; }
  void set_interp(Interp m) { interp_ = m; }
  bool ok() const { return grid_ != nullptr; }
  double prefill_us(const std::vector<PrefillChunk>& chunks, bool* extrapolated = nullptr) const;
  /// `beside_prefill`: the decodes share one kernel call with prompt tokens (AttentionGeometry::
  /// ungrouped_beside_prefill prices them ungrouped and unsplit where the kernel runs them so).
  double decode_us(const std::vector<std::int32_t>& contexts, bool* extrapolated = nullptr,
                   bool beside_prefill = false) const;
  const WorkModel& model() const { return model_; }
  const AttentionGeometry& geometry() const { return geo_; }

 private:
  /// build()'s fit on one grid, which must outlive this predictor (build_owned, owned_).
  bool fit(const OpGrid& grid, bool decode, const AttentionGeometry& geo, bool choose);
  double lookup(std::int64_t b_eq, double s_eq, double model_batch, bool* extrapolated) const;
  /// Interpolates `g` at (b, s), stepping the batch down to the largest measured cell of a ragged grid.
  GridValue grid_at(const OpGrid& g, double b, double s, double* b_used, double* s_used, bool* extrap,
                    AxisPos* used = nullptr) const;
  double uniform_model(double b, double s) const;
  /// The residual at (b, s) read along equal tokens (b x s), where what the work model misses follows the
  /// call's tokens more than its batch or its length: between the two measured lengths that bracket s, each read at
  /// the batch of the same tokens, and between the two measured batches that bracket b, each read at the length of
  /// the same tokens; the two readings averaged in log (a line that (b, s) lies on is read alone, at (b, s)). Held-out
  /// lines read so put vLLM's H100 / H200 prefill tables at p95 9.56% / 9.05% against 11.28% / 10.80% read at the same
  /// batch (length), and every other prefill family better too (docs/validation.md). Decode (b requests of kv_len s:
  /// equal keys) averages it in log with the plain reading at (b, s): alone it read vLLM's H200 decode worse, averaged
  /// every attention decode family better at p95 held out, MLA decode about even (docs/validation.md). False (and the
  /// plain reading stands) past an edge or next to an unmeasured corner.
  bool residual_along_tokens(double b, double s, double* out) const;
  /// A decode batch b that grid_at stepped down to the measured batch b_used at length s_used (large batches of long
  /// requests are not measured): the residual's ratio from b_used to b at the longest length below s_used where the
  /// grid measures both (1 where none does); a b past the largest batch line takes the ratio up to that line and
  /// the model carries it beyond (so the price is continuous there). The work model's batch scaling misses the waves
  /// and splits the residual holds; at the neighbouring length they are measured. Held-out decode p95 on every table
  /// (docs/validation.md): H100 vLLM 11.23% -> 10.78%, A100 11.49% -> 11.10%.
  double batch_transport(double b, double b_used, double s_used) const;
  /// A decode grid's Interp, by the cross-validation described above the class (fit calls it for decode only).
  void choose_interp(const OpGrid& grid);
  Interp interp_ = Interp::kProduct;
  const OpGrid* grid_ = nullptr;
  std::shared_ptr<const OpGrid> owned_;  ///< the grid build_owned was given (grid_ points into it)
  /// A FlashAttention-2 prefill grid (AttentionGeometry::ungrouped_beside_prefill) with one-token prompts: the whole
  /// grid's predictor, for batches of one-token chunks only (this one is fitted on the grid without them).
  std::shared_ptr<const AttentionPredictor> one_query_;
  OpGrid residual_;
  /// Between a batch line with the fitted scheduler step (at most kFa3PrepareMaxRequests requests) and one without,
  /// the raw readings interpolate this grid (the measurements less prepare_step_us_ on the lines with it) and add
  /// the step back at the query, so it is not spread over the two lines.
  OpGrid raw_less_step_;
  double prepare_step_us_ = 0;
  /// build() fitted this predictor on its grid less FlashAttention-3's split-kernel output traffic, which decode_us
  /// adds back; the cross-validation's part-grid fits (fit() alone) compare like with like and add nothing.
  bool less_split_output_ = false;
  double first_length_ = 1;  ///< the grid's shortest length (decode_us reads a shorter context at it)
  AttentionGeometry geo_;
  WorkModel model_;
  bool decode_ = false;
  mutable SplitCache splits_;
  mutable DecodeWork work_;
};

}  // namespace servesim
