#include "core/spec/deployment_spec.h"

#include <array>
#include <optional>
#include <set>

#include "core/spec/resource_catalog.h"

namespace servesim {

const char* role_kind_name(RoleKind k) {
  switch (k) {
    case RoleKind::kColocated: return "C";
    case RoleKind::kPrefill: return "P";
    case RoleKind::kDecode: return "D";
    case RoleKind::kAttention: return "A";
    case RoleKind::kFfn: return "F";
  }
  return "?";
}

long DeploymentSpec::total_gpus() const {
  long n = 0;
  for (const auto& r : roles) n += static_cast<long>(r.replicas) * r.world_size();
  return n;
}

namespace {

constexpr int kMaxDegree = 1024;

void read_parallelism(ObjectReader& role, RoleKind kind, Parallelism& p, Errors& errors) {
  const bool has_short = role.has("tensor_parallel_size") || role.has("pipeline_parallel_size");
  if (const Json* pj = role.raw("parallelism")) {
    if (has_short)
      errors.add(role.path("parallelism"),
                 "give either \"parallelism\" or tensor_parallel_size/pipeline_parallel_size, not both");
    ObjectReader r(*pj, role.path("parallelism"), errors);
    r.get_int("pp", p.pp, 1, kMaxDegree);
    if (kind == RoleKind::kAttention || kind == RoleKind::kFfn) {
      // A hosts only the attention domain, F only the FFN domain (Frontier Eq. 2): the other domain's degrees
      // do not exist there, so giving them is an error rather than silently ignored.
      const bool a = kind == RoleKind::kAttention;
      const std::array<const char*, 2> keys = a ? std::array<const char*, 2>{"tp_ffn", "ep_ffn"}
                                                : std::array<const char*, 2>{"tp_attn", "dp_attn"};
      for (const char* k : keys)
        if (r.has(k))
          errors.add(r.path(k), std::string(a ? "an attention role A hosts only the attention domain (pp, tp_attn, "
                                                "dp_attn); the FFN degrees belong to its F role"
                                              : "an FFN role F hosts only the FFN domain (pp, tp_ffn, ep_ffn); the "
                                                "attention degrees belong to its A role"));
      if (a) {
        r.get_int("tp_attn", p.tp_attn, 1, kMaxDegree);
        r.get_int("dp_attn", p.dp_attn, 1, kMaxDegree);
        p.tp_ffn = p.tp_attn * p.dp_attn;
        p.ep_ffn = 1;
        r.ignore({"tp_ffn", "ep_ffn"});
      } else {
        p.tp_attn = p.dp_attn = 1;
        r.get_int("tp_ffn", p.tp_ffn, 1, kMaxDegree * kMaxDegree);
        r.get_int("ep_ffn", p.ep_ffn, 1, kMaxDegree * kMaxDegree);
        r.ignore({"tp_attn", "dp_attn"});
      }
      return;
    }
    r.get_int("tp_attn", p.tp_attn, 1, kMaxDegree);
    r.get_int("dp_attn", p.dp_attn, 1, kMaxDegree);
    p.tp_ffn = p.tp_attn * p.dp_attn;  // default: FFN spans the attention domain with TP
    r.get_int("tp_ffn", p.tp_ffn, 1, kMaxDegree * kMaxDegree);
    r.get_int("ep_ffn", p.ep_ffn, 1, kMaxDegree * kMaxDegree);
    if (p.tp_attn * p.dp_attn != p.tp_ffn * p.ep_ffn)
      errors.add(r.path("tp_ffn"), "tp_attn x dp_attn (" + std::to_string(p.tp_attn * p.dp_attn) +
                                       ") must equal tp_ffn x ep_ffn (" + std::to_string(p.tp_ffn * p.ep_ffn) + ")");
    return;
  }
  int tp = 1;
  role.get_int("tensor_parallel_size", tp, 1, kMaxDegree);
  role.get_int("pipeline_parallel_size", p.pp, 1, kMaxDegree);
  p.tp_attn = p.tp_ffn = tp;
  if (kind == RoleKind::kFfn) p.tp_attn = 1;
}

/// Either one co-located role C, exactly one P and one D role, or one P, one A and one F role.
void check_role_mix(ObjectReader& r, const DeploymentSpec& d, Errors& errors) {
  int c = 0, p = 0, dd = 0, a = 0, f = 0;
  for (const auto& role : d.roles) {
    c += role.kind == RoleKind::kColocated;
    p += role.kind == RoleKind::kPrefill;
    dd += role.kind == RoleKind::kDecode;
    a += role.kind == RoleKind::kAttention;
    f += role.kind == RoleKind::kFfn;
  }
  const bool ok = (c == 1 && p + dd + a + f == 0) || (p == 1 && dd == 1 && c + a + f == 0) ||
                  (p == 1 && a == 1 && f == 1 && c + dd == 0);
  if (!ok && !d.roles.empty()) {
    errors.add(r.path("roles"), "must be one co-located role C, one prefill role P and one decode role D, or one P, "
                                "one attention role A and one FFN role F; got " +
                                    std::to_string(c) + " C, " + std::to_string(p) + " P, " + std::to_string(dd) +
                                    " D, " + std::to_string(a) + " A, " + std::to_string(f) + " F");
    return;
  }
  if (a != 1) return;
  // An AF instance is A replica i with F replica i, layer for layer: same count and the same pipeline stages.
  std::size_t ai = 0, fi = 0;
  for (std::size_t i = 0; i < d.roles.size(); ++i) {
    if (d.roles[i].kind == RoleKind::kAttention) ai = i;
    if (d.roles[i].kind == RoleKind::kFfn) fi = i;
  }
  const std::string fp = r.path("roles") + "/" + std::to_string(fi);
  if (d.roles[ai].replicas != d.roles[fi].replicas)
    errors.add(fp + "/replicas", "an F role needs as many replicas as its A role (" +
                                     std::to_string(d.roles[ai].replicas) + "): AF instance i is A replica i with F "
                                     "replica i; got " + std::to_string(d.roles[fi].replicas));
  if (d.roles[ai].parallelism.pp != d.roles[fi].parallelism.pp)
    errors.add(fp + "/parallelism/pp", "must equal the A role's pp (" + std::to_string(d.roles[ai].parallelism.pp) +
                                           "): A and F hold the same layers per stage; got " +
                                           std::to_string(d.roles[fi].parallelism.pp));
}

void read_afd(const Json& j, const std::string& path, AfdSpec& t, Errors& errors) {
  ObjectReader r(j, path, errors);
  r.get_int("micro_batches", t.micro_batches, 1, 8);
  r.get_enum("link", t.link, {"inter_node", "nvlink"});
  r.get_number_or_zero("bandwidth_gb_s", t.bandwidth_gb_s, kMinLinkGbS, 1e5);
  r.get_number("efficiency", t.efficiency, kMinLinkEfficiency, 1);
  r.get_number("latency_us", t.latency_us, 0, 1e6);
}

void read_kv_transfer(const Json& j, const std::string& path, KvTransferSpec& t, Errors& errors) {
  ObjectReader r(j, path, errors);
  r.get_enum("link", t.link, {"inter_node", "nvlink"});
  r.get_number("bandwidth_gb_s", t.bandwidth_gb_s, kMinLinkGbS, 1e5);
  r.get_number("efficiency", t.efficiency, kMinLinkEfficiency, 1);
  r.get_number("latency_us", t.latency_us, 0, 1e6);
}

/// A GPU without `inter_node_gb_s` (0) is refused where the deployment sends something between nodes: a role whose
/// GPUs span nodes (its collectives and pipeline hops), and the KV (P -> D or A) and activation (A <-> F) links when
/// they run over the network without a bandwidth of their own. `gpu_paths[i]`: where role i's GPU was given.
void check_inter_node_links(const DeploymentSpec& d, const std::vector<std::string>& gpu_paths, Errors& errors) {
  std::set<std::string> said;  // one error per GPU given, for the first role that needs it
  for (std::size_t i = 0; i < d.roles.size(); ++i) {
    const RoleSpec& role = d.roles[i];
    if (role.gpu.inter_node_gb_s > 0 || gpu_paths[i].empty() || said.count(gpu_paths[i])) continue;
    std::string why;
    if (role.world_size() > role.gpu.gpus_per_node)
      why = "spans nodes (" + std::to_string(role.world_size()) + " GPUs, " + std::to_string(role.gpu.gpus_per_node) +
            " per node)";
    else if (d.disaggregated() && role.kind != RoleKind::kFfn && d.kv_transfer.link == "inter_node" &&
             d.kv_transfer.bandwidth_gb_s <= 0)
      why =
          "sends or receives KV over the network; or give /deployment/kv_transfer a bandwidth_gb_s (or link "
          "\"nvlink\")";
    else if (d.attention_ffn() && (role.kind == RoleKind::kAttention || role.kind == RoleKind::kFfn) &&
             d.afd.link == "inter_node" && d.afd.bandwidth_gb_s <= 0)
      why = "exchanges activations over the network; or give /deployment/afd a bandwidth_gb_s (or link \"nvlink\")";
    if (why.empty()) continue;
    said.insert(gpu_paths[i]);
    errors.add(gpu_paths[i] + "/inter_node_gb_s",
               "is required (network bandwidth per GPU, GB/s): role " + role.name + " " + why);
  }
}

void read_sibyl(const Json& j, const std::string& path, SibylSpec& s, Errors& errors) {
  ObjectReader r(j, path, errors);
  r.get_enum("variant", s.variant, {"full", "prob_at_1", "no_type1", "no_type2", "no_type3", "request_level"});
  r.get_int("bucket_tokens", s.bucket_tokens, 1, 65536);
  r.get_number("ema_alpha", s.ema_alpha, 0, 1, false, true);
  if (s.ema_alpha >= 1) errors.add(r.path("ema_alpha"), "must be below 1 (alpha in (0, 1))");
}

// Whether a role's own engine object sets `key` (else the value came from the scenario's /engine).
bool set_in_role(const Json* role_engine, const char* key) {
  return role_engine && role_engine->is_object() && role_engine->contains(key);
}

}  // namespace

void read_deployment(const Json& j, const std::string& path, const ResourceCatalog& catalog, const Json* default_gpu,
                     const std::string& default_gpu_path, const EngineOptions& engine, const std::string& architecture,
                     DeploymentSpec& d, Errors& errors) {
  ObjectReader r(j, path, errors);
  if (!r.valid()) return;
  r.get_enum("router", d.router, {"round_robin", "least_outstanding_tokens"});
  const Json* roles = r.raw("roles");
  if (!roles || !roles->is_array() || roles->empty() || roles->size() > 16) {
    errors.add(r.path("roles"), "is required: an array of 1 to 16 roles, e.g. [{\"role\": \"C\", \"replicas\": 1}]");
    return;
  }
  std::set<std::string> names;
  std::vector<std::string> gpu_paths;  // per role read: where its GPU was given
  std::optional<GpuSpec> default_spec;  // /hardware/gpu, read (and its errors reported) once for every role using it
  for (std::size_t i = 0; i < roles->size(); ++i) {
    const std::string rp = r.path("roles") + "/" + std::to_string(i);
    ObjectReader rr((*roles)[i], rp, errors);
    if (!rr.valid()) continue;
    RoleSpec role;
    role.engine = engine;
    std::string kind = "C";
    rr.get_enum("role", kind, {"C", "P", "D", "A", "F"}, true);
    role.kind = kind == "P"   ? RoleKind::kPrefill
                : kind == "D" ? RoleKind::kDecode
                : kind == "A" ? RoleKind::kAttention
                : kind == "F" ? RoleKind::kFfn
                              : RoleKind::kColocated;
    role.name = kind;
    rr.get_string("name", role.name, false, 64);
    if (!names.insert(role.name).second)
      errors.add(rr.path("name"), "duplicate role name \"" + role.name + "\"; give each role a unique \"name\"");
    rr.get_int("replicas", role.replicas, 1, 65536);
    read_parallelism(rr, role.kind, role.parallelism, errors);
    std::string gpu_path;
    if (const Json* g = rr.raw("gpu")) {
      read_gpu(*g, gpu_path = rr.path("gpu"), catalog, role.gpu, errors);
    } else if (default_gpu) {
      if (!default_spec) read_gpu(*default_gpu, default_gpu_path, catalog, default_spec.emplace(), errors);
      role.gpu = *default_spec;
      gpu_path = default_gpu_path;
    } else {
      errors.add(rr.path("gpu"), "is required (or set /hardware/gpu for all roles); catalog: " +
                                     catalog.list_joined("gpus"));
    }
    if (const Json* e = rr.raw("engine")) read_engine_options(*e, rr.path("engine"), role.engine, errors);
    // Resolved here, where the role kind is known: roles that hand KV over run a KV connector.
    if (role.engine.backend == "sglang" && sglang_disables_hybrid_swa(architecture) &&
        role.engine.hybrid_kv_cache_manager.value_or(false))
      errors.add(set_in_role(rr.raw("engine"), "hybrid_kv_cache_manager")
                     ? rr.path("engine") + "/hybrid_kv_cache_manager"
                     : "/engine/hybrid_kv_cache_manager",
                 "SGLang turns its hybrid SWA memory off for " + architecture +
                     " whatever the flags (every layer keeps every token); leave it unset or false under backend "
                     "\"sglang\"");
    role.engine.hybrid_kv_cache_manager =
        hybrid_kv_cache_on(role.engine, role.kind != RoleKind::kColocated, architecture);
    d.roles.push_back(std::move(role));
    gpu_paths.push_back(gpu_path);
  }
  check_role_mix(r, d, errors);
  if (const Json* t = r.raw("kv_transfer")) read_kv_transfer(*t, r.path("kv_transfer"), d.kv_transfer, errors);
  if (const Json* t = r.raw("sibyl")) read_sibyl(*t, r.path("sibyl"), d.sibyl, errors);
  if (const Json* t = r.raw("afd")) {
    read_afd(*t, r.path("afd"), d.afd, errors);
    if (!d.attention_ffn()) errors.add(r.path("afd"), "applies only to P + A + F deployments");
  }
  r.get_enum("decode_router", d.decode_router, {"round_robin", "least_load", "sibyl"});
  if (!d.disaggregated() && (r.has("decode_router") || r.has("kv_transfer") || r.has("sibyl")))
    errors.add(r.path("decode_router"),
               "decode_router, kv_transfer and sibyl apply only to disaggregated (P + D, P + A + F) deployments");
  if (errors.ok()) check_inter_node_links(d, gpu_paths, errors);
  if (d.total_gpus() > 131072)
    errors.add(r.path("roles"), "the deployment uses " + std::to_string(d.total_gpus()) +
                                    " GPUs; at most 131072 are supported");
}

}  // namespace servesim
