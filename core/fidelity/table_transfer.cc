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
  return 2.0;                                   // bfloat16, float16, half
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

/// Axis values of one cell.
std::vector<double> cell_axes(const OpGrid& g, std::size_t cell) {
  std::vector<double> x(g.axes.size());
  for (std::size_t a = 0; a < g.axes.size(); ++a) x[a] = g.axes[a][(cell / g.strides[a]) % g.axes[a].size()];
  return x;
}

/// Causal (query, key) pairs of one prompt of `s` tokens whose queries see at most `window` keys (0 = all).
double causal_pairs(double s, double window) {
  if (window > 0 && s > window) return window * (window + 1) / 2 + (s - window) * window;
  return s * (s + 1) / 2;
}

void attention_work(const OpTable& t, const OpGrid& g, const std::vector<double>& x, bool decode, CellWork& w) {
  const double d = key_num(t, g, "head_dim"), h = key_num(t, g, "num_heads"), kvh = key_num(t, g, "num_kv_heads");
  const double window = key_num(t, g, "window");
  const double kvb = dtype_bytes_of(key_text(t, g, "kv_cache_dtype"));
  const double b = x[0], s = x[1];
  if (decode) {
    const double keys = window > 0 ? std::min(s, window) : s;
    w.flops = 4 * h * d * b * keys;
    w.bytes = b * keys * 2 * kvh * d * kvb + b * h * d * 2 * 2;
  } else {
    w.flops = 4 * h * d * b * causal_pairs(s, window);
    w.bytes = b * s * (2 * kvh * d * kvb + 2 * h * d * 2);
  }
}

/// One DeepSeek attention layer on one GPU (module tables: projections + kernel; kernel tables: the kernel).
void mla_work(const OpTable& t, const OpGrid& g, const std::vector<double>& x, bool decode, const ModelSpec& m,
              CellWork& w) {
  const double h = key_num(t, g, "num_heads");
  const double kvb = dtype_bytes_of(key_text(t, g, "kv_cache_dtype"));
  const double H = static_cast<double>(m.hidden_size), qr = static_cast<double>(m.q_lora_rank);
  const double kr = static_cast<double>(m.kv_lora_rank), rope = static_cast<double>(m.qk_rope_head_dim);
  const double nope = static_cast<double>(m.qk_nope_head_dim), v = static_cast<double>(m.v_head_dim);
  const double b = x[0], s = x[1];
  const double tokens = decode ? b : b * s;
  if (decode) {
    // Absorbed projections: multi-query attention over the latent (kv_lora_rank + rope) of every cached token.
    w.flops = 2 * h * (kr + rope + kr) * b * s;
    w.bytes = b * s * (kr + rope) * kvb;
  } else {
    w.flops = 2 * h * (nope + rope + v) * b * causal_pairs(s, 0);
    w.bytes = b * s * (kr + rope) * kvb;
  }
  if (has_key(t, "gemm_type")) {
    // q_a, kv_a (with rope), q_b, kv_b and o projections of the module.
    const double weights = H * qr + H * (kr + rope) + qr * h * (nope + rope) + kr * h * (nope + v) + h * v * H;
    const std::string& gt = key_text(t, g, "gemm_type");
    w.flops += 2 * tokens * weights;
    w.bytes += weights * dtype_bytes_of(gt) + tokens * H * 2 * 2;
    w.fp8 = is_fp8(gt);
  }
}

void moe_work(const OpTable& t, const OpGrid& g, double tokens, CellWork& w) {
  const std::string& dt = key_text(t, g, "dtype");
  const double H = key_num(t, g, "hidden"), I = key_num(t, g, "inter"), topk = key_num(t, g, "topk");
  const double E = key_num(t, g, "experts"), tp = std::max(1.0, key_num(t, g, "tp"));
  const double ep = std::max(1.0, key_num(t, g, "ep"));
  if (E <= 0 || topk <= 0) return;
  const double rows = tokens * topk / ep, inter = I / tp;
  const double touched = E / ep * (1.0 - det_pow(1.0 - 1.0 / E, tokens * topk));
  w.flops = 2 * rows * 3 * H * inter;
  w.bytes = touched * 3 * H * inter * dtype_bytes_of(dt) + rows * (H + inter) * 2 * 2;
  w.fp8 = is_fp8(dt);
}

}  // namespace

