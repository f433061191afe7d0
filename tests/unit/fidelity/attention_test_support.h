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
