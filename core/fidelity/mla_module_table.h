#pragma once
/// MLA (DeepSeek-V3 class) attention from AIConfigurator's MLA tables (profiles/<gpu>/<backend>/mla_context.json
/// and mla_generation.json), in one of two layouts:
///  - module tables (H100/H200): one whole DeepSeek attention layer on one GPU, the projections (fused q_a/kv_a,
///    q_b, kv_b, o), the latent norms and rope, and the attention kernel, for a uniform batch of `batch` requests
///    of `isl` prompt tokens (context) or one new token over `kv_len` cached tokens (generation). Key: kernel,
///    kv_cache_dtype, gemm_type, num_heads (heads on this GPU), tp.
///  - kernel tables (A100, vLLM 0.14): the attention kernel alone, no projections. Key: kernel, kv_cache_dtype,
///    num_heads, tp.
/// The simulator prices the projections once per batch in the GEMM family at the batch's total tokens. With
/// module tables the attention core is the module minus those projections, so a uniform batch on a grid point
/// costs exactly the module measurement. The GEMM table was measured in another process, and at some shapes its
/// projections take longer than the whole module did (TRT-LLM generation at small kv_len); the projections are
/// therefore capped by the modules themselves (MlaProjectionCap), which keeps the exactness and a positive core.
/// With kernel tables the core is the table as is.
///
/// vLLM's collector swept each attention backend over a different isl range (FLASH_ATTN_MLA / FLASHMLA short
/// prompts, FLASH_ATTN long ones, never overlapping), so the grids of one (kv_cache_dtype, gemm_type, num_heads)
/// are joined into one grid over the union of their axes; cells none of them measured stay missing (the
/// interpolation steps around them).
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/fidelity/interpolation.h"
#include "core/fidelity/op_table.h"

namespace servesim {

/// Smallest share of a module measurement left to the attention core: the projections are capped at
/// (1 - share) x the module (MlaProjectionCap). An assumption, not a measurement: it only keeps the core
/// positive where the GEMM table's projections would take the whole module or more.
constexpr double kMlaCoreFloorShare = 0.05;

/// The module grid chosen for one role.
struct MlaModuleGrid {
  OpGrid grid;            ///< joined grid, axes (batch, isl) or (batch, kv_len), values in us
  std::string kernels;    ///< kernels joined, "+"-separated ("FLASH_ATTN+FLASH_ATTN_MLA")
  std::string kv_dtype, gemm_type;  ///< gemm_type is empty for kernel tables
  bool module = true;     ///< a module table (projections included); false: the attention kernel alone
  int heads = 0;          ///< num_heads of the grid (heads on one GPU)
  bool approx = false;    ///< heads or a dtype differ from the request (scaled by the head ratio)
  bool ok() const { return !grid.values.empty(); }
};

/// Picks the grids for (kv_dtype, gemm_type, heads): exact key first, else the other gemm_type, else the other
/// kv dtype (kernel tables have no gemm_type: kv dtype only); within those, the grids of the nearest head count
/// (log distance). Joins them across kernels. False when the table has nothing usable.
bool select_mla_module_grid(const OpTable& table, const std::string& kv_dtype, const std::string& gemm_type,
                            int heads, MlaModuleGrid& out);

/// Upper bound on one layer's projection time from the module measurements themselves: the projections of T
/// tokens take no longer than (1 - kMlaCoreFloorShare) x any measured module of at least T tokens (the module
/// runs them and more; projection time does not fall as tokens grow). Context cells count batch x isl tokens,
/// generation cells batch. Between measured token counts the bound is interpolated in log-log; above the largest
/// there is none.
class MlaProjectionCap {
 public:
  /// Adds every measured cell of a joined module grid.
  void add(const OpGrid& module, bool decode);
  /// Sorts the cells and takes the running minimum from the largest token count down.
  void finish();
  bool empty() const { return curve_.empty(); }
  /// The bound at `tokens` (us); infinite above the largest measured token count or when empty.
  double cap_us(double tokens) const;

 private:
  std::vector<std::pair<double, double>> cells_;  // (tokens, bound) before finish()
  LogCurve curve_;
};

/// Turns module latency into attention-core latency: value - projections_us(tokens), tokens = batch * isl for
/// context grids and batch for generation grids, kept at least kMlaCoreFloorShare x value.
void subtract_mla_projections(OpGrid& grid, bool decode, const std::function<double(double tokens)>& projections_us);

}  // namespace servesim
