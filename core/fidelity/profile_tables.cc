#include "core/fidelity/profile_tables.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/fidelity/collective_model.h"
#include "core/fidelity/gemm_model.h"
#include "core/spec/resource_catalog.h"

namespace servesim {

namespace {

// Parsed tables by (path, size, FNV-1a of the text): sessions of one process (sweeps, tests) parse each file once.
// The key covers the content, so a changed file is parsed again; a hit returns an identical copy.
std::mutex& table_cache_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, OpTable>& table_cache() {
  static std::map<std::string, OpTable> c;
  return c;
}

bool load_table(const ResourceCatalog& catalog, const std::string& folder, const std::string& file, OpTable& out,
                std::string& error) {
  auto text = catalog.load_text(folder, file);
  if (!text) return false;
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : *text) h = (h ^ ch) * 0x100000001b3ull;
  const std::string key = folder + "/" + file + ":" + std::to_string(text->size()) + ":" + std::to_string(h);
  {
    std::lock_guard<std::mutex> lock(table_cache_mutex());
    auto it = table_cache().find(key);
    if (it != table_cache().end()) {
      out = it->second;
      return true;
    }
  }
  const std::string err = parse_op_table(*text, out);
  if (!err.empty()) {
    error = "profiles/" + folder + "/" + file + ": " + err;
    out = OpTable();
    return false;
  }
  out.fingerprint = key;
  read_as_priced(out);
  std::lock_guard<std::mutex> lock(table_cache_mutex());
  table_cache().emplace(key, out);
  return true;
}

// The profiles folder a backend's kernel tables live in: SGLang runs the same kernel families as vLLM (FlashAttention,
// Triton fused MoE, cuBLAS GEMMs) and the data has no SGLang kernel tables, so its roles use vLLM's.
std::string tables_backend(const std::string& backend) { return backend == "sglang" ? "vllm" : backend; }

}  // namespace

void read_as_priced(OpTable& t) {
  mask_glitch_cells(t);  // before the token readings are chosen on what is left
  choose_token_readings(t);
}

const std::array<const char*, 12>& ProfileTables::table_names() {
  static const std::array<const char*, 12> names = {
      "gemm",          "context_attention",        "generation_attention",
      "moe",           "custom_allreduce",         "nccl",
      "mla_context",   "mla_generation",           "deepep_ll",
      "deepep_normal", "context_attention_window", "generation_attention_window"};
  return names;
}

OpTable* ProfileTables::table(const std::string& name) {
  const auto& names = table_names();
  auto all = tables();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (name == names[i]) return all[i];
  return nullptr;
}

bool load_profile_tables(const ResourceCatalog& catalog, const std::string& gpu, const std::string& backend,
                         const ModelSpec& model, ProfileTables& out, std::string& error) {
  out = ProfileTables();
  out.gpu = gpu;
  out.backend = backend;
  if (!is_safe_resource_name(gpu) || !is_safe_resource_name(backend)) return true;
  const std::string tb = tables_backend(backend);
  out.table_backend = tb;
  const std::string folder = gpu + "/" + tb;
  load_table(catalog, folder, "gemm.json", out.gemm, error);
  load_table(catalog, folder, "context_attention.json", out.context_attention, error);
  load_table(catalog, folder, "generation_attention.json", out.generation_attention, error);
  if (model.is_moe()) load_table(catalog, folder, "moe.json", out.moe, error);
  load_table(catalog, folder, "custom_allreduce.json", out.custom_allreduce, error);
  GpuSpec measured_on;
  if (tb == "vllm" && !out.custom_allreduce.empty() && catalog_gpu(catalog, gpu, measured_on))
    out.custom_allreduce_nccl_at_buffer = vllm_all_reduce_nccl_at_buffer(measured_on.compute_capability);
  if (model.has_sliding_window() && !model.is_mla()) {
    load_table(catalog, folder, "context_attention_window.json", out.context_attention_window, error);
    load_table(catalog, folder, "generation_attention_window.json", out.generation_attention_window, error);
  }
  if (model.is_mla()) {
    load_table(catalog, folder, "mla_context.json", out.mla_context, error);
    load_table(catalog, folder, "mla_generation.json", out.mla_generation, error);
  }
  load_table(catalog, gpu, "nccl.json", out.nccl, error);
  load_table(catalog, gpu, "p2p.json", out.p2p, error);
  if (auto v = catalog.load_text(gpu, "l2_warmth.json")) {
    const std::string err = parse_l2_warmth(*v, out.l2);
    if (!err.empty() && error.empty()) error = "profiles/" + gpu + "/l2_warmth.json: " + err;
  }
  // SGLang's one table family of its own: the DeepEP dispatch/combine of its EP MoE layers (H100-SXM).
  if (backend == "sglang" && model.is_moe()) {
    load_table(catalog, gpu + "/sglang", "deepep_ll.json", out.deepep_ll, error);
    load_table(catalog, gpu + "/sglang", "deepep_normal.json", out.deepep_normal, error);
  }
  if (!out.gemm.empty()) out.backend_version = out.gemm.backend_version;
  // The measured error: this profile's, or the datasheet path's leave-one-GPU-out error when there are no tables.
  const bool tables = out.any();
  if (auto v =
          tables ? catalog.load_text(folder, "validation.json") : catalog.load_text("datasheet", "validation.json")) {
    auto j = nlohmann::ordered_json::parse(*v, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("summary") && j["summary"].is_object()) {
      // SGLang roles with DeepEP tables: their held-out error joins the vLLM tables' (<gpu>/sglang/validation.json).
      auto& summary = j["summary"];
      if (tables && !out.deepep_ll.empty()) {
        if (auto sv = catalog.load_text(gpu + "/sglang", "validation.json")) {
          const auto sj = nlohmann::ordered_json::parse(*sv, nullptr, false);
          const char* k = "ops_heldout_ape_pct";
          if (!sj.is_discarded() && sj.is_object() && sj.contains("summary") && sj["summary"].is_object() &&
              sj["summary"].contains(k) && sj["summary"][k].is_object() && summary.contains(k) &&
              summary[k].is_object())
            for (const auto& [name, e] : sj["summary"][k].items()) summary[k][name] = e;
        }
      }
      out.validation_json = summary.dump();
    }
  }
  return error.empty();
}

