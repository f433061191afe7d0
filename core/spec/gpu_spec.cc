#include "core/spec/gpu_spec.h"

#include <algorithm>

#include "core/spec/resource_catalog.h"

namespace servesim {

namespace {

/// True when "major.minor" (1-2 digits each).
bool is_compute_capability(const std::string& s) {
  const auto dot = s.find('.');
  if (dot == std::string::npos || dot == 0 || dot > 2 || s.size() - dot - 1 < 1 || s.size() - dot - 1 > 2) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (i != dot && (s[i] < '0' || s[i] > '9')) return false;
  return true;
}

void read_gpu_fields(ObjectReader& r, GpuSpec& g, const ResourceCatalog& catalog) {
  r.ignore({"source", "notes", "price_source"});
  r.get_string("name", g.name, true, 64);
  r.get_number("memory_bytes", g.memory_bytes, 1e9, 1e13, true);
  // Floors far below any accelerator's datasheet: smaller throughputs only make simulated time overflow.
  r.get_number("bf16_tflops", g.bf16_tflops, kMinTflops, 1e5, true);
  r.get_number_or_zero("fp8_tflops", g.fp8_tflops, kMinTflops, 1e5);
  r.get_number("hbm_tb_s", g.hbm_tb_s, kMinHbmTbS, 1e3, true);
  r.get_number_or_zero("nvlink_gb_s", g.nvlink_gb_s, kMinLinkGbS, 1e5);
  r.get_number_or_zero("pcie_gb_s", g.pcie_gb_s, kMinLinkGbS, 1e4);
  r.get_number_or_zero("inter_node_gb_s", g.inter_node_gb_s, kMinLinkGbS, 1e5);
  r.get_int("gpus_per_node", g.gpus_per_node, 1, 1024);
  r.get_int("sm_count", g.sm_count, 0, 100000);
  r.get_number("tdp_w", g.tdp_w, 0, 1e5);
  r.get_number("idle_w", g.idle_w, 0, 1e5);
  r.get_number("usd_per_hour", g.usd_per_hour, 0, 1e4);
  if (r.get_string("compute_capability", g.compute_capability, false, 8) && !is_compute_capability(g.compute_capability))
    r.errors().add(r.path("compute_capability"), "must be \"major.minor\" as CUDA reports it, e.g. \"9.0\"; got \"" +
                                                     g.compute_capability + "\"");
  if (r.get_string("tables_from", g.tables_from, false, 64)) {
    // The GPUs other GPUs can be priced from: those with kernel tables (GEMM is in every backend's set).
    const std::vector<std::string> with = catalog.gpus_with_any_table({"vllm/gemm", "trtllm/gemm"});
    if (std::find(with.begin(), with.end(), g.tables_from) == with.end()) {
      std::string names;
      for (const std::string& n : with) names += (names.empty() ? "" : ", ") + n;
      r.errors().add(r.path("tables_from"),
                     "\"" + g.tables_from + "\" has no measured tables; GPUs with tables: " + names);
    }
  }
  if (g.nvlink_gb_s <= 0 && g.pcie_gb_s <= 0 && r.valid())
    r.errors().add(r.path("pcie_gb_s"), "is required when nvlink_gb_s is 0 (GPUs need some link)");
}

}  // namespace

void read_gpu(const Json& j, const std::string& path, const ResourceCatalog& catalog, GpuSpec& g, Errors& errors) {
  if (j.is_string()) {
    const std::string name = j.get<std::string>();
    Json doc;
    if (!catalog.load_json("gpus", name, doc)) {
      errors.add(path, "unknown GPU \"" + (name.size() > 64 ? name.substr(0, 64) : name) +
                           "\"; catalog: " + catalog.list_joined("gpus") + " (or give an object with datasheet fields)");
      return;
    }
    ObjectReader r(doc, path, errors);
    read_gpu_fields(r, g, catalog);
    return;
  }
  ObjectReader r(j, path, errors);
  if (r.valid()) read_gpu_fields(r, g, catalog);
}

}  // namespace servesim
