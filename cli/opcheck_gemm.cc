// servesim_opcheck's check of GEMM: token counts, n and k lines held out, each grid read as the simulator reads it.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "cli/ape_stats.h"
#include "cli/cell_log.h"
#include "cli/opcheck_checks.h"
#include "core/fidelity/gemm_model.h"
#include "core/fidelity/interpolation.h"

namespace servesim::opcheck {

namespace {

/// Token counts held out as shapes: every third interior group of token_count_groups (a step pair (m, m + 1) from 32
/// tokens on is held out whole).
std::vector<bool> every_third_step_pair(const std::vector<double>& m) {
  const std::vector<int> group = token_count_groups(m);
  const int groups = m.empty() ? 0 : group.back() + 1;
  std::vector<bool> h(m.size(), false);
  for (std::size_t i = 0; i < m.size(); ++i) h[i] = group[i] % 3 == 1 && group[i] + 1 < groups;
  return h;
}

}  // namespace

OJson check_gemm(const OpTable& t, const std::string& backend) {
  OJson out;
  ApeStats all, all_m, pricing;
  ApeStats fixed_m[std::size(kTokenReadings)];  // every grid read one way
  OJson by_dtype, by_dtype_m, m_chosen, m_runtime;
  ApeStats edge1[3], edge2[3];  // the last (two) n lines, k lines, token counts held out: read past the edge
  std::size_t edge_unflagged = 0;  // such reads the predictor did not flag as extrapolated (should be none)
  for (const OpGrid& g : t.grids) {
    if (g.axes.size() != 3) continue;
    ApeStats e;
    for (std::size_t axis = 0; axis < 2; ++axis) {  // hold out n lines, then k lines
      const auto held = every_other(g.axes[axis].size());
      const OpGrid r = training_grid(g, axis, held);
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
      const OpGrid r = training_grid(g, 2, held);
      const TokenReading chosen = choose_token_reading(r);  // on the counts left, as the simulator chooses
      m_chosen[g.key[0]] = token_reading_name(chosen);
      OpGrid whole = g;  // the whole grid as the simulator loads it, which prices roles
      mask_glitch_cells(whole);
      m_runtime[g.key[0]] = token_reading_name(choose_token_reading(whole));
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
    // Beyond the grid's edge: its last n line, its last k line and its largest token count, each held out alone
    // and read from the rest as the simulator reads a shape past the measurements (flagged); then the last two of
    // each, read from the third last (further past the edge: 3-4x in n and k, 2-4x in m).
    for (std::size_t lines = 1; lines <= 2; ++lines) {
      for (std::size_t axis = 0; axis < 3; ++axis) {
        const auto held = last_lines(g.axes[axis].size(), lines);
        if (!held.back()) continue;
        ApeStats (&edge)[3] = lines == 1 ? edge1 : edge2;
        const OpGrid r = training_grid(g, axis, held);
        const TokenReading reading = choose_token_reading(r);
        for (std::size_t i = 0; i < g.axes[0].size(); ++i)
          for (std::size_t j = 0; j < g.axes[1].size(); ++j) {
            if ((axis == 0 && !held[i]) || (axis == 1 && !held[j])) continue;
            const GemmCurve c = make_gemm_curve(r, g.axes[0][i], g.axes[1][j], reading);
            if (!c.ok()) continue;
            for (std::size_t k = 0; k < g.axes[2].size(); ++k) {
              if (axis == 2 && !held[k]) continue;
              const double truth = g.values[i * g.strides[0] + j * g.strides[1] + k];
              if (std::isnan(truth)) continue;
              bool flagged = false;
              const double pred = c.us(g.axes[2][k], &flagged);
              edge[axis].add(pred, truth);
              if (!flagged) ++edge_unflagged;
            }
          }
      }
    }
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
  auto edge_json = [](const char* holdout, const ApeStats (&e)[3]) {
    ApeStats both;
    for (const ApeStats& x : e) both.add_all(x);
    return OJson{{"holdout", holdout}, {"all", both.json()}, {"n", e[0].json()}, {"k", e[1].json()}, {"m", e[2].json()}};
  };
  out["beyond_edge"] = edge_json("the last n line, the last k line, the largest token count, each alone", edge1);
  out["beyond_edge"]["unflagged"] = edge_unflagged;
  out["beyond_edge_two"] = edge_json("the last two n lines, k lines, token counts, each pair alone", edge2);
  return out;
}

}  // namespace servesim::opcheck
