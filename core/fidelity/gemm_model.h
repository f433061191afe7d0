#pragma once
/// GEMM latency from the measured (n, k, m) grid: for one weight shape (n output, k input features) the grid is
/// interpolated over (n, k) once into a curve of tokens m, then each batch reads the curve (log-log).
/// Over (n, k) the interpolation is affine in each dimension where latency rises with it (FLOPs and weight
/// bytes are linear in n and in k, so t0 + c n is reproduced exactly; log-log bends it) and geometric where
/// it falls (another kernel path on the smaller side): interp_pair_affine. Held-out grid lines on the
/// complementary split (even interior n and k lines) chose this over log-log (docs/validation.md).
/// Shapes outside the measured (n, k) range are clamped to the edge and scaled by the FLOP ratio (compute and
/// weight bytes are both linear in n and k); m beyond the largest measured value scales linearly (compute-bound).
#include "core/fidelity/interpolation.h"
#include "core/fidelity/op_table.h"

namespace servesim {

struct GemmCurve {
  double n = 0, k = 0;
  LogCurve curve;            ///< latency (us) against m at the grid's m values
  double scale = 1;          ///< FLOP ratio applied when (n, k) was clamped
  bool extrapolated = false; ///< (n, k) outside the grid
  bool ok() const { return !curve.empty(); }
  /// Latency of [m x k] x [k x n]; sets *extrapolated when (n, k) or m is outside the measurements.
  double us(double m, bool* extrapolated_out = nullptr) const;
};

/// Builds the curve for (n, k) from a grid with axes (n, k, m); an empty curve when the grid has no data there.
GemmCurve make_gemm_curve(const OpGrid& grid, double n, double k);

}  // namespace servesim
