#pragma once
/// GEMM latency from the measured (n, k, m) grid: for one weight shape (n output, k input features) the grid is
/// interpolated over (n, k) once into a curve of tokens m, then each batch reads the curve between the measured
/// token counts in the grid's TokenReading (below).
/// Over (n, k) the interpolation is affine in each dimension where latency rises with it (FLOPs and weight
/// bytes are linear in n and in k, so t0 + c n is reproduced exactly; log-log bends it) and geometric where
/// it falls (another kernel path on the smaller side): interp_pair_affine. Held-out grid lines on the
/// complementary split (even interior n and k lines) chose this over log-log (docs/validation.md).
/// A shape past the grid's upper edge in n, k or m is read along that axis as latency affine in it (as between
/// grid lines), from the edge and the grid line at most half the edge, kept between flat and proportional
/// (past_edge_us); below the first n or k the edge value is scaled by the FLOP ratio. Both are flagged.
#include <cstdint>
#include <vector>

#include "core/fidelity/interpolation.h"
#include "core/fidelity/op_table.h"

namespace servesim {

/// How a curve is read between two measured token counts a < m < b. A GEMM's rows run in tiles of T rows, so its
/// time steps with ceil(m / T) where the kernel is compute-bound, and the grids measure each step edge as a pair
/// (256, 257), ... (docs/validation.md, "Between token counts"). kTiles<T> reads linearly in ceil(m / T) between
/// ceil(a / T) and ceil(b / T) (flat within a tile; log-log where a < T or both share a tile); kAffine is linear in
/// m where the latency rises and log-log where it falls (interp_pair_affine); kLogLog a power law.
/// kPow2Clusters reads linearly in the rows a kernel dispatched on next_pow2(m) launches: next_pow2(m) up to 256,
/// then whole clusters of 256 rows (vLLM's CUTLASS FP8 GEMM on Hopper picks its tile configuration by next_pow2(m)
/// and above 128 runs 128 x 128 tiles in 2 x 1 clusters); log-log where a and b launch the same rows.
enum class TokenReading : std::uint8_t { kLogLog, kAffine, kTiles64, kTiles128, kTiles256, kPow2Clusters };
inline constexpr TokenReading kTokenReadings[] = {TokenReading::kLogLog,   TokenReading::kAffine,
                                                  TokenReading::kTiles64,  TokenReading::kTiles128,
                                                  TokenReading::kTiles256, TokenReading::kPow2Clusters};
const char* token_reading_name(TokenReading r);

/// Token counts grouped as the grids measure them: from 32 tokens on each step edge is a pair (m, m + 1), one group;
/// every other count is a group of its own. group[i] numbers the group of ms[i] (0, 1, ...).
std::vector<int> token_count_groups(const std::vector<double>& ms);

/// The reading that predicts the grid's own token counts best: every other interior count held out (a step pair
/// (m, m + 1) with m >= 32 held out whole) on every measured (n, k) line and read from the counts left; the
/// smallest mean squared log error wins (ties: the earlier reading). The choice is per grid (one kernel family
/// and dtype); log-log when the grid has too few counts to tell.
TokenReading choose_token_reading(const OpGrid& grid);

/// Sets OpGrid::token_reading of every grid of a GEMM table (op "gemm"; other tables are left alone), as a table
/// is loaded.
void choose_token_readings(OpTable& table);

struct GemmCurve {
  double n = 0, k = 0;
  TokenReading reading = TokenReading::kLogLog;
  LogCurve curve;            ///< latency (us) against m at the grid's m values
  double scale = 1;          ///< FLOP ratio applied when n or k was below the grid
  bool extrapolated = false; ///< (n, k) outside the grid
  bool ok() const { return !curve.empty(); }
  /// Latency of [m x k] x [k x n]; sets *extrapolated when (n, k) or m is outside the measurements.
  double us(double m, bool* extrapolated_out = nullptr) const;
};

/// Builds the curve for (n, k) from a grid with axes (n, k, m), read between token counts in the grid's own
/// TokenReading (OpGrid::token_reading, set when its file was loaded); an empty curve when the grid has no data
/// there.
GemmCurve make_gemm_curve(const OpGrid& grid, double n, double k);
/// The same read in `reading` (the validation's fixed and re-chosen readings).
GemmCurve make_gemm_curve(const OpGrid& grid, double n, double k, TokenReading reading);

/// y at m between the curve's points in `reading` (inside the measured range; the ends are the caller's).
double read_tokens(const LogCurve& curve, double m, TokenReading reading);

}  // namespace servesim
