#pragma once
/// Prices an iteration from datasheet peaks: the model decomposed into per-layer operators under the role's
/// tensor/pipeline parallelism, each op max(compute time, memory time), plus TP all-reduces, pipeline
/// send/recv and per-iteration CPU overhead. The fallback until measured tables exist for a GPU.
#include "core/fidelity/cost_model.h"
#include "core/spec/deployment_spec.h"
#include "core/spec/model_spec.h"

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
  int pipeline_stages() const override { return p_.pp; }
  std::string describe() const override;

  /// Time of one dense GEMM [m x k] x [k x n] on one GPU, ns.
  double gemm_ns(double m, double n, double k) const;
  /// All-reduce of `bytes` over `gpus` GPUs inside a node (ring), ns.
  double all_reduce_ns(double bytes, int gpus) const;
  /// One MoE layer's routed experts (plus EP all-to-all) for T tokens, balanced routing, ns.
  double moe_experts_ns(double tokens) const;
  /// One layer's prefill attention for these chunks / decode attention over `ctx` keys in total, ns.
  double prefill_attention_ns(const std::vector<PrefillChunk>& chunks) const;
  double decode_attention_ns(double ctx) const;
  /// Memory time of `bytes` at the achieved HBM bandwidth, ns.
  double memory_ns(double bytes) const { return mem_ns(bytes); }
  const RooflineConstants& constants() const { return k_; }

 private:
  double mem_ns(double bytes) const;
  double compute_ns(double flops, double efficiency) const;

  ModelSpec m_;
  GpuSpec g_;
  Parallelism p_;
  RooflineConstants k_;
  double w_bytes_;      // bytes per weight element
  double a_bytes_ = 2;  // activations are 16-bit
  double kv_bytes_;     // bytes per KV element
  double peak_flops_;   // dense tensor FLOP/s for the weight dtype
  double heads_local_, kv_heads_local_, qk_dim_, v_dim_;
  int layers_per_stage_;
};

}  // namespace servesim
