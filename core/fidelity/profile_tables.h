#pragma once
/// Loading the measured tables that price a role (profiles/<gpu>/<backend>/, scripts/gen_tables.py): a GPU's own,
/// another GPU's moved to its datasheet (table_transfer.h) with the grids they lack supplemented from further GPUs,
/// and the datasheet efficiency curves for GPUs without any tables. Parsed tables are cached per process.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/fidelity/interpolation.h"
#include "core/fidelity/l2_warmth.h"
#include "core/fidelity/op_table.h"
#include "core/fidelity/table_transfer.h"
#include "core/spec/model_spec.h"

namespace servesim {

class ResourceCatalog;

/// Measured tables of one GPU and backend, loaded through the resource catalog.
struct ProfileTables {
  std::string gpu, backend;   ///< folder names ("H100-SXM", "vllm")
  std::string table_backend;  ///< backend whose tables were found ("vllm" for sglang)
  std::string backend_version;
  OpTable gemm, context_attention, generation_attention, moe, custom_allreduce, nccl;
  OpTable mla_context, mla_generation;  ///< MLA module tables (loaded for MLA models only)
  OpTable deepep_ll, deepep_normal;     ///< SGLang DeepEP all-to-all (sglang backend, MoE models; H100-SXM only)
  /// Sliding-window attention grids, key + window (loaded for models with sliding layers only).
  OpTable context_attention_window, generation_attention_window;
  /// Point-to-point send/recv between two GPUs by placement (intra_node, inter_node; bytes): profiles/<gpu>/p2p.json,
  /// Vidur's measurements. The GPU's own only: tables moved to another GPU leave it empty (its links differ), and
  /// pipeline hops fall back to the link roofline. Not part of tables(): nothing transfers or supplements it.
  OpTable p2p;
  std::string validation_json;  ///< profiles/<gpu>/<backend>/validation.json (measured errors), "" if none
  /// vLLM's all-reduce table measured on a GPU without vLLM's symmetric-memory all-reduce (compute capability below
  /// 9.0, as the A100): its dispatcher sends a message of the custom kernel's 8 MiB buffer or more to NCCL, so the
  /// table's cells from there on are NCCL's and the custom kernel's curve ends below them
  /// (CollectiveModel::set_tables, `split_at_buffer`). Kept when the tables move to another GPU (it describes them).
  bool custom_allreduce_nccl_at_buffer = false;
  /// profiles/<gpu>/l2_warmth.json: what decode attention adds read cold (l2_warmth.h); !ok() where not measured.
  /// The GPU's own only: transfer_tables clears it (the L2 and HBM are the source GPU's).
  L2Warmth l2;
  /// Set when these are `gpu`'s tables moved to another GPU's datasheet (table_transfer.h): that GPU's name.
  std::string transferred_to;
  TransferRule transfer_rule = TransferRule::kOtherArchitecture;  ///< how they were moved (when transferred_to is set)
  /// Set when the DeepEP tables are another GPU's moved to this one (the GPU has no SGLang DeepEP measurements).
  std::string deepep_from;
  /// Grids the moved tables lack (a weight format, a KV-cache format or head size, a window table) taken from the
  /// next nearest GPUs with tables, moved to the same datasheet (supplement_role_tables).
  struct Supplement {
    std::string from;                                      ///< the GPU whose grids were added
    TransferRule rule = TransferRule::kOtherArchitecture;  ///< the rule they were moved by
    std::vector<std::string> tables;                       ///< table names (table_names()) that received grids
  };
  std::vector<Supplement> supplements;
  bool any() const { return !gemm.empty() || !context_attention.empty() || !generation_attention.empty(); }
  /// Every table, in a fixed order (those not loaded are empty).
  std::array<OpTable*, 12> tables() { return table_list<OpTable>(*this); }
  std::array<const OpTable*, 12> tables() const { return table_list<const OpTable>(*this); }
  /// The file stem of each entry of tables(), in the same order ("gemm", "context_attention", ...).
  static const std::array<const char*, 12>& table_names();
  /// The table of that name, or nullptr.
  OpTable* table(const std::string& name);

 private:
  template <class T, class Self>
  static std::array<T*, 12> table_list(Self& s) {
    return {&s.gemm,          &s.context_attention,        &s.generation_attention,
            &s.moe,           &s.custom_allreduce,         &s.nccl,
            &s.mla_context,   &s.mla_generation,           &s.deepep_ll,
            &s.deepep_normal, &s.context_attention_window, &s.generation_attention_window};
  }
};

/// A parsed table as the simulator reads it: its glitch cells unmeasured (mask_glitch_cells), then GEMM grids given
/// their token reading on what is left (choose_token_readings). Every table the loader returns has been through it.
void read_as_priced(OpTable& t);

/// Loads what exists for `gpu`/`backend` (sglang falls back to the vllm tables, plus its own DeepEP tables for MoE
/// models); errors only for corrupt files.
bool load_profile_tables(const ResourceCatalog& catalog, const std::string& gpu, const std::string& backend,
                         const ModelSpec& model, ProfileTables& out, std::string& error);

/// The tables that price a role on `gpu`: its own; for a GPU without tables (or one naming `tables_from`) the tables of
/// the nearest GPU with them (nearest_table_gpu), moved to `gpu`'s datasheet (table_transfer.h). Empty when no GPU
/// has tables (datasheet curves). `deepep` (SGLang's --moe-a2a-backend deepep): a GPU whose tables have no DeepEP
/// measurements gets the nearest measured GPU's, moved likewise (deepep_from). Errors only for corrupt files.
bool load_role_tables(const ResourceCatalog& catalog, const GpuSpec& gpu, const std::string& backend,
                      const ModelSpec& model, bool deepep, ProfileTables& out, std::string& error);

/// For moved tables (`t.transferred_to` set) that lack some of `lacking` (table names a role needs but finds no
/// grid of, TableCostModel::tables_lacking): the grids of keys `t` does not have, from the first GPU after the one
/// they came from (table_gpus_by_distance) that has any, moved to `gpu`'s datasheet by that pair's rule; recorded
/// in `t.supplements`. False when nothing was added. Errors only for corrupt files.
bool supplement_role_tables(const ResourceCatalog& catalog, const GpuSpec& gpu, const std::string& backend,
                            const ModelSpec& model, const std::vector<std::string>& lacking,
                            std::vector<std::string>& tried, ProfileTables& t, std::string& error);
/// Datasheet efficiency curves (profiles/datasheet/efficiency.json): achieved share of the roofline per family
/// against log2 of a size feature, fitted on the GPUs with tables.
struct EfficiencyCurves {
  LogCurve gemm_bf16, gemm_fp8;        ///< x = tokens m; y = measured / roofline time
  LogCurve attn_prefill, attn_decode;  ///< x = tokens (prefill: b*isl; decode: b*kv_len)
  LogCurve moe;                        ///< x = tokens
  LogCurve all_reduce;                 ///< x = bytes
  /// Measured sliding-window prefill time over full-attention prefill time of the same uniform batch (vLLM,
  /// H100/H200 window-128 grids), x = prompt length / window; empty when the file lacks it.
  LogCurve attn_prefill_window;
  bool ok = false;
};

/// Reads profiles/datasheet/efficiency.json; false (and `out.ok` false) when it is absent or lacks a required curve
/// (the moe and window curves are optional).
bool load_efficiency_curves(const ResourceCatalog& catalog, EfficiencyCurves& out);

}  // namespace servesim
