// servesim_opcheck's check of MoE: held-out token counts, the three readings, and power-law routing from the balanced curves.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "cli/ape_stats.h"
#include "cli/cell_log.h"
#include "cli/opcheck_checks.h"
#include "core/fidelity/moe_model.h"
#include "core/sim/rng.h"

namespace servesim::opcheck {

MoeRankCost moe_rank_cost(const GpuFacts& gpu, const OpGrid& g) {
  const bool q8 = g.key[0].rfind("fp8", 0) == 0;
  const double hidden = std::atof(g.key[1].c_str()), inter = std::atof(g.key[2].c_str()) / std::atof(g.key[5].c_str());
  return servesim::moe_rank_cost(hidden, inter, q8 ? 1.0 : 2.0, gpu.hbm_tb_s, q8 ? gpu.fp8 : gpu.bf16);
}

bool moe_grid_predictor(const OpGrid& g, const GpuFacts& gpu, MoePredictor& p) {
  if (g.axes.size() != 1 || g.key.size() != 8) return false;
  const MoeRouting ref = g.key[7] == "balanced" ? MoeRouting::kBalanced : MoeRouting::kPowerLaw;
  const double ref_alpha = g.key[7] == measured_power_law_key(1.2) ? 1.2 : 1.01;
  return p.build(g, ref, ref_alpha, moe_rank_cost(gpu, g), std::atoi(g.key[4].c_str()), std::atoi(g.key[3].c_str()),
                 std::atoi(g.key[6].c_str()));
}

OJson check_moe(const OpTable& t, const GpuFacts& gpu) {
  OJson out;
  ApeStats interp, skew, noskew, measured_skew;
  ApeStats edge;  // the largest token count of every curve held out alone: read past the curve's end
  ApeStats fixed[3], fixed_balanced[3], sim_balanced;  // every curve read one way (MoePredictor::Interp order)
  int chose[3] = {0, 0, 0};  // balanced curves per reading
  std::map<std::vector<std::string>, const OpGrid*> by_key;
  for (const OpGrid& g : t.grids) by_key[g.key] = &g;
  for (const OpGrid& g : t.grids) {
    if (g.axes.size() != 1 || g.key.size() != 8) continue;
    const int experts = std::atoi(g.key[4].c_str()), topk = std::atoi(g.key[3].c_str()),
              ep = std::atoi(g.key[6].c_str());
    const bool balanced = g.key[7] == "balanced";
    // Token counts held out on every measured curve.
    {
      const auto held = every_third(g.axes[0].size());
      MoePredictor p;
      if (moe_grid_predictor(training_grid(g, 0, held), gpu, p)) {
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
    // Past the curve's end: its largest token count held out alone, read from the rest as the simulator reads a
    // step past the measurements (flagged).
    if (const auto held = last_lines(g.axes[0].size()); held.back() && !std::isnan(g.values.back())) {
      MoePredictor p;
      if (moe_grid_predictor(training_grid(g, 0, held), gpu, p))
        edge.add(p.us(static_cast<std::int64_t>(g.axes[0].back()), {}), g.values.back());
    }
    // Skew: predict the power-law measurements from the balanced curve and sampled power-law assignments.
    if (!balanced) continue;
    OpGrid read = g;  // the balanced curve as the simulator reads it
    mask_glitch_cells(read);
    MoePredictor p;
    if (!p.build(read, MoeRouting::kBalanced, 1.0, moe_rank_cost(gpu, g), experts, topk, ep)) continue;
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
  out["beyond_edge"] = OJson{{"holdout", "the largest token count of every curve, alone"}, {"all", edge.json()}};
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

}  // namespace servesim::opcheck
