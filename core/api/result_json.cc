// SessionImpl's result document: summary, failures, deployment with KV budgets, fidelity attribution,
// engine statistics, time series and (on request) per-request columns and phases.
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/api/session_impl.h"
#include "core/execution/cuda_graph_adapter.h"
#include "core/metrics/summary.h"

namespace servesim {

namespace {

using OJson = nlohmann::ordered_json;

OJson parallelism_json(const Parallelism& p) {
  return OJson{{"pp", p.pp}, {"tp_attn", p.tp_attn}, {"dp_attn", p.dp_attn}, {"tp_ffn", p.tp_ffn}, {"ep_ffn", p.ep_ffn}};
}

OJson kv_json(const KvBudget& b) {
  constexpr double kGiB = 1u << 30;
  OJson j{{"device_gib", b.device_bytes / kGiB},
          {"accounting", b.accounting},
          {"memory_fraction", b.memory_fraction},
          {"usable_gib", b.usable_bytes / kGiB},
          {"weights_gib", b.weights_bytes / kGiB},
          {"activation_peak_gib", b.activation_bytes / kGiB},
          {"runtime_overhead_gib", b.overhead_bytes / kGiB},
          {"terms_gib", OJson{{"forward_peak", b.forward_peak_bytes / kGiB},
                              {"sampler", b.sampler_bytes / kGiB},
                              {"cuda_graphs", b.cuda_graph_bytes / kGiB},
                              {"comm_workspaces", b.comm_bytes / kGiB},
                              {"non_torch", b.non_torch_bytes / kGiB}}},
          {"kv_cache_gib", b.kv_bytes / kGiB},
          {"kv_bytes_per_token", b.kv_bytes_per_token},
          {"block_size", b.block_size},
          {"num_gpu_blocks", b.num_gpu_blocks},
          {"kv_cache_tokens", b.max_tokens()}};
  // SGLang: the CUDA context and communicators come before its snapshot; (1 - fraction) of the rest is reserved for
  // activations, CUDA graphs and workspaces (the terms above estimate what that reserve has to hold).
  if (b.accounting == "sglang") {
    j["sglang_reserved_gib"] = b.reserved_bytes / kGiB;
    j["cuda_context_gib"] = b.context_bytes / kGiB;
  }
  // TRT-LLM: free_gpu_memory_fraction is a share of the memory free at the profiling peak (after the context,
  // communicators, weights and activations); the rest stays free for CUDA graphs and later allocations.
  if (b.accounting == "trtllm") {
    j["free_at_profile_gib"] = b.free_bytes / kGiB;
    j["trtllm_left_free_gib"] = b.reserved_bytes / kGiB;
    j["cuda_context_gib"] = b.context_bytes / kGiB;
  }
  // Hybrid models (vLLM's hybrid KV-cache manager): how the pool's blocks split into full and sliding groups.
  if (b.kv_groups_sliding > 0)
    j["kv_cache_groups"] = OJson{{"full", b.kv_groups_full}, {"sliding", b.kv_groups_sliding},
                                 {"sliding_window", b.sliding_window}};
  // A sliding-window model with the hybrid manager off (a KV connector under vLLM, gpt-oss under SGLang): every
  // layer is full.
  if (b.sliding_kept_full) j["hybrid_kv_cache_manager"] = false;
  return j;
}

/// Share of GPU-busy time per op family (every family, 0 where none).
OJson share_json(const BatchCost& tot) {
  OJson share;
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f)
    share[op_family_name(static_cast<OpFamily>(f))] =
        tot.total > 0 ? static_cast<double>(tot.by_family[f]) / static_cast<double>(tot.total) : 0.0;
  return share;
}

/// One role of the deployment; `totals` its replicas' summed iteration costs (an F role runs none: its time is in
/// its A role's, so it reports no share).
OJson role_json(const RoleCluster& rc, const BatchCost& totals) {
  const RoleSpec& s = *rc.spec;
  OJson adapters = OJson::array();
  std::int64_t padded = 0, graph = 0;
  for (const auto& rep : rc.replicas)
    for (const auto& a : rep->adapters())
      if (auto* g = dynamic_cast<const CudaGraphAdapter*>(a.get())) {
        padded += g->padded_tokens();
        graph += g->graph_batches();
      }
  if (!rc.replicas.empty())
    for (const auto& a : rc.replicas.front()->adapters()) adapters.push_back(a->name());
  std::int64_t iterations = 0, blocks_in_use = 0;
  SimTime busy = 0;
  for (const auto& rep : rc.replicas) {
    iterations += rep->iterations();
    busy += rep->busy_time();
    blocks_in_use += rep->kv().used_blocks();
  }
  OJson j;
  j["name"] = s.name;
  j["role"] = role_kind_name(s.kind);
  j["gpu"] = s.gpu.name;
  j["replicas"] = s.replicas;
  j["parallelism"] = parallelism_json(s.parallelism);
  // World size = GPUs of one replica (pp x tp_attn x dp_attn; an F role pp x tp_ffn x ep_ffn); a pipelined
  // replica keeps up to pp batches in flight.
  j["world_size"] = s.world_size();
  j["gpus_per_stage"] = s.world_size() / s.parallelism.pp;
  j["gpus"] = static_cast<long>(s.replicas) * s.world_size();
  j["max_batches_in_flight"] = s.parallelism.pp;
  j["scheduler"] = s.engine.scheduler;
  // Only where set: a front-end that is never the bottleneck (the default) is not part of the deployment's report.
  if (s.engine.frontend.request_us > 0 || s.engine.frontend.token_us > 0)
    j["frontend"] = {{"request_us", s.engine.frontend.request_us}, {"token_us", s.engine.frontend.token_us}};
  j["adapters"] = adapters;
  j["kv_cache"] = rc.replicas.empty() ? OJson() : kv_json(rc.budget);  // an F role holds no KV cache
  j["max_model_len"] = rc.max_model_len;
  j["iterations"] = iterations;
  j["busy_s"] = as_sec(busy);  // stage-0 occupancy summed over replicas (pp = 1: time running iterations)
  if (totals.total > 0) j["time_share_by_op"] = share_json(totals);
  j["kv_blocks_in_use_at_end"] = blocks_in_use;
  j["cuda_graph_iterations"] = graph;
  j["cuda_graph_padded_tokens"] = padded;
  OJson fid;
  const CostModel& cost = rc.pricing();
  fid["model"] = cost.describe();
  OJson sources;
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f)
    sources[op_family_name(static_cast<OpFamily>(f))] = price_source_name(cost.source(static_cast<OpFamily>(f)));
  fid["sources"] = sources;
  // The profile that priced this role, its measured error (profiles/<gpu>/<backend>/validation.json, written
  // by scripts/validate_ops.py and scripts/validate_e2e.py) and how many lookups left the measured grids.
  const FidelityReport rep = cost.report();
  fid["kind"] = rep.kind;
  fid["profile"] = rep.profile.empty() ? OJson() : OJson(rep.profile);
  if (!rep.profile_version.empty()) fid["profile_version"] = rep.profile_version;
  if (!rep.transferred_to.empty()) {
    fid["transferred_to"] = rep.transferred_to;
    fid["transfer"] = rep.transfer;
    if (!rep.supplements.empty()) {
      OJson sups = OJson::array();
      for (const FidelityReport::Supplement& s : rep.supplements)
        sups.push_back({{"from", s.from}, {"transfer", s.transfer}, {"tables", s.tables}});
      fid["supplements"] = sups;
    }
  }
  if (!rep.measured_error_json.empty()) {
    const auto err = OJson::parse(rep.measured_error_json, nullptr, false);
    if (!err.is_discarded()) fid["measured_error"] = err;
  }
  if (rep.host.known)
    fid["host"] = {{"source", rep.host.source},
                   {"iteration_us", rep.host.iteration_us},
                   {"per_request_us", rep.host.per_request_us},
                   {"per_token_us", rep.host.per_token_us},
                   {"launch_us", rep.host.launch_us},
                   {"hidden_under_gpu", rep.host.hidden_under_gpu}};
  OJson lookups = OJson::object();
  for (std::size_t i = 0; i < rep.families.size(); ++i)
    lookups[rep.families[i]] = {{"lookups", rep.lookups[i]}, {"extrapolated", rep.extrapolated[i]}};
  fid["lookups"] = lookups;
  j["fidelity"] = fid;
  return j;
}

}  // namespace