bool cell_work(const OpTable& t, std::size_t grid, std::size_t cell, const ModelSpec& model, CellWork& w) {
  w = CellWork();
  const OpGrid& g = t.grids[grid];
  const std::vector<double> x = cell_axes(g, cell);
  const std::string& op = t.op;
  if (op == "gemm") {
    const std::string& dt = key_text(t, g, "dtype");
    const double n = x[0], k = x[1], m = x[2];
    w.flops = 2 * m * n * k;
    w.bytes = n * k * dtype_bytes_of(dt) + m * k * (is_fp8(dt) ? 1.0 : 2.0) + m * n * 2;
    w.fp8 = is_fp8(dt);
  } else if (op == "context_attention" || op == "context_attention_window") {
    attention_work(t, g, x, false, w);
  } else if (op == "generation_attention" || op == "generation_attention_window") {
    attention_work(t, g, x, true, w);
  } else if (op == "mla_context" || op == "mla_generation") {
    mla_work(t, g, x, op == "mla_generation", model, w);
  } else if (op == "moe") {
    moe_work(t, g, x[0], w);
  } else if (op == "custom_allreduce" || op == "nccl") {
    const double n = std::max(2.0, key_num(t, g, "gpus"));
    const std::string& dt = key_text(t, g, "dtype");
    const double bytes = x[0] * (dt.empty() ? 2.0 : dtype_bytes_of(dt));
    const std::string& coll = key_text(t, g, "op");
    w.link_bytes = (coll.empty() || coll == "all_reduce" ? 2.0 : 1.0) * (n - 1) / n * bytes;
  } else if (op == "deepep_ll" || op == "deepep_normal") {
    w.link_bytes = x[0] * key_num(t, g, "topk") * key_num(t, g, "hidden") * 2;
  } else {
    return false;
  }
  return w.flops > 0 || w.bytes > 0 || w.link_bytes > 0;
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

void transfer_table(OpTable& table, const GpuSpec& from, const GpuSpec& to, TransferRule rule, const ModelSpec& model) {
  for (std::size_t gi = 0; gi < table.grids.size(); ++gi) {
    OpGrid& g = table.grids[gi];
    for (std::size_t c = 0; c < g.values.size(); ++c) {
      if (!(g.values[c] > 0)) continue;  // NaN: not measured
      CellWork w;
      if (!cell_work(table, gi, c, model, w)) continue;
      g.values[c] = transfer_time_us(g.values[c], w, from, to, rule);
      g.log_values[c] = interp_log(g.values[c]);
    }
  }
}

void transfer_tables(ProfileTables& t, const GpuSpec& from, const GpuSpec& to, const ModelSpec& model) {
  const TransferRule rule = transfer_rule(from, to);
  for (OpTable* table : {&t.gemm, &t.context_attention, &t.generation_attention, &t.moe, &t.custom_allreduce, &t.nccl,
                         &t.mla_context, &t.mla_generation, &t.deepep_ll, &t.deepep_normal,
                         &t.context_attention_window, &t.generation_attention_window})
    transfer_table(*table, from, to, rule, model);
  t.transferred_to = to.name;
  t.same_architecture = rule == TransferRule::kSameArchitecture;
}

std::vector<std::string> gpus_with_tables(const ResourceCatalog& catalog, const std::string& table_backend) {
  std::vector<std::string> out;
  const std::string suffix = "/" + table_backend + "/gemm";
  for (const std::string& entry : catalog.list("tables")) {
    if (entry.size() <= suffix.size() || entry.compare(entry.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string gpu = entry.substr(0, entry.size() - suffix.size());
    if (gpu.find('/') == std::string::npos) out.push_back(gpu);
  }
  return out;
}

bool catalog_lists_tables(const ResourceCatalog& catalog, const std::string& gpu) {
  const std::string prefix = gpu + "/";
  for (const std::string& entry : catalog.list("tables"))
    if (entry.compare(0, prefix.size(), prefix) == 0) return true;
  return false;
}

std::string nearest_table_gpu(const ResourceCatalog& catalog, const GpuSpec& to, const std::vector<std::string>& candidates) {
  struct Candidate {
    std::string name;
    double distance;
    bool same;
  };
  std::vector<Candidate> ok;
  for (const std::string& name : candidates) {
    GpuSpec g;
    Errors errors;
    read_gpu(Json(name), "", catalog, g, errors);
    if (!errors.ok() || !(g.bf16_tflops > 0) || !(g.hbm_tb_s > 0)) continue;
    const double d = std::fabs(det_log(to.bf16_tflops / g.bf16_tflops)) + std::fabs(det_log(to.hbm_tb_s / g.hbm_tb_s));
    ok.push_back({name, d, transfer_rule(g, to) == TransferRule::kSameArchitecture});
  }
  const bool any_same = std::any_of(ok.begin(), ok.end(), [](const Candidate& c) { return c.same; });
  const Candidate* best = nullptr;
  for (const Candidate& c : ok)
    if ((c.same || !any_same) && (!best || c.distance < best->distance)) best = &c;
  return best ? best->name : "";
}

}  // namespace servesim
