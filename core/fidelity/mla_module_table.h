#pragma once
/// MLA (DeepSeek-V3 class) attention from AIConfigurator's module tables (profiles/<gpu>/<backend>/mla_context.json
/// and mla_generation.json).
///
/// A module measurement is one whole DeepSeek attention layer on one GPU: the projections (fused q_a/kv_a, q_b,
/// kv_b, o), the latent norms and rope, and the attention kernel, for a uniform batch of `batch` requests of `isl`
/// prompt tokens (context) or one new token over `kv_len` cached tokens (generation). The simulator prices the
/// projections from the GEMM table at the batch's total tokens (so a mixed batch runs them once), which leaves
/// the attention core to come from the module: core(b, s) = module(b, s) - projections(tokens of that batch).
/// A uniform batch therefore costs exactly the module measurement, GEMMs and core together.
///
/// Key fields: kernel, kv_cache_dtype, gemm_type, num_heads (heads on this GPU), tp. vLLM's collector swept each
/// attention backend over a different isl range (FLASH_ATTN_MLA / FLASHMLA short prompts, FLASH_ATTN long ones,
/// never overlapping), so the grids of one (kv_cache_dtype, gemm_type, num_heads) are joined into one grid over
/// the union of their axes; cells none of them measured stay missing (the interpolation steps around them).
#include <functional>
#include <string>

#include "core/fidelity/op_table.h"

namespace servesim {

/// Share of a module measurement kept as attention core when the GEMM-table projections come to more than the
/// module (GEMM and module tables were measured in different processes; at tiny batches their fixed kernel
/// times can exceed the module's). An assumption, not a measurement: it only keeps the core positive.
constexpr double kMlaCoreFloorShare = 0.05;

/// The module grid chosen for one role.
struct MlaModuleGrid {
  OpGrid grid;            ///< joined grid, axes (batch, isl) or (batch, kv_len), values in us
  std::string kernels;    ///< kernels joined, "+"-separated ("FLASH_ATTN+FLASH_ATTN_MLA")
  std::string kv_dtype, gemm_type;
  int heads = 0;          ///< num_heads of the grid (heads on one GPU)
  bool approx = false;    ///< heads or a dtype differ from the request (scaled by the head ratio)
  bool ok() const { return !grid.values.empty(); }
};

/// Picks the grids for (kv_dtype, gemm_type, heads): exact key first, else the other gemm_type, else the other
/// kv dtype; within those, the grids of the nearest head count (log distance). Joins them across kernels.
/// False when the table has nothing usable.
bool select_mla_module_grid(const OpTable& table, const std::string& kv_dtype, const std::string& gemm_type,
                            int heads, MlaModuleGrid& out);

/// Turns module latency into attention-core latency: value - projections_us(tokens), tokens = batch * isl for
/// context grids and batch for generation grids, kept at least kMlaCoreFloorShare x value.
void subtract_mla_projections(OpGrid& grid, bool decode, const std::function<double(double tokens)>& projections_us);

}  // namespace servesim
