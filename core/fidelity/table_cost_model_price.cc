// TableCostModel's step pricing: a batch's per-family time from the per-op predictors (table_cost_model.h).
#include "core/fidelity/table_cost_model.h"

#include <algorithm>
#include <cmath>

#include "core/fidelity/batch_split.h"

namespace servesim {

namespace {
const std::vector<std::int32_t> kNoDecodes;  // a step without decodes (no copy of an unused context list)
}  // namespace

// --------------------------------------------------------------------------------------------- pricing

TableCostModel::PerTokens TableCostModel::compute_per_tokens(std::int64_t tokens) const {
  PerTokens pt;
  const double Td = static_cast<double>(tokens);
  const double L = layers_total_;
  const double H = static_cast<double>(m_.hidden_size);
  double gemm = 0;
  gemm += projections_all_layers_us(L, Td, &pt.ex_gemm);
  for (const GemmUse& g : dense_gemms_) gemm += dense_layers_total_ * g.count * gemm_use_us(g, Td, &pt.ex_gemm);
  for (const GemmUse& g : moe_gemms_) gemm += moe_layers_total_ * g.count * gemm_use_us(g, Td, &pt.ex_gemm);
  pt.gemm = gemm;
  pt.norm = elementwise_us(Td);
  pt.embedding = roofline_.memory_ns(Td * H * 2) / 1e3 + roofline_.constants().kernel_fixed_us;
  if (p_.tp_attn > 1) {
    // An all-reduce after attention and after the FFN in every layer, and one after the vocab-parallel embedding.
    pt.ar_graph = (2 * L + 1) * all_reduce_us(Td * H, true, &pt.ex_ar_graph) + qk_norm_all_reduces_us(Td, true);
    pt.ar_eager = (2 * L + 1) * all_reduce_us(Td * H, false, &pt.ex_ar_eager) + qk_norm_all_reduces_us(Td, false);
  }
  return pt;
}

const TableCostModel::PerTokens& TableCostModel::per_tokens(std::int64_t tokens) {
  static constexpr std::int64_t kMaxCached = 1 << 17;
  if (tokens < 0 || tokens >= kMaxCached) {
    scratch_ = compute_per_tokens(tokens);
    return scratch_;
  }
  if (static_cast<std::size_t>(tokens) >= per_tokens_.size())
    per_tokens_.resize(static_cast<std::size_t>(tokens) + 1);
  PerTokens& pt = per_tokens_[static_cast<std::size_t>(tokens)];
  if (pt.gemm < 0) pt = compute_per_tokens(tokens);
  return pt;
}

BatchCost TableCostModel::price(const BatchShape& s) {
  if (part_ != CostPart::kWhole || p_.dp_attn > 1) return price_parts(s);
  double us[static_cast<int>(OpFamily::kCount)] = {};
  auto fam = [&us](OpFamily f) -> double& { return us[static_cast<int>(f)]; };
  const std::int64_t T = s.num_tokens + s.padded_tokens;
  const double Td = static_cast<double>(T);

  // Token-only costs (GEMMs, elementwise, embedding, all-reduce), memoised per token count.
  const bool piecewise = !s.cuda_graph && !e_.enforce_eager && T <= max_capture_;
  const bool in_graph = s.cuda_graph || piecewise;
  {
    const PerTokens& pt = per_tokens(T);
    fam(OpFamily::kGemm) = pt.gemm;
    count(OpFamily::kGemm, pt.ex_gemm);
    fam(OpFamily::kNorm) = pt.norm;
    fam(OpFamily::kEmbedding) = pt.embedding;
    if (p_.tp_attn > 1) {
      fam(OpFamily::kAllReduce) = in_graph ? pt.ar_graph : pt.ar_eager;
      count(OpFamily::kAllReduce, in_graph ? pt.ex_ar_graph : pt.ex_ar_eager);
    }
  }
  {
    const int rows = std::max(1, s.num_sampled);
    if (static_cast<std::size_t>(rows) >= lm_head_cache_.size()) {
      lm_head_cache_.resize(static_cast<std::size_t>(rows) + 1, -1.0);
      lm_head_ex_.resize(static_cast<std::size_t>(rows) + 1, 0);
    }
    if (lm_head_cache_[static_cast<std::size_t>(rows)] < 0) {
      bool ex = false;
      lm_head_cache_[static_cast<std::size_t>(rows)] = gemm_use_us(lm_head_, static_cast<double>(rows), &ex);
      lm_head_ex_[static_cast<std::size_t>(rows)] = ex ? 1 : 0;
    }
    fam(OpFamily::kLmHead) = lm_head_cache_[static_cast<std::size_t>(rows)];
    count(OpFamily::kLmHead, lm_head_ex_[static_cast<std::size_t>(rows)] != 0);
  }
  if (m_.is_moe() && moe_layers_total_ > 0) {
    // Per MoE layer: dispatch all-to-all, the slowest EP rank's experts, then the combine (moe_model.h).
    moe_loads(routing_, alpha_, T, static_cast<int>(m_.num_experts), static_cast<int>(m_.num_experts_per_tok), rng_,
              loads_);
    bool ex = false;
    fam(OpFamily::kMoe) = moe_layers_total_ * moe_us(T, loads_, &ex);
    count(OpFamily::kMoe, ex);
    // No all-to-all here: with TP attention (dp_attn = 1) every rank holds every token after the attention
    // all-reduce, each EP rank runs its own experts on the tokens routed to them, and the layer's closing
    // all-reduce over the whole group is the combine (priced with the all-reduces above).
  }
  if (!s.prefills.empty() || s.num_decode > 0) {
    bool ex_p = false, ex_d = false;
    if (s.num_decode > 0 && s.decode_contexts.empty()) {  // a shape built without per-request lengths: the mean
      std::vector<std::int32_t> ctx(static_cast<std::size_t>(s.num_decode),
                                    static_cast<std::int32_t>(s.decode_context_sum / std::max(1, s.num_decode)));
      step_attention_us(s.prefills, ctx, &ex_p, &ex_d, fam(OpFamily::kAttentionPrefill), fam(OpFamily::kAttentionDecode));
    } else {
      step_attention_us(s.prefills, s.num_decode > 0 ? s.decode_contexts : kNoDecodes, &ex_p, &ex_d,
                        fam(OpFamily::kAttentionPrefill), fam(OpFamily::kAttentionDecode));
    }
    if (prefill_lookup(s)) count(OpFamily::kAttentionPrefill, ex_p);
    if (s.num_decode > 0) count(OpFamily::kAttentionDecode, ex_d);
  }
  if (p_.pp > 1) {
    bool ex = false;
    fam(OpFamily::kPipelineP2p) = (p_.pp - 1) * pipeline_hop_us(Td, &ex);
    count(OpFamily::kPipelineP2p, ex);
  }
  return finish(us, s, piecewise);
}

BatchCost TableCostModel::price_parts(const BatchShape& s) {
  double us[static_cast<int>(OpFamily::kCount)] = {};
  auto fam = [&us](OpFamily f) -> double& { return us[static_cast<int>(f)]; };
  const std::int64_t T = s.num_tokens + s.padded_tokens;
  const double Td = static_cast<double>(T);
  const double L = layers_total_;
  const double H = static_cast<double>(m_.hidden_size);
  const bool piecewise = !s.cuda_graph && !e_.enforce_eager && T <= max_capture_;
  const bool in_graph = s.cuda_graph || piecewise;
  if (part_ != CostPart::kFfn) {
    // Attention domain: each data-parallel attention group (dp_attn) runs the qkv/o projections, attention,
    // norms, its TP all-reduces, the embedding and the LM head on its own requests; the slowest group decides.
    split_batch(s, p_.dp_attn, groups_);
    double best = -1;
    double pick[static_cast<int>(OpFamily::kCount)] = {};
    bool ex[static_cast<int>(OpFamily::kCount)] = {};
    double hop_tokens = 0;  // each group hands its own tokens to the next stage, in parallel: the largest decides
    for (const BatchShape& g : groups_) {
      double f[static_cast<int>(OpFamily::kCount)] = {};
      bool e[static_cast<int>(OpFamily::kCount)] = {};
      auto at = [&f](OpFamily x) -> double& { return f[static_cast<int>(x)]; };
      auto ex_at = [&e](OpFamily x) -> bool* { return &e[static_cast<int>(x)]; };
      const double Tg = static_cast<double>(g.num_tokens + g.padded_tokens);
      hop_tokens = std::max(hop_tokens, Tg);
      at(OpFamily::kGemm) += projections_all_layers_us(L, Tg, ex_at(OpFamily::kGemm));
      at(OpFamily::kNorm) = elementwise_attn_us(Tg);
      at(OpFamily::kEmbedding) = roofline_.memory_ns(Tg * H * 2) / 1e3 + roofline_.constants().kernel_fixed_us;
      at(OpFamily::kLmHead) =
          gemm_use_us(lm_head_, static_cast<double>(std::max(1, g.num_sampled)), ex_at(OpFamily::kLmHead));
      step_attention_us(g.prefills, g.num_decode > 0 ? g.decode_contexts : kNoDecodes,
                        ex_at(OpFamily::kAttentionPrefill), ex_at(OpFamily::kAttentionDecode),
                        at(OpFamily::kAttentionPrefill), at(OpFamily::kAttentionDecode));
      // An all-reduce after attention in every layer and one after the vocab-parallel embedding.
      at(OpFamily::kAllReduce) = (L + 1) * all_reduce_on(Tg * H, p_.tp_attn, in_graph, ex_at(OpFamily::kAllReduce)) +
                                 qk_norm_all_reduces_us(Tg, in_graph);
      double sum = 0;
      for (double v : f) sum += v;
      if (sum > best) {
        best = sum;
        for (int i = 0; i < static_cast<int>(OpFamily::kCount); ++i) {
          pick[i] = f[i];
          ex[i] = e[i];
        }
      }
    }
    for (int i = 0; i < static_cast<int>(OpFamily::kCount); ++i) us[i] = pick[i];
    for (OpFamily x : {OpFamily::kGemm, OpFamily::kLmHead, OpFamily::kAllReduce}) count(x, ex[static_cast<int>(x)]);
    if (prefill_lookup(s)) count(OpFamily::kAttentionPrefill, ex[static_cast<int>(OpFamily::kAttentionPrefill)]);
    if (s.num_decode > 0) count(OpFamily::kAttentionDecode, ex[static_cast<int>(OpFamily::kAttentionDecode)]);
    if (p_.pp > 1) {
      bool ex = false;
      fam(OpFamily::kPipelineP2p) = (p_.pp - 1) * pipeline_hop_us(hop_tokens, &ex);
      count(OpFamily::kPipelineP2p, ex);
    }
  }
  if (part_ != CostPart::kAttention) {
    // FFN domain: every token of the replica through the dense FFN or the router, shared expert and routed
    // experts (tp_ffn x ep_ffn), an all-reduce over tp_ffn after it.
    bool ex = false;
    double gemm = 0;
    for (const GemmUse& g : dense_gemms_) gemm += dense_layers_total_ * g.count * gemm_use_us(g, Td, &ex);
    for (const GemmUse& g : moe_gemms_) gemm += moe_layers_total_ * g.count * gemm_use_us(g, Td, &ex);
    fam(OpFamily::kGemm) += gemm;
    count(OpFamily::kGemm, ex);
    fam(OpFamily::kNorm) += elementwise_ffn_us(Td);
    if (m_.is_moe() && moe_layers_total_ > 0) {
      moe_loads(routing_, alpha_, T, static_cast<int>(m_.num_experts), static_cast<int>(m_.num_experts_per_tok), rng_,
                loads_);
      bool ex_moe = false, ex_a2a = false;
      fam(OpFamily::kMoe) = moe_layers_total_ * moe_us(T, loads_, &ex_moe);
      count(OpFamily::kMoe, ex_moe);
      // Dispatch and combine all-to-all when tokens are partitioned over DP attention groups. On an F role the
      // A->F / F->A activation transfers (afd_cost_model) are the dispatch and combine.
      if (p_.ep_ffn > 1 && p_.dp_attn > 1 && part_ == CostPart::kWhole) {
        if (use_deepep_) {
          // SGLang with DeepEP: every rank dispatches the tokens of its DP attention group (split over the group's
          // tp_attn ranks), and the collective waits for the busiest rank, so the largest group sets the size.
          // --deepep-mode auto (SGLang's default) runs normal mode when any rank has prefill tokens in the step
          // (is_extend_in_batch is gathered over the DP ranks) and low-latency mode for decode-only steps.
          std::int64_t rank_tokens = 0;
          for (const BatchShape& g : groups_) rank_tokens = std::max(rank_tokens, g.num_tokens + g.padded_tokens);
          rank_tokens = (rank_tokens + p_.tp_attn - 1) / p_.tp_attn;
          fam(OpFamily::kAllToAll) = moe_layers_total_ * deepep_us(rank_tokens, !s.prefills.empty(), &ex_a2a);
        } else {
          fam(OpFamily::kAllToAll) = moe_layers_total_ * 2 * all_to_all_us(T, &ex_a2a);
        }
        count(OpFamily::kAllToAll, ex_a2a);
      }
    }
    if (p_.tp_ffn > 1) {
      bool ex_ar = false;
      fam(OpFamily::kAllReduce) += L * all_reduce_on(Td * H, p_.tp_ffn, in_graph, &ex_ar);
      count(OpFamily::kAllReduce, ex_ar);
    }
  }
  return finish(us, s, piecewise);
}

BatchCost TableCostModel::finish(double* us, const BatchShape& s, bool piecewise) const {
  auto fam = [us](OpFamily f) -> double& { return us[static_cast<int>(f)]; };
  const double L = layers_total_;
  BatchCost c;
  // Launch-inclusive timing: a layer cannot run faster than the host launches its kernels (eager: every
  // kernel; piecewise: the graph pieces around attention; full graph: one replay, kernels only).
  // The FFN side of an A/F pair only executes what arrives: its host cost is the attention side's.
  if (part_ == CostPart::kFfn) {
    for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f) c.by_family[f] = span_ns(us[f] * 1e3);
    sum_families(c);
    return c;
  }
  const int launches = s.cuda_graph ? 0 : (piecewise ? 3 : k_.kernels_per_layer + qk_norm_kernels_);
  double gpu = 0;
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f) gpu += us[f];
  double launch_wait_us = 0;
  if (launches > 0 && L > 0) {
    const double floor_us = L * launches * k_.launch_us;
    if (floor_us > gpu) launch_wait_us = floor_us - gpu;
  }
  const double host = k_.cpu_iteration_us +
                      k_.cpu_per_request_us * (s.num_decode + static_cast<double>(s.prefills.size())) +
                      k_.cpu_per_token_us * static_cast<double>(s.num_tokens);
  const double overhead = launch_wait_us + exposed_host_time(host, gpu + launch_wait_us, async_host_);
  fam(OpFamily::kOverhead) = overhead;
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f) c.by_family[f] = span_ns(us[f] * 1e3);
  sum_families(c);
  // Each stage's host launches its own layers' kernels, so the launch wait is spread over the stages.
  split_pipeline(c, p_.pp, span_ns(launch_wait_us * 1e3));
  return c;
}

}  // namespace servesim
