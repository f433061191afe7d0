#pragma once
/// Measured tables moved to a GPU that has none (H800, H20, B200, L40S, ...): every cell of a reference GPU's
/// tables is re-priced by the two datasheets' rooflines at that cell's shape.
///
/// A cell's roofline is its work at datasheet peak: max(FLOPs / tensor peak, bytes / HBM bandwidth) for kernels,
/// bytes / intra-node link bandwidth for collectives. Two rules, chosen by the GPUs' compute capability and
/// validated leave-one-GPU-out (scripts/validate_ops.py, docs/validation.md):
///  - same architecture (equal compute capability: H100 -> H800, H20, H200): the kernels are the same code on the
///    same SMs, so only the roofline part of a measurement moves; the rest (latency, launch, synchronisation,
///    the kernel's own inefficiency) is kept: t' = t - roof + roof'. Measured H100 <-> H200: a cell's time falls
///    far less than HBM bandwidth rises unless the kernel is bandwidth-bound, which this reproduces.
///  - another architecture (H200 -> B200, A100 -> L40S, A10G; or unknown): everything scales: t' = t x roof' / roof.
/// Collectives scale with the link in both cases (NCCL's latency moves with the NVLink generation too).
#include <string>
#include <vector>

#include "core/spec/gpu_spec.h"
#include "core/spec/model_spec.h"

namespace servesim {

class ResourceCatalog;
struct OpTable;
struct ProfileTables;

/// How a transferred cell is re-priced.
enum class TransferRule { kSameArchitecture, kOtherArchitecture };

/// kSameArchitecture when both GPUs state the same compute capability, else kOtherArchitecture.
TransferRule transfer_rule(const GpuSpec& from, const GpuSpec& to);
const char* transfer_rule_name(TransferRule r);

/// One cell's work at datasheet peak.
struct CellWork {
  double flops = 0;       ///< tensor-core FLOPs
  double bytes = 0;       ///< HBM bytes
  bool fp8 = false;       ///< FLOPs at the FP8 peak (the BF16 peak on GPUs without FP8 tensor cores)
  double link_bytes = 0;  ///< bytes through each GPU's intra-node link (collectives); > 0 selects the link rule
  /// Some work to re-price (false for ops the transfer does not know).
  bool any() const { return flops > 0 || bytes > 0 || link_bytes > 0; }
};

/// The work of cell `cell` (row-major index) of grid `grid` of `table`, by the table's op ("gemm",
/// "context_attention", "moe", "nccl", ...). `model` supplies the MLA module dimensions. False for an op it
/// does not know (the cell is then left as it is).
bool cell_work(const OpTable& table, std::size_t grid, std::size_t cell, const ModelSpec& model, CellWork& out);

/// Time (us) of `w` at `g`'s datasheet peak.
double peak_time_us(const CellWork& w, const GpuSpec& g);

/// `t_us` measured on `from` re-priced for `to` under `rule`.
double transfer_time_us(double t_us, const CellWork& w, const GpuSpec& from, const GpuSpec& to, TransferRule rule);

/// vLLM's FlashAttention on `to`: FlashAttention-3 ("vllm_flash_attn_fa3") on Hopper (compute capability 9.0),
/// FlashAttention-2 ("vllm_flash_attn") on Ampere and Ada (8.x). Other kernels, and other GPUs (Blackwell, where
/// vLLM picks another backend), keep `kernel`. A grid moved across architectures takes it, so that the decode work
/// model splits and groups a batch as the kernel the target runs (attention_model.h, set_split_rule).
std::string flash_attention_kernel_on(const std::string& kernel, const GpuSpec& to);

/// Re-prices every cell of `table` from `from` to `to` (values and their logs); across architectures a
/// FlashAttention grid takes the target's kernel (flash_attention_kernel_on).
void transfer_table(OpTable& table, const GpuSpec& from, const GpuSpec& to, TransferRule rule, const ModelSpec& model);

/// Re-prices every table of `t` from `from` to `to` and records the transfer in `t` (transferred_to, rule).
void transfer_tables(ProfileTables& t, const GpuSpec& from, const GpuSpec& to, const ModelSpec& model);

/// A bundled GPU's datasheet; false when it does not load.
bool catalog_gpu(const ResourceCatalog& catalog, const std::string& name, GpuSpec& out);

/// The GPU whose tables a GPU without tables is priced from: among `candidates` (catalog names, loaded with
/// their datasheets), those of the same compute capability when there are any, then the nearest in
/// |ln(BF16 peak ratio)| + |ln(HBM bandwidth ratio)|; the first listed on a tie. "" when none loads, and when
/// any candidate's datasheet does not: the nearest of some is a guess (in the browser a datasheet not fetched
/// yet is asked for and the call repeated, and a guess would fetch another GPU's tables meanwhile).
std::string nearest_table_gpu(const ResourceCatalog& catalog, const GpuSpec& to,
                              const std::vector<std::string>& candidates);

/// Every GPU of `candidates` in nearest_table_gpu's order (same compute capability first, then by distance,
/// listed order on a tie): where the GPU a role is priced from lacks a table, the next ones supply it. Empty when
/// any candidate's datasheet does not load (every one is still asked for); a datasheet without peak or bandwidth
/// is left out.
std::vector<std::string> table_gpus_by_distance(const ResourceCatalog& catalog, const GpuSpec& to,
                                                const std::vector<std::string>& candidates);

}  // namespace servesim
