#include "core/spec/gpu_spec.h"

#include "core/spec/resource_catalog.h"

namespace servesim {

namespace {

void read_gpu_fields(ObjectReader& r, GpuSpec& g) {
  r.ignore({"source", "notes", "price_source"});
  r.get_string("name", g.name, true, 64);
  r.get_number("memory_bytes", g.memory_bytes, 1e9, 1e13, true);
  r.get_number("bf16_tflops", g.bf16_tflops, 0, 1e5, true, true);
  r.get_number("fp8_tflops", g.fp8_tflops, 0, 1e5);
  r.get_number("hbm_tb_s", g.hbm_tb_s, 0, 1e3, true, true);
  r.get_number("nvlink_gb_s", g.nvlink_gb_s, 0, 1e5);
  r.get_number("pcie_gb_s", g.pcie_gb_s, 0, 1e4);
  r.get_number("inter_node_gb_s", g.inter_node_gb_s, 0, 1e5);
  r.get_int("gpus_per_node", g.gpus_per_node, 1, 1024);
  r.get_int("sm_count", g.sm_count, 0, 100000);
  r.get_number("tdp_w", g.tdp_w, 0, 1e5);
  r.get_number("idle_w", g.idle_w, 0, 1e5);
  r.get_number("usd_per_hour", g.usd_per_hour, 0, 1e4);
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
    read_gpu_fields(r, g);
    return;
  }
  ObjectReader r(j, path, errors);
  if (r.valid()) read_gpu_fields(r, g);
}

}  // namespace servesim