namespace {

/// The datasheet path's measured error for a transfer rule (profiles/datasheet/validation.json, written by
/// scripts/validate_ops.py and validate_e2e.py --datasheet): {"report", "transfer", "transfer_ape_pct": {family:
/// {n, p50, p95}}, "e2e_median_abs_pct": {group: {n, ttft, tpot}}}; "" if absent.
std::string transfer_error_json(const ResourceCatalog& catalog, TransferRule rule) {
  auto v = catalog.load_text("datasheet", "validation.json");
  if (!v) return "";
  const auto j = nlohmann::ordered_json::parse(*v, nullptr, false);
  const char* name = transfer_rule_name(rule);
  if (j.is_discarded() || !j.is_object() || !j.contains("summary") || !j["summary"].is_object()) return "";
  const auto& s = j["summary"];
  if (!s.contains("transfer_ape_pct") || !s["transfer_ape_pct"].is_object() || !s["transfer_ape_pct"].contains(name))
    return "";
  nlohmann::ordered_json out;
  out["report"] = s.value("report", "docs/validation.md");
  out["transfer"] = name;
  out["transfer_ape_pct"] = s["transfer_ape_pct"][name];
  if (s.contains("e2e_median_abs_pct") && s["e2e_median_abs_pct"].is_object() && s["e2e_median_abs_pct"].contains(name))
    out["e2e_median_abs_pct"] = s["e2e_median_abs_pct"][name];
  return out.dump();
}

// Transferred tables by (source tables, both datasheets, MLA dimensions): the sessions of one process (sweeps,
// the page's runs) move each GPU's tables once. A few entries at most; the oldest goes first.
constexpr std::size_t kTransferCacheEntries = 8;
std::mutex& transfer_cache_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::pair<std::string, ProfileTables>>& transfer_cache() {
  static std::vector<std::pair<std::string, ProfileTables>> c;
  return c;
}

/// "" when a table was not loaded from a profile (no fingerprint): such tables are not cached.
std::string transfer_cache_key(const ProfileTables& t, const GpuSpec& from, const GpuSpec& to, const ModelSpec& m) {
  std::string k;
  for (const OpTable* table : t.tables()) {
    if (table->fingerprint.empty() && !table->empty()) return "";
    k += table->fingerprint + ";";
  }
  char buf[512];
  for (const GpuSpec* g : {&from, &to}) {
    std::snprintf(buf, sizeof buf, "%.17g|%.17g|%.17g|%.17g|%.17g|%s;", g->bf16_tflops, g->fp8_tflops, g->hbm_tb_s,
                  g->nvlink_gb_s, g->pcie_gb_s, g->compute_capability.c_str());
    k += g->name + "|" + buf;
  }
  std::snprintf(buf, sizeof buf, "%lld|%lld|%lld|%lld|%lld|%lld", static_cast<long long>(m.hidden_size),
                static_cast<long long>(m.q_lora_rank), static_cast<long long>(m.kv_lora_rank),
                static_cast<long long>(m.qk_rope_head_dim), static_cast<long long>(m.qk_nope_head_dim),
                static_cast<long long>(m.v_head_dim));
  return k + buf;
}

bool cached_transfer(const std::string& key, ProfileTables& out) {
  if (key.empty()) return false;
  std::lock_guard<std::mutex> lock(transfer_cache_mutex());
  for (const auto& [k, t] : transfer_cache())
    if (k == key) {
      out = t;
      return true;
    }
  return false;
}

void remember_transfer(const std::string& key, const ProfileTables& t) {
  if (key.empty()) return;
  std::lock_guard<std::mutex> lock(transfer_cache_mutex());
  auto& c = transfer_cache();
  if (c.size() >= kTransferCacheEntries) c.erase(c.begin());
  c.emplace_back(key, t);
}

/// GPU `from`'s tables for `backend` (vLLM's when it has none of that backend), moved from its datasheet `ref` to
/// `gpu`'s (once per process: the transfer cache). `out` stays empty when `from` has no tables loaded.
bool load_moved_tables(const ResourceCatalog& catalog, const std::string& from, const GpuSpec& ref, const GpuSpec& gpu,
                       const std::string& backend, const ModelSpec& model, ProfileTables& out, std::string& error) {
  if (!load_profile_tables(catalog, from, backend, model, out, error)) return false;
  if (!out.any() && !load_profile_tables(catalog, from, "vllm", model, out, error)) return false;
  out.p2p = OpTable();  // measured on `from`'s links, not `gpu`'s
  if (!out.any()) return true;
  const std::string key = transfer_cache_key(out, ref, gpu, model);
  if (!cached_transfer(key, out)) {
    transfer_tables(out, ref, gpu, model);
    remember_transfer(key, out);
  }
  return true;
}

/// This GPU's own tables; for a GPU without any (or naming tables_from) another GPU's, moved to its datasheet.
bool load_own_or_moved_tables(const ResourceCatalog& catalog, const GpuSpec& gpu, const std::string& backend,
                              const ModelSpec& model, ProfileTables& out, std::string& error) {
  if (gpu.tables_from.empty()) {
    if (!load_profile_tables(catalog, gpu.name, backend, model, out, error)) return false;
    // A GPU the index lists with tables keeps its own even while they are not loaded yet (in the browser a missing
    // file is fetched and the call repeated): nothing of another GPU is asked for.
    if (out.any() || catalog.gpu_has_tables(gpu.name)) return true;
  }
  std::string from = gpu.tables_from;
  const std::string table_backend = tables_backend(backend);
  if (from.empty()) {
    // The nearest GPU with this backend's tables; with none, the nearest with vLLM's (as SGLang roles use them).
    std::vector<std::string> candidates = catalog.gpus_with_table(table_backend + "/gemm");
    if (candidates.empty()) candidates = catalog.gpus_with_table("vllm/gemm");
    from = nearest_table_gpu(catalog, gpu, candidates);
  }
  GpuSpec ref;
  if (from.empty() || !catalog_gpu(catalog, from, ref)) return true;
  ProfileTables t;
  if (!load_moved_tables(catalog, from, ref, gpu, backend, model, t, error)) return false;
  if (!t.any()) return true;
  t.validation_json = transfer_error_json(catalog, transfer_rule(ref, gpu));
  out = std::move(t);
  return true;
}

/// SGLang MoE roles on a GPU whose tables have no DeepEP measurements (H200, and GPUs priced from them): the DeepEP
/// tables of the nearest GPU that has them, moved to this GPU's datasheet (they scale with the NVLink bandwidth).
bool borrow_deepep(const ResourceCatalog& catalog, const GpuSpec& gpu, const ModelSpec& model, ProfileTables& t,
                   std::string& error) {
  const std::string from = nearest_table_gpu(catalog, gpu, catalog.gpus_with_table("sglang/deepep_ll"));
  GpuSpec ref;
  if (from.empty() || !catalog_gpu(catalog, from, ref)) return true;
  OpTable ll, normal;
  if (!load_table(catalog, from + "/sglang", "deepep_ll.json", ll, error) ||
      !load_table(catalog, from + "/sglang", "deepep_normal.json", normal, error))
    return error.empty();
  const TransferRule rule = transfer_rule(ref, gpu);
  transfer_table(ll, ref, gpu, rule, model);
  transfer_table(normal, ref, gpu, rule, model);
  t.deepep_ll = std::move(ll);
  t.deepep_normal = std::move(normal);
  t.deepep_from = from;
  return true;
}

/// Adds to `dst` the grids of `src` whose key `dst` lacks; true if any. `dst` is a table the role found no grid in,
/// so where the two are laid out differently (A100's MLA tables are per kernel, H100's per module) `src` replaces it.
bool add_missing_grids(OpTable& dst, const OpTable& src) {
  if (src.empty()) return false;
  if (dst.empty() || dst.op != src.op || dst.key_fields != src.key_fields || dst.axis_fields != src.axis_fields) {
    dst = src;
    return true;
  }
  bool added = false;
  const std::size_t own = dst.grids.size();
  for (const OpGrid& g : src.grids) {
    bool have = false;
    for (std::size_t i = 0; i < own && !have; ++i) have = dst.grids[i].key == g.key;
    if (have) continue;
    dst.grids.push_back(g);
    added = true;
  }
  return added;
}

}  // namespace

