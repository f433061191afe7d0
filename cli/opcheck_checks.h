#pragma once
// The per-family checks of servesim_opcheck (cli/opcheck.cc): each holds whole grid lines (shapes) out of one
// measured table, rebuilds the simulator's predictor from the rest, predicts the held-out measurements, logs each
// cell (cli/cell_log.h) and returns the family's report.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/op_table_file.h"
#include "core/fidelity/l2_warmth.h"
#include "core/fidelity/moe_model.h"
#include "core/fidelity/op_table.h"

namespace servesim::opcheck {

using OJson = nlohmann::ordered_json;

/// Every third interior grid line held out (indices 1, 4, 7, ... that are not the last).
inline std::vector<bool> every_third(std::size_t n) {
  std::vector<bool> h(n, false);
  for (std::size_t i = 1; i + 1 < n; i += 3) h[i] = true;
  return h;
}
/// Every other interior grid line (1, 3, 5, ...).
inline std::vector<bool> every_other(std::size_t n) {
  std::vector<bool> h(n, false);
  for (std::size_t i = 1; i + 1 < n; i += 2) h[i] = true;
  return h;
}

/// The last `count` grid lines held out (a shape past the edge of what is left), none when fewer than two lines
/// would be left.
inline std::vector<bool> last_lines(std::size_t n, std::size_t count = 1) {
  std::vector<bool> h(n, false);
  if (n >= count + 2)
    for (std::size_t i = n - count; i < n; ++i) h[i] = true;
  return h;
}

/// DeepSeek MLA projection shapes (profiles/models/DeepSeek-V3.json, the model the module tables measured).
struct MlaShapes {
  double hidden = 7168, q_lora = 1536, kv_lora = 512, nope = 128, rope = 64, v = 128;
};

/// GEMM grids (opcheck_gemm.cc).
OJson check_gemm(const OpTable& t, const std::string& backend);
/// Prefill (`decode` false) or decode attention (opcheck_attention.cc); `generation`: the decode table beside a
/// prefill table.
OJson check_attention(const OpTable& t, bool decode, int sms, double hbm_tb_s, const L2Warmth& l2,
                      const OpTable* generation = nullptr);
/// MLA module or kernel tables of one phase; `other`: the other phase's (opcheck_attention.cc).
OJson check_mla(const OpTable& t, const OpTable& other, const OpTable& gemm, bool decode, int sms,
                const MlaShapes& sh);
/// MoE curves (opcheck_moe.cc).
OJson check_moe(const OpTable& t, const GpuFacts& gpu);
/// The slowest-rank cost constants of one MoE grid's shape on `gpu` (the expert weights' HBM time and one row
/// block's tensor time per rank), as TableCostModel sets them for a role of that shape.
MoeRankCost moe_rank_cost(const GpuFacts& gpu, const OpGrid& g);
/// The simulator's predictor of one MoE grid (key dtype, hidden, inter, topk, experts, tp, ep, distribution): its
/// measured routing as the reference, the reading chosen as roles choose it; false when the grid cannot build one.
bool moe_grid_predictor(const OpGrid& g, const GpuFacts& gpu, MoePredictor& p);
/// Message-size curves (opcheck_curves.cc).
OJson check_curves(const OpTable& t, const char* family, bool split_at_buffer = false, bool monotone = true);
/// SGLang's DeepEP tables (opcheck_curves.cc).
OJson check_deepep(const OpTable& t, const char* family);

}  // namespace servesim::opcheck
