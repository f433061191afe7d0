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
/// interpolation steps around them). The short-prompt kernels are vLLM's decode path (MlaDecodePath): a prompt
/// chunk of at most the backend's reorder_batch_threshold tokens runs there, not on FLASH_ATTN's prefill path, so
/// the simulator prices the two parts of a joined context grid as the two kernels they are
/// (split_mla_context_grid, mla_decode_path_prompts) and never interpolates across the switch.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/fidelity/batch_shape.h"
#include "core/fidelity/interpolation.h"
#include "core/fidelity/op_table.h"

namespace servesim {

/// Smallest share of a module measurement left to the attention core: the projections are capped at
/// (1 - share) x the module (MlaProjectionCap). An assumption, not a measurement: it only keeps the core
/// positive where the GEMM table's projections would take the whole module or more.
constexpr double kMlaCoreFloorShare = 0.05;

/// A vLLM MLA backend that runs short prompt chunks on its decode path, beside the decodes: its metadata builder's
/// reorder_batch_threshold, the longest query sent there (vllm/v1/attention/backends/mla: FlashMLA 128,
/// FlashAttention-MLA 512, "process small prefills with decode pathway"), and whether the kernel takes only
/// uniform query lengths (FlashMLA, QueryLenSupport::UNIFORM; FlashAttention-MLA is VARLEN). vLLM's collector
/// measured exactly these ranges: FLASHMLA isl 1-128 then FLASH_ATTN from 256, FLASH_ATTN_MLA 1-512 then
/// FLASH_ATTN from 1024 (H100 and H200, vLLM 0.24.0).
struct MlaDecodePath {
  std::int32_t max_query = 0;  ///< 0: no decode-path kernel (one kernel for every prompt length)
  bool uniform = false;
  bool ok() const { return max_query > 0; }
};

/// The decode path of a kernel name as the tables spell it (FLASHMLA, FLASH_ATTN_MLA); none for any other.
MlaDecodePath mla_decode_path(const std::string& kernel);

/// The module grid chosen for one role.
struct MlaModuleGrid {
  OpGrid grid;            ///< joined grid, axes (batch, isl) or (batch, kv_len), values in us
  std::string kernels;    ///< kernels joined, "+"-separated ("FLASH_ATTN+FLASH_ATTN_MLA")
  std::string kv_dtype, gemm_type;  ///< gemm_type is empty for kernel tables
  bool module = true;     ///< a module table (projections included); false: the attention kernel alone
  int heads = 0;          ///< num_heads of the grid (heads on one GPU)
  bool approx = false;    ///< heads or a dtype differ from the request (scaled by the head ratio)
  /// Set when a context grid joins a decode-path kernel (lengths <= max_query) and a prefill kernel (longer).
  MlaDecodePath decode_path;
  std::string short_kernel, long_kernel;  ///< the two kernels when decode_path is set
  bool ok() const { return !grid.values.empty(); }
};

/// Picks the grids for (kv_dtype, gemm_type, heads): exact key first, else the other gemm_type, else the other
/// kv dtype (kernel tables have no gemm_type: kv dtype only); within those, the grids of the nearest head count
/// (log distance). Joins them across kernels. False when the table has nothing usable.
bool select_mla_module_grid(const OpTable& table, const std::string& kv_dtype, const std::string& gemm_type,
                            int heads, MlaModuleGrid& out);

/// The columns of `cells` (m's joined context grid, or lines of it) with isl <= m.decode_path.max_query
/// (`short_part`, named m.short_kernel) and above it (`long_part`, m.long_kernel); batch rows and lengths left
/// without a measurement are dropped.
void split_mla_context_grid(const MlaModuleGrid& m, const OpGrid& cells, OpGrid& short_part, OpGrid& long_part);

/// Which of one step's prompt chunks vLLM runs on the decode path (1) rather than the prefill path (0). vLLM moves
/// requests of at most max_query new tokens to the front of the batch, decodes first, and splits it
/// (split_decodes_and_prefills): on a VARLEN backend every such request is in the decode-path call; on a UNIFORM
/// one only the leading run of the first request's query length is, the rest going to the prefill path. So
/// beside decodes (one token each) only one-token prompts join them; without decodes, the run of prompts in step
/// order sharing the first short prompt's length.
std::vector<char> mla_decode_path_prompts(const MlaDecodePath& path, const std::vector<PrefillChunk>& prompts,
                                          bool with_decodes);

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
