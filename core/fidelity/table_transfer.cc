#include "core/fidelity/table_transfer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/fidelity/interpolation.h"
#include "core/fidelity/op_table.h"
#include "core/fidelity/table_cost_model.h"
#include "core/sim/det_math.h"
#include "core/spec/resource_catalog.h"

namespace servesim {

TransferRule transfer_rule(const GpuSpec& from, const GpuSpec& to) {
  return !from.compute_capability.empty() && from.compute_capability == to.compute_capability
             ? TransferRule::kSameArchitecture
             : TransferRule::kOtherArchitecture;
}

const char* transfer_rule_name(TransferRule r) {
  return r == TransferRule::kSameArchitecture ? "same architecture" : "other architecture";
}

namespace {

/// Bytes per element of a table's dtype text.
double dtype_bytes_of(const std::string& dt) {
  if (dt == "fp8" || dt == "fp8_block" || dt == "int8") return 1.0;
  if (dt == "int4_wo") return 0.5;
  if (dt == "w4a16_mxfp4") return 4.25 / 8.0;  // 4-bit values plus one 8-bit scale per 32
  return 2.0;                                  // bfloat16, float16, half
}

bool is_fp8(const std::string& dt) { return dt == "fp8" || dt == "fp8_block"; }

/// The value of key field `name` as a number (0 when absent or not numeric).
double key_num(const OpTable& t, const OpGrid& g, const char* name) {
  for (std::size_t i = 0; i < t.key_fields.size(); ++i)
    if (t.key_fields[i] == name) return std::atof(g.key[i].c_str());
  return 0;
}

const std::string& key_text(const OpTable& t, const OpGrid& g, const char* name) {
  static const std::string none;
  for (std::size_t i = 0; i < t.key_fields.size(); ++i)
    if (t.key_fields[i] == name) return g.key[i];
  return none;
}

bool has_key(const OpTable& t, const char* name) {
  return std::find(t.key_fields.begin(), t.key_fields.end(), name) != t.key_fields.end();
}

/// Causal (query, key) pairs of one prompt of `s` tokens whose queries see at most `window` keys (0 = all).
double causal_pairs(double s, double window) {
  if (window > 0 && s > window) return window * (window + 1) / 2 + (s - window) * window;
  return s * (s + 1) / 2;
}

enum class OpKind { kUnknown, kGemm, kContext, kGeneration, kMlaContext, kMlaGeneration, kMoe, kCollective, kDeepEp };

/// What every cell of one grid shares: the op and its key fields as numbers, parsed once per grid.
struct GridKey {
  OpKind kind = OpKind::kUnknown;
  double d = 0, h = 0, kvh = 0, window = 0, kv_bytes = 2;  // attention, MLA (h)
  double H = 0, I = 0, topk = 0, E = 0, tp = 1, ep = 1;    // MoE (H, topk also DeepEP)
  double weight_bytes = 2, gpus = 2, link_factor = 0;      // GEMM / MoE weights; collectives
  bool fp8 = false, module = false;                        // MLA: module tables carry the projections
  double mla_weights = 0, mla_hidden = 0, qk = 0, v = 0, latent = 0, rope = 0;
};

GridKey parse_key(const OpTable& t, const OpGrid& g, const ModelSpec& m) {
  GridKey k;
  const std::string& op = t.op;
  k.kind = op == "gemm"                                                          ? OpKind::kGemm
           : op == "context_attention" || op == "context_attention_window"       ? OpKind::kContext
           : op == "generation_attention" || op == "generation_attention_window" ? OpKind::kGeneration
           : op == "mla_context"                                                 ? OpKind::kMlaContext
           : op == "mla_generation"                                              ? OpKind::kMlaGeneration
           : op == "moe"                                                         ? OpKind::kMoe
           : op == "custom_allreduce" || op == "nccl"                            ? OpKind::kCollective
           : op == "deepep_ll" || op == "deepep_normal"                          ? OpKind::kDeepEp
                                                                                 : OpKind::kUnknown;
  k.d = key_num(t, g, "head_dim");
  k.h = key_num(t, g, "num_heads");
  k.kvh = key_num(t, g, "num_kv_heads");
  k.window = key_num(t, g, "window");
  k.kv_bytes = dtype_bytes_of(key_text(t, g, "kv_cache_dtype"));
  k.H = key_num(t, g, "hidden");
  k.I = key_num(t, g, "inter");
  k.topk = key_num(t, g, "topk");
  k.E = key_num(t, g, "experts");
  k.tp = std::max(1.0, key_num(t, g, "tp"));
  k.ep = std::max(1.0, key_num(t, g, "ep"));
  const std::string& dt = key_text(t, g, "dtype");
  k.weight_bytes = dtype_bytes_of(dt);
  k.fp8 = is_fp8(dt);
  if (k.kind == OpKind::kCollective) {
    k.gpus = std::max(2.0, key_num(t, g, "gpus"));
    const std::string& coll = key_text(t, g, "op");
    k.link_factor = (coll.empty() || coll == "all_reduce" ? 2.0 : 1.0) * (k.gpus - 1) / k.gpus *
                    (dt.empty() ? 2.0 : k.weight_bytes);
  }
  if (k.kind == OpKind::kMlaContext || k.kind == OpKind::kMlaGeneration) {
    const double H = static_cast<double>(m.hidden_size), qr = static_cast<double>(m.q_lora_rank);
    const double nope = static_cast<double>(m.qk_nope_head_dim);
    k.latent = static_cast<double>(m.kv_lora_rank);
    k.rope = static_cast<double>(m.qk_rope_head_dim);
    k.qk = nope + k.rope;
    k.v = static_cast<double>(m.v_head_dim);
    k.mla_hidden = H;
    k.module = has_key(t, "gemm_type");
    // q_a, kv_a (with rope), q_b, kv_b and o projections of the module.
    k.mla_weights = H * qr + H * (k.latent + k.rope) + qr * k.h * k.qk + k.latent * k.h * (nope + k.v) + k.h * k.v * H;
    const std::string& gt = key_text(t, g, "gemm_type");
    k.weight_bytes = dtype_bytes_of(gt);
    k.fp8 = k.module && is_fp8(gt);
  }
  return k;
}

/// The work of the cell at axis values `x` of a grid with key `k`.
void work_of(const GridKey& k, const double* x, CellWork& w) {
  w = CellWork();
  switch (k.kind) {
    case OpKind::kGemm: {
      const double n = x[0], kk = x[1], m = x[2];
      w.flops = 2 * m * n * kk;
      w.bytes = n * kk * k.weight_bytes + m * kk * (k.fp8 ? 1.0 : 2.0) + m * n * 2;
      w.fp8 = k.fp8;
      break;
    }
    case OpKind::kContext: {
      const double b = x[0], s = x[1];
      w.flops = 4 * k.h * k.d * b * causal_pairs(s, k.window);
      w.bytes = b * s * (2 * k.kvh * k.d * k.kv_bytes + 2 * k.h * k.d * 2);
      break;
    }
    case OpKind::kGeneration: {
      const double b = x[0], keys = k.window > 0 ? std::min(x[1], k.window) : x[1];
      w.flops = 4 * k.h * k.d * b * keys;
      w.bytes = b * keys * 2 * k.kvh * k.d * k.kv_bytes + b * k.h * k.d * 2 * 2;
      break;
    }
    case OpKind::kMlaContext:
    case OpKind::kMlaGeneration: {
      const bool decode = k.kind == OpKind::kMlaGeneration;
      const double b = x[0], s = x[1], tokens = decode ? b : b * s;
      // Decode with absorbed projections: multi-query attention over the latent (kv_lora_rank + rope) of every
      // cached token; prefill: attention over the decompressed heads.
      w.flops =
          decode ? 2 * k.h * (k.latent + k.rope + k.latent) * b * s : 2 * k.h * (k.qk + k.v) * b * causal_pairs(s, 0);
      w.bytes = b * s * (k.latent + k.rope) * k.kv_bytes;
      if (k.module) {
        w.flops += 2 * tokens * k.mla_weights;
        w.bytes += k.mla_weights * k.weight_bytes + tokens * k.mla_hidden * 2 * 2;
        w.fp8 = k.fp8;
      }
      break;
    }
    case OpKind::kMoe: {
      if (k.E <= 0 || k.topk <= 0) break;
      const double tokens = x[0], rows = tokens * k.topk / k.ep, inter = k.I / k.tp;
      const double touched = k.E / k.ep * (1.0 - det_pow(1.0 - 1.0 / k.E, tokens * k.topk));
      w.flops = 2 * rows * 3 * k.H * inter;
      w.bytes = touched * 3 * k.H * inter * k.weight_bytes + rows * (k.H + inter) * 2 * 2;
      w.fp8 = k.fp8;
      break;
    }
    case OpKind::kCollective:
      w.link_bytes = k.link_factor * x[0];
      break;
    case OpKind::kDeepEp:
      w.link_bytes = x[0] * k.topk * k.H * 2;
      break;
    case OpKind::kUnknown:
      break;
  }
}

/// Axis values of one cell (at most three axes in any table).
constexpr std::size_t kMaxAxes = 4;
void cell_axes(const OpGrid& g, std::size_t cell, double* x) {
  for (std::size_t a = 0; a < g.axes.size() && a < kMaxAxes; ++a)
    x[a] = g.axes[a][(cell / g.strides[a]) % g.axes[a].size()];
}

}  // namespace

bool cell_work(const OpTable& t, std::size_t grid, std::size_t cell, const ModelSpec& model, CellWork& w) {
  const OpGrid& g = t.grids[grid];
  double x[kMaxAxes] = {};
  cell_axes(g, cell, x);
  work_of(parse_key(t, g, model), x, w);
  return w.any();
}

double peak_time_us(const CellWork& w, const GpuSpec& g) {
  const double peak = (w.fp8 && g.fp8_tflops > 0 ? g.fp8_tflops : g.bf16_tflops) * 1e12;
  return std::max(w.flops / peak, w.bytes / (g.hbm_tb_s * 1e12)) * 1e6;
}

double transfer_time_us(double t_us, const CellWork& w, const GpuSpec& from, const GpuSpec& to, TransferRule rule) {
  if (w.link_bytes > 0) return t_us * from.intra_node_gb_s() / to.intra_node_gb_s();
  const double rf = peak_time_us(w, from), rt = peak_time_us(w, to);
  if (!(rf > 0)) return t_us;
  if (rule == TransferRule::kSameArchitecture && t_us > rf) return t_us - rf + rt;
  return t_us * rt / rf;
}

std::string flash_attention_kernel_on(const std::string& kernel, const GpuSpec& to) {
  if (kernel != "vllm_flash_attn" && kernel != "vllm_flash_attn_fa3") return kernel;
  if (to.compute_capability == "9.0") return "vllm_flash_attn_fa3";
  if (to.compute_capability.size() > 1 && to.compute_capability[0] == '8' && to.compute_capability[1] == '.')
    return "vllm_flash_attn";
  return kernel;
}

void transfer_table(OpTable& table, const GpuSpec& from, const GpuSpec& to, TransferRule rule, const ModelSpec& model) {
  for (OpGrid& g : table.grids) {
    if (rule == TransferRule::kOtherArchitecture) g.kernel = flash_attention_kernel_on(g.kernel, to);
    const GridKey key = parse_key(table, g, model);
    if (key.kind == OpKind::kUnknown || g.axes.size() > kMaxAxes) continue;
    double x[kMaxAxes] = {};
    CellWork w;
    for (std::size_t c = 0; c < g.values.size(); ++c) {
      if (!(g.values[c] > 0)) continue;  // NaN: not measured
      cell_axes(g, c, x);
      work_of(key, x, w);
      if (!w.any()) continue;
      g.values[c] = transfer_time_us(g.values[c], w, from, to, rule);
      g.log_values[c] = interp_log(g.values[c]);
    }
  }
}

void transfer_tables(ProfileTables& t, const GpuSpec& from, const GpuSpec& to, const ModelSpec& model) {
  const TransferRule rule = transfer_rule(from, to);
  for (OpTable* table : t.tables()) transfer_table(*table, from, to, rule, model);
  t.transferred_to = to.name;
  t.transfer_rule = rule;
  t.l2 = L2Warmth();  // `from`'s L2 and HBM, not `to`'s
}

bool catalog_gpu(const ResourceCatalog& catalog, const std::string& name, GpuSpec& out) {
  Errors errors;
  read_gpu(Json(name), "", catalog, out, errors);
  return errors.ok();
}

std::vector<std::string> table_gpus_by_distance(const ResourceCatalog& catalog, const GpuSpec& to,
                                                const std::vector<std::string>& candidates) {
  struct Candidate {
    std::string name;
    double distance;
    bool same;
    std::size_t order;
  };
  std::vector<Candidate> ok;
  bool all_read = true;
  for (const std::string& name : candidates) {
    GpuSpec g;
    if (!catalog_gpu(catalog, name, g)) {
      all_read = false;  // every candidate is still asked for, so the browser fetches them in one round
      continue;
    }
    if (!(g.bf16_tflops > 0) || !(g.hbm_tb_s > 0)) continue;
    const double d = std::fabs(det_log(to.bf16_tflops / g.bf16_tflops)) + std::fabs(det_log(to.hbm_tb_s / g.hbm_tb_s));
    ok.push_back({name, d, transfer_rule(g, to) == TransferRule::kSameArchitecture, ok.size()});
  }
  std::sort(ok.begin(), ok.end(), [](const Candidate& a, const Candidate& b) {
    if (a.same != b.same) return a.same;
    if (a.distance != b.distance) return a.distance < b.distance;
    return a.order < b.order;
  });
  std::vector<std::string> out;
  if (!all_read) return out;
  for (const Candidate& c : ok) out.push_back(c.name);
  return out;
}

std::string nearest_table_gpu(const ResourceCatalog& catalog, const GpuSpec& to,
                              const std::vector<std::string>& candidates) {
  const std::vector<std::string> ordered = table_gpus_by_distance(catalog, to, candidates);
  return ordered.empty() ? "" : ordered.front();
}

}  // namespace servesim
