// A measured grid's kernel, as the work model needs it: its split rule and prefill tile from the table's kernel
// name and key, and the HBM saturation constant of FlashAttention-2's unswapped decode grids fitted on a table.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "core/fidelity/attention_model.h"

namespace servesim {

bool fa2_decode(const AttentionGeometry& g) {
  return g.split_kv == AttentionGeometry::SplitKv::kBatch && g.ungrouped_beside_prefill;
}

void set_fa2_hbm_ctas(AttentionGeometry& g, double ctas) {
  if (fa2_unswapped_decode(g)) g.hbm_ctas = ctas;
  else if (fa2_decode(g)) g.wave_hbm_ctas = ctas;
}

bool fa2_unswapped_decode(const AttentionGeometry& g) {
  return fa2_decode(g) && (g.heads <= g.kv_heads || g.window > 0);
}

AttentionGeometry table_grid_geometry(const OpGrid& g, int sms, bool decode, int window) {
  AttentionGeometry geo;
  geo.heads = std::atoi(g.key[2].c_str());
  geo.kv_heads = std::atoi(g.key[3].c_str());
  geo.sms = sms;
  geo.head_dim = std::atoi(g.key[1].c_str());
  geo.kv_fp8 = g.key[0] == "fp8";
  set_split_rule(geo, g.kernel);
  geo.window = window;
  if (!decode) set_prefill_tile(geo, g.kernel, g.key[0], geo.head_dim);
  return geo;
}

double fit_fa2_hbm_ctas(const OpTable& decode_table, int sms, const std::function<OpGrid(const OpGrid&)>& prepare) {
  // Each unswapped grid's features and values, built once per candidate share.
  std::vector<std::pair<OpGrid, AttentionGeometry>> grids;
  for (const OpGrid& g : decode_table.grids) {
    if (g.axes.size() != 2 || g.key.size() < 4) continue;
    const int window = g.key.size() > 4 ? std::atoi(g.key[4].c_str()) : 0;
    const AttentionGeometry geo = table_grid_geometry(g, sms, true, window);
    if (fa2_unswapped_decode(geo)) grids.emplace_back(prepare(g), geo);
  }
  if (grids.empty()) return 0;
  double best = std::numeric_limits<double>::infinity(), pick = 0;
  for (int step = 0; step < kFa2HbmCtaShareSteps; ++step) {
    const double share = kFa2HbmCtaShareFirst + kFa2HbmCtaShareStep * step;
    double sq = 0;
    for (const auto& [grid, base] : grids) {
      AttentionGeometry geo = base;
      geo.hbm_ctas = share * sms;
      std::vector<double> x, y;
      const auto& B = grid.axes[0];
      const auto& S = grid.axes[1];
      for (std::size_t i = 0; i < B.size(); ++i)
        for (std::size_t j = 0; j < S.size(); ++j) {
          const double v = grid.values[i * S.size() + j];
          if (std::isnan(v) || v <= 0) continue;
          double f[kMaxWorkFeatures] = {};
          uniform_decode_features(geo, static_cast<std::int64_t>(B[i]), static_cast<std::int64_t>(S[j]), f);
          x.insert(x.end(), f, f + kDecodeFeatures);
          y.push_back(v);
        }
      const WorkModel m = fit_work_model(x, y, kDecodeFeatures);
      for (std::size_t r = 0; r < y.size() && std::isfinite(sq); ++r) {
        const double v = m.ok ? m.eval(&x[r * static_cast<std::size_t>(kDecodeFeatures)]) : 0;
        if (!(v > 0)) {
          sq = std::numeric_limits<double>::infinity();
          break;
        }
        const double d = interp_log(v / y[r]);
        sq += d * d;
      }
    }
    if (sq < best) {
      best = sq;
      pick = share * sms;
    }
  }
  return pick;
}

void set_split_rule(AttentionGeometry& g, const std::string& kernel, bool mla) {
  using SplitKv = AttentionGeometry::SplitKv;
  g.ungrouped_beside_prefill = false;
  g.cta_slots_per_sm = 1;
  g.prepare_step = false;
  g.fa3_num_splits = 0;
  g.fa3_num_splits_max_tokens = 0;
  g.pack_gqa_prefill = false;
  g.swapped_gqa_copies = kernel == "vllm_flash_attn";
  if (mla || kernel.find("fa3") != std::string::npos) {
    g.split_kv = SplitKv::kPerRequest;
    g.prepare_step = !mla;
    g.pack_gqa_prefill = !mla;
    if (!mla) {
      g.fa3_num_splits = kVllmFa3GraphSplits;
      g.fa3_num_splits_max_tokens = kVllmDefaultMaxCapture;
    }
  } else if (kernel.find("flash_attn") != std::string::npos || kernel.find("flash_attention") != std::string::npos) {
    g.split_kv = SplitKv::kBatch;
    g.cta_slots_per_sm = 2;
    g.ungrouped_beside_prefill = true;
  } else if (kernel == "torch_flow") {
    g.split_kv = SplitKv::kXqa;
  } else {
    g.split_kv = SplitKv::kBatch;
  }
}

void set_prefill_tile(AttentionGeometry& g, const std::string& kernel, const std::string& kv_dtype, int head_dim) {
  g.block_m = 128;
  g.block_n = 128;
  g.one_wg_rows = 0;
  g.one_wg_block_m = g.one_wg_block_n = 0;
  if (head_dim <= 0) return;
  if (kernel == "vllm_flash_attn") {
    // FlashAttention-2 with a paged KV cache always runs its split-KV kernel: 64 query rows, keys by head size.
    g.block_m = 64;
    g.block_n = head_dim <= 64 ? 256 : head_dim <= 128 ? 128 : 64;
    return;
  }
  if (kernel.find("fa3") == std::string::npos) return;
  const bool local = g.window > 0;
  // vLLM's use_one_mma_wg: head_dim 64 or 128, no window; its 64-row tile exists for 16-bit elements only.
  if (!local && (head_dim == 64 || head_dim == 128)) {
    g.one_wg_rows = kFa3OneWarpgroupRows;
    if (kv_dtype != "fp8") {
      g.one_wg_block_m = 64;
      g.one_wg_block_n = head_dim == 64 ? 192 : 128;
    }
  }
  if (kv_dtype == "fp8") {
    if (head_dim <= 64) g.block_m = 192, g.block_n = 160;
    else if (head_dim <= 96) g.block_m = 192;
    else if (head_dim <= 128) g.block_n = 160;
    else if (head_dim <= 192) g.block_n = local ? 128 : 160;
    else if (local) g.block_n = 64;
    return;
  }
  if (head_dim <= 64) g.block_m = 192, g.block_n = local ? 160 : 128;
  else if (head_dim <= 96) g.block_m = 192;
  else if (head_dim > 128 && head_dim <= 192) g.block_n = 96;
  else if (head_dim > 192) g.block_n = local ? 64 : 80;
}

}  // namespace servesim
