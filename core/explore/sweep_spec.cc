#include "core/explore/sweep_spec.h"

namespace servesim {

namespace {

bool valid_pointer(const std::string& p) { return !p.empty() && p[0] == '/' && p.size() < 256; }

void read_axis(const Json& j, const std::string& path, SweepAxis& a, Errors& errors) {
  ObjectReader r(j, path, errors);
  if (!r.valid()) return;
  r.get_string("name", a.name, true, 64);
  const bool field = r.has("path") || r.has("paths"), variant = r.has("variants");
  if (field == variant || (r.has("path") && r.has("paths"))) {
    errors.add(path, "an axis has either \"path\" (or \"paths\") with \"values\", or \"variants\" ([{label, set}])");
    r.ignore({"path", "paths", "values", "variants", "skip_missing"});
    return;
  }
  if (field) {
    if (r.has("path")) {
      std::string p;
      r.get_string("path", p, true, 255);
      a.paths.push_back(p);
    } else {
      const Json* ps = r.raw("paths");
      if (!ps->is_array() || ps->empty() || ps->size() > 64) errors.add(r.path("paths"), "must be an array of 1 to 64 JSON pointers");
      else
        for (const auto& p : *ps) a.paths.push_back(p.is_string() ? p.get<std::string>() : std::string());
    }
    for (const auto& p : a.paths)
      if (!valid_pointer(p)) errors.add(r.path(r.has("path") ? "path" : "paths"), "must be JSON pointers such as /engine/max_num_seqs");
    r.get_bool("skip_missing", a.skip_missing);
    const Json* v = r.raw("values");
    if (!v || !v->is_array() || v->empty() || v->size() > 1000) {
      errors.add(r.path("values"), "must be an array of 1 to 1000 values");
      return;
    }
    for (const auto& x : *v) a.values.push_back(x);
    return;
  }
  const Json* v = r.raw("variants");
  if (!v->is_array() || v->empty() || v->size() > 1000) {
    errors.add(r.path("variants"), "must be an array of 1 to 1000 {label, set} objects");
    return;
  }
  for (std::size_t i = 0; i < v->size(); ++i) {
    const std::string vp = r.path("variants") + "/" + std::to_string(i);
    ObjectReader vr((*v)[i], vp, errors);
    std::string label;
    vr.get_string("label", label, true, 64);
    const Json* set = vr.raw("set");
    if (!set || !set->is_object()) {
      errors.add(vr.path("set"), "is required: an object of {\"/json/pointer\": value}");
      continue;
    }
    for (auto it = set->begin(); it != set->end(); ++it)
      if (!valid_pointer(it.key())) errors.add(vr.path("set") + "/" + json_pointer_token(it.key()), "keys must be JSON pointers");
    a.labels.push_back(label);
    a.sets.push_back(*set);
  }
}

}  // namespace

bool parse_sweep(const std::string& text, SweepSpec& s, Errors& errors) {
  if (text.size() > (16u << 20)) {
    errors.add("", "the sweep is larger than 16 MiB");
    return false;
  }
  const Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    errors.add("", "not valid JSON: " + json_syntax_error(text));
    return false;
  }
  ObjectReader r(doc, "", errors);
  if (!r.valid()) return false;
  int version = 0;
  r.get_int("version", version, 1, 1, true);
  r.get_string("name", s.name, false, 200);
  r.ignore({"description", "demonstrates"});
  if (const Json* b = r.raw("base"); b && b->is_object()) s.base = *b;
  else errors.add("/base", "is required: a complete scenario object");
  r.get_int("total_gpus", s.total_gpus, 1, 131072);
  r.get_string("group_by", s.group_by, false, 64);
  r.get_enum("percentile", s.percentile, {"p50", "p90", "p95", "p99"});
  if (const Json* sla = r.raw("sla")) {
    ObjectReader sr(*sla, "/sla", errors);
    sr.get_number("ttft_ms", s.sla_ttft_ms, 0, 1e9, false, true);
    sr.get_number("tpot_ms", s.sla_tpot_ms, 0, 1e9, false, true);
  }
  const Json* axes = r.raw("axes");
  if (!axes || !axes->is_array() || axes->size() > 16) {
    errors.add("/axes", "is required: an array of at most 16 axes");
    return false;
  }
  std::int64_t points = 1;
  for (std::size_t i = 0; i < axes->size(); ++i) {
    SweepAxis a;
    read_axis((*axes)[i], "/axes/" + std::to_string(i), a, errors);
    const std::size_t n = a.is_field() ? a.values.size() : a.sets.size();
    points *= static_cast<std::int64_t>(n == 0 ? 1 : n);
    if (points > kMaxSweepPoints) {
      errors.add("/axes", "the sweep expands to more than " + std::to_string(kMaxSweepPoints) + " points");
      return false;
    }
    for (const auto& other : s.axes)
      if (other.name == a.name) errors.add("/axes/" + std::to_string(i) + "/name", "duplicate axis name \"" + a.name + "\"");
    s.axes.push_back(std::move(a));
  }
  if (!s.group_by.empty()) {
    bool found = false;
    for (const auto& a : s.axes) found |= a.name == s.group_by;
    if (!found) errors.add("/group_by", "must name an axis");
  }
  return errors.ok();
}

}  // namespace servesim
