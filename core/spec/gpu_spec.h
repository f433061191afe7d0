#pragma once
/// A GPU catalog entry (profiles/gpus/<name>.json): datasheet capacities, price and power.
#include <cstdint>
#include <string>

#include "core/spec/json_reader.h"

namespace servesim {

class ResourceCatalog;

/// The least datasheet figures a GPU may give (below any accelerator's: A10G's 70 BF16 TFLOPS, 0.6 TB/s, a 1.6 GB/s
/// NIC share). Smaller ones price a step past the simulated time a run can reach instead of meaning anything.
inline constexpr double kMinTflops = 1;     ///< bf16_tflops, fp8_tflops (fp8 may be 0: none)
inline constexpr double kMinHbmTbS = 0.01;  ///< hbm_tb_s
inline constexpr double kMinLinkGbS = 0.1;  ///< nvlink_gb_s, pcie_gb_s, inter_node_gb_s (each may be 0: none)

/// One accelerator type.
struct GpuSpec {
  std::string name;
  double memory_bytes = 0;     ///< device memory as the driver reports it
  double bf16_tflops = 0;      ///< dense BF16 tensor throughput
  double fp8_tflops = 0;       ///< dense FP8 tensor throughput (0 = no FP8 tensor cores)
  double hbm_tb_s = 0;         ///< memory bandwidth, TB/s
  double nvlink_gb_s = 0;      ///< intra-node GPU-GPU bandwidth per GPU, one direction (0 = none)
  double pcie_gb_s = 0;        ///< host link bandwidth
  double inter_node_gb_s = 0;  ///< network bandwidth per GPU (0 = none: a role that crosses nodes is refused)
  int gpus_per_node = 8;
  int sm_count = 0;
  double tdp_w = 0;
  double idle_w = 0;
  double usd_per_hour = 0;     ///< on-demand price per GPU-hour
  /// CUDA compute capability ("9.0" for every Hopper); GPUs that share it run the same kernels (table transfer
  /// keeps what is not roofline time, core/fidelity/table_transfer.h). "" = not stated.
  std::string compute_capability;
  /// A GPU with measured tables to price this one from (its tables moved to this datasheet); "" = this GPU's own
  /// tables, or for a GPU without any the nearest GPU with tables.
  std::string tables_from;
  /// Intra-node collective bandwidth: NVLink when present, else PCIe.
  double intra_node_gb_s() const { return nvlink_gb_s > 0 ? nvlink_gb_s : pcie_gb_s; }
};

/// Reads a GPU: a bundled name ("H100-SXM") or an inline object with the same fields.
void read_gpu(const Json& j, const std::string& path, const ResourceCatalog& catalog, GpuSpec& g, Errors& errors);

}  // namespace servesim
