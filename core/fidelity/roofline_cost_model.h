#pragma once
/// Prices an iteration from datasheet peaks: the model decomposed into per-layer operators under the role's
/// tensor/pipeline parallelism, each op max(compute time, memory time), plus TP all-reduces, pipeline
/// send/recv and per-iteration CPU overhead. The fallback until measured tables exist for a GPU.
#include "core/fidelity/cost_model.h"
#include "core/fidelity/moe_model.h"
#include "core/fidelity/pipeline_hop.h"
#include "core/spec/deployment_spec.h"
#include "core/spec/model_spec.h"
#include "core/spec/weight_format.h"

namespace servesim {

/// The roofline's named constants. Each is a physical efficiency or latency, documented where defined.
struct RooflineConstants {
  double gemm_efficiency = 0.70;       ///< achieved share of dense tensor peak for large GEMMs
  double attention_efficiency = 0.55;  ///< FlashAttention-class kernels reach ~50-60% of peak on prefill
  double memory_efficiency = 0.80;     ///< achieved share of HBM bandwidth (AIConfigurator's H100 scaling)
  double kernel_fixed_us = 3.0;        ///< per-kernel fixed GPU time (AIConfigurator's H100 constant)
  double link_efficiency = 0.80;       ///< achieved share of NVLink / network bandwidth in collectives
  double link_latency_us = 10.0;       ///< per-collective latency (AIConfigurator's p2p latency)
  double cpu_launch_us = 5.0;          ///< CPU time to launch one kernel in eager mode
  double cpu_iteration_ms = 0.6;       ///< scheduler, input preparation, sampling, output processing
  double cpu_per_request_us = 4.0;     ///< per scheduled request bookkeeping
  int kernels_per_layer = 11;          ///< qkv, rope, attn, o, 2 norms, gate_up, act, down, 2 all-reduces
};

/// Roofline pricing for one role.
class RooflineCostModel : public CostModel {
 public:
  RooflineCostModel(const ModelSpec& model, const GpuSpec& gpu, const Parallelism& par, const EngineOptions& engine,
                    RooflineConstants k = {});
  BatchCost price(const BatchShape& shape) override;
  PriceSource source(OpFamily) const override { return PriceSource::kRoofline; }
  /// Prices only the attention or the FFN domain (A/F disaggregation); kWhole by default.
  void set_part(CostPart part) { part_ = part; }
  int pipeline_stages() const override { return p_.pp; }
  std::string describe() const override;

  /// Time of one dense GEMM [m x k] x [k x n] on one GPU with weights stored as `weights` (their bytes; FP8 formats
  /// at the FP8 tensor peak where the GPU has one, else 16-bit math), ns.
  double gemm_ns(double m, double n, double k, WeightFormat weights = WeightFormat::kBf16) const;
  /// `bytes` through one GPU's link (NVLink inside a node, else the network) at bandwidth x efficiency, plus the link
  /// latency, ns.
  double link_ns(double bytes, bool intra_node) const;
  /// All-reduce of `bytes` over `gpus` GPUs inside a node (ring), ns.
  double all_reduce_ns(double bytes, int gpus) const;
  /// Ring all-gather of a gathered buffer of `bytes` over `gpus` GPUs: (n-1)/n of it through each GPU's link, ns.
  double all_gather_ns(double bytes, int gpus) const;
  /// One send of `bytes` from a stage to the next over the hop's link (NVLink when the role's GPUs fit one node,
  /// else the network): link bandwidth x efficiency plus the link latency, ns.
  double pipeline_send_ns(double bytes) const;
  /// One pipeline hop for `tokens` tokens (pipeline_hop.h: the backend's tensors, each TP rank's share sent over
  /// the hop's link, NVLink when the role's GPUs fit one node, plus the receiver's all-gather), ns; 0 without PP.
  double pipeline_hop_ns(double tokens) const;
  /// The TP all-reduces of QK norms over all heads (ModelSpec::qk_norm_across_heads), all layers, ns.
  double qk_norm_all_reduces_ns(double tokens) const;
  /// One MoE layer's routed experts for T tokens on one rank, balanced routing (no all-to-all), ns.
  double moe_experts_ns(double tokens) const;
  /// One EP all-to-all (dispatch or combine) of T tokens' routed rows: each rank sends and receives
  /// T x topk x hidden x 2 bytes / ep, (ep-1)/ep of it over the link (NVLink inside a node, the NIC beyond), ns.
  double all_to_all_ns(double tokens) const;
  /// One MoE layer as dispatch + experts + combine (balanced routing: every rank finishes together), us.
  MoeLayerTime moe_layer(double tokens) const;
  /// One layer's prefill attention for these chunks / decode attention over `ctx` keys in total, ns.
  double prefill_attention_ns(const std::vector<PrefillChunk>& chunks) const;
  double decode_attention_ns(double ctx) const;
  /// Memory time of `bytes` at the achieved HBM bandwidth, ns.
  double memory_ns(double bytes) const { return mem_ns(bytes); }
  const RooflineConstants& constants() const { return k_; }

 private:
  double mem_ns(double bytes) const;
  BatchCost price_whole(const BatchShape& s, double& launch_wait_ns) const;
  BatchCost price_parts(const BatchShape& s, double& launch_wait_ns) const;
  double attn_gemm_ns(double tokens) const;  // qkv and o projections, all layers
  double ffn_gemm_ns(double tokens) const;   // dense FFN, router and shared expert, all layers
  /// Host time of a step; `launch_wait_ns` gets the part spent waiting on eager kernel launches.
  double overhead_ns(const BatchShape& s, double gpu_ns, double& launch_wait_ns) const;
  /// `flops` at the FP8 (`fp8_math`, where the GPU has FP8 tensor cores) or 16-bit dense peak x efficiency, ns.
  double compute_ns(double flops, double efficiency, bool fp8_math) const;

  ModelSpec m_;
  GpuSpec g_;
  Parallelism p_;
  RooflineConstants k_;
  WeightFormats formats_;  // how each module's weights are stored (bytes and math of its GEMMs)
  double a_bytes_ = 2;     // activations are 16-bit
  double kv_bytes_;        // bytes per KV element
  double heads_local_, kv_heads_local_, qk_dim_, v_dim_;
  int layers_per_stage_;
  bool async_host_ = false;  // async_hides_host_time: only host time beyond the step's GPU time is exposed
  CostPart part_ = CostPart::kWhole;
  PipelineHopShape hop_;
};

}  // namespace servesim
