#pragma once
/// The deployment: cluster roles, each with a GPU type, parallelism, replica count and engine options.
#include <string>
#include <vector>

#include "core/spec/engine_options.h"
#include "core/spec/gpu_spec.h"

namespace servesim {

class ResourceCatalog;

/// Frontier's two-domain parallelism of one replica: attention (tp_attn x dp_attn) and FFN/MoE
/// (tp_ffn x ep_ffn) over pp pipeline stages.
struct Parallelism {
  int pp = 1;       ///< pipeline stages (vLLM pipeline_parallel_size)
  int tp_attn = 1;  ///< tensor parallelism of attention (vLLM tensor_parallel_size)
  int dp_attn = 1;  ///< data-parallel attention groups
  int tp_ffn = 1;   ///< tensor parallelism of the FFN / experts
  int ep_ffn = 1;   ///< expert parallelism
  /// GPUs per pipeline stage (attention domain).
  int stage_gpus() const { return tp_attn * dp_attn; }
  /// GPUs per replica.
  int world_size() const { return pp * tp_attn * dp_attn; }
};

/// Role kinds. Co-location is a single role C; prefill/decode disaggregation is P + D; attention/FFN
/// disaggregation is P + A + F (A decodes and holds the KV cache, F runs the FFN/MoE of every layer).
enum class RoleKind { kColocated, kPrefill, kDecode, kAttention, kFfn };
const char* role_kind_name(RoleKind k);

/// One cluster role.
struct RoleSpec {
  RoleKind kind = RoleKind::kColocated;
  std::string name = "C";  ///< unique display name
  GpuSpec gpu;
  int replicas = 1;
  Parallelism parallelism;
  EngineOptions engine;
  /// GPUs per replica: an F replica hosts only the FFN domain (pp x tp_ffn x ep_ffn), every other role the
  /// attention domain (pp x tp_attn x dp_attn), per Frontier Eq. 2.
  int world_size() const {
    return kind == RoleKind::kFfn ? parallelism.pp * parallelism.tp_ffn * parallelism.ep_ffn : parallelism.world_size();
  }
};

/// The least achieved share of a link (kv_transfer, afd) a scenario may give: below it a transfer outlasts any run.
inline constexpr double kMinLinkEfficiency = 0.01;

/// How KV caches move from P to D replicas.
struct KvTransferSpec {
  std::string link = "inter_node";  ///< "inter_node" (RDMA NICs) or "nvlink" (P and D share a node)
  double bandwidth_gb_s = 0;        ///< per-GPU link bandwidth override (0 = from the GPU catalog)
  double efficiency = 0.8;          ///< achieved share of the link (assumed: no KV-transfer measurements exist)
  double latency_us = 20;           ///< per-transfer setup latency
};

/// The activation path between an A replica and its F replica (attention/FFN disaggregation).
struct AfdSpec {
  int micro_batches = 2;            ///< micro-batches per decode iteration that ping-pong between A and F (1..8)
  std::string link = "inter_node";  ///< "inter_node" (RDMA NICs) or "nvlink" (A and F share an NVLink domain)
  double bandwidth_gb_s = 0;        ///< per-GPU link bandwidth override (0 = from the GPU catalog, the lower of A, F)
  double efficiency = 0.8;          ///< achieved share of the link (assumed: no A/F transfer measurements exist)
  double latency_us = 10;           ///< per-transfer latency (one direction, one layer, one micro-batch)
};

/// SIBYL's decode-instance assignment options (seed 003, Sec. 4).
struct SibylSpec {
  std::string variant = "full";  ///< full | prob_at_1 | no_type1 | no_type2 | no_type3 | request_level
  int bucket_tokens = 64;        ///< survival-estimator bucket width (Delta)
  double ema_alpha = 0.98;       ///< survival-estimator smoothing (alpha in Eq. 4)
};

/// All roles plus the global routers.
struct DeploymentSpec {
  std::vector<RoleSpec> roles;
  std::string router = "round_robin";  ///< routes new requests to C or P replicas (registry: router.cc)
  std::string decode_router = "round_robin";  ///< P/D: decode instance chosen at prefill start
  KvTransferSpec kv_transfer;
  SibylSpec sibyl;
  AfdSpec afd;
  /// P + D or P + A + F: prefill hands the KV cache over to a decode role.
  bool disaggregated() const { return roles.size() >= 2; }
  /// P + A + F.
  bool attention_ffn() const { return roles.size() == 3; }
  /// GPUs over all roles and replicas.
  long total_gpus() const;
};

/// Reads "deployment". `default_gpu` is the scenario's "hardware" GPU; `engine` the scenario's engine options.
/// `architecture`: the model's config.json class (ModelSpec::architecture), for backend rules keyed on it.
void read_deployment(const Json& j, const std::string& path, const ResourceCatalog& catalog, const Json* default_gpu,
                     const std::string& default_gpu_path, const EngineOptions& engine, const std::string& architecture,
                     DeploymentSpec& d, Errors& errors);

}  // namespace servesim
