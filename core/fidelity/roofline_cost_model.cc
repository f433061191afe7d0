#include "core/fidelity/roofline_cost_model.h"

#include <algorithm>
#include <cmath>

#include "core/fidelity/batch_split.h"
#include "core/fidelity/memory_model.h"
#include "core/sim/det_math.h"

namespace servesim {

RooflineCostModel::RooflineCostModel(const ModelSpec& model, const GpuSpec& gpu, const Parallelism& par,
                                     const EngineOptions& engine, RooflineConstants k)
    : m_(model), g_(gpu), p_(par), k_(k) {
  // Each module's weights as the table model stores them (weight_format.h): a pre-quantised checkpoint's own format
  // (FP8, block-FP8, MXFP4 experts), else the engine dtype's.
  formats_ = weight_formats(model, engine.dtype);
  async_host_ = async_hides_host_time(engine, p_.pp);
  kv_bytes_ = kv_element_bytes(engine);
  heads_local_ = static_cast<double>(m_.num_attention_heads) / p_.tp_attn;
  if (m_.is_mla()) {
    // MLA with absorbed projections behaves like multi-query attention over the latent (kv_lora_rank + rope).
    kv_heads_local_ = 1;
    qk_dim_ = static_cast<double>(m_.kv_lora_rank + m_.qk_rope_head_dim);
    v_dim_ = static_cast<double>(m_.kv_lora_rank);
  } else {
    kv_heads_local_ = std::max(1.0, static_cast<double>(m_.num_key_value_heads) / p_.tp_attn);
    qk_dim_ = v_dim_ = static_cast<double>(m_.head_dim);
  }
  layers_per_stage_ = static_cast<int>((m_.num_hidden_layers + p_.pp - 1) / p_.pp);
  hop_ = pipeline_hop_shape(engine.backend);
}

std::string RooflineCostModel::describe() const { return "roofline from the " + g_.name + " datasheet"; }

double RooflineCostModel::mem_ns(double bytes) const { return bytes / (g_.hbm_tb_s * 1e12 * k_.memory_efficiency) * 1e9; }

double RooflineCostModel::compute_ns(double flops, double efficiency, bool fp8_math) const {
  const double peak = (fp8_math && g_.fp8_tflops > 0 ? g_.fp8_tflops : g_.bf16_tflops) * 1e12;
  return flops / (peak * efficiency) * 1e9;
}

double RooflineCostModel::gemm_ns(double m, double n, double k, WeightFormat weights) const {
  if (m <= 0) return 0;
  const double flops = 2.0 * m * n * k;
  const double bytes = k * n * weight_format_bytes(weights, m_) + (m * k + m * n) * a_bytes_;
  return std::max(compute_ns(flops, k_.gemm_efficiency, is_fp8(weights)), mem_ns(bytes)) + k_.kernel_fixed_us * 1e3;
}

double RooflineCostModel::qk_norm_all_reduces_ns(double tokens) const {
  if (!m_.qk_norm_across_heads || p_.tp_attn <= 1) return 0;
  // One per layer: q's and k's sums of squares together, two fp32 values per token (table_cost_model.cc).
  return static_cast<double>(layers_per_stage_) * p_.pp * all_reduce_ns(8 * tokens, p_.tp_attn);
}

double RooflineCostModel::link_ns(double bytes, bool intra_node) const {
  const double bw = (intra_node ? g_.intra_node_gb_s() : g_.inter_node_gb_s) * 1e9 * k_.link_efficiency;
  return bytes / bw * 1e9 + k_.link_latency_us * 1e3;
}

double RooflineCostModel::all_reduce_ns(double bytes, int gpus) const {
  if (gpus <= 1 || bytes <= 0) return 0;
  // Ring all-reduce moves 2 (n-1)/n of the buffer through each GPU's link.
  return link_ns(2.0 * (gpus - 1) / gpus * bytes, gpus <= g_.gpus_per_node);
}

double RooflineCostModel::all_gather_ns(double bytes, int gpus) const {
  if (gpus <= 1 || bytes <= 0) return 0;
  return link_ns(static_cast<double>(gpus - 1) / gpus * bytes, gpus <= g_.gpus_per_node);
}

double RooflineCostModel::pipeline_send_ns(double bytes) const {
  return link_ns(bytes, p_.world_size() <= g_.gpus_per_node);
}

double RooflineCostModel::pipeline_hop_ns(double tokens) const {
  if (p_.pp <= 1 || tokens <= 0) return 0;
  return pipeline_hop_time(hop_, tokens * static_cast<double>(m_.hidden_size) * a_bytes_, p_.tp_attn,
                           [&](double bytes) { return pipeline_send_ns(bytes); },
                           [&](double bytes) { return all_gather_ns(bytes, p_.tp_attn); });
}

double RooflineCostModel::moe_experts_ns(double T) const {
  if (!m_.is_moe() || T <= 0) return 0;
  const double H = static_cast<double>(m_.hidden_size);
  // Balanced routing: each GPU holds E/ep experts sharded tp_ffn ways and receives T*k/ep token rows.
  const double e_local = static_cast<double>(m_.num_experts) / p_.ep_ffn;
  const double rows = T * m_.num_experts_per_tok / p_.ep_ffn;
  const double inter = static_cast<double>(m_.moe_intermediate_size) / p_.tp_ffn;
  const double touched = e_local * (1.0 - det_pow(1.0 - 1.0 / m_.num_experts, T * m_.num_experts_per_tok));
  const double flops = 2.0 * rows * 3.0 * H * inter;
  // MXFP4 experts run weight-only (w4a16) on GPUs without FP4 tensor cores: their bytes, 16-bit math.
  const double bytes = touched * 3.0 * H * inter * weight_format_bytes(formats_.experts, m_) +
                       rows * (H + inter) * 2 * a_bytes_;
  return std::max(compute_ns(flops, k_.gemm_efficiency, is_fp8(formats_.experts)), mem_ns(bytes)) +
         2 * k_.kernel_fixed_us * 1e3;
}

double RooflineCostModel::all_to_all_ns(double T) const {
  if (!m_.is_moe() || p_.ep_ffn <= 1 || T <= 0) return 0;
  const int ep = p_.ep_ffn;
  const bool intra = ep <= g_.gpus_per_node;
  const double bw = (intra ? g_.intra_node_gb_s() : g_.inter_node_gb_s) * 1e9 * k_.link_efficiency;
  const double bytes = T * static_cast<double>(m_.num_experts_per_tok) * static_cast<double>(m_.hidden_size) * a_bytes_ / ep;
  return (ep - 1.0) / ep * bytes / bw * 1e9 + k_.link_latency_us * 1e3;
}

MoeLayerTime RooflineCostModel::moe_layer(double T) const {
  MoeLayerTime t;
  t.dispatch_us = t.combine_us = all_to_all_ns(T) / 1e3;
  t.experts_us = moe_experts_ns(T) / 1e3;
  return t;
}

double RooflineCostModel::prefill_attention_ns(const std::vector<PrefillChunk>& chunks) const {
  if (chunks.empty()) return 0;
  double flops = 0, bytes = 0;
  for (const PrefillChunk& ch : chunks) {
    const double q = ch.q, ctx = static_cast<double>(ch.context);
    const double pairs = q * (ctx - q) + q * (q + 1) / 2;  // keys each new token attends to
    flops += 2.0 * heads_local_ * (qk_dim_ + v_dim_) * pairs;
    bytes += ctx * kv_heads_local_ * (qk_dim_ + v_dim_) * kv_bytes_ + q * heads_local_ * (qk_dim_ + v_dim_) * a_bytes_;
  }
  return std::max(compute_ns(flops, k_.attention_efficiency, false), mem_ns(bytes)) + k_.kernel_fixed_us * 1e3;
}

double RooflineCostModel::decode_attention_ns(double ctx) const {
  if (ctx <= 0) return 0;
  const double flops = 2.0 * heads_local_ * (qk_dim_ + v_dim_) * ctx;
  const double bytes = ctx * kv_heads_local_ * (qk_dim_ + v_dim_) * kv_bytes_;
  return std::max(compute_ns(flops, k_.attention_efficiency, false), mem_ns(bytes)) + k_.kernel_fixed_us * 1e3;
}

double RooflineCostModel::attn_gemm_ns(double T) const {
  const double H = static_cast<double>(m_.hidden_size);
  const double L = static_cast<double>(layers_per_stage_) * p_.pp;
  double qkv_n;
  if (m_.is_mla()) {
    qkv_n = (m_.q_lora_rank > 0 ? m_.q_lora_rank : heads_local_ * (m_.qk_nope_head_dim + m_.qk_rope_head_dim)) +
            (m_.kv_lora_rank + m_.qk_rope_head_dim);
  } else {
    qkv_n = (heads_local_ + 2 * kv_heads_local_) * m_.head_dim;
  }
  const double o_k = heads_local_ * (m_.is_mla() ? m_.v_head_dim : m_.head_dim);
  return L * (gemm_ns(T, qkv_n, H, formats_.attention) + gemm_ns(T, H, o_k, formats_.attention));
}

double RooflineCostModel::ffn_gemm_ns(double T) const {
  const double H = static_cast<double>(m_.hidden_size);
  const double dense_layers = static_cast<double>(m_.num_hidden_layers - m_.moe_layers());
  double ffn_total = 0;
  if (dense_layers > 0) {
    const double inter = static_cast<double>(m_.intermediate_size) / p_.tp_ffn;
    ffn_total += dense_layers * (gemm_ns(T, 2 * inter, H, formats_.dense) + gemm_ns(T, H, inter, formats_.dense));
  }
  if (m_.is_moe()) {
    double moe = gemm_ns(T, static_cast<double>(m_.num_experts), H);  // router
    if (m_.shared_expert_intermediate_size > 0) {
      const double sh = static_cast<double>(m_.shared_expert_intermediate_size) / p_.tp_ffn;
      moe += gemm_ns(T, 2 * sh, H, formats_.dense) + gemm_ns(T, H, sh, formats_.dense);
    }
    ffn_total += static_cast<double>(m_.moe_layers()) * moe;
  }
  return ffn_total;
}

double RooflineCostModel::overhead_ns(const BatchShape& s, double gpu_ns, double& launch_wait_ns) const {
  const double L = static_cast<double>(layers_per_stage_) * p_.pp;
  // Eager mode: the CPU launches every kernel; a GPU-light batch waits on the launches.
  // CUDA graphs replay the whole forward with one launch.
  const double cpu_ns = (k_.cpu_iteration_ms * 1e6) +
                        k_.cpu_per_request_us * 1e3 * (s.num_decode + static_cast<double>(s.prefills.size()));
  if (!s.cuda_graph) {
    const double launch_ns = k_.cpu_launch_us * 1e3 * k_.kernels_per_layer * L;
    if (launch_ns > gpu_ns) launch_wait_ns = launch_ns - gpu_ns;
  }
  return exposed_host_time(cpu_ns, gpu_ns + launch_wait_ns, async_host_) + launch_wait_ns;
}

BatchCost RooflineCostModel::price(const BatchShape& s) {
  double launch_wait_ns = 0;
  BatchCost c = part_ == CostPart::kWhole && p_.dp_attn == 1 ? price_whole(s, launch_wait_ns) : price_parts(s, launch_wait_ns);
  // Each stage's host launches its own layers' kernels, so the launch wait is spread over the stages.
  if (part_ == CostPart::kWhole) split_pipeline(c, p_.pp, span_ns(launch_wait_ns));
  return c;
}

BatchCost RooflineCostModel::price_whole(const BatchShape& s, double& launch_wait_ns) const {
  BatchCost c;
  auto add = [&c](OpFamily f, double ns) { c.by_family[static_cast<int>(f)] += span_ns(ns); };
  const double T = static_cast<double>(s.num_tokens + s.padded_tokens);
  const double H = static_cast<double>(m_.hidden_size);
  const double L = static_cast<double>(layers_per_stage_) * p_.pp;
  const int tp = p_.tp_attn;

  // Linear layers per layer: QKV, O, then the FFN (dense MLP or experts).
  add(OpFamily::kGemm, attn_gemm_ns(T) + ffn_gemm_ns(T));
  const double moe_layers = static_cast<double>(m_.moe_layers());
  if (m_.is_moe()) {
    const MoeLayerTime mt = moe_layer(T);
    add(OpFamily::kMoe, moe_layers * moe_experts_ns(T));
    (void)mt;  // TP attention: tokens are on every rank, the closing all-reduce is the combine (no all-to-all)
  }

  // Attention: causal prefill chunks and decode reads, each one varlen kernel per layer.
  if (!s.prefills.empty()) add(OpFamily::kAttentionPrefill, L * prefill_attention_ns(s.prefills));
  if (s.num_decode > 0) add(OpFamily::kAttentionDecode, L * decode_attention_ns(static_cast<double>(s.decode_context_sum)));

  // Two RMSNorms per layer read and write the residual stream.
  add(OpFamily::kNorm, L * 2 * (mem_ns(2 * T * H * a_bytes_) + k_.kernel_fixed_us * 1e3));
  add(OpFamily::kEmbedding, mem_ns(T * H * a_bytes_) + k_.kernel_fixed_us * 1e3);
  add(OpFamily::kLmHead, gemm_ns(std::max(1, s.num_sampled), static_cast<double>(m_.vocab_size) / tp, H));
  // Tensor parallelism: an all-reduce after attention and after the FFN in every layer.
  add(OpFamily::kAllReduce, L * 2 * all_reduce_ns(T * H * a_bytes_, tp) + qk_norm_all_reduces_ns(T));
  if (p_.pp > 1) add(OpFamily::kPipelineP2p, (p_.pp - 1) * pipeline_hop_ns(T));

  add(OpFamily::kOverhead, overhead_ns(s, families_ns(c), launch_wait_ns));
  sum_families(c);
  return c;
}

BatchCost RooflineCostModel::price_parts(const BatchShape& s, double& launch_wait_ns) const {
  BatchCost c;
  auto add = [&c](OpFamily f, double ns) { c.by_family[static_cast<int>(f)] += span_ns(ns); };
  const double T = static_cast<double>(s.num_tokens + s.padded_tokens);
  const double H = static_cast<double>(m_.hidden_size);
  const double L = static_cast<double>(layers_per_stage_) * p_.pp;
  if (part_ != CostPart::kFfn) {
    // Attention domain: each data-parallel attention group runs its own requests; the slowest group decides.
    std::vector<BatchShape> groups;
    split_batch(s, p_.dp_attn, groups);
    double best = -1;
    double fam[static_cast<int>(OpFamily::kCount)] = {};
    double hop_tokens = 0;  // each group hands its own tokens to the next stage, in parallel: the largest decides
    for (const BatchShape& g : groups) {
      double f[static_cast<int>(OpFamily::kCount)] = {};
      const double Tg = static_cast<double>(g.num_tokens + g.padded_tokens);
      hop_tokens = std::max(hop_tokens, Tg);
      f[static_cast<int>(OpFamily::kGemm)] = attn_gemm_ns(Tg);
      if (!g.prefills.empty()) f[static_cast<int>(OpFamily::kAttentionPrefill)] = L * prefill_attention_ns(g.prefills);
      if (g.num_decode > 0)
        f[static_cast<int>(OpFamily::kAttentionDecode)] = L * decode_attention_ns(static_cast<double>(g.decode_context_sum));
      f[static_cast<int>(OpFamily::kNorm)] = L * 2 * (mem_ns(2 * Tg * H * a_bytes_) + k_.kernel_fixed_us * 1e3);
      f[static_cast<int>(OpFamily::kEmbedding)] = mem_ns(Tg * H * a_bytes_) + k_.kernel_fixed_us * 1e3;
      f[static_cast<int>(OpFamily::kLmHead)] =
          gemm_ns(std::max(1, g.num_sampled), static_cast<double>(m_.vocab_size) / p_.tp_attn, H);
      f[static_cast<int>(OpFamily::kAllReduce)] = L * all_reduce_ns(Tg * H * a_bytes_, p_.tp_attn) + qk_norm_all_reduces_ns(Tg);
      double sum = 0;
      for (double v : f) sum += v;
      if (sum > best) {
        best = sum;
        for (int i = 0; i < static_cast<int>(OpFamily::kCount); ++i) fam[i] = f[i];
      }
    }
    for (int i = 0; i < static_cast<int>(OpFamily::kCount); ++i) add(static_cast<OpFamily>(i), fam[i]);
    if (p_.pp > 1) add(OpFamily::kPipelineP2p, (p_.pp - 1) * pipeline_hop_ns(hop_tokens));
  }
  if (part_ != CostPart::kAttention) {
    // FFN domain: every token of the replica through the dense FFN or the experts (tp_ffn x ep_ffn).
    add(OpFamily::kGemm, ffn_gemm_ns(T));
    if (m_.is_moe()) {
      const MoeLayerTime mt = moe_layer(T);
      const double moe_layers = static_cast<double>(m_.moe_layers());
      add(OpFamily::kMoe, moe_layers * moe_experts_ns(T));
      // Dispatch and combine when DP attention partitions the tokens; on F the A/F transfers are both.
      if (p_.ep_ffn > 1 && p_.dp_attn > 1 && part_ == CostPart::kWhole)
        add(OpFamily::kAllToAll, moe_layers * (mt.dispatch_us + mt.combine_us) * 1e3);
    }
    add(OpFamily::kAllReduce, L * all_reduce_ns(T * H * a_bytes_, p_.tp_ffn));
  }
  // Host overhead belongs to the replica that schedules (whole or attention); the FFN side only executes.
  if (part_ != CostPart::kFfn) {
    add(OpFamily::kOverhead, overhead_ns(s, families_ns(c), launch_wait_ns));
  }
  sum_families(c);
  return c;
}

}  // namespace servesim
