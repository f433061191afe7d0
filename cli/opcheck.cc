// servesim_opcheck: per-op held-out validation of the measured-table predictors (the C++ code the simulator
// runs). For each table, whole grid lines (shapes) are held out, the predictor is rebuilt from the rest, and the
// held-out measurements are predicted. Prints one JSON document; scripts/validate_ops.py turns it into
// docs/validation.md and profiles/<gpu>/<backend>/validation.json.
//
//   servesim_opcheck PROFILES_DIR GPU BACKEND [--cells FILE]   (FILE: every held-out cell of the reported
//                                                               figures, one CSV line each; cli/cell_log.h)
//   servesim_opcheck --transfer PROFILES_DIR FROM TO BACKEND   (the datasheet path's table transfer, see
//                                                              opcheck_transfer.cc)
//   servesim_opcheck --query PROFILES_DIR GPU BACKEND          (predictions for shapes on standard input, see
//                                                              opcheck_query.cc)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/ape_stats.h"
#include "cli/cell_log.h"
#include "cli/op_table_file.h"
#include "cli/opcheck_query.h"
#include "cli/opcheck_transfer.h"
#include "core/fidelity/attention_predictor.h"
#include "core/fidelity/collective_model.h"
#include "core/fidelity/deepep_table.h"
#include "core/fidelity/gemm_model.h"
#include "core/fidelity/interpolation.h"
#include "core/fidelity/l2_warmth.h"
#include "core/fidelity/mla_module_table.h"
#include "core/fidelity/moe_model.h"
#include "core/fidelity/op_table.h"
#include "core/fidelity/roofline_cost_model.h"
#include "core/sim/rng.h"

using namespace servesim;
using OJson = nlohmann::ordered_json;

