#include "core/fidelity/attention_predictor.h"

#include <algorithm>
#include <cmath>

#include "core/fidelity/interpolation.h"
#include "core/sim/det_math.h"

namespace servesim {

bool AttentionPredictor::build_owned(OpGrid grid, bool decode, const AttentionGeometry& geo, bool choose) {
  auto owned = std::make_shared<const OpGrid>(std::move(grid));
  if (!build(*owned, decode, geo, choose)) {
    owned_ = nullptr;
    return false;
  }
  if (!owned_) owned_ = std::move(owned);  // build() keeps its own copies when it splits the grid
  return true;
}

bool AttentionPredictor::build(const OpGrid& grid, bool decode, const AttentionGeometry& geo, bool choose) {
  owned_ = nullptr;
  one_query_ = nullptr;
  less_split_output_ = false;
  if (fa3_split_output_priced(geo) && grid.axes.size() == 2) {
    // FlashAttention-3's split-kernel output traffic is priced apart (fa3_split_output_us, and for prefill calls
    // fa3_prefill_split_output_us): the work model and the residual are fitted on the grid less it, and decode_us
    // and prefill_us add it back for the batch they price.
    auto less = std::make_shared<OpGrid>(grid);
    const auto& B = grid.axes[0];
    const auto& S = grid.axes[1];
    for (std::size_t i = 0; i < B.size(); ++i)
      for (std::size_t j = 0; j < S.size(); ++j) {
        double& v = less->values[i * S.size() + j];
        if (std::isnan(v)) continue;
        const auto b = static_cast<std::int64_t>(B[i]);
        const auto len = static_cast<std::int64_t>(S[j]);
        const double out = decode ? fa3_split_output_us(geo, b, len)
                                  : fa3_prefill_split_output_us(geo, uniform_prefill_work(geo, b, len));
        if (out <= 0) continue;
        v = std::max(v - out, kSplitOutputFloor * v);
        if (i * S.size() + j < less->log_values.size()) less->log_values[i * S.size() + j] = det_log(v);
      }
    owned_ = less;
    less_split_output_ = true;
    return fit(*owned_, decode, geo, choose);
  }
  if (decode || !geo.ungrouped_beside_prefill || grid.axes.size() != 2 || grid.axes[1].size() < 3 ||
      grid.axes[1][0] != 1)
    return fit(grid, decode, geo, choose);
  // One-token prompts are FlashAttention-2 decode calls: the whole grid prices only batches of them, the rest of
  // the grid every other batch.
  auto one = std::make_shared<AttentionPredictor>();
  one->owned_ = std::make_shared<const OpGrid>(grid);
  if (!one->fit(*one->owned_, decode, geo, choose)) return false;
  std::vector<bool> first(grid.axes[1].size(), false);
  first[0] = true;
  auto rest = std::make_shared<const OpGrid>(drop_grid_lines(grid, 1, first));
  if (!fit(*rest, decode, geo, choose)) return false;
  owned_ = std::move(rest);
  one_query_ = std::move(one);
  return true;
}

bool AttentionPredictor::fit(const OpGrid& grid, bool decode, const AttentionGeometry& geo, bool choose) {
  grid_ = nullptr;
  interp_ = Interp::kProduct;
  if (grid.axes.size() != 2) return false;
  geo_ = geo;
  decode_ = decode;
  const int nf = decode ? kDecodeFeatures : kPrefillFeatures;
  const auto& B = grid.axes[0];
  const auto& S = grid.axes[1];
  first_length_ = S.empty() ? 1 : S.front();
  auto feats = [&](std::size_t i, std::size_t j, double* f) {
    const auto b = static_cast<std::int64_t>(B[i]);
    const auto s = static_cast<std::int64_t>(S[j]);
    if (decode) uniform_decode_features(geo_, b, s, f, &splits_);
    else uniform_prefill_features(geo_, b, s, f);
  };
  std::vector<double> x, y;
  for (std::size_t i = 0; i < B.size(); ++i)
    for (std::size_t j = 0; j < S.size(); ++j) {
      const double v = grid.values[i * S.size() + j];
      if (std::isnan(v)) continue;
      double f[kMaxWorkFeatures] = {};
      feats(i, j, f);
      x.insert(x.end(), f, f + nf);
      y.push_back(v);
    }
  if (y.empty()) return false;
  model_ = fit_work_model(x, y, nf);
  // Residual grid: measured over model. It varies slowly with shape where the model carries the kernel's tiling
  // structure, so interpolating it and multiplying by the model at the query beats interpolating raw latency
  // between grid points there (docs/validation.md); choose_interp checks that on the grid itself.
  residual_ = grid;
  for (std::size_t i = 0; i < B.size(); ++i)
    for (std::size_t j = 0; j < S.size(); ++j) {
      const std::size_t idx = i * S.size() + j;
      const double v = grid.values[idx];
      if (std::isnan(v)) continue;
      double f[kMaxWorkFeatures] = {};
      feats(i, j, f);
      const double m = model_.ok ? model_.eval(f) : 0;
      if (m > 0) {
        residual_.values[idx] = v / m;
        residual_.log_values[idx] = interp_log(v) - interp_log(m);
      } else {
        residual_.values[idx] = std::nan("");
        residual_.log_values[idx] = std::nan("");
      }
    }
  prepare_step_us_ = 0;
  raw_less_step_ = OpGrid();
  if (decode && geo_.prepare_step && model_.ok && model_.coef[5] > 0) {
    raw_less_step_ = grid;
    bool positive = true;
    for (std::size_t i = 0; i < B.size() && positive; ++i) {
      if (B[i] > static_cast<double>(kFa3PrepareMaxRequests)) continue;
      for (std::size_t j = 0; j < S.size(); ++j) {
        const std::size_t idx = i * S.size() + j;
        const double v = grid.values[idx] - model_.coef[5];
        if (std::isnan(v)) continue;
        if (!(v > 0)) {
          positive = false;
          break;
        }
        raw_less_step_.values[idx] = v;
        raw_less_step_.log_values[idx] = interp_log(v);
      }
    }
    if (positive) prepare_step_us_ = model_.coef[5];
    else raw_less_step_ = OpGrid();
  }
  grid_ = &grid;
  // A prefill grid reads model x residual, the residual along equal tokens (residual_along_tokens), which beat every
  // per-grid choice held out (docs/validation.md). A decode grid TensorRT-LLM runs whole on its masked multi-head
  // attention kernel: the work model follows that kernel's launch (mmha_launch), so its residual is what
  // interpolates too; other decode grids choose.
  if (choose && model_.ok && decode && !mmha_runs_whole(geo)) choose_interp(grid);
  return true;
}

void AttentionPredictor::choose_interp(const OpGrid& grid) {
  constexpr int kModes = 4;
  double sq[kModes] = {0, 0, 0, 0};
  int n = 0;
  const std::size_t ns = grid.axes[1].size();
  for (std::size_t axis : {std::size_t{1}, std::size_t{0}}) {
    const std::size_t len = grid.axes[axis].size();
    std::vector<bool> held(len, false);
    bool any = false;
    for (std::size_t i = 1; i + 1 < len; i += 2) held[i] = any = true;
    if (!any) continue;
    const OpGrid sub = drop_grid_lines(grid, axis, held);
    AttentionPredictor p;
    if (!p.fit(sub, decode_, geo_, false) || !p.model_.ok) continue;  // this fit's readings, on part of its grid
    for (std::size_t i = 0; i < grid.axes[0].size(); ++i)
      for (std::size_t j = 0; j < ns; ++j) {
        const double truth = grid.values[i * ns + j];
        if (!held[axis == 0 ? i : j] || std::isnan(truth) || truth <= 0) continue;
        const auto b = static_cast<std::int64_t>(grid.axes[0][i]);
        const auto s = static_cast<std::int32_t>(grid.axes[1][j]);
        double pred[kModes];
        bool bad = false;
        for (int m = 0; m < kModes; ++m) {
          p.interp_ = static_cast<Interp>(m);
          bool ex = false;
          pred[m] = p.decode_us(std::vector<std::int32_t>(static_cast<std::size_t>(b), s), &ex);
          bad = bad || ex || !(pred[m] > 0);
        }
        if (bad) continue;  // extrapolated in the sub-grid: not what the choice is about
        for (int m = 0; m < kModes; ++m) {
          const double d = interp_log(pred[m] / truth);
          sq[m] += d * d;
        }
        ++n;
      }
  }
  if (n == 0) return;
  int best = 0;
  for (int m = 1; m < kModes; ++m)
    if (sq[m] < sq[best]) best = m;
  interp_ = static_cast<Interp>(best);
}

double AttentionPredictor::uniform_model(double b, double s) const {
  double f[kMaxWorkFeatures] = {};
  const auto bi = static_cast<std::int64_t>(std::llround(std::max(b, 1.0)));
  const auto si = static_cast<std::int64_t>(std::llround(std::max(s, 1.0)));
  if (decode_) uniform_decode_features(geo_, bi, si, f, &splits_);
  else uniform_prefill_features(geo_, bi, si, f);
  return model_.eval(f);
}

GridValue AttentionPredictor::grid_at(const OpGrid& g, double b, double s, double* b_used, double* s_used,
                                      bool* extrap, AxisPos* used) const {
  const AxisPos ps = locate_log(g.axes[1], g.log_axes[1], std::max(s, 1.0));
  const AxisPos pb = locate_log(g.axes[0], g.log_axes[0], std::max(b, 1.0));
  *extrap = ps.clamped || pb.clamped;
  *s_used = ps.clamped_to;
  // Ragged grids: large batches of long requests were not measured. Step the batch down to the largest fully
  // measured cell; the caller scales from there. A batch or a length past the grid's upper edge is read at the edge
  // (stepping down from there read it from the line below the last, or from one request: docs/validation.md,
  // "attention past the grid's edge"); a length below the first line still steps down to one request, whose cell
  // bounds a batch that adds short chunks to it from below.
  AxisPos pos[2] = {pb, ps};
  const bool below = ps.clamped && s < g.axes[1].front();
  auto step_batch_down = [&]() {
    *b_used = pb.clamped_to;
    pos[0] = pb;
    GridValue v = interpolate(g, pos);
    while ((!v.ok || v.missing || below) && (pos[0].i0 > 0 || pos[0].i1 != pos[0].i0)) {
      const std::size_t i = pos[0].i1 != pos[0].i0 ? pos[0].i0 : pos[0].i0 - 1;
      pos[0] = AxisPos{};
      pos[0].i0 = pos[0].i1 = i;
      pos[0].clamped_to = *b_used = g.axes[0][i];
      v = interpolate(g, pos);
      *extrap = true;
    }
    return v;
  };
  GridValue v = step_batch_down();
  // Ragged the other way (a length measured only at large batches, as TensorRT-LLM's longest head_dim-256 FP8 KV
  // column): step the length down to the longest measured at or below this batch; the caller scales from there.
  for (std::size_t j = ps.i0; !v.ok && j > 0;) {
    --j;
    pos[1] = AxisPos{};
    pos[1].i0 = pos[1].i1 = j;
    pos[1].clamped_to = *s_used = g.axes[1][j];
    v = step_batch_down();
    *extrap = true;
  }
  *extrap = *extrap || v.extrapolated;
  if (used) {
    used[0] = pos[0];
    used[1] = pos[1];
  }
  return v;
}

double AttentionPredictor::batch_transport(double b, double b_used, double s_used) const {
  const OpGrid& g = residual_;
  // Past the largest batch line: the residual's change up to that line, as a fully measured grid's residual is read
  // at its edge; the model alone carries the batch beyond it.
  b = std::min(b, g.axes[0].back());
  if (!(b_used < b)) return 1.0;
  const AxisPos pb = locate_log(g.axes[0], g.log_axes[0], b);
  const AxisPos pu = locate_log(g.axes[0], g.log_axes[0], b_used);
  const auto& S = g.axes[1];
  for (std::size_t j = S.size(); j-- > 0;) {
    if (!(S[j] < s_used)) continue;
    AxisPos ps;
    ps.i0 = ps.i1 = j;
    ps.clamped_to = S[j];
    const AxisPos at_b[2] = {pb, ps}, at_used[2] = {pu, ps};
    const GridValue to = interpolate(g, at_b), from = interpolate(g, at_used);
    if (to.ok && !to.extrapolated && from.ok && !from.extrapolated && from.value > 0) return to.value / from.value;
  }
  return 1.0;
}

namespace {

// The log residual at (b, s) read across the lines of `across` (0: batch, 1: length) that bracket it, each line read
// at the point of the same tokens b s on it (log-interpolated along the line), then between the two lines in log
// coordinate. On a line, that line alone (read at (b, s) itself). False past an edge or next to an unmeasured corner.
bool read_across(const OpGrid& g, std::size_t across, double b, double s, double* log_out) {
  const double x[2] = {b, s};
  const AxisPos p = locate_log(g.axes[across], g.log_axes[across], x[across]);
  if (p.clamped) return false;
  const std::size_t along = 1 - across;
  const std::size_t lines[2] = {p.i0, p.i1};
  double lv[2] = {0, 0};
  for (int k = 0; k < (p.i0 == p.i1 ? 1 : 2); ++k) {
    const double at = g.axes[across][lines[k]];
    AxisPos pos[2];
    pos[along] = locate_log(g.axes[along], g.log_axes[along], b * s / at);
    pos[across].i0 = pos[across].i1 = lines[k];
    pos[across].clamped_to = at;
    const GridValue v = interpolate(g, pos);
    if (!v.ok || v.extrapolated || !(v.value > 0)) return false;
    lv[k] = interp_log(v.value);
  }
  *log_out = p.i0 == p.i1 ? lv[0] : (1 - p.w) * lv[0] + p.w * lv[1];
  return true;
}

}  // namespace

bool AttentionPredictor::residual_along_tokens(double b, double s, double* out) const {
  // Across the length lines and across the batch lines, each reading along equal tokens; the two agree on a pure
  // token law and are averaged (in log) so that neither axis is preferred and the reading stays continuous where
  // (b, s) crosses a grid line.
  double by_length = 0, by_batch = 0;
  const bool l = read_across(residual_, 1, b, s, &by_length);
  const bool m = read_across(residual_, 0, b, s, &by_batch);
  if (!l && !m) return false;
  *out = interp_exp(l && m ? (by_length + by_batch) / 2 : l ? by_length : by_batch);
  return true;
}

double AttentionPredictor::lookup(std::int64_t b_eq, double s_eq, double model_batch, bool* extrapolated) const {
  const bool use_model = model_.ok && model_batch > 0;
  const double b = static_cast<double>(std::max<std::int64_t>(b_eq, 1));
  double b_used = 0, s_used = 0;
  bool extrap = false;
  const GridValue v = grid_at(use_model ? residual_ : *grid_, b, s_eq, &b_used, &s_used, &extrap);
  if (!v.ok) return -1;
  if (extrapolated && extrap) *extrapolated = true;
  // A decode batch stepped down to a smaller measured batch (a ragged grid: no longer requests at that batch)
  // takes the residual's change from that batch to its own at the longest shorter length that measures both.
  const double transport = use_model && decode_ && b_used < b ? batch_transport(b, b_used, s_used) : 1.0;
  auto keys_read = [&](double len) { return geo_.window > 0 ? std::min(len, static_cast<double>(geo_.window)) : len; };
  if (!use_model) {
    // Without the work model, a length stepped down (or clamped) is carried up by the attention work per request:
    // the keys read in decode, the (query, key) pairs of a causal prompt in prefill.
    double length_scale = 1;
    if (s_used > 0 && s_eq > s_used)
      length_scale = decode_ ? keys_read(s_eq) / keys_read(s_used)
                             : uniform_pairs(geo_.window, s_eq) / std::max(uniform_pairs(geo_.window, s_used), 1.0);
    return v.value * (b / std::max(b_used, 1.0)) * length_scale;
  }
  double residual = v.value;
  if (!decode_) {
    residual_along_tokens(b, s_eq, &residual);
  } else if (!(b_used < b)) {
    // Decode: a batch bound by HBM costs the same along equal keys b x kv_len, one bound by its launch along the
    // batch line; the two readings of the residual are averaged in log (docs/validation.md). A batch stepped down a
    // ragged grid keeps the plain reading, which the transport carries to b.
    double by_keys = 0;
    if (residual_along_tokens(b, s_eq, &by_keys))
      residual = interp_exp((interp_log(residual) + interp_log(by_keys)) / 2);
  }
  const double product = residual * model_batch * transport;
  if (interp_ == Interp::kProduct) return product;
  // Raw latency at the uniform-equivalent cell, carried to the batch by the model's ratio.
  bool extrap_raw = false;
  AxisPos at[2];
  GridValue r = grid_at(*grid_, b, s_eq, &b_used, &s_used, &extrap_raw, at);
  // Between a batch line with FlashAttention-3's scheduler step and one without, read the grid less the step (and
  // add it back below where the batch has it); elsewhere the lines on both sides carry the same step.
  const double step_max = static_cast<double>(kFa3PrepareMaxRequests);
  const bool across_step = prepare_step_us_ > 0 && r.ok && grid_->axes[0][at[0].i0] <= step_max &&
                           grid_->axes[0][at[0].i1] > step_max;
  const OpGrid& raw_grid = across_step ? raw_less_step_ : *grid_;
  if (across_step) r = grid_at(raw_grid, b, s_eq, &b_used, &s_used, &extrap_raw, at);
  const double m_ref = r.ok ? uniform_model(b_used, s_used) : 0;
  if (!(m_ref > 0)) return product;
  if (extrapolated && extrap_raw) *extrapolated = true;
  double uniform = r.value;
  if (interp_ == Interp::kRawAffine) {
    // Along s at both batch lines, then along b; the log value above stands where a corner is unmeasured.
    const std::size_t ns = raw_grid.axes[1].size();
    auto cell = [&](std::size_t i, std::size_t j) { return raw_grid.values[i * ns + j]; };
    const double c[4] = {cell(at[0].i0, at[1].i0), cell(at[0].i0, at[1].i1), cell(at[0].i1, at[1].i0),
                         cell(at[0].i1, at[1].i1)};
    interp_cell_affine(c, at[0], at[1], uniform);
  }
  if (across_step && b_used <= step_max) uniform += prepare_step_us_;
  const double raw = uniform * model_batch / m_ref * transport;
  if (interp_ != Interp::kBlend) return raw;
  return std::sqrt(product * raw);
}

double AttentionPredictor::prefill_us(const std::vector<PrefillChunk>& chunks, bool* extrapolated) const {
  if (chunks.empty() || !grid_) return 0;
  if (one_query_ && all_one_token(chunks)) return one_query_->prefill_us(chunks, extrapolated);
  PrefillWork w;
  for (const PrefillChunk& c : chunks) w.add(geo_, c.q, c.context);
  if (w.requests == 0) return 0;
  double f[kMaxWorkFeatures] = {};
  w.features(geo_, f);
  const double model_batch = model_.ok ? model_.eval(f) : 0;
  const double per = w.pairs / static_cast<double>(w.requests);
  const double s_eq = uniform_length_for_pairs(geo_.window, per);
  const double out = less_split_output_ ? fa3_prefill_split_output_us(geo_, w) : 0.0;
  return lookup(w.requests, s_eq, model_batch, extrapolated) + out;
}

double AttentionPredictor::decode_us(const std::vector<std::int32_t>& contexts, bool* extrapolated,
                                     bool beside_prefill) const {
  if (contexts.empty() || !grid_) return 0;
  // Beside prompt tokens, a FlashAttention-2 call runs the decodes ungrouped and unsplit: the batch's model is
  // taken with every query head as its own KV head, against the uniform grid's grouped model (the ratio carries
  // the difference; the fitted per-tile costs are the grid's).
  AttentionGeometry g = geo_;
  const bool ungrouped = beside_prefill && geo_.ungrouped_beside_prefill;
  if (ungrouped) {
    g.kv_heads = g.heads;
    g.split_kv = AttentionGeometry::SplitKv::kNone;
  }
  DecodeWork& w = work_;  // reused: its per-request tiles keep their capacity between steps
  w.clear();
  // A decode reads at least one key tile: a context shorter than the grid's first length (2 keys on every table),
  // inside the same first tile, is read at that length rather than extrapolated below the grid by the work model's
  // key terms (a one-token prompt run as a decode: A100, 128 one-token prompts over 16 query heads on 1 KV head,
  // 16.1 us measured; read at 2 keys 16.04, extrapolated to 1 key 13.09).
  const auto floor_ctx = static_cast<std::int32_t>(first_length_ <= g.block_n ? first_length_ : 1);
  for (std::int32_t c : contexts) w.add(g, std::max(c, floor_ctx));
  double f[kMaxWorkFeatures] = {};
  w.features(g, f, ungrouped ? nullptr : &splits_);
  const double model_batch = model_.ok ? model_.eval(f) : 0;
  const auto b = static_cast<std::int64_t>(contexts.size());
  const double out = less_split_output_ ? fa3_split_output_us(geo_, b, w.max_ctx, &splits_) : 0.0;
  return lookup(b, w.ctx_sum / static_cast<double>(b), model_batch, extrapolated) + out;
}

}  // namespace servesim
