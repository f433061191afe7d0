#pragma once
// Helpers shared by the attention work-model and predictor tests (attention_*_test.cc).

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/fidelity/attention_predictor.h"
#include "core/fidelity/op_table.h"

namespace servesim::attention_test {

inline AttentionGeometry geo(int heads, int kv, int bm = 128, int bn = 128) {
  AttentionGeometry g;
  g.heads = heads;
  g.kv_heads = kv;
  g.sms = 132;
  g.block_m = bm;
  g.block_n = bn;
  return g;
}

/// A100's vLLM decode geometry (108 SMs, FlashAttention-2's split rule), as the tests on A100's tables read them.
inline AttentionGeometry a100_fa2_geo(int heads, int kv) {
  AttentionGeometry g = geo(heads, kv);
  g.sms = 108;
  set_split_rule(g, "vllm_flash_attn");
  return g;
}

/// A uniform grid filled from a known work model (so the fit must recover it exactly), over these lengths.
inline OpGrid synthetic_grid(bool decode, const AttentionGeometry& g, const double* coef,
                             const std::vector<double>& lengths = {16, 64, 256, 1024, 4096}) {
  OpGrid grid;
  grid.key = {"bfloat16", "128", std::to_string(g.heads), std::to_string(g.kv_heads)};
  grid.axes = {{1, 2, 4, 8, 16, 32, 64}, lengths};
  for (const auto& a : grid.axes) {
    std::vector<double> l;
    for (double v : a) l.push_back(std::log(v));
    grid.log_axes.push_back(l);
  }
  grid.strides = {lengths.size(), 1};
  for (double b : grid.axes[0])
    for (double s : grid.axes[1]) {
      double f[kMaxWorkFeatures] = {};
      if (decode) uniform_decode_features(g, static_cast<std::int64_t>(b), static_cast<std::int64_t>(s), f);
      else uniform_prefill_features(g, static_cast<std::int64_t>(b), static_cast<std::int64_t>(s), f);
      double v = 0;
      for (int i = 0; i < (decode ? kDecodeFeatures : kPrefillFeatures); ++i) v += coef[i] * f[i];
      grid.values.push_back(v);
      grid.log_values.push_back(std::log(v));
    }
  return grid;
}

/// The synthetic grid of lengths 16..2048 made 30% slower wherever b x s reaches 1024 (tokens in prefill, keys in
/// decode), and the same grid without its 4-request and 256-length lines: the cell (4, 256) sits on that step with
/// one fast corner (2, 128) among its four neighbours, to test how a held-out cell is read across the lines.
struct StepGrid {
  OpGrid whole, part;
  double truth = 0;  ///< the measured (4, 256) cell
};
inline StepGrid step_grid(bool decode, const AttentionGeometry& g, const double* coef) {
  StepGrid out;
  out.whole = synthetic_grid(decode, g, coef, {16, 32, 64, 128, 256, 512, 1024, 2048});
  OpGrid& grid = out.whole;
  const std::size_t ns = grid.axes[1].size();
  for (std::size_t i = 0; i < grid.axes[0].size(); ++i)
    for (std::size_t j = 0; j < ns; ++j)
      if (grid.axes[0][i] * grid.axes[1][j] >= 1024) {
        grid.values[i * ns + j] *= 1.3;
        grid.log_values[i * ns + j] = std::log(grid.values[i * ns + j]);
      }
  out.truth = grid.values[2 * ns + 4];  // batch 4 (axis {1, 2, 4, ...}), length 256
  std::vector<bool> held_b(grid.axes[0].size(), false), held_s(ns, false);
  held_b[2] = held_s[4] = true;
  out.part = drop_grid_lines(drop_grid_lines(grid, 0, held_b), 1, held_s);
  return out;
}

/// One request of 40960 keys (320 tiles of 128) among n - 1 of 128 keys (one tile each).
inline std::vector<std::int32_t> one_long(int n) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n), 128);
  v[0] = 40960;
  return v;
}

/// The decode features of `contexts` under `g`.
inline std::array<double, kMaxWorkFeatures> decode_features(const AttentionGeometry& g, const std::vector<std::int32_t>& contexts) {
  DecodeWork w;
  for (std::int32_t c : contexts) w.add(g, c);
  std::array<double, kMaxWorkFeatures> f{};
  w.features(g, f.data());
  return f;
}

}  // namespace servesim::attention_test
