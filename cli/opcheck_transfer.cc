// servesim_opcheck --transfer: the datasheet path's table transfer (core/fidelity/table_transfer.h) validated on
// GPUs that do have tables. One GPU's tables are moved to another's datasheet and compared, cell by cell, with the
// other GPU's own measurements wherever both measured the same shape. Prints one JSON document: each pair's
// errors and, per transfer rule, the errors of all its pairs pooled; scripts/validate_ops.py runs it for every
// ordered pair of GPUs with tables.
//
//   servesim_opcheck --transfer PROFILES_DIR BACKEND:FROM:TO [BACKEND:FROM:TO ...]
#include "cli/opcheck_transfer.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/ape_stats.h"
#include "core/fidelity/op_table.h"
#include "core/fidelity/table_transfer.h"
#include "core/spec/gpu_spec.h"
#include "core/spec/model_spec.h"
#include "core/spec/resource_catalog.h"

using namespace servesim;
using OJson = nlohmann::ordered_json;

namespace {

/// A table as measured, every cell kept: the transfer is checked cell by cell, the moved cell against the target's
/// own, so a glitch cell (which the simulator's loader reads as unmeasured) is compared as it stands.
bool load(const ResourceCatalog& catalog, const std::string& folder, const std::string& file, OpTable& t) {
  auto text = catalog.load_text(folder, file);
  if (!text) return false;
  const std::string err = parse_op_table(*text, t);
  if (!err.empty()) std::cerr << folder << "/" << file << ": " << err << "\n";
  return err.empty();
}

/// Index of `x` on `axis`, or -1.
long find_axis(const std::vector<double>& axis, double x) {
  auto it = std::lower_bound(axis.begin(), axis.end(), x);
  return it != axis.end() && *it == x ? static_cast<long>(it - axis.begin()) : -1;
}

/// Compares `moved` (the reference's table after the transfer) and `ref` (before) with `truth` on common cells.
void compare(const OpTable& moved, const OpTable& ref, const OpTable& truth, ApeStats& transfer, ApeStats& unscaled) {
  for (const OpGrid& g : truth.grids) {
    const OpGrid* m = moved.find(g.key);
    const OpGrid* r = ref.find(g.key);
    if (!m || !r) continue;
    for (std::size_t c = 0; c < g.values.size(); ++c) {
      if (!(g.values[c] > 0)) continue;
      std::size_t at = 0;
      bool found = true;
      for (std::size_t a = 0; a < g.axes.size() && found; ++a) {
        const long i = find_axis(m->axes[a], g.axes[a][(c / g.strides[a]) % g.axes[a].size()]);
        found = i >= 0;
        if (found) at += static_cast<std::size_t>(i) * m->strides[a];
      }
      if (!found || !(m->values[at] > 0)) continue;
      transfer.add(m->values[at], g.values[c]);
      unscaled.add(r->values[at], g.values[c]);
    }
  }
}

/// One ordered pair: its errors per family, also added to `pooled` (family -> transfer, unscaled).
OJson check_pair(const ResourceCatalog& catalog, const std::string& backend, const std::string& from,
                 const std::string& to, const ModelSpec& deepseek,
                 std::map<std::string, std::pair<ApeStats, ApeStats>>& pooled, TransferRule& rule, bool& ok) {
  GpuSpec gf, gt;
  Errors errors;
  read_gpu(Json(from), "from", catalog, gf, errors);
  read_gpu(Json(to), "to", catalog, gt, errors);
  ok = errors.ok();
  if (!ok) {
    std::cerr << errors.joined();
    return {};
  }
  rule = transfer_rule(gf, gt);
  const std::vector<std::pair<const char*, const char*>> files = {
      {"gemm", "gemm.json"},
      {"attention_prefill", "context_attention.json"},
      {"attention_decode", "generation_attention.json"},
      {"attention_prefill_window", "context_attention_window.json"},
      {"attention_decode_window", "generation_attention_window.json"},
      {"mla_prefill", "mla_context.json"},
      {"mla_decode", "mla_generation.json"},
      {"moe", "moe.json"},
      {"custom_allreduce", "custom_allreduce.json"},
      {"nccl", "nccl.json"},
  };
  OJson fam = OJson::object();
  for (const auto& [name, file] : files) {
    const bool per_gpu = std::string(name) == "nccl";  // <gpu>/nccl.json, not per backend
    OpTable ref, truth;
    if (!load(catalog, per_gpu ? from : from + "/" + backend, file, ref) ||
        !load(catalog, per_gpu ? to : to + "/" + backend, file, truth))
      continue;
    OpTable moved = ref;
    transfer_table(moved, gf, gt, rule, deepseek);
    ApeStats transfer, unscaled;
    compare(moved, ref, truth, transfer, unscaled);
    if (transfer.e.empty()) continue;
    fam[name] = OJson{{"transfer", transfer.json()}, {"unscaled", unscaled.json()}};
    auto& p = pooled[name];
    p.first.add_all(transfer);
    p.second.add_all(unscaled);
  }
  return OJson{{"backend", backend}, {"from", from}, {"to", to}, {"rule", transfer_rule_name(rule)}, {"families", fam}};
}

}  // namespace

int transfer_check_main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: servesim_opcheck --transfer PROFILES_DIR BACKEND:FROM:TO [BACKEND:FROM:TO ...]\n";
    return 2;
  }
  ResourceCatalog catalog(directory_loader(argv[2]));
  ModelSpec deepseek;  // the MLA module tables measure one DeepSeek-V3 attention layer
  Errors errors;
  read_model(Json("DeepSeek-V3"), "model", catalog, deepseek, errors);
  if (!errors.ok()) {
    std::cerr << errors.joined();
    return 1;
  }
  OJson pairs = OJson::array();
  std::map<std::string, std::map<std::string, std::pair<ApeStats, ApeStats>>> pooled;  // rule -> family -> errors
  for (int i = 3; i < argc; ++i) {
    const std::string spec = argv[i];
    const auto a = spec.find(':'), b = spec.rfind(':');
    if (a == std::string::npos || a == b) {
      std::cerr << "not BACKEND:FROM:TO: " << spec << "\n";
      return 2;
    }
    std::map<std::string, std::pair<ApeStats, ApeStats>> one;
    TransferRule rule = TransferRule::kOtherArchitecture;
    bool ok = false;
    OJson pair = check_pair(catalog, spec.substr(0, a), spec.substr(a + 1, b - a - 1), spec.substr(b + 1), deepseek,
                            one, rule, ok);
    if (!ok) return 1;
    pairs.push_back(pair);
    auto& into = pooled[transfer_rule_name(rule)];
    for (auto& [fam, e] : one) {
      into[fam].first.add_all(e.first);
      into[fam].second.add_all(e.second);
    }
  }
  OJson by_rule = OJson::object();
  for (const auto& [rule, fams] : pooled)
    for (const auto& [fam, e] : fams)
      by_rule[rule][fam] = OJson{{"transfer", e.first.json()}, {"unscaled", e.second.json()}};
  OJson out;
  out["pairs"] = pairs;
  out["pooled"] = by_rule;
  std::cout << out.dump(1) << "\n";
  return 0;
}