std::string SessionImpl::summary_json() const { return summary().dump(); }

nlohmann::ordered_json SessionImpl::summary() const {
  SummaryContext ctx;
  SimTime last = 0;
  for (const Request& r : pool_)
    if (r.state == RequestState::kFinished && r.finished > last) last = r.finished;
  ctx.makespan = last;
  ctx.num_gpus = scenario_.deployment.total_gpus();
  for (const auto& role : scenario_.deployment.roles)
    ctx.usd_per_hour += role.gpu.usd_per_hour * role.replicas * role.world_size();
  ctx.max_concurrency = scenario_.workload.arrival.max_concurrency;
  if (scenario_.workload.arrival.process == ArrivalSpec::Process::kPoisson &&
      std::isfinite(scenario_.workload.arrival.request_rate))
    ctx.request_rate = scenario_.workload.arrival.request_rate;
  ctx.sla = scenario_.sla;
  const bool first_text = scenario_.workload.ttft_from == WorkloadSpec::TtftFrom::kFirstText;
  if (first_text) ctx.ttft_token = 1 + scenario_.model.response_preamble_tokens;
  return build_summary(pool_, *metrics_, ctx);
}

std::string SessionImpl::result_json() const {
  OJson j;
  j["servesim_version"] = servesim_version();
  j["scenario"] = {{"name", scenario_.name}, {"version", scenario_.version}, {"seed", scenario_.seed}};
  j["status"] = status_;
  if (!message_.empty()) j["message"] = message_;
  j["summary"] = summary();

  OJson failures = OJson::array();
  std::vector<std::int64_t> counts(metrics_->failure_reasons().size(), 0);
  for (const Request& r : pool_)
    if (r.state == RequestState::kFailed && r.fail_reason >= 0) ++counts[r.fail_reason];
  for (std::size_t i = 0; i < counts.size(); ++i)
    if (counts[i] > 0) failures.push_back({{"reason", metrics_->failure_reasons()[i]}, {"count", counts[i]}});
  j["failures"] = failures;

  OJson roles = OJson::array();
  for (std::size_t i = 0; i < cluster_.roles.size(); ++i)
    roles.push_back(role_json(cluster_.roles[i], metrics_->role_cost_totals(static_cast<int>(i))));
  j["deployment"] = {{"total_gpus", scenario_.deployment.total_gpus()},
                     {"router", scenario_.deployment.router},
                     {"roles", roles}};
  if (const KvTransferManager* t = controller_->transfers()) {
    const auto h = controller_->handoffs();
    j["disaggregation"] = {{"decode_router", scenario_.deployment.decode_router},
                           {"sibyl_variant", scenario_.deployment.sibyl.variant},
                           {"kv_transfers", t->transfers_done()},
                           {"kv_bytes_moved", t->bytes_moved()},
                           {"handoffs", h},
                           {"optimal_assignment_ratio",
                            h > 0 ? static_cast<double>(controller_->optimal_assignments()) / h : 0.0}};
  }
  j["model"] = {{"name", scenario_.model.name},
                {"params_b", scenario_.model.param_count() / 1e9},
                {"active_params_b", scenario_.model.active_param_count() / 1e9},
                {"ignored_config_keys", scenario_.model.ignored_config_keys}};
  if (scenario_.model.response_preamble_tokens > 0)
    j["model"]["response_preamble_tokens"] = scenario_.model.response_preamble_tokens;

  // Share of GPU-busy time per op family, over every iteration of every replica.
  j["time_share_by_op"] = share_json(metrics_->cost_totals());
  j["timeseries"] = metrics_->series().to_json();
  j["sim"] = {{"events", sim_.events_processed()},
              {"iterations", metrics_->total_iterations()},
              {"end_time_s", as_sec(end_time_)}};
  j["warnings"] = scenario_.warnings;

  if (scenario_.output.requests) {
    OJson c;
    auto col = [&](const char* name, auto get) {
      OJson a = OJson::array();
      for (const Request& r : pool_) a.push_back(get(r));
      c[name] = std::move(a);
    };
    auto ms = [](SimTime t) { return t < 0 ? -1.0 : as_ms(t); };
    col("replica", [](const Request& r) { return r.replica; });
    col("arrival_ms", [&](const Request& r) { return ms(r.arrival); });
    col("first_scheduled_ms", [&](const Request& r) { return ms(r.first_scheduled); });
    col("first_token_ms", [&](const Request& r) { return ms(r.first_token); });
    col("finished_ms", [&](const Request& r) { return ms(r.finished); });
    col("prompt_tokens", [](const Request& r) { return r.prompt_tokens; });
    col("output_tokens", [](const Request& r) { return r.generated; });
    col("preemptions", [](const Request& r) { return r.preemptions; });
    col("failed", [](const Request& r) { return r.state == RequestState::kFailed ? 1 : 0; });
    // The token first_token_ms times (TPOT counts from it), when clients time the first text.
    if (scenario_.workload.ttft_from == WorkloadSpec::TtftFrom::kFirstText)
      col("first_text_token", [](const Request& r) { return r.first_text_token; });
    j["requests"] = c;
  }
  if (scenario_.output.phases) {
    OJson req = OJson::array(), kind = OJson::array(), start = OJson::array(), end = OJson::array(),
          tokens = OJson::array();
    for (const PhaseSegment& s : metrics_->phases()) {
      req.push_back(s.req);
      kind.push_back(phase_kind_name(s.kind));
      start.push_back(as_ms(s.start));
      end.push_back(as_ms(s.end));
      tokens.push_back(s.tokens);
    }
    j["phases"] = {{"request", req}, {"kind", kind}, {"start_ms", start}, {"end_ms", end}, {"tokens", tokens}};
  }
  return j.dump();
}

std::string SessionImpl::benchmark_block() const {
  const auto doc = nlohmann::ordered_json::parse(result_json());
  return format_benchmark_block(doc["summary"]);
}

}  // namespace servesim
