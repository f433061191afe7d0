// servesim_opcheck's check of attention (prefill and decode, through the work model) and MLA (module tables less their projections).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli/ape_stats.h"
#include "cli/cell_log.h"
#include "cli/opcheck_checks.h"
#include "core/fidelity/attention_predictor.h"
#include "core/fidelity/gemm_model.h"
#include "core/fidelity/interpolation.h"
#include "core/fidelity/mla_module_table.h"
#include "core/fidelity/roofline_cost_model.h"

namespace servesim::opcheck {

namespace {

/// The report's hold-out description and its errors: all held-out cells, the length lines, the batch lines.
void held_out_report(OJson& out, bool decode, const ApeStats& lengths, const ApeStats& batches) {
  out["holdout"] = decode ? "every third interior kv_len (all batches), then every third interior batch size"
                          : "every third interior isl (all batches), then every third interior batch size";
  ApeStats both = lengths;
  both.add_all(batches);
  out["all"] = both.json();
  out["lengths_held_out"] = lengths.json();
  out["batches_held_out"] = batches.json();
}

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

}  // namespace

/// `generation`: the decode table beside a prefill table. On a FlashAttention-2 prefill grid its one-token prompts
/// are priced as the simulator prices them (TableCostModel::one_token_prompts_decode): decodes of one key, from
/// the whole generation grid of the same heads (the prefill grid's lines held out do not hold it).
OJson check_attention(const OpTable& t, bool decode, int sms, double hbm_tb_s, const L2Warmth& l2,
                      const OpTable* generation) {
  OJson out;
  ApeStats product, product_fixed, model_only, raw_interp, proxy, product_b, one_token;
  ApeStats edge[2];  // by the axis held out: the largest batch line, the longest length line
  const char* family = decode ? "attention_decode" : "attention_prefill";
  const char* length_axis = decode ? "kv_len" : "isl";
  int chose[4] = {0, 0, 0, 0};
  // The table's FlashAttention-2 decode grids that run unswapped share one HBM saturation constant
  // (fit_fa2_hbm_ctas), fitted as the simulator fits it, on the lines each experiment keeps of every grid.
  // A prefill table's one-token prompts are priced from the whole generation table, its constant from all of it.
  auto as_cold = [&l2](const OpGrid& k) { return read_cold(k, l2, grid_kv_bytes_per_key(k)); };
  double hbm[2] = {0, 0}, hbm_edge[2] = {0, 0};  // by the axis held out: interior lines, the last line
  if (decode)
    for (std::size_t axis : {std::size_t{0}, std::size_t{1}}) {
      OpTable kept = t, edge_kept = t;
      for (OpGrid& k : kept.grids)
        if (k.axes.size() == 2) k = training_grid(k, axis, every_third(k.axes[axis].size()));
      for (OpGrid& k : edge_kept.grids)
        if (k.axes.size() == 2) k = training_grid(k, axis, last_lines(k.axes[axis].size()));
      hbm[axis] = fit_fa2_hbm_ctas(kept, sms, as_cold);
      hbm_edge[axis] = fit_fa2_hbm_ctas(edge_kept, sms, as_cold);
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
    // One held-out cell: predicted, counted in the experiment's errors and the cell log (one-token prompts apart).
    auto score = [&](const AttentionPredictor& p, std::size_t i, std::size_t j, double truth, const char* axis,
                     ApeStats& stats) {
      const double pred = predict(p, B[i], S[j]);
      stats.add(pred, truth);
      cell_log().add(family, g.key, axis, {{"batch", B[i]}, {length_axis, S[j]}}, truth, pred);
      if (!decode && S[j] == 1) one_token.add(pred, truth);
      return pred;
    };
    // Experiment 1: hold out lengths (every third interior isl / kv_len).
    if (decode) set_fa2_hbm_ctas(geo, hbm[1]);
    {
      const auto held = every_third(S.size());
      const OpGrid r = read_cold(training_grid(g, 1, held), cold, bytes_per_key);
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
          score(p, i, j, truth, length_axis, product);
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
      const OpGrid r = read_cold(training_grid(g, 0, held), cold, bytes_per_key);
      AttentionPredictor p;
      if (!p.build(r, decode, geo, true)) continue;
      for (std::size_t i = 0; i < B.size(); ++i)
        for (std::size_t j = 0; j < S.size(); ++j) {
          const double truth = g.values[i * S.size() + j];
          if (!held[i] || std::isnan(truth)) continue;
          const double pr = score(p, i, j, truth, "batch", product_b);
          if (std::getenv("OPCHECK_DEBUG") && std::fabs(pr / truth - 1) > 1.0)
            std::cerr << g.key[0] << "/" << g.key[1] << "/" << g.key[2] << "/" << g.key[3] << " b=" << B[i]
                      << " s=" << S[j] << " pred " << pr << " truth " << truth << "\n";
        }
    }
    // Experiment 3: past the grid's edge: its largest batch line, then its longest length line, held out alone and
    // read from the rest as the simulator reads a batch past the measurements (flagged).
    for (std::size_t axis : {std::size_t{0}, std::size_t{1}}) {
      const auto held = last_lines(g.axes[axis].size());
      if (!held.back()) continue;
      if (decode) set_fa2_hbm_ctas(geo, hbm_edge[axis]);
      const OpGrid r = read_cold(training_grid(g, axis, held), cold, bytes_per_key);
      AttentionPredictor p;
      if (!p.build(r, decode, geo, true)) continue;
      for (std::size_t i = 0; i < B.size(); ++i)
        for (std::size_t j = 0; j < S.size(); ++j) {
          const double truth = g.values[i * S.size() + j];
          if (!held[axis == 0 ? i : j] || std::isnan(truth)) continue;
          edge[axis].add(predict(p, B[i], S[j]), truth);
        }
    }
  }
  held_out_report(out, decode, product, product_b);
  ApeStats edge_all = edge[0];
  edge_all.add_all(edge[1]);
  out["beyond_edge"] = OJson{{"holdout", decode ? "the largest batch line, the longest kv_len line, each alone"
                                                : "the largest batch line, the longest isl line, each alone"},
                             {"all", edge_all.json()},
                             {"batches", edge[0].json()},
                             {"lengths", edge[1].json()}};
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
      OpGrid r = training_grid(g, static_cast<std::size_t>(axis), held);
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
  held_out_report(out, decode, lengths, batches);
  return out;
}

}  // namespace servesim::opcheck
