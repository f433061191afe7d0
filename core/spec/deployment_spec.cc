#include "core/spec/deployment_spec.h"

#include <set>

#include "core/spec/resource_catalog.h"

namespace servesim {

const char* role_kind_name(RoleKind k) {
  switch (k) {
    case RoleKind::kColocated: return "C";
    case RoleKind::kPrefill: return "P";
    case RoleKind::kDecode: return "D";
  }
  return "?";
}

long DeploymentSpec::total_gpus() const {
  long n = 0;
  for (const auto& r : roles) n += static_cast<long>(r.replicas) * r.parallelism.world_size();
  return n;
}

namespace {

constexpr int kMaxDegree = 1024;

void read_parallelism(ObjectReader& role, Parallelism& p, Errors& errors) {
  const bool has_short = role.has("tensor_parallel_size") || role.has("pipeline_parallel_size");
  if (const Json* pj = role.raw("parallelism")) {
    if (has_short)
      errors.add(role.path("parallelism"),
                 "give either \"parallelism\" or tensor_parallel_size/pipeline_parallel_size, not both");
    ObjectReader r(*pj, role.path("parallelism"), errors);
    r.get_int("pp", p.pp, 1, kMaxDegree);
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
}

/// Either one co-located role C, or exactly one P and one D role.
void check_role_mix(ObjectReader& r, const DeploymentSpec& d, Errors& errors) {
  int c = 0, p = 0, dd = 0;
  for (const auto& role : d.roles) {
    c += role.kind == RoleKind::kColocated;
    p += role.kind == RoleKind::kPrefill;
    dd += role.kind == RoleKind::kDecode;
  }
  const bool ok = (c == 1 && p == 0 && dd == 0) || (c == 0 && p == 1 && dd == 1);
  if (!ok && !d.roles.empty())
    errors.add(r.path("roles"), "must be one co-located role C, or one prefill role P and one decode role D; got " +
                                    std::to_string(c) + " C, " + std::to_string(p) + " P, " + std::to_string(dd) + " D");
}

void read_kv_transfer(const Json& j, const std::string& path, KvTransferSpec& t, Errors& errors) {
  ObjectReader r(j, path, errors);
  r.get_enum("link", t.link, {"inter_node", "nvlink"});
  r.get_number("bandwidth_gb_s", t.bandwidth_gb_s, 0, 1e5, false, true);
  r.get_number("efficiency", t.efficiency, 0, 1, false, true);
  r.get_number("latency_us", t.latency_us, 0, 1e6);
}

void read_sibyl(const Json& j, const std::string& path, SibylSpec& s, Errors& errors) {
  ObjectReader r(j, path, errors);
  r.get_enum("variant", s.variant, {"full", "prob_at_1", "no_type1", "no_type2", "no_type3", "request_level"});
  r.get_int("bucket_tokens", s.bucket_tokens, 1, 65536);
  r.get_number("ema_alpha", s.ema_alpha, 0, 1, false, true);
  if (s.ema_alpha >= 1) errors.add(r.path("ema_alpha"), "must be below 1 (alpha in (0, 1))");
}

}  // namespace

void read_deployment(const Json& j, const std::string& path, const ResourceCatalog& catalog,
                     const Json* default_gpu, const std::string& default_gpu_path, const EngineOptions& engine,
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
  for (std::size_t i = 0; i < roles->size(); ++i) {
    const std::string rp = r.path("roles") + "/" + std::to_string(i);
    ObjectReader rr((*roles)[i], rp, errors);
    if (!rr.valid()) continue;
    RoleSpec role;
    role.engine = engine;
    std::string kind = "C";
    if (rr.get_enum("role", kind, {"C", "P", "D", "A", "F"}, true) && (kind == "A" || kind == "F"))
      errors.add(rr.path("role"), "role \"" + kind +
                                      "\" (attention/FFN disaggregation) is not available in this version; use C, "
                                      "or P and D");
    role.kind = kind == "P" ? RoleKind::kPrefill : kind == "D" ? RoleKind::kDecode : RoleKind::kColocated;
    role.name = kind;
    rr.get_string("name", role.name, false, 64);
    if (!names.insert(role.name).second)
      errors.add(rr.path("name"), "duplicate role name \"" + role.name + "\"; give each role a unique \"name\"");
    rr.get_int("replicas", role.replicas, 1, 65536);
    read_parallelism(rr, role.parallelism, errors);
    if (const Json* g = rr.raw("gpu")) {
      read_gpu(*g, rr.path("gpu"), catalog, role.gpu, errors);
    } else if (default_gpu) {
      read_gpu(*default_gpu, default_gpu_path, catalog, role.gpu, errors);
    } else {
      errors.add(rr.path("gpu"), "is required (or set /hardware/gpu for all roles); catalog: " +
                                     catalog.list_joined("gpus"));
    }
    if (const Json* e = rr.raw("engine")) read_engine_options(*e, rr.path("engine"), role.engine, errors);
    d.roles.push_back(std::move(role));
  }
  check_role_mix(r, d, errors);
  if (const Json* t = r.raw("kv_transfer")) read_kv_transfer(*t, r.path("kv_transfer"), d.kv_transfer, errors);
  if (const Json* t = r.raw("sibyl")) read_sibyl(*t, r.path("sibyl"), d.sibyl, errors);
  r.get_enum("decode_router", d.decode_router, {"round_robin", "least_load", "sibyl"});
  if (!d.disaggregated() && (r.has("decode_router") || r.has("kv_transfer") || r.has("sibyl")))
    errors.add(r.path("decode_router"), "decode_router, kv_transfer and sibyl apply only to P + D deployments");
  if (d.total_gpus() > 131072)
    errors.add(r.path("roles"), "the deployment uses " + std::to_string(d.total_gpus()) +
                                    " GPUs; at most 131072 are supported");
}

}  // namespace servesim
