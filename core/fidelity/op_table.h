#pragma once
/// Measured operator tables (profiles/<gpu>/<backend>/<op>.json, written by scripts/gen_tables.py): a file holds
/// many grids, each for one key (dtype, head shape, ...), with latency on the cross product of its axes.
/// Format: profiles/README.md.
#include <cstdint>
#include <string>
#include <vector>

namespace servesim {

/// One measured grid: latency (us) on the cross product of `axes`, row-major (last axis fastest).
/// Cells that were not measured are NaN. `log_values` and `log_axes` are precomputed with det_log.
struct OpGrid {
  std::vector<std::string> key;  ///< key values as text, in the file's key_fields order
  std::string kernel;
  std::vector<std::vector<double>> axes;
  std::vector<double> values;
  std::vector<std::vector<double>> log_axes;
  std::vector<double> log_values;  ///< NaN where values is NaN
  std::vector<std::size_t> strides;  ///< element stride of each axis
  /// GEMM grids (axes n, k, m): how curves are read between token counts, a gemm_model.h TokenReading chosen on
  /// the measured grid when its file is loaded (profile_tables.cc); a grid moved to another GPU keeps it. 0 = log-log.
  std::uint8_t token_reading = 0;
  std::size_t stride(std::size_t axis) const { return strides[axis]; }
  std::size_t size() const { return values.size(); }
};

/// A parsed table file.
struct OpTable {
  std::string gpu, backend, backend_version, op;
  std::vector<std::string> key_fields, axis_fields;
  std::string source_file;
  std::int64_t source_rows = 0;
  /// Cells mask_glitch_cells left out of the grids (read as unmeasured), 0 for tables it does not apply to.
  std::size_t glitch_cells = 0;
  /// Identifies the text it was parsed from ("folder/file:size:hash", set by the profile loader; "" otherwise).
  std::string fingerprint;
  std::vector<OpGrid> grids;
  /// The grid whose key equals `key` exactly (same order as key_fields), or nullptr.
  const OpGrid* find(const std::vector<std::string>& key) const;
  bool empty() const { return grids.empty(); }
};

/// Parses a table file; returns an error message (empty on success).
std::string parse_op_table(const std::string& text, OpTable& out);

/// A copy of `g` without the grid lines of `axis` whose index is marked in `held` (held.size() == axis length).
OpGrid drop_grid_lines(const OpGrid& g, std::size_t axis, const std::vector<bool>& held);

/// A measurement more than this many times every measured neighbour, along every axis, is a glitch of its
/// campaign (a repetition that caught host jitter or a cold start), not kernel behaviour.
constexpr double kGlitchFactor = 2.0;

/// Reads a grid's isolated glitches as unmeasured (NaN): cells more than kGlitchFactor times every measured
/// neighbour along every axis, among them a smaller and a larger shape. A kernel switch that makes a shape slower
/// than the larger one beside it is slower than the smaller ones by its own step only, which is why every direction
/// must agree; the smaller neighbour is where a reading steps down to around the hole (AttentionPredictor::grid_at),
/// so a grid's first cell is never masked. Returns how many were masked (detected on the grid as given, then masked
/// together).
std::size_t mask_glitch_cells(OpGrid& g);

/// The operator tables whose grids are read without their glitches (kernel tables: GEMM, attention, MLA, MoE).
/// Collectives are read through their isotonic fit instead (CollectiveModel::monotone_curve).
bool reads_without_glitches(const std::string& op);

/// mask_glitch_cells on every grid of a kernel table (reads_without_glitches); sets t.glitch_cells.
void mask_glitch_cells(OpTable& t);

/// Integer key text ("128") as the generator writes it.
std::string key_int(std::int64_t v);

}  // namespace servesim
