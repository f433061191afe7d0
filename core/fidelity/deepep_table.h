#pragma once
/// SGLang's DeepEP MoE all-to-all from the measured tables (profiles/<gpu>/sglang/deepep_{ll,normal}.json,
/// scripts/gen_tables.py; H100-SXM, sglang 0.5.12, AIConfigurator's DeepEP collectors).
///
/// What the measurements are (from AIConfigurator's collector/wideep/sglang/collect_deepep_{ll,normal}.py and the
/// DeepEP tests they wrap): every rank of one 8-GPU node dispatches `tokens` tokens of `hidden` values, each routed
/// to `topk` of `experts` experts, so the token axis is tokens per EP rank and the EP group is 8. Normal mode
/// (intranode NVLink kernels) is measured at SGLang's default 20 SMs (DeepEP's Buffer.num_sms, used unless
/// --deepep-config sets another), its dispatch with the FP8 payload and its combine in BF16; low-latency mode with
/// SGLang's 128-token receive buffer.
///
/// Lookup for one model shape (hidden, topk, experts):
/// - configuration: the grids of the model's (topk, experts); when that pair was not measured, the nearest one
///   (closest topk in log ratio, then closest expert count), every lookup flagged;
/// - hidden: linear between the two measured hidden sizes around the model's (the bytes moved are linear in it);
///   outside them the nearest edge, scaled by hidden / edge above the largest (bandwidth-bound upper bound) and
///   held at the edge below the smallest (the fixed part does not shrink), flagged;
/// - tokens: between measured token counts linear in tokens where the latency rises (a fixed part plus bytes over a
///   bandwidth, t0 + tokens / bw, is reproduced exactly) and log-log where it dips (LogCurve::eval_affine, as for
///   the collectives); on the complementary held-out split (even interior token counts, servesim_opcheck's
///   `choice_split`) this beat plain log-log for both modes (docs/validation.md); below the first count the first
///   (latency-bound), above the last scaled linearly in tokens from it (bandwidth-bound), flagged.
#include <cstdint>
#include <string>

#include "core/fidelity/interpolation.h"
#include "core/fidelity/op_table.h"

namespace servesim {

/// The two halves of an EP exchange: tokens out to their experts' ranks, results back to the tokens' ranks.
enum class DeepEpPhase { kDispatch = 0, kCombine = 1 };

/// One DeepEP mode (low-latency or normal) for one model shape.
class DeepEpTable {
 public:
  DeepEpTable() = default;
  /// Picks the grids of `table` (a deepep_ll or deepep_normal file; normal grids must carry `sms`) for the model
  /// shape. Not ok() when the table has no grid for either phase.
  DeepEpTable(const OpTable& table, std::int64_t hidden, std::int64_t topk, std::int64_t experts,
              std::int64_t sms = 20);
  bool ok() const { return ok_; }
  /// One dispatch or combine with `tokens` tokens on every EP rank (us); 0 for tokens <= 0.
  double us(DeepEpPhase phase, double tokens, bool* extrapolated = nullptr) const;
  /// The model's (topk, experts) was measured and its hidden size lies within the measured ones.
  bool exact_shape() const { return ok_ && !config_flag_ && !hidden_flag_; }
  /// The measured shape used: "hidden 7168, topk 8, experts 256" (hidden: the model's when interpolated).
  std::string describe() const;

 private:
  struct Side {
    LogCurve lo, hi;   // token curves at hidden h_lo and h_hi (equal when not interpolating)
    double w = 0;      // weight of hi, linear in hidden
  };
  Side side_[2];
  double scale_ = 1;  // hidden / largest measured hidden, above the measured range
  std::int64_t topk_ = 0, experts_ = 0, h_lo_ = 0, h_hi_ = 0, hidden_ = 0;
  bool ok_ = false, config_flag_ = false, hidden_flag_ = false;
};

}  // namespace servesim
