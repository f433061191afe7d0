#include "core/control/cluster.h"

#include <algorithm>
#include <cstdio>

#include "core/fidelity/afd_cost_model.h"
#include "core/fidelity/table_cost_model.h"
#include "core/spec/cuda_graph_plan.h"

namespace servesim {

namespace {

std::uint64_t role_seed(const Scenario& s, std::size_t i) { return s.seed ^ (0x9e3779b97f4a7c15ull * (i + 1)); }

/// The activation link of one AF instance, one direction: the per-GPU link (the override, else the slower of the
/// A and F GPUs' NVLink or NIC) x efficiency x lanes. Lanes: after attention every GPU of an A stage holds
/// activations it can send, and every GPU of an F stage receives, so min(A stage GPUs, F stage GPUs) links
/// carry one micro-batch in parallel (an assumption: no A/F transfer measurements exist).
AfdLink afd_link(const AfdSpec& t, const RoleSpec& a, const RoleSpec& f) {
  const double per_gpu = t.bandwidth_gb_s > 0 ? t.bandwidth_gb_s
                         : t.link == "nvlink" ? std::min(a.gpu.intra_node_gb_s(), f.gpu.intra_node_gb_s())
                                              : std::min(a.gpu.inter_node_gb_s, f.gpu.inter_node_gb_s);
  const int lanes = std::min(a.parallelism.stage_gpus(), f.parallelism.tp_ffn * f.parallelism.ep_ffn);
  AfdLink link;
  link.bytes_per_s = per_gpu * 1e9 * t.efficiency * lanes;
  link.latency = from_ms(t.latency_us / 1000.0);
  return link;
}

}  // namespace

bool compile_cluster(const Scenario& s, ClusterCounters* counters, ReplicaObserver* observer, Cluster& out,
                     Errors& errors, const ResourceCatalog* catalog) {
  int global_index = 0;
  int ffn_spec = -1;
  for (std::size_t i = 0; i < s.deployment.roles.size(); ++i)
    if (s.deployment.roles[i].kind == RoleKind::kFfn) ffn_spec = static_cast<int>(i);
  const CostModel* ffn_cost = nullptr;  // the F side of the A role's model, reported by the F role
  for (std::size_t i = 0; i < s.deployment.roles.size(); ++i) {
    const RoleSpec& spec = s.deployment.roles[i];
    if (spec.kind == RoleKind::kFfn) continue;  // compiled with its A role, listed after the loop
    RoleCluster rc;
    rc.spec = &spec;
    const bool attention = spec.kind == RoleKind::kAttention;
    rc.budget = compute_kv_budget(s.model, spec.gpu, spec.parallelism, spec.engine, MemoryConstants{}, attention);
    if (!rc.budget.error.empty()) {
      errors.add("/deployment/roles/" + std::to_string(i), rc.budget.error);
      continue;
    }
    rc.max_model_len = spec.engine.max_model_len > 0 ? spec.engine.max_model_len : s.model.max_position_embeddings;
    // The engine's CUDA-graph sizes resolved for this GPU (SGLang's default depends on its memory and TP), so the
    // replicas replay what the memory model counted.
    EngineOptions engine = spec.engine;
    {
      CudaGraphPlan plan =
          cuda_graph_plan(engine, spec.gpu.memory_bytes, spec.parallelism.tp_attn * spec.parallelism.dp_attn);
      engine.cuda_graph_sizes = std::move(plan.sizes);
      engine.cuda_graph_padding = plan.padding;
    }
    // Measured tables where the GPU has them, else datasheet-derived (fidelity/table_cost_model.h).
    std::string cost_error;
    if (attention && ffn_spec >= 0) {
      // Attention/FFN disaggregation: A's replicas price each iteration as the A/F micro-batch schedule, the
      // attention domain on A's GPUs and the FFN domain on the paired F replica's.
      const RoleSpec& f = s.deployment.roles[static_cast<std::size_t>(ffn_spec)];
      auto a_cost = make_cost_model(s.model, spec.gpu, spec.parallelism, spec.engine, catalog, role_seed(s, i),
                                    cost_error, CostPart::kAttention);
      if (!a_cost) {
        errors.add("/deployment/roles/" + std::to_string(i) + "/gpu", cost_error);
        continue;
      }
      auto f_cost = make_cost_model(s.model, f.gpu, f.parallelism, f.engine, catalog,
                                    role_seed(s, static_cast<std::size_t>(ffn_spec)), cost_error, CostPart::kFfn);
      if (!f_cost) {
        errors.add("/deployment/roles/" + std::to_string(ffn_spec) + "/gpu", cost_error);
        continue;
      }
      auto afd = std::make_unique<AfdCostModel>(std::move(a_cost), std::move(f_cost), s.deployment.afd.micro_batches,
                                                afd_link(s.deployment.afd, spec, f),
                                                static_cast<int>(s.model.num_hidden_layers),
                                                static_cast<double>(s.model.hidden_size));
      ffn_cost = &afd->ffn();
      rc.cost = std::move(afd);
    } else {
      rc.cost = make_cost_model(s.model, spec.gpu, spec.parallelism, spec.engine, catalog, role_seed(s, i), cost_error);
    }
    if (!rc.cost) {
      errors.add("/deployment/roles/" + std::to_string(i) + "/gpu", cost_error);
      continue;
    }
    for (int r = 0; r < spec.replicas; ++r) {
      rc.replicas.push_back(std::make_unique<Replica>(global_index++, static_cast<int>(i), engine,
                                                      rc.budget.num_gpu_blocks, rc.cost.get(), counters, observer,
                                                      spec.parallelism.dp_attn));
      if (rc.budget.kv_groups_sliding > 0 || rc.budget.kv_groups_full != 1) {
        KvLayout layout;
        layout.full_groups = rc.budget.kv_groups_full;
        layout.sliding_groups = rc.budget.kv_groups_sliding;
        layout.window = rc.budget.sliding_window;
        layout.max_step_tokens = spec.engine.max_num_batched_tokens;
        rc.replicas.back()->kv_mutable().set_layout(layout);
      }
      rc.replicas.back()->set_handoff_after_prefill(spec.kind == RoleKind::kPrefill);
      rc.replicas.back()->set_may_wait_for_transfers(spec.kind != RoleKind::kColocated);
      rc.replica_ptrs.push_back(rc.replicas.back().get());
    }
    // vLLM refuses to start when one request of max_model_len tokens does not fit one engine's KV cache
    // (check_enough_kv_cache_memory: a full-attention group holds the request's blocks, a sliding one its window
    // and a step, as peak_blocks counts them). The run goes on as set, the refusal a warning, so runs under KV
    // pressure stay possible; requests longer than the cache fail one by one.
    if (spec.engine.backend == "vllm" && !rc.replicas.empty()) {
      const KvBlockManager& kv = rc.replicas.front()->kv();
      const std::int64_t blocks = kv.num_blocks() / spec.parallelism.dp_attn;
      const std::int64_t fits = kv.max_tokens_within(blocks);
      char kv_gib[32];
      std::snprintf(kv_gib, sizeof kv_gib, "%.2f GiB", rc.budget.kv_bytes / (1u << 30));
      if (rc.max_model_len > fits)
        out.warnings.push_back(
            "/deployment/roles/" + std::to_string(i) + ": vLLM would refuse to start: max_model_len " +
            std::to_string(rc.max_model_len) + " does not fit the KV cache (one request of that length needs " +
            std::to_string(kv.peak_blocks(rc.max_model_len, spec.engine.max_num_batched_tokens)) + " blocks of " +
            std::to_string(kv.block_size()) + " tokens, " + kv_gib + " holds " + std::to_string(blocks) +
            "); set engine.max_model_len to at most " + std::to_string(fits) +
            ", raise gpu_memory_utilization or add GPUs. Simulated as set: longer requests fail");
    }
    if (spec.kind == RoleKind::kPrefill) out.entry_role = static_cast<int>(out.roles.size());
    if (spec.kind == RoleKind::kDecode || attention) out.decode_role = static_cast<int>(out.roles.size());
    out.roles.push_back(std::move(rc));
  }
  if (ffn_spec >= 0) {
    // F holds no KV cache, but its share of the FFN weights must fit.
    const RoleSpec& f = s.deployment.roles[static_cast<std::size_t>(ffn_spec)];
    const double need = ffn_weights_bytes_per_gpu(s.model, f.parallelism, f.engine);
    const double usable = ffn_weight_capacity_bytes(f.gpu, f.parallelism, f.engine);
    if (need > usable) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "FFN weights need %.2f GiB per GPU but %s is %.2f GiB", need / (1u << 30),
                    f.engine.backend == "sglang" ? "mem_fraction_static (gpu_memory_utilization) x free memory"
                                                 : "gpu_memory_utilization x memory",
                    usable / (1u << 30));
      errors.add("/deployment/roles/" + std::to_string(ffn_spec),
                 std::string(buf) + " on " + f.gpu.name + "; raise ep_ffn, tp_ffn or pp, or use fp8");
    }
  }
  if (ffn_spec >= 0 && ffn_cost) {
    RoleCluster rc;
    rc.spec = &s.deployment.roles[static_cast<std::size_t>(ffn_spec)];
    rc.borrowed_cost = ffn_cost;
    rc.max_model_len = out.decode_role >= 0 ? out.roles[static_cast<std::size_t>(out.decode_role)].max_model_len : 0;
    out.ffn_role = static_cast<int>(out.roles.size());
    out.roles.push_back(std::move(rc));
  }
  for (auto& rc : out.roles)
    for (auto& r : rc.replicas) out.all_replicas.push_back(r.get());
  return errors.ok();
}

}  // namespace servesim