bool supplement_role_tables(const ResourceCatalog& catalog, const GpuSpec& gpu, const std::string& backend,
                            const ModelSpec& model, const std::vector<std::string>& lacking,
                            std::vector<std::string>& tried, ProfileTables& t, std::string& error) {
  if (t.transferred_to.empty() || lacking.empty()) return false;
  const std::string table_backend = tables_backend(backend);
  const std::vector<std::string> candidates = catalog.gpus_with_any_table({table_backend + "/gemm", "vllm/gemm"});
  for (const std::string& from : table_gpus_by_distance(catalog, gpu, candidates)) {
    if (from == gpu.name || std::find(tried.begin(), tried.end(), from) != tried.end()) continue;
    tried.push_back(from);
    GpuSpec ref;
    if (!catalog_gpu(catalog, from, ref)) continue;
    ProfileTables s;
    if (!load_moved_tables(catalog, from, ref, gpu, backend, model, s, error)) return false;
    // Listed but not loaded yet (in the browser the files are fetched and the run repeated): stop here, so that
    // the repeat takes the same GPU's grids as a native run and nothing further is fetched.
    if (!s.any()) return false;
    ProfileTables::Supplement added;
    added.from = from;
    added.rule = s.transfer_rule;
    for (const std::string& name : lacking) {
      OpTable* dst = t.table(name);
      const OpTable* src = s.table(name);
      if (dst && src && add_missing_grids(*dst, *src)) added.tables.push_back(name);
    }
    if (added.tables.empty()) continue;
    t.supplements.push_back(std::move(added));
    return true;
  }
  return false;
}