namespace {

/// Every third interior grid line held out (indices 1, 4, 7, ... that are not the last).
std::vector<bool> every_third(std::size_t n) {
  std::vector<bool> h(n, false);
  for (std::size_t i = 1; i + 1 < n; i += 3) h[i] = true;
  return h;
}
/// Every other interior grid line (1, 3, 5, ...).
std::vector<bool> every_other(std::size_t n) {
  std::vector<bool> h(n, false);
  for (std::size_t i = 1; i + 1 < n; i += 2) h[i] = true;
  return h;
}

// ------------------------------------------------------------------------------------------------ GEMM

/// Token counts held out as shapes: every third interior group of token_count_groups (a step pair (m, m + 1) from 32
/// tokens on is held out whole).
std::vector<bool> every_third_step_pair(const std::vector<double>& m) {
  const std::vector<int> group = token_count_groups(m);
  const int groups = m.empty() ? 0 : group.back() + 1;
  std::vector<bool> h(m.size(), false);
  for (std::size_t i = 0; i < m.size(); ++i) h[i] = group[i] % 3 == 1 && group[i] + 1 < groups;
  return h;
}

OJson check_gemm(const OpTable& t, const std::string& backend) {
  OJson out;
  ApeStats all, all_m, pricing;
  ApeStats fixed_m[std::size(kTokenReadings)];  // every grid read one way
  OJson by_dtype, by_dtype_m, m_chosen, m_runtime;
  for (const OpGrid& g : t.grids) {
    if (g.axes.size() != 3) continue;
    ApeStats e;
    for (std::size_t axis = 0; axis < 2; ++axis) {  // hold out n lines, then k lines
      const auto held = every_other(g.axes[axis].size());
      const OpGrid r = drop_grid_lines(g, axis, held);
      const TokenReading reading = choose_token_reading(r);
      for (std::size_t i = 0; i < g.axes[0].size(); ++i)
        for (std::size_t j = 0; j < g.axes[1].size(); ++j) {
          if (!held[axis == 0 ? i : j]) continue;
          const GemmCurve c = make_gemm_curve(r, g.axes[0][i], g.axes[1][j], reading);
          if (!c.ok()) continue;
          for (std::size_t k = 0; k < g.axes[2].size(); ++k) {
            const double truth = g.values[i * g.strides[0] + j * g.strides[1] + k];
            if (std::isnan(truth)) continue;
            const double pred = c.us(g.axes[2][k]);
            e.add(pred, truth);
            cell_log().add("gemm", g.key, axis == 0 ? "n" : "k",
                           {{"n", g.axes[0][i]}, {"k", g.axes[1][j]}, {"m", g.axes[2][k]}}, truth, pred);
          }
        }
    }
    by_dtype[g.key[0]] = e.json();
    all.add_all(e);
    // Roles on vLLM's tables (vllm, sglang) price block-FP8 GEMMs on the per-tensor fp8 grid (TableCostModel::
    // make_gemm): vLLM's fp8_block grid is validated but prices nothing.
    if (!(g.key[0] == "fp8_block" && backend != "trtllm")) pricing.add_all(e);
    // Token counts held out: every third interior m line of every measured (n, k) line, a step pair whole.
    ApeStats em;
    {
      const auto held = every_third_step_pair(g.axes[2]);
      const OpGrid r = drop_grid_lines(g, 2, held);
      const TokenReading chosen = choose_token_reading(r);  // on the counts left, as the simulator chooses
      m_chosen[g.key[0]] = token_reading_name(chosen);
      m_runtime[g.key[0]] = token_reading_name(static_cast<TokenReading>(g.token_reading));  // set when loaded
      for (std::size_t i = 0; i < g.axes[0].size(); ++i)
        for (std::size_t j = 0; j < g.axes[1].size(); ++j) {
          GemmCurve c = make_gemm_curve(r, g.axes[0][i], g.axes[1][j], chosen);
          if (!c.ok()) continue;
          for (std::size_t k = 0; k < g.axes[2].size(); ++k) {
            if (!held[k]) continue;
            const double truth = g.values[i * g.strides[0] + j * g.strides[1] + k];
            if (std::isnan(truth)) continue;
            em.add(c.us(g.axes[2][k]), truth);
            for (std::size_t x = 0; x < std::size(kTokenReadings); ++x) {
              c.reading = kTokenReadings[x];
              fixed_m[x].add(c.us(g.axes[2][k]), truth);
            }
            c.reading = chosen;
          }
        }
    }
    by_dtype_m[g.key[0]] = em.json();
    all_m.add_all(em);
  }
  out["holdout"] = "every other interior n value, then every other interior k value (all m); interpolated over the rest";
  out["all"] = all.json();
  out["by_dtype"] = by_dtype;
  out["grids_that_price"] = pricing.json();
  OJson readings;
  for (std::size_t x = 0; x < std::size(kTokenReadings); ++x)
    readings[token_reading_name(kTokenReadings[x])] = fixed_m[x].json();
  out["tokens_held_out"] = OJson{{"all", all_m.json()},
                                 {"by_dtype", by_dtype_m},
                                 {"chosen", m_chosen},
                                 {"chosen_on_whole_grid", m_runtime},
                                 {"every_grid_read_one_way", readings}};
  return out;
}

// ------------------------------------------------------------------------------------------------ attention

/// Latency of a uniform batch as a function of total tokens, fitted on training cells (the proxy Frontier and
/// Vidur-style predictors use): log-log interpolation over the distinct totals.
struct TokenProxy {
  LogCurve c;
  void fit(const std::vector<std::pair<double, double>>& pts) {
    std::map<double, std::pair<double, int>> m;
    for (const auto& p : pts) {
      auto& v = m[p.first];
      v.first += p.second;
      v.second += 1;
    }
    std::vector<double> x, y;
    for (const auto& kv : m) {
      x.push_back(kv.first);
      y.push_back(kv.second.first / kv.second.second);
    }
    c = LogCurve(x, y);
  }
  double eval(double tokens) const {
    const double hi = c.xs().back();
    return tokens > hi ? c.ys().back() * tokens / hi : c.eval(tokens);
  }
};

/// `generation`: the decode table beside a prefill table. On a FlashAttention-2 prefill grid its one-token prompts
/// are priced as the simulator prices them (TableCostModel::one_token_prompts_decode): decodes of one key, from
/// the whole generation grid of the same heads (the prefill grid's lines held out do not hold it).
OJson check_attention(const OpTable& t, bool decode, int sms, double hbm_tb_s, const L2Warmth& l2,
                      const OpTable* generation = nullptr) {
  OJson out;
  ApeStats product, product_fixed, model_only, raw_interp, proxy, product_b, one_token;
  const char* family = decode ? "attention_decode" : "attention_prefill";
  const char* length_axis = decode ? "kv_len" : "isl";
  int chose[4] = {0, 0, 0, 0};
  // The table's FlashAttention-2 decode grids that run unswapped share one HBM saturation constant
  // (fit_fa2_hbm_ctas), fitted as the simulator fits it, on the lines each experiment keeps of every grid.
  // A prefill table's one-token prompts are priced from the whole generation table, its constant from all of it.
  auto as_cold = [&l2](const OpGrid& k) { return read_cold(k, l2, grid_kv_bytes_per_key(k)); };
  double hbm[2] = {0, 0};  // by the axis held out
  if (decode)
    for (std::size_t axis : {std::size_t{0}, std::size_t{1}}) {
      OpTable kept = t;
      for (OpGrid& k : kept.grids)
        if (k.axes.size() == 2) k = drop_grid_lines(k, axis, every_third(k.axes[axis].size()));
      hbm[axis] = fit_fa2_hbm_ctas(kept, sms, as_cold);
    }
  // FlashAttention-3's split-kernel output traffic at the datasheet's HBM bandwidth (no fitted constant).
  const double split_out = fa3_split_out_us_per_element(hbm_tb_s, RooflineConstants().memory_efficiency);
  const double generation_hbm = !decode && generation ? fit_fa2_hbm_ctas(*generation, sms, as_cold) : 0;
  for (const OpGrid& g : t.grids) {
    if (g.axes.size() != 2 || g.key.size() != 4) continue;
    AttentionGeometry geo = table_grid_geometry(g, sms, decode);
    const auto& B = g.axes[0];
    const auto& S = g.axes[1];
    // Decode grids were timed with K and V left in L2: the predictors read them cold, so a warm cell is the
    // prediction less what reading cold adds (l2_warmth.h).
    const double bytes_per_key = grid_kv_bytes_per_key(g);
    const L2Warmth cold = decode ? l2 : L2Warmth();
    AttentionPredictor one_token_decode;  // one-token prompts as FlashAttention-2 decodes
    double one_token_bytes = 0;
    if (!decode && generation && geo.ungrouped_beside_prefill)
      if (const OpGrid* d = generation->find(g.key); d && d->axes.size() == 2) {
        AttentionGeometry dg = geo;
        set_split_rule(dg, d->kernel);
        set_fa2_hbm_ctas(dg, generation_hbm);
        one_token_bytes = grid_kv_bytes_per_key(*d);
        one_token_decode.build_owned(read_cold(*d, l2, one_token_bytes), true, dg, true);
      }
    auto predict = [&](const AttentionPredictor& p, double b, double s) {
      if (!decode && s == 1 && one_token_decode.ok())
        return one_token_decode.decode_us(std::vector<std::int32_t>(static_cast<std::size_t>(b), 1)) -
               l2.extra_us(b * one_token_bytes);
      if (decode)
        return p.decode_us(std::vector<std::int32_t>(static_cast<std::size_t>(b), static_cast<std::int32_t>(s))) -
               cold.extra_us(b * s * bytes_per_key);
      return p.prefill_us(std::vector<PrefillChunk>(static_cast<std::size_t>(b),
                                                    PrefillChunk{static_cast<std::int32_t>(s), static_cast<std::int64_t>(s)}));
    };
    geo.split_out_us_per_element = split_out;
    // Experiment 1: hold out lengths (every third interior isl / kv_len).
    if (decode) set_fa2_hbm_ctas(geo, hbm[1]);
    {
      const auto held = every_third(S.size());
      const OpGrid r = read_cold(drop_grid_lines(g, 1, held), cold, bytes_per_key);
      AttentionPredictor p, p0;
      if (!p.build(r, decode, geo, true) || !p0.build(r, decode, geo)) continue;
      ++chose[static_cast<int>(p.interp())];
      std::vector<std::pair<double, double>> train;
      for (std::size_t i = 0; i < B.size(); ++i)
        for (std::size_t j = 0; j < S.size(); ++j) {
          const double v = g.values[i * S.size() + j];
          if (!std::isnan(v) && !held[j]) train.push_back({B[i] * S[j], v});
        }
      TokenProxy tp;
      tp.fit(train);
      for (std::size_t i = 0; i < B.size(); ++i)
        for (std::size_t j = 0; j < S.size(); ++j) {
          const double truth = g.values[i * S.size() + j];
          if (!held[j] || std::isnan(truth)) continue;
          const double pred = predict(p, B[i], S[j]);
          product.add(pred, truth);
          cell_log().add(family, g.key, length_axis, {{"batch", B[i]}, {length_axis, S[j]}}, truth, pred);
          if (!decode && S[j] == 1) one_token.add(pred, truth);
          product_fixed.add(predict(p0, B[i], S[j]), truth);
          double f[kMaxWorkFeatures] = {};
          if (decode) uniform_decode_features(geo, static_cast<std::int64_t>(B[i]), static_cast<std::int64_t>(S[j]), f);
          else uniform_prefill_features(geo, static_cast<std::int64_t>(B[i]), static_cast<std::int64_t>(S[j]), f);
          const double warm = cold.extra_us(B[i] * S[j] * bytes_per_key);
          model_only.add(p.model().eval(f) - warm, truth);
          const double xy[2] = {B[i], S[j]};
          const GridValue gv = interpolate_at(r, xy);
          if (gv.ok && !gv.extrapolated) raw_interp.add(gv.value - warm, truth);
          proxy.add(tp.eval(B[i] * S[j]), truth);
        }
    }
    // Experiment 2: hold out batch sizes.
    if (decode) set_fa2_hbm_ctas(geo, hbm[0]);
    {
      const auto held = every_third(B.size());
      const OpGrid r = read_cold(drop_grid_lines(g, 0, held), cold, bytes_per_key);
      AttentionPredictor p;
      if (!p.build(r, decode, geo, true)) continue;
      for (std::size_t i = 0; i < B.size(); ++i)
        for (std::size_t j = 0; j < S.size(); ++j) {
          const double truth = g.values[i * S.size() + j];
          if (!held[i] || std::isnan(truth)) continue;
          const double pr = predict(p, B[i], S[j]);
          product_b.add(pr, truth);
          cell_log().add(family, g.key, "batch", {{"batch", B[i]}, {length_axis, S[j]}}, truth, pr);
          if (!decode && S[j] == 1) one_token.add(pr, truth);
          if (std::getenv("OPCHECK_DEBUG") && std::fabs(pr / truth - 1) > 1.0)
            std::cerr << g.key[0] << "/" << g.key[1] << "/" << g.key[2] << "/" << g.key[3] << " b=" << B[i]
                      << " s=" << S[j] << " pred " << pr << " truth " << truth << "\n";
        }
    }
  }
  out["holdout"] = decode ? "every third interior kv_len (all batches), then every third interior batch size"
                          : "every third interior isl (all batches), then every third interior batch size";
  ApeStats both = product;
  both.add_all(product_b);
  out["all"] = both.json();
  out["lengths_held_out"] = product.json();
  out["batches_held_out"] = product_b.json();
  if (!one_token.e.empty()) out["one_token_prompts_from_decode_grid"] = one_token.json();
  out["interp_chosen_lengths_held_out"] = OJson{{"model_x_residual", chose[0]}, {"raw", chose[1]}, {"blend", chose[2]},
                                                 {"raw_affine", chose[3]}};
  out["compare_lengths_held_out"] = OJson{{"simulator", product.json()},
                                          {"work_model_x_residual", product_fixed.json()},
                                          {"work_model_only", model_only.json()},
                                          {"raw_table_interpolation", raw_interp.json()},
                                          {"total_tokens_proxy", proxy.json()}};
  return out;
}

// ------------------------------------------------------------------------------------------------ MLA

/// DeepSeek MLA projection shapes (profiles/models/DeepSeek-V3.json, the model the module tables measured).
struct MlaShapes {
  double hidden = 7168, q_lora = 1536, kv_lora = 512, nope = 128, rope = 64, v = 128;
};

/// What the simulator runs for an MLA model. Module tables: the joined module grid minus the GEMM-table
/// projections (capped by the modules of both phases, `other` being the other phase's table), through the
/// attention work model, plus the capped projections at the batch's tokens. Kernel tables (no projections): the
/// kernel grid through the work model. Whole lines held out as for attention.
OJson check_mla(const OpTable& t, const OpTable& other, const OpTable& gemm, bool decode, int sms,
                const MlaShapes& sh) {
  ApeStats lengths, batches;
  const char* length_axis = decode ? "kv_len" : "isl";
  std::map<std::vector<std::string>, bool> configs;  // (kv dtype, gemm type, heads), ordered
  for (const OpGrid& g : t.grids) {
    if (g.key.size() == 5) configs[{g.key[1], g.key[2], g.key[3]}] = true;
    if (g.key.size() == 4) configs[{g.key[1], "", g.key[2]}] = true;  // kernel tables: no gemm_type
  }
  for (const auto& cfg : configs) {
    const int heads = std::atoi(cfg.first[2].c_str());
    MlaModuleGrid m;
    if (!select_mla_module_grid(t, cfg.first[0], cfg.first[1], heads, m) || m.approx) continue;
    // The simulator prices fp8_block checkpoints' projections from the fp8 GEMM grid (engine dtype fp8).
    const OpGrid* gg = gemm.find({cfg.first[1] == "bfloat16" ? "bfloat16" : "fp8"});
    if (m.module && !gg) continue;
    MlaModuleGrid o;
    const bool have_other = m.module && select_mla_module_grid(other, cfg.first[0], cfg.first[1], heads, o) &&
                            o.module;
    const double h = heads;
    std::vector<GemmCurve> curves;
    if (m.module)
      curves = {make_gemm_curve(*gg, sh.q_lora + sh.kv_lora + sh.rope, sh.hidden),
                make_gemm_curve(*gg, h * (sh.nope + sh.rope), sh.q_lora),
                make_gemm_curve(*gg, h * (sh.nope + sh.v), sh.kv_lora), make_gemm_curve(*gg, sh.hidden, h * sh.v)};
    MlaProjectionCap cap;
    auto proj = [&curves, &cap](double tokens) {
      double us = 0;
      for (const GemmCurve& c : curves) us += c.us(tokens);
      return std::min(us, cap.cap_us(tokens));
    };
    AttentionGeometry geo;
    geo.heads = heads;
    geo.kv_heads = 1;
    geo.sms = sms;
    set_split_rule(geo, m.grid.kernel, /*mla=*/true);
    const OpGrid& g = m.grid;
    const auto& B = g.axes[0];
    const auto& S = g.axes[1];
    auto predict = [&](const AttentionPredictor& p, double b, double s) {
      const double core =
          decode ? p.decode_us(std::vector<std::int32_t>(static_cast<std::size_t>(b), static_cast<std::int32_t>(s)))
                 : p.prefill_us(std::vector<PrefillChunk>(
                       static_cast<std::size_t>(b),
                       PrefillChunk{static_cast<std::int32_t>(s), static_cast<std::int64_t>(s)}));
      return core + (m.module ? proj(decode ? b : b * s) : 0.0);
    };
    for (int axis = 1; axis >= 0; --axis) {
      const auto held = every_third(g.axes[static_cast<std::size_t>(axis)].size());
      OpGrid r = drop_grid_lines(g, static_cast<std::size_t>(axis), held);
      cap = MlaProjectionCap();
      if (m.module) {
        cap.add(r, decode);
        if (have_other) cap.add(o.grid, !decode);
        cap.finish();
        subtract_mla_projections(r, decode, proj);
      }
      // vLLM's decode-path kernel and its prefill kernel each from their own cells (MlaDecodePath).
      const bool two = !decode && m.decode_path.ok();
      OpGrid short_part, long_part;
      if (two) split_mla_context_grid(m, r, short_part, long_part);
      AttentionPredictor p, ps;
      if (!p.build(two ? long_part : r, decode, geo) || (two && !ps.build(short_part, decode, geo))) continue;
      for (std::size_t i = 0; i < B.size(); ++i)
        for (std::size_t j = 0; j < S.size(); ++j) {
          const double truth = g.values[i * S.size() + j];
          if (!held[axis == 0 ? i : j] || std::isnan(truth)) continue;
          const bool on_short = two && S[j] <= m.decode_path.max_query;
          const double pred = predict(on_short ? ps : p, B[i], S[j]);
          (axis == 1 ? lengths : batches).add(pred, truth);
          cell_log().add(decode ? "mla_decode" : "mla_prefill", g.key, axis == 1 ? length_axis : "batch",
                         {{"batch", B[i]}, {length_axis, S[j]}}, truth, pred);
        }
    }
  }
  OJson out;
  out["holdout"] = decode ? "every third interior kv_len (all batches), then every third interior batch size"
                          : "every third interior isl (all batches), then every third interior batch size";
  ApeStats both = lengths;
  both.add_all(batches);
  out["all"] = both.json();
  out["lengths_held_out"] = lengths.json();
  out["batches_held_out"] = batches.json();
  return out;
}

// ------------------------------------------------------------------------------------------------ MoE

MoeRankCost rank_cost(const GpuFacts& gpu, const OpGrid& g) {
  const double H = std::atof(g.key[1].c_str()), I = std::atof(g.key[2].c_str()), tp = std::atof(g.key[5].c_str());
  const bool q8 = g.key[0].rfind("fp8", 0) == 0;
  const double inter = I / tp;
  MoeRankCost k;
  k.block_m = kMoeBlockRowsMin;
  k.block_m_max = kMoeBlockRowsMax;
  k.t0 = 0;
  k.t_weight = 3.0 * H * inter * (q8 ? 1.0 : 2.0) / (gpu.hbm_tb_s * 1e12 * 0.8) * 1e6;
  k.t_block = 2.0 * k.block_m * 3.0 * H * inter / ((q8 ? gpu.fp8 : gpu.bf16) * 1e12 * 0.7) * 1e6;
  return k;
}

OJson check_moe(const OpTable& t, const GpuFacts& gpu) {
  OJson out;
  ApeStats interp, skew, noskew, measured_skew;
  ApeStats fixed[3], fixed_balanced[3], sim_balanced;  // every curve read one way (MoePredictor::Interp order)
  int chose[3] = {0, 0, 0};  // balanced curves per reading
  std::map<std::vector<std::string>, const OpGrid*> by_key;
  for (const OpGrid& g : t.grids) by_key[g.key] = &g;
  for (const OpGrid& g : t.grids) {
    if (g.axes.size() != 1 || g.key.size() != 8) continue;
    const int experts = std::atoi(g.key[4].c_str()), topk = std::atoi(g.key[3].c_str()),
              ep = std::atoi(g.key[6].c_str());
    const MoeRouting ref = g.key[7] == "balanced" ? MoeRouting::kBalanced : MoeRouting::kPowerLaw;
    const double ref_alpha = g.key[7] == measured_power_law_key(1.2) ? 1.2 : 1.01;
    // Token counts held out on every measured curve.
    {
      const auto held = every_third(g.axes[0].size());
      const OpGrid r = drop_grid_lines(g, 0, held);
      MoePredictor p;
      if (p.build(r, ref, ref_alpha, rank_cost(gpu, g), experts, topk, ep)) {
        const bool balanced = ref == MoeRouting::kBalanced;
        if (balanced) ++chose[static_cast<int>(p.interp())];
        MoePredictor f = p;  // the same curve read each fixed way
        for (std::size_t i = 0; i < g.axes[0].size(); ++i)
          if (held[i] && !std::isnan(g.values[i])) {
            const auto tokens = static_cast<std::int64_t>(g.axes[0][i]);
            const double pred = p.us(tokens, {});
            interp.add(pred, g.values[i]);
            cell_log().add("moe", g.key, "tokens", {{"tokens", g.axes[0][i]}}, g.values[i], pred);
            if (balanced) sim_balanced.add(pred, g.values[i]);
            else measured_skew.add(pred, g.values[i]);
            for (int m = 0; m < 3; ++m) {
              f.set_interp(static_cast<MoePredictor::Interp>(m));
              const double fm = f.us(tokens, {});
              fixed[m].add(fm, g.values[i]);
              if (balanced) fixed_balanced[m].add(fm, g.values[i]);
            }
          }
      }
    }
    // Skew: predict the power-law measurements from the balanced curve and sampled power-law assignments.
    if (g.key[7] != "balanced") continue;
    MoePredictor p;
    if (!p.build(g, MoeRouting::kBalanced, 1.0, rank_cost(gpu, g), experts, topk, ep)) continue;
    for (const double alpha : {1.01, 1.2}) {
      auto key = g.key;
      key[7] = measured_power_law_key(alpha);
      auto it = by_key.find(key);
      if (it == by_key.end()) continue;
      const OpGrid& pl = *it->second;
      for (std::size_t i = 0; i < pl.axes[0].size(); ++i) {
        const double truth = pl.values[i];
        if (std::isnan(truth)) continue;
        const auto tokens = static_cast<std::int64_t>(pl.axes[0][i]);
        // The measurement is a mean over a few draws of the generator; predict the mean over draws.
        Rng rng(1234, static_cast<std::uint64_t>(tokens));
        std::vector<std::int64_t> loads;
        double sum = 0;
        const int draws = 16;
        for (int d = 0; d < draws; ++d) {
          moe_loads(MoeRouting::kPowerLaw, alpha, tokens, experts, topk, rng, loads);
          sum += p.us(tokens, loads);
        }
        skew.add(sum / draws, truth);
        noskew.add(p.us(tokens, {}), truth);
      }
    }
  }
  out["holdout"] = "every third interior token count of every measured curve";
  out["all"] = interp.json();
  out["readings"] = OJson{
      {"what", "the held-out token counts with every curve read one way: log-log, affine where rising, or the "
               "balanced assignment's slowest-rank model x interpolated residual (the simulator picks per balanced "
               "curve by cross-validation on the kept points; power-law curves stay log-log except across the "
               "generator's switch, which log-log and the model read through the model's draws at the count)"},
      {"log_log", fixed[0].json()},
      {"affine", fixed[1].json()},
      {"model_x_residual", fixed[2].json()},
      {"balanced_curves", OJson{{"simulator", sim_balanced.json()},
                                {"log_log", fixed_balanced[0].json()},
                                {"affine", fixed_balanced[1].json()},
                                {"model_x_residual", fixed_balanced[2].json()}}},
      {"chosen_balanced", OJson{{"log_log", chose[0]}, {"affine", chose[1]}, {"model_x_residual", chose[2]}}}};
  out["skew"] = OJson{{"what", "power-law measurements predicted from the balanced curve x sampled power-law "
                               "assignments (slowest-rank model), mean of 16 draws"},
                      {"slowest_rank_model", skew.json()},
                      {"balanced_curve_only", noskew.json()},
                      {"measured_exponent_own_curve",
                       OJson{{"what", "a scenario's power-law routing with a measured exponent prices from that "
                                      "curve: its held-out token counts, read log-log"},
                             {"stats", measured_skew.json()}}}};
  return out;
}

// ------------------------------------------------------------------------------------------------ comm

/// Message-size curves as CollectiveModel reads them: every other interior size held out, the kept cells made
/// non-decreasing (`monotone`, CollectiveModel::monotone_curve), read linearly where time rises. `split_at_buffer`
/// (vLLM's all-reduce table on a GPU without its symmetric-memory all-reduce): the sizes below the 8 MiB buffer and
/// those from it on read apart (CollectiveModel::split_curve, lookup_extended). `choice_split`: the kept cells
/// read as measured and as fitted, on this split and on the complementary one (even interior sizes held out).
OJson check_curves(const OpTable& t, const char* family, bool split_at_buffer = false, bool monotone = true) {
  auto held_out = [&](bool odd, bool fit, bool log = false) {
    ApeStats e;
    for (const OpGrid& g : t.grids) {
      if (g.axes.size() != 1) continue;
      std::vector<bool> held = every_other(g.axes[0].size());
      if (!odd) {
        held.assign(held.size(), false);
        for (std::size_t i = 2; i + 1 < held.size(); i += 2) held[i] = true;
      }
      const OpGrid r = drop_grid_lines(g, 0, held);
      const LogCurve all = fit ? CollectiveModel::monotone_curve(r.axes[0], r.values) : LogCurve(r.axes[0], r.values);
      if (all.empty()) continue;
      LogCurve below, from;
      const bool split = split_at_buffer && CollectiveModel::split_curve(r.axes[0], r.values,
                                                                         kVllmCustomAllReduceBytes, below, from, fit);
      for (std::size_t i = 0; i < g.axes[0].size(); ++i) {
        if (!held[i] || std::isnan(g.values[i])) continue;
        const double x = g.axes[0][i];
        const double pred =
            split ? CollectiveModel::lookup_extended(x * 2 < kVllmCustomAllReduceBytes ? below : from, x).us
                  : all.eval_affine(x);
        e.add(pred, g.values[i]);
        if (log) cell_log().add(family, g.key, "size", {{"size", x}}, g.values[i], pred);
      }
    }
    return e;
  };
  OJson out;
  out["holdout"] = split_at_buffer ? "every other interior message size; the kernel's sizes and NCCL's (from the 8 MiB "
                                     "buffer on) read apart"
                                   : "every other interior message size";
  out["all"] = held_out(true, monotone, true).json();
  out["choice_split"] = OJson{{"reported_split", OJson{{"measured", held_out(true, false).json()},
                                                       {"monotone", held_out(true, true).json()}}},
                              {"complementary_split", OJson{{"measured", held_out(false, false).json()},
                                                            {"monotone", held_out(false, true).json()}}}};
  return out;
}

// ------------------------------------------------------------------------------------------------ DeepEP

/// SGLang's DeepEP tables through DeepEpTable (the simulator's predictor): every other interior token count held
/// out of every grid, each measured shape rebuilt from the rest and its held-out tokens predicted, per phase; plain
/// log-log token interpolation on the same split for comparison. `choice_split`: both token interpolations on the
/// complementary split (even interior token counts held out), the evidence the predictor's choice rests on.
/// Then the hidden-size interpolation: each interior hidden size of a (topk, experts) configuration held out whole
/// and predicted at every token count from its neighbours.
OJson check_deepep(const OpTable& t, const char* family) {
  const int f_phase = 0, f_hidden = 1, f_topk = 2, f_experts = 3;
  const bool normal = t.key_fields.size() == 5;
  const std::int64_t sms = normal ? std::atoll(t.grids.front().key[4].c_str()) : 20;
  auto num = [](const OpGrid& g, int f) { return std::atoll(g.key[static_cast<std::size_t>(f)].c_str()); };
  OpTable reduced = t;
  std::vector<bool> held;
  for (OpGrid& g : reduced.grids) {
    held = every_other(g.axes[0].size());
    g = drop_grid_lines(g, 0, held);
  }
  ApeStats phase[2], loglog[2], hidden[2], choice_affine, choice_log;
  for (const OpGrid& g : t.grids) {
    if (g.axes.size() != 1) continue;
    const int p = g.key[f_phase] == "dispatch" ? 0 : 1;
    const DeepEpTable pred(reduced, num(g, f_hidden), num(g, f_topk), num(g, f_experts), sms);
    const auto h = every_other(g.axes[0].size());
    const OpGrid r = drop_grid_lines(g, 0, h);
    const LogCurve c(r.axes[0], r.values);
    for (std::size_t i = 0; i < g.axes[0].size(); ++i) {
      if (!h[i] || std::isnan(g.values[i])) continue;
      const double us = pred.us(p == 0 ? DeepEpPhase::kDispatch : DeepEpPhase::kCombine, g.axes[0][i]);
      phase[p].add(us, g.values[i]);
      cell_log().add(family, g.key, "tokens", {{"tokens", g.axes[0][i]}}, g.values[i], us);
      loglog[p].add(c.eval(g.axes[0][i]), g.values[i]);
    }
    std::vector<bool> even(g.axes[0].size(), false);
    for (std::size_t i = 2; i + 1 < even.size(); i += 2) even[i] = true;
    const OpGrid re = drop_grid_lines(g, 0, even);
    const LogCurve ce(re.axes[0], re.values);
    for (std::size_t i = 0; i < g.axes[0].size(); ++i) {
      if (!even[i] || std::isnan(g.values[i])) continue;
      choice_affine.add(ce.eval_affine(g.axes[0][i]), g.values[i]);
      choice_log.add(ce.eval(g.axes[0][i]), g.values[i]);
    }
    // Hidden held out: the same configuration without this hidden size, if it has measured sizes on both sides.
    OpTable without = t;
    without.grids.clear();
    bool below = false, above = false;
    for (const OpGrid& o : t.grids) {
      if (num(o, f_topk) != num(g, f_topk) || num(o, f_experts) != num(g, f_experts)) continue;
      if (num(o, f_hidden) == num(g, f_hidden)) continue;
      below = below || num(o, f_hidden) < num(g, f_hidden);
      above = above || num(o, f_hidden) > num(g, f_hidden);
      without.grids.push_back(o);
    }
    if (!below || !above) continue;
    const DeepEpTable hp(without, num(g, f_hidden), num(g, f_topk), num(g, f_experts), sms);
    for (std::size_t i = 0; i < g.axes[0].size(); ++i)
      if (!std::isnan(g.values[i]))
        hidden[p].add(hp.us(p == 0 ? DeepEpPhase::kDispatch : DeepEpPhase::kCombine, g.axes[0][i]), g.values[i]);
  }
  ApeStats all, all_log, all_hidden;
  for (int p = 0; p < 2; ++p) {
    all.add_all(phase[p]);
    all_log.add_all(loglog[p]);
    all_hidden.add_all(hidden[p]);
  }
  OJson out;
  out["holdout"] = "every other interior token count (tokens per EP rank), both phases";
  out["all"] = all.json();
  out["dispatch"] = phase[0].json();
  out["combine"] = phase[1].json();
  out["tokens_log_log"] = all_log.json();
  out["choice_split"] = OJson{{"holdout", "every other interior token count from the third (the complement)"},
                              {"linear_where_rising", choice_affine.json()},
                              {"log_log", choice_log.json()}};
  out["hidden_held_out"] = OJson{{"holdout", "each interior hidden size of a (topk, experts) configuration, all tokens"},
                                 {"all", all_hidden.json()},
                                 {"dispatch", hidden[0].json()},
                                 {"combine", hidden[1].json()}};
  return out;
}

/// The families a report can hold, in its order (`--family` picks one).
const char* const kFamilies[] = {"gemm", "attention_prefill", "attention_decode", "mla_prefill", "mla_decode", "moe",
                                 "custom_allreduce", "deepep_ll", "deepep_normal", "nccl", "p2p"};

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--transfer") return transfer_check_main(argc, argv);
  if (argc > 1 && std::string(argv[1]) == "--query") return query_main(argc, argv);
  const char* usage = "usage: servesim_opcheck PROFILES_DIR GPU BACKEND [--cells FILE] [--family NAME]\n";
  std::string cells, only;
  bool ok = argc >= 4;
  for (int i = 4; ok && i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc || (flag != "--cells" && flag != "--family") ||
        !(flag == "--cells" ? cells : only).empty())
      ok = false;
    else
      (flag == "--cells" ? cells : only) = argv[i + 1];
  }
  if (!ok) {
    std::cerr << usage;
    return 2;
  }
  if (!only.empty() && std::find(std::begin(kFamilies), std::end(kFamilies), only) == std::end(kFamilies)) {
    std::cerr << "--family: unknown family \"" << only << "\" (one of";
    for (const char* f : kFamilies) std::cerr << " " << f;
    std::cerr << ")\n";
    return 2;
  }
  if (!cells.empty() && !cell_log().open(cells)) {
    std::cerr << "--cells: cannot write " << cells << "\n";
    return 1;
  }
  // Every family unless --family names one (a report of that family alone, as the full report has it).
  auto want = [&only](const char* family) { return only.empty() || only == family; };
  const std::string root = argv[1], gpu = argv[2], backend = argv[3];
  const GpuFacts facts = load_gpu_facts(root, gpu);
  OJson out;
  out["gpu"] = gpu;
  out["backend"] = backend;
  OJson fam;
  OpTable t;
  const std::string dir = root + "/" + gpu + "/" + backend + "/";
  if (load_op_table_file(dir + "gemm.json", t)) {
    out["backend_version"] = t.backend_version;
    if (want("gemm")) fam["gemm"] = check_gemm(t, backend);
  }
  L2Warmth l2;
  {
    std::string text;
    if (read_file(root + "/" + gpu + "/l2_warmth.json", text)) {
      const std::string err = parse_l2_warmth(text, l2);
      if (!err.empty()) {
        std::cerr << gpu << "/l2_warmth.json: " << err << "\n";
        return 1;
      }
    }
  }
  {
    OpTable gen;
    const bool have_gen = load_op_table_file(dir + "generation_attention.json", gen);
    if (want("attention_prefill") && load_op_table_file(dir + "context_attention.json", t))
      fam["attention_prefill"] = check_attention(t, false, facts.sms, facts.hbm_tb_s, l2, have_gen ? &gen : nullptr);
    if (have_gen && want("attention_decode"))
      fam["attention_decode"] = check_attention(gen, true, facts.sms, facts.hbm_tb_s, l2);
  }
  if (want("mla_prefill") || want("mla_decode")) {
    OpTable gemm;
    MlaShapes sh;
    std::string text;
    if (read_file(root + "/models/DeepSeek-V3.json", text)) {
      const auto j = nlohmann::json::parse(text, nullptr, false);
      if (!j.is_discarded() && j.contains("config")) {
        const auto& c = j["config"];
        sh.hidden = c.value("hidden_size", sh.hidden);
        sh.q_lora = c.value("q_lora_rank", sh.q_lora);
        sh.kv_lora = c.value("kv_lora_rank", sh.kv_lora);
        sh.nope = c.value("qk_nope_head_dim", sh.nope);
        sh.rope = c.value("qk_rope_head_dim", sh.rope);
        sh.v = c.value("v_head_dim", sh.v);
      }
    }
    // Module tables (H100/H200) or A100's per-kernel tables; both phases are loaded (the projection cap uses both).
    OpTable ctx, gen;
    load_op_table_file(dir + "gemm.json", gemm);
    const bool have_ctx = load_op_table_file(dir + "mla_context.json", ctx);
    const bool have_gen = load_op_table_file(dir + "mla_generation.json", gen);
    if (have_ctx && want("mla_prefill")) {
      OJson j = check_mla(ctx, gen, gemm, false, facts.sms, sh);
      if (j["all"]["n"].get<std::size_t>() > 0) fam["mla_prefill"] = j;
    }
    if (have_gen && want("mla_decode")) {
      OJson j = check_mla(gen, ctx, gemm, true, facts.sms, sh);
      if (j["all"]["n"].get<std::size_t>() > 0) fam["mla_decode"] = j;
    }
  }
  if (want("moe") && load_op_table_file(dir + "moe.json", t)) fam["moe"] = check_moe(t, facts);
  if (want("custom_allreduce") && load_op_table_file(dir + "custom_allreduce.json", t))
    fam["custom_allreduce"] = check_curves(
        t, "custom_allreduce", backend == "vllm" && vllm_all_reduce_nccl_at_buffer(facts.compute_capability));
  if (want("deepep_ll") && load_op_table_file(dir + "deepep_ll.json", t))
    fam["deepep_ll"] = check_deepep(t, "deepep_ll");
  if (want("deepep_normal") && load_op_table_file(dir + "deepep_normal.json", t))
    fam["deepep_normal"] = check_deepep(t, "deepep_normal");
  // The sglang folder holds only its DeepEP tables; the GPU's NCCL table is validated with the other backends.
  if (want("nccl") && backend != "sglang" && load_op_table_file(root + "/" + gpu + "/nccl.json", t))
    fam["nccl"] = check_curves(t, "nccl");
  if (want("p2p") && backend != "sglang" && load_op_table_file(root + "/" + gpu + "/p2p.json", t))
    fam["p2p"] = check_curves(t, "p2p", false, false);
  out["families"] = fam;
  std::cout << out.dump(1) << "\n";
  if (!cell_log().close()) {
    std::cerr << "--cells: writing " << cells << " failed\n";
    return 1;
  }
  return 0;
}
