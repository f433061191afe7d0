#include "core/explore/sweep_expansion.h"

#include <cstdio>

namespace servesim {

std::string fnv1a_hex(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

bool set_json_pointer(Json& doc, const std::string& ptr, const Json& value, std::string& error) {
  Json* cur = &doc;
  std::size_t pos = 1;
  while (true) {
    const std::size_t slash = ptr.find('/', pos);
    std::string raw = ptr.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += raw[i];
      }
    }
    Json* next = nullptr;
    if (cur->is_array()) {
      std::size_t idx = 0;
      bool digits = !token.empty() && token.size() < 7;
      for (char c : token) digits &= c >= '0' && c <= '9';
      if (digits) idx = static_cast<std::size_t>(std::stoul(token));
      if (!digits || idx >= cur->size()) {
        error = ptr + ": no array element \"" + token + "\" in the base scenario";
        return false;
      }
      next = &(*cur)[idx];
    } else {
      if (cur->is_null()) *cur = Json::object();
      if (!cur->is_object()) {
        error = ptr + ": \"" + token + "\" is below a value that is not an object";
        return false;
      }
      next = &(*cur)[token];
    }
    if (slash == std::string::npos) {
      *next = value;
      return true;
    }
    cur = next;
    pos = slash + 1;
  }
}

namespace {

int role_world_size(const Json& role) {
  auto num = [](const Json& o, const char* k) { return o.contains(k) && o[k].is_number_integer() ? o[k].get<int>() : 1; };
  if (role.contains("parallelism") && role["parallelism"].is_object()) {
    const Json& p = role["parallelism"];
    // An F role hosts only the FFN domain (Frontier Eq. 2): pp x tp_ffn x ep_ffn.
    if (role.contains("role") && role["role"] == "F") return num(p, "pp") * num(p, "tp_ffn") * num(p, "ep_ffn");
    return num(p, "pp") * num(p, "tp_attn") * num(p, "dp_attn");
  }
  return num(role, "tensor_parallel_size") * num(role, "pipeline_parallel_size");
}

/// Replaces {"gpu_share": f} replica counts with floor(f x total / world size).
void resolve_shares(SweepPoint& p, std::int64_t total_gpus) {
  Json* roles = p.scenario.contains("deployment") ? &p.scenario["deployment"]["roles"] : nullptr;
  if (!roles || !roles->is_array()) return;
  for (std::size_t i = 0; i < roles->size(); ++i) {
    Json& role = (*roles)[i];
    if (!role.is_object() || !role.contains("replicas") || !role["replicas"].is_object()) continue;
    const Json& r = role["replicas"];
    if (!r.contains("gpu_share") || !r["gpu_share"].is_number() || total_gpus <= 0) {
      p.error = "/deployment/roles/" + std::to_string(i) + "/replicas: {\"gpu_share\": f} needs /total_gpus in the sweep";
      return;
    }
    const double share = r["gpu_share"].get<double>();
    const int world = role_world_size(role);
    const auto n = static_cast<std::int64_t>(share * static_cast<double>(total_gpus) / world + 1e-9);
    if (n < 1) {
      p.error = "role " + std::to_string(i) + ": a GPU share of " + r["gpu_share"].dump() + " of " +
                std::to_string(total_gpus) + " GPUs gives no replica of " + std::to_string(world) + " GPUs";
      return;
    }
    role["replicas"] = n;
  }
}

}  // namespace

std::vector<SweepPoint> expand_sweep(const SweepSpec& spec) {
  std::vector<std::size_t> sizes;
  std::int64_t total = 1;
  for (const auto& a : spec.axes) {
    sizes.push_back(a.is_field() ? a.values.size() : a.sets.size());
    total *= static_cast<std::int64_t>(sizes.back());
  }
  std::vector<SweepPoint> out;
  out.reserve(static_cast<std::size_t>(total));
  std::vector<std::size_t> digit(spec.axes.size(), 0);
  for (std::int64_t n = 0; n < total; ++n) {
    SweepPoint p;
    p.index = n;
    p.scenario = spec.base;
    p.assignment = Json::object();
    p.group = "all";
    for (std::size_t k = 0; k < spec.axes.size() && p.error.empty(); ++k) {
      const SweepAxis& a = spec.axes[k];
      if (!a.is_field()) {
        p.assignment[a.name] = a.labels[digit[k]];
        const Json& set = a.sets[digit[k]];
        for (auto it = set.begin(); it != set.end() && p.error.empty(); ++it)
          set_json_pointer(p.scenario, it.key(), it.value(), p.error);
      } else {
        p.assignment[a.name] = a.values[digit[k]];
        for (const auto& path : a.paths) {
          std::string err;
          if (!set_json_pointer(p.scenario, path, a.values[digit[k]], err) &&
              !(a.skip_missing && err.find("no array element") != std::string::npos))
            p.error = err;
        }
      }
      if (a.name == spec.group_by)
        p.group = p.assignment[a.name].is_string() ? p.assignment[a.name].get<std::string>() : p.assignment[a.name].dump();
    }
    if (p.error.empty()) resolve_shares(p, spec.total_gpus);
    // Json objects are key-sorted, so dump() is canonical.
    p.id = "pt-" + fnv1a_hex(p.assignment.dump());
    out.push_back(std::move(p));
    // Odometer: the last axis varies fastest.
    for (std::size_t k = spec.axes.size(); k-- > 0;) {
      if (++digit[k] < sizes[k]) break;
      digit[k] = 0;
    }
  }
  return out;
}

}  // namespace servesim
