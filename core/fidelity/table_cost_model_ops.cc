// TableCostModel's per-op predictors: GEMMs, attention, MoE, collectives, elementwise kernels (table_cost_model.h).
#include "core/fidelity/table_cost_model.h"

#include <algorithm>
#include <cmath>

namespace servesim {

// --------------------------------------------------------------------------------------------- predictors

WeightFormat TableCostModel::math_format(WeightFormat f) const {
  // A GPU without FP8 tensor cores (A100) runs an FP8 checkpoint weight-only (vLLM: FP8 Marlin, 16-bit math): the
  // bf16 grids price it; its weights still take 1 byte (memory_model).
  return is_fp8(f) && g_.fp8_tflops <= 0 ? WeightFormat::kBf16 : f;
}

void TableCostModel::count(OpFamily f, bool extrapolated) const {
  ++lookups_[static_cast<int>(f)];
  if (extrapolated) ++extrapolated_[static_cast<int>(f)];
}

double TableCostModel::datasheet_gemm_us(double m, double n, double k, WeightFormat weights) const {
  const double roof = roofline_.gemm_ns(m, n, k, weights) / 1e3;
  if (!curves_.ok) return roof;
  const LogCurve& c = is_fp8(math_format(weights)) ? curves_.gemm_fp8 : curves_.gemm_bf16;
  return roof * c.eval(std::max(m, 1.0));
}

double TableCostModel::gemm_use_us(const GemmUse& g, double m, bool* extrap) const {
  if (m <= 0) return 0;
  if (!g.table.ok()) {
    if (extrap && g.grid) *extrap = true;  // the format's grid has no measured cell near this shape
    return datasheet_gemm_us(m, g.table.n, g.table.k, g.weights);
  }
  const double us = g.table.us(m, extrap);
  if (!g.quant_fused) return us;
  // Never below half the cell: the quantisation is the smaller kernel of the two at every shape (a guard).
  return std::max(0.5 * us, us - input_quant_us(m, g.table.k));
}

// vLLM's per-tensor FP8 grid times RowParallelLinear.forward on a 16-bit input (AIConfigurator's collect_gemm.py,
// static activation scale), so every cell holds a scaled_fp8_quant kernel before the CUTLASS GEMM. A serving vLLM
// compiles the model with Inductor and its custom ops off (-O2, the default), so the quantisation's native form is
// fused into the elementwise kernel that produces the GEMM's input: the RMSNorms before the QKV and gate/up
// projections and the SiLU-and-mul before the down projection. The o projection's input comes from the attention
// kernel and keeps its own. Block-FP8 (per-token-group scales, priced on this grid) keeps its time as measured.
void TableCostModel::fuse_input_quant(GemmUse& g, WeightFormat f) const {
  g.quant_fused = e_.backend == "vllm" && math_format(f) == WeightFormat::kFp8 && g.table.ok();
}

double TableCostModel::input_quant_us(double m, double k) const {
  return roofline_.memory_ns(3 * m * k) / 1e3 + roofline_.constants().kernel_fixed_us;
}

double TableCostModel::attention_projections_us(double tokens, bool* extrapolated) const {
  double us = 0;
  for (const GemmUse& g : layer_gemms_) us += g.count * gemm_use_us(g, tokens, extrapolated);
  return std::min(us, mla_cap_.cap_us(tokens));
}

double TableCostModel::projections_all_layers_us(double layers, double tokens, bool* extrapolated) const {
  if (!mla_cap_.empty()) return layers * attention_projections_us(tokens, extrapolated);
  // Without a cap, summed per GEMM as always (the same rounding, so results without MLA modules do not move).
  double us = 0;
  for (const GemmUse& g : layer_gemms_) us += layers * g.count * gemm_use_us(g, tokens, extrapolated);
  return us;
}

double TableCostModel::gemm_us(double m, double n, double k, bool fp8, bool* extrapolated) const {
  return gemm_use_us(make_gemm(n, k, 1, fp8 ? WeightFormat::kFp8 : WeightFormat::kBf16), m, extrapolated);
}

double TableCostModel::gemm_us(double m, double n, double k, WeightFormat f, bool* extrapolated) const {
  return gemm_use_us(make_gemm(n, k, 1, f), m, extrapolated);
}

namespace {

// A predictor's price (read returns < 0 where it cannot price the batch) times the head ratio, its approximation
// flag passed on.
template <class Read>
bool scaled_price(double scale, bool approx, bool* extrapolated, Read read, double& us) {
  bool ex = approx;
  const double v = read(&ex);
  if (v < 0) return false;
  if (extrapolated && ex) *extrapolated = true;
  us = v * scale;
  return true;
}

}  // namespace

bool TableCostModel::GridAttention::prefill(const std::vector<PrefillChunk>& chunks, bool* extrapolated,
                                            double& us) const {
  return ok() && scaled_price(scale, approx, extrapolated, [&](bool* ex) { return p.prefill_us(chunks, ex); }, us);
}

bool TableCostModel::GridAttention::decode(const std::vector<std::int32_t>& contexts, bool* extrapolated,
                                           double& us, bool beside_prefill) const {
  return ok() && scaled_price(scale, approx, extrapolated,
                              [&](bool* ex) { return p.decode_us(contexts, ex, beside_prefill); }, us);
}

double TableCostModel::prefill_attention_us(const std::vector<PrefillChunk>& chunks, bool* extrapolated,
                                            bool beside_decodes) const {
  if (chunks.empty()) return 0;
  if (!mla_path_.ok()) return prefill_on(prefill_, chunks, extrapolated);
  // vLLM on an MLA backend: the prompts its decode path takes, and the rest on the prefill kernel (two calls).
  const std::vector<char> on = mla_decode_path_prompts(mla_path_, chunks, beside_decodes);
  std::vector<PrefillChunk> shorter, longer;
  for (std::size_t i = 0; i < chunks.size(); ++i) (on[i] ? shorter : longer).push_back(chunks[i]);
  return (shorter.empty() ? 0.0 : prefill_on(prefill_short_, shorter, extrapolated)) +
         (longer.empty() ? 0.0 : prefill_on(prefill_, longer, extrapolated));
}

double TableCostModel::prefill_on(const GridAttention& grid, const std::vector<PrefillChunk>& chunks,
                                  bool* extrapolated) const {
  double v = -1;
  if (grid.prefill(chunks, extrapolated, v)) return v;
  if (extrapolated && grid.ok()) *extrapolated = true;  // a grid with no measurement near this batch
  const double roof = roofline_.prefill_attention_ns(chunks) / 1e3;
  if (!curves_.ok) return roof;
  double tokens = 0;
  for (const PrefillChunk& c : chunks) tokens += c.q;
  return roof * curves_.attn_prefill.eval(std::max(tokens, 1.0));
}

double TableCostModel::decode_attention_us(const std::vector<std::int32_t>& contexts, bool* extrapolated,
                                           bool beside_prefill) const {
  if (contexts.empty()) return 0;
  double sum = 0;
  for (std::int32_t c : contexts) sum += c;
  double v = -1;
  // The tables read this call's K and V from L2, serving does not: the grid is read cold (build_attention); MLA's
  // module grids are interpolated as measured and the cold reads added after.
  if (decode_.decode(contexts, extrapolated, v, beside_prefill)) return m_.is_mla() ? v + cold_l2_us(sum) : v;
  if (extrapolated && decode_.ok()) *extrapolated = true;  // a grid with no measurement near this batch
  const double roof = roofline_.decode_attention_ns(sum) / 1e3;
  if (!curves_.ok) return roof;
  return roof * curves_.attn_decode.eval(std::max(sum, 1.0));
}

double TableCostModel::prefill_window_attention_us(const std::vector<PrefillChunk>& chunks, bool* extrapolated) const {
  if (chunks.empty()) return 0;
  double v = -1;
  if (prefill_win_.prefill(chunks, extrapolated, v)) return v;
  if (extrapolated) *extrapolated = true;
  const std::int64_t w = m_.sliding_window;
  if (!curves_.attn_prefill_window.empty()) {
    // No window grid (A100, datasheet GPUs, windows no table measures): the uniform batch with the same windowed
    // (query, key) pairs per request, priced as full attention on this GPU and scaled by the measured window / full
    // ratio at its length (efficiency.json; at 8192 tokens over a 128 window, 0.18).
    double pairs = 0;
    for (const PrefillChunk& c : chunks)
      pairs += uniform_pairs(w, static_cast<double>(c.context)) - uniform_pairs(w, static_cast<double>(c.context - c.q));
    const double s = uniform_length_for_pairs(w, pairs / static_cast<double>(chunks.size()));
    const auto len = static_cast<std::int32_t>(std::max(1.0, std::round(s)));
    const std::vector<PrefillChunk> uniform(chunks.size(), PrefillChunk{len, len});
    return prefill_attention_us(uniform, nullptr) * curves_.attn_prefill_window.eval(s / static_cast<double>(w));
  }
  // Without the ratio: the full-attention predictor on the keys some row of each chunk sees (the window before the
  // chunk and the chunk itself), an overestimate for prompts far beyond the window.
  std::vector<PrefillChunk> capped(chunks);
  for (PrefillChunk& c : capped) c.context = std::min<std::int64_t>(c.context, c.q + std::max<std::int64_t>(0, w - 1));
  return prefill_attention_us(capped, nullptr);
}

double TableCostModel::decode_window_attention_us(const std::vector<std::int32_t>& contexts, bool* extrapolated,
                                                  bool beside_prefill) const {
  if (contexts.empty()) return 0;
  double v = -1;
  if (decode_win_.decode(contexts, extrapolated, v, beside_prefill)) return v;  // read cold, the window's keys
  // No window grid: a decode step reads at most the window's keys.
  std::vector<std::int32_t> capped(contexts);
  const std::int32_t w = static_cast<std::int32_t>(m_.sliding_window);
  for (std::int32_t& c : capped) c = std::min(c, w);
  if (extrapolated) *extrapolated = true;
  return decode_attention_us(capped, nullptr, beside_prefill);
}

double TableCostModel::prefill_attention_layers_us(const std::vector<PrefillChunk>& chunks, bool* extrapolated,
                                                   bool beside_decodes) const {
  if (sliding_layers_ <= 0) return layers_total_ * prefill_attention_us(chunks, extrapolated, beside_decodes);
  return full_layers_ * prefill_attention_us(chunks, extrapolated, beside_decodes) +
         sliding_layers_ * prefill_window_attention_us(chunks, extrapolated);
}

double TableCostModel::decode_attention_layers_us(const std::vector<std::int32_t>& contexts, bool* extrapolated,
                                                  bool beside_prefill) const {
  if (sliding_layers_ <= 0) return layers_total_ * decode_attention_us(contexts, extrapolated, beside_prefill);
  return full_layers_ * decode_attention_us(contexts, extrapolated, beside_prefill) +
         sliding_layers_ * decode_window_attention_us(contexts, extrapolated, beside_prefill);
}

bool TableCostModel::one_token_prompts_decode(const std::vector<PrefillChunk>& prefills) const {
  return unified_attention_call_ && decode_.ok() && !decode_.approx &&
         servesim::one_token_prompts_decode(decode_.p.geometry(), prefills);
}

void TableCostModel::step_attention_us(const std::vector<PrefillChunk>& prefills,
                                       const std::vector<std::int32_t>& contexts, bool* ex_prefill, bool* ex_decode,
                                       double& prefill_us, double& decode_us) const {
  prefill_us = decode_us = 0;
  if (one_token_prompts_decode(prefills)) {
    const std::vector<std::int32_t> all = decode_call_contexts(contexts, prefills);
    if (contexts.empty()) prefill_us = decode_attention_layers_us(all, ex_prefill);
    else decode_us = decode_attention_layers_us(all, ex_decode);
    return;
  }
  if (!prefills.empty()) prefill_us = prefill_attention_layers_us(prefills, ex_prefill, !contexts.empty());
  // vLLM's decodes share the call with prompt tokens (a one-token prompt does not make one: FlashAttention-2 then
  // runs its decode path, priced above).
  if (!contexts.empty())
    decode_us = decode_attention_layers_us(contexts, ex_decode, unified_attention_call_ && !all_one_token(prefills));
}

double TableCostModel::moe_us(std::int64_t tokens, const std::vector<std::int64_t>& loads, bool* extrapolated) const {
  if (tokens <= 0) return 0;
  if (moe_.ok()) return moe_.us(tokens, loads, extrapolated);
  double roof = roofline_.moe_experts_ns(static_cast<double>(tokens)) / 1e3;
  if (!loads.empty() && p_.ep_ffn > 1) {
    // The datasheet prices balanced routing; the per-rank model scales it to this assignment's slowest rank.
    std::vector<std::int64_t> ref;
    moe_balanced_loads(tokens, static_cast<int>(m_.num_experts), static_cast<int>(m_.num_experts_per_tok), ref);
    const double base = moe_slowest_rank(moe_rank_, ref, p_.ep_ffn);
    if (base > 0) roof *= moe_slowest_rank(moe_rank_, loads, p_.ep_ffn) / base;
  }
  if (!curves_.ok || curves_.moe.empty()) return roof;
  return roof * curves_.moe.eval(static_cast<double>(tokens));
}

double TableCostModel::qk_norm_all_reduces_us(double tokens, bool graph) const {
  if (!m_.qk_norm_across_heads || p_.tp_attn <= 1 || tokens <= 0) return 0;
  // One per layer: q's and k's sums of squares concatenated, two fp32 values per token (counted in 16-bit elements
  // as the tables are). vLLM's MiniMaxText01RMSNormTP.forward_qk reduces both at once since its PR 31493 (December
  // 2025; SGLang's PR 14416 likewise); before, q_norm and k_norm each ran their own all-reduce.
  return layers_total_ * all_reduce_on(4 * tokens, p_.tp_attn, graph, nullptr);
}

double TableCostModel::pipeline_hop_us(double tokens, bool* extrapolated) const {
  if (p_.pp <= 1 || tokens <= 0) return 0;
  const double elements = tokens * static_cast<double>(m_.hidden_size);  // one whole 16-bit tensor
  const int tp = p_.tp_attn;
  auto gather = [&](double bytes) {
    if (const CollectiveTime t = collectives_.nccl("all_gather", bytes / 2, tp); t.ok) {
      if (extrapolated && t.extrapolated) *extrapolated = true;
      return t.us;
    }
    return roofline_.all_gather_ns(bytes, tp) / 1e3;
  };
  return pipeline_hop_time(hop_, elements * 2, tp, [&](double bytes) { return pipeline_send_us(bytes, extrapolated); },
                           gather);
}

double TableCostModel::pipeline_send_us(double bytes, bool* extrapolated) const {
  if (!p2p_hop_.empty()) {
    // The collectives' rule for a measured size curve (64 MiB is the largest measured message).
    const CollectiveTime t = CollectiveModel::lookup(p2p_hop_, bytes);
    if (extrapolated && t.extrapolated) *extrapolated = true;
    return t.us;
  }
  return roofline_.pipeline_send_ns(bytes) / 1e3;
}

double TableCostModel::all_reduce_us(double elements, bool graph, bool* extrapolated) const {
  return all_reduce_on(elements, p_.tp_attn, graph, extrapolated);
}

double TableCostModel::all_reduce_on(double elements, int gpus, bool graph, bool* extrapolated) const {
  if (gpus <= 1 || elements <= 0) return 0;
  const CollectiveTime t = collectives_.all_reduce(elements, gpus, graph);
  if (t.ok) {
    if (extrapolated && t.extrapolated) *extrapolated = true;
    return t.us;
  }
  const double roof = roofline_.all_reduce_ns(elements * 2, gpus) / 1e3;
  if (!curves_.ok) return roof;
  return roof * curves_.all_reduce.eval(elements * 2);
}

double TableCostModel::all_to_all_us(std::int64_t tokens, bool* extrapolated) const {
  const int ep = p_.ep_ffn;
  if (!m_.is_moe() || ep <= 1 || tokens <= 0) return 0;
  const double elements = static_cast<double>(tokens) * static_cast<double>(m_.num_experts_per_tok) *
                          static_cast<double>(m_.hidden_size) / ep;  // 16-bit values each rank sends
  if (ep <= 8 && ep <= g_.gpus_per_node) {
    const CollectiveTime t = collectives_.nccl("alltoall", elements, ep);
    if (t.ok) {
      if (extrapolated && t.extrapolated) *extrapolated = true;
      return t.us;
    }
  }
  // No measurement for this group (beyond one node, or a GPU without an NCCL table): the datasheet link.
  if (extrapolated) *extrapolated = true;
  return roofline_.all_to_all_ns(static_cast<double>(tokens)) / 1e3;
}

double TableCostModel::deepep_us(std::int64_t tokens_per_rank, bool prefill, bool* extrapolated) const {
  if (!use_deepep_ || tokens_per_rank <= 0) return 0;
  const DeepEpTable& t = prefill ? deepep_normal_ : deepep_ll_;
  bool ex = p_.ep_ffn != kDeepEpMeasuredRanks;  // another EP size than measured: the 8-rank curve as it is
  const double us = t.us(DeepEpPhase::kDispatch, static_cast<double>(tokens_per_rank), &ex) +
                    t.us(DeepEpPhase::kCombine, static_cast<double>(tokens_per_rank), &ex);
  if (extrapolated && ex) *extrapolated = true;
  return us;
}

MoeLayerTime TableCostModel::moe_layer(std::int64_t tokens, const std::vector<std::int64_t>& loads,
                                       bool* extrapolated) const {
  MoeLayerTime t;
  bool ex = false;
  t.dispatch_us = t.combine_us = all_to_all_us(tokens, &ex);
  if (extrapolated && ex) *extrapolated = true;
  t.experts_us = moe_us(tokens, loads, extrapolated);
  return t;
}

double TableCostModel::elementwise_us(double tokens) const {
  return elementwise_attn_us(tokens) + elementwise_ffn_us(tokens);
}

// Memory-bound kernels per layer, each its bytes at the achieved HBM bandwidth plus a fixed kernel time:
// two fused residual-add + RMSNorm (read x and residual, write both) and rotary embedding on q and k on the
// attention side; the SiLU-and-mul of dense layers (read gate and up, write the product) on the FFN side.
// A QK RMSNorm reads and writes q and k once more: per head in the backend's qk_norm_kernels (none where the norm
// is fused with RoPE); over all heads (qk_norm_across_heads) in two kernels, the sum of squares that the TP
// all-reduce combines (one more read) and the scaling after it.
double TableCostModel::elementwise_attn_us(double tokens) const {
  const double H = static_cast<double>(m_.hidden_size);
  const double a = 2.0;  // 16-bit activations
  const double fixed = roofline_.constants().kernel_fixed_us;
  const double norm = 2 * (roofline_.memory_ns(4 * tokens * H * a) / 1e3 + fixed);
  const double qk_bytes = tokens * (heads_local_ + kv_heads_local_) * static_cast<double>(m_.head_dim) * a;
  const double rope = roofline_.memory_ns(2 * qk_bytes) / 1e3 + fixed;
  const double qk_norm = qk_norm_kernels_ == 0 ? 0
                         : roofline_.memory_ns((qk_norm_kernels_ + 1) * qk_bytes) / 1e3 + qk_norm_kernels_ * fixed;
  return layers_total_ * (norm + rope + qk_norm);
}

double TableCostModel::elementwise_ffn_us(double tokens) const {
  if (dense_layers_total_ <= 0) return 0;
  const double a = 2.0;
  const double fixed = roofline_.constants().kernel_fixed_us;
  const double inter = static_cast<double>(m_.intermediate_size) / p_.tp_ffn;
  return dense_layers_total_ * (roofline_.memory_ns(3 * tokens * inter * a) / 1e3 + fixed);
}

}  // namespace servesim
