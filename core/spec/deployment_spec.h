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

/// Role kinds. Co-location is a single role C.
enum class RoleKind { kColocated };

/// One cluster role.
struct RoleSpec {
  RoleKind kind = RoleKind::kColocated;
  std::string name = "C";  ///< unique display name
  GpuSpec gpu;
  int replicas = 1;
  Parallelism parallelism;
  EngineOptions engine;
};

/// All roles plus the global router.
struct DeploymentSpec {
  std::vector<RoleSpec> roles;
  std::string router = "round_robin";  ///< registry: router_registry
  /// GPUs over all roles and replicas.
  long total_gpus() const;
};

/// Reads "deployment". `default_gpu` is the scenario's "hardware" GPU; `engine` the scenario's engine options.
void read_deployment(const Json& j, const std::string& path, const ResourceCatalog& catalog,
                     const Json* default_gpu, const std::string& default_gpu_path, const EngineOptions& engine,
                     DeploymentSpec& d, Errors& errors);

}  // namespace servesim
