// TableCostModel's fidelity reporting: what priced each family and from which tables (table_cost_model.h).
#include "core/fidelity/table_cost_model.h"

#include <string>
#include <vector>

namespace servesim {

// --------------------------------------------------------------------------------------------- reporting

std::vector<std::string> TableCostModel::tables_lacking() const {
  std::vector<std::string> out;
  auto lacks = [this](OpFamily f) { return source_[static_cast<int>(f)] != PriceSource::kTable; };
  if (lacks(OpFamily::kGemm) || lacks(OpFamily::kLmHead)) out.push_back("gemm");
  if (lacks(OpFamily::kAttentionPrefill)) out.push_back(m_.is_mla() ? "mla_context" : "context_attention");
  if (lacks(OpFamily::kAttentionDecode)) out.push_back(m_.is_mla() ? "mla_generation" : "generation_attention");
  if (m_.is_moe() && lacks(OpFamily::kMoe)) out.push_back("moe");
  if (p_.tp_attn > 1 && lacks(OpFamily::kAllReduce)) out.push_back("nccl");
  if (sliding_layers_ > 0 && !(prefill_win_.ok() && decode_win_.ok())) {
    out.push_back("context_attention_window");
    out.push_back("generation_attention_window");
  }
  return out;
}

std::string TableCostModel::describe() const {
  const bool tables = t_.any();
  std::string d;
  if (tables) {
    d = "measured tables " + t_.gpu + "/" + t_.table_backend + " (" + t_.table_backend + " " + t_.backend_version +
        ", AIConfigurator)";
    if (t_.table_backend != e_.backend) d += " for backend " + e_.backend;
    if (!t_.transferred_to.empty())
      d = "datasheet-derived: " + d + " moved to the " + t_.transferred_to + " datasheet (" +
          (t_.transfer_rule == TransferRule::kSameArchitecture
               ? "same architecture: each cell's roofline time re-priced, the rest kept"
               : "other architecture: each cell scaled by the ratio of the rooflines") +
          ")";
  } else {
    d = curves_.ok ? "datasheet-derived: " + g_.name + " roofline corrected by efficiency curves fitted on H100/H200/A100"
                   : "roofline from the " + g_.name + " datasheet";
  }
  std::string rest;
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f) {
    const auto fam = static_cast<OpFamily>(f);
    if (fam == OpFamily::kOverhead || (fam == OpFamily::kMoe && !m_.is_moe()) || fam == OpFamily::kAfTransfer ||
        (fam == OpFamily::kAllToAll && (!m_.is_moe() || p_.ep_ffn <= 1)))
      continue;
    if (source_[f] != PriceSource::kTable && tables) rest += std::string(rest.empty() ? "" : ", ") + op_family_name(fam);
  }
  if (mla_prefill_.ok() || mla_decode_.ok()) {
    // Name the MLA source: module tables (kernels joined) minus the capped GEMM-table projections, or kernel tables.
    // A context grid split at vLLM's decode-path threshold names each kernel with its prompt lengths.
    auto name = [](const MlaModuleGrid& g) {
      const std::string kernels =
          g.decode_path.ok() ? g.short_kernel + " (prompts <= " + key_int(g.decode_path.max_query) + " tokens) + " +
                                   g.long_kernel
                             : g.kernels;
      return "[" + kernels + " " + g.kv_dtype + " kv, " + (g.module ? g.gemm_type + ", " : "") + key_int(g.heads) +
             " heads]";
    };
    const bool module = (mla_prefill_.ok() && mla_prefill_.module) || (mla_decode_.ok() && mla_decode_.module);
    d += module ? "; MLA attention from module tables" : "; MLA attention from kernel tables";
    if (mla_prefill_.ok()) d += " mla_context" + name(mla_prefill_);
    if (mla_decode_.ok()) d += " mla_generation" + name(mla_decode_);
    d += module ? " minus GEMM-table projections (capped by the modules)" : ", projections from the GEMM table";
  }
  if (m_.is_moe() && part_ != CostPart::kAttention && source_[static_cast<int>(OpFamily::kMoe)] == PriceSource::kTable)
    d += "; MoE experts from the " + moe_distribution_ + " routing curve, scaled per step by the slowest EP rank of " +
         "its sampled routing";
  if (use_deepep_)
    d += "; EP all-to-all from SGLang DeepEP tables " + (t_.deepep_from.empty() ? t_.gpu : t_.deepep_from) + "/sglang" +
         (t_.deepep_from.empty() ? "" : " moved to the " + g_.name + " datasheet") + " (" +
         t_.deepep_normal.backend_version + ", normal mode [" + deepep_normal_.describe() +
         "] with prefill tokens, low-latency [" + deepep_ll_.describe() + "] without)";
  if (!p2p_hop_.empty())
    d += std::string("; pipeline hops (hidden states and residual, ") +
         (hop_.split_over_tp && p_.tp_attn > 1 ? "1/tp per rank, all-gathered" : "whole") +
         ") from NCCL send/recv measured " + (hop_intra_node_ ? "within one " : "across two ") + t_.gpu +
         (hop_intra_node_ ? " node" : " nodes") + " (" + t_.p2p.source_file + ", Vidur)";
  if (t_.l2.ok() && (decode_.ok() || decode_win_.ok()))
    d += "; decode attention plus its K and V read from HBM where the tables read them from L2 (profiles/" + t_.gpu +
         "/l2_warmth.json, measured by servesim)";
  if (sliding_layers_ > 0)
    d += std::string("; sliding-window layers (window ") + key_int(m_.sliding_window) + ") from " +
         (prefill_win_.ok() && decode_win_.ok() ? "the window tables" : "the full-attention tables on the window's keys");
  if (formats_.from_checkpoint)
    d += std::string("; checkpoint weights: attention ") + weight_format_name(formats_.attention) + ", experts " +
         weight_format_name(formats_.experts) + (moe_dtype_.empty() ? "" : " (moe grid " + moe_dtype_ + ")");
  for (const ProfileTables::Supplement& sup : t_.supplements) {
    std::string names;
    for (const std::string& n : sup.tables) names += (names.empty() ? "" : ", ") + n;
    d += "; " + names + " grids the " + t_.gpu + " tables lack from " + sup.from + " (" + transfer_rule_name(sup.rule) +
         ")";
  }
  if (!rest.empty()) d += "; not in the tables: " + rest;
  d += "; cpu overhead calibrated (" + e_.backend + ")";
  return d;
}

