// servesim_opcheck's check of message-size curves (NCCL, custom all-reduce, send/recv) and SGLang's DeepEP tables.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cli/ape_stats.h"
#include "cli/cell_log.h"
#include "cli/opcheck_checks.h"
#include "core/fidelity/collective_model.h"
#include "core/fidelity/deepep_table.h"
#include "core/fidelity/interpolation.h"

namespace servesim::opcheck {

/// Message-size curves as CollectiveModel reads them: every other interior size held out, the kept cells made
/// non-decreasing (`monotone`, CollectiveModel::monotone_curve), read by CollectiveModel::lookup.
/// `split_at_buffer` (vLLM's all-reduce table on a GPU without its symmetric-memory all-reduce): the sizes below
/// the 8 MiB buffer and those from it on read apart (CollectiveModel::split_curve, lookup_extended).
/// `choice_split`: the kept cells read as measured and as fitted, on this split and on the complementary one (even
/// interior sizes held out).
OJson check_curves(const OpTable& t, const char* family, bool split_at_buffer, bool monotone) {
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
                  : CollectiveModel::lookup(all, x).us;
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

}  // namespace servesim::opcheck
