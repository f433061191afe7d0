#pragma once
/// Decode attention read cold: AIConfigurator's collectors time one layer's call again and again, so a batch whose K
/// and V fit in L2 is timed reading them from L2. In serving every other layer's weights and KV pass through L2
/// between two reads of one layer's KV, so those reads come from HBM. servesim measured the difference on the same
/// kernel with the operands left in L2 and evicted (profiles/measured/<gpu>/l2_warmth/, scripts/measure/l2_warmth.py)
/// and fits it per GPU (scripts/fit_l2_warmth.py -> profiles/<gpu>/l2_warmth.json).
#include <string>

#include "core/fidelity/op_table.h"

namespace servesim {

struct L2Warmth {
  double us_per_mib = 0;  ///< extra time per MiB of K and V read cold, while the whole call fits in L2
  double full_mib = 0;    ///< up to here a repeated call reads all of its K and V from L2
  double zero_mib = 0;    ///< from here none: the extra falls linearly from full_mib to 0 here
  double l2_bytes = 0;    ///< the GPU's L2 as measured (zero_mib cannot exceed it)
  bool ok() const { return us_per_mib > 0 && full_mib > 0 && zero_mib > full_mib; }
  /// Extra microseconds of one call whose K and V take `bytes`, read cold rather than warm (0 when !ok()).
  double extra_us(double bytes) const;
};

/// A decode-attention grid (axes batch, KV length) as if read cold: every cell plus `w.extra_us` of the K and V it
/// reads (batch x length x `bytes_per_key`; with a sliding `window` > 0, batch x min(length, window) x that).
/// Unchanged when !w.ok(). Interpolating the cold grid keeps the step where a batch's K and V outgrow L2, which the
/// warm tables hold between two measured lengths, out of the lines around it (docs/validation.md).
OpGrid read_cold(const OpGrid& g, const L2Warmth& w, double bytes_per_key, double window = 0);

/// K and V bytes per key of an attention grid keyed (KV dtype, head_dim, heads, KV heads, ...): 2 x KV heads x
/// head_dim x 1 (fp8) or 2 bytes.
double grid_kv_bytes_per_key(const OpGrid& g);

/// Parses profiles/<gpu>/l2_warmth.json ({us_per_mib, full_mib, zero_mib, l2_bytes, ...}); "" or the error, naming
/// the field.
std::string parse_l2_warmth(const std::string& text, L2Warmth& out);

}  // namespace servesim