FidelityReport TableCostModel::report() const {
  FidelityReport r;
  bool table = false, datasheet = false;
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f) {
    table = table || source_[f] == PriceSource::kTable;
    datasheet = datasheet || source_[f] == PriceSource::kDatasheet;
  }
  r.kind = table ? "table" : (datasheet ? "datasheet-derived" : "roofline");
  if (table) {
    r.profile = t_.gpu + "/" + t_.table_backend;
    r.profile_version = t_.backend_version;
    if (!t_.transferred_to.empty()) {
      r.kind = "datasheet-derived";
      r.transferred_to = t_.transferred_to;
      r.transfer = transfer_rule_name(t_.transfer_rule);
      for (const ProfileTables::Supplement& sup : t_.supplements)
        r.supplements.push_back({sup.from, transfer_rule_name(sup.rule), sup.tables});
    }
  } else if (datasheet) {
    r.profile = "datasheet";
  }
  r.measured_error_json = t_.validation_json;
  r.host.known = true;
  const EngineOptions::Host& o = e_.host;
  const bool overridden = o.iteration_us >= 0 || o.per_request_us >= 0 || o.per_token_us >= 0 || o.launch_us >= 0;
  r.host.source = overridden ? "engine.host" : "calibrated (" + e_.backend + ")";
  r.host.iteration_us = k_.cpu_iteration_us;
  r.host.per_request_us = k_.cpu_per_request_us;
  r.host.per_token_us = k_.cpu_per_token_us;
  r.host.launch_us = k_.launch_us;
  r.host.hidden_under_gpu = async_host_;
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f) {
    if (lookups_[f] == 0) continue;
    r.families.push_back(op_family_name(static_cast<OpFamily>(f)));
    r.lookups.push_back(lookups_[f]);
    r.extrapolated.push_back(extrapolated_[f]);
  }
  return r;
}

}  // namespace servesim