bool load_role_tables(const ResourceCatalog& catalog, const GpuSpec& gpu, const std::string& backend,
                      const ModelSpec& model, bool deepep, ProfileTables& out, std::string& error) {
  if (!load_own_or_moved_tables(catalog, gpu, backend, model, out, error)) return false;
  if (deepep && backend == "sglang" && model.is_moe() && out.any() && out.deepep_ll.empty())
    return borrow_deepep(catalog, gpu, model, out, error);
  return true;
}

bool load_efficiency_curves(const ResourceCatalog& catalog, EfficiencyCurves& out) {
  out = EfficiencyCurves();
  auto text = catalog.load_text("datasheet", "efficiency.json");
  if (!text) return false;
  const auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("curves")) return false;
  auto curve = [&j](const char* name, LogCurve& c) {
    if (!j["curves"].contains(name)) return false;
    const auto& o = j["curves"][name];
    std::vector<double> x, y;
    for (const auto& v : o["x"]) x.push_back(v.get<double>());
    for (const auto& v : o["y"]) y.push_back(v.get<double>());
    if (x.size() != y.size() || x.empty()) return false;
    c = LogCurve(x, y);
    return true;
  };
  out.ok = curve("gemm_bfloat16", out.gemm_bf16) && curve("gemm_fp8", out.gemm_fp8) &&
           curve("context_attention", out.attn_prefill) && curve("generation_attention", out.attn_decode) &&
           curve("all_reduce", out.all_reduce);
  curve("moe", out.moe);
  curve("context_attention_window", out.attn_prefill_window);
  return out.ok;
}

}  // namespace servesim
