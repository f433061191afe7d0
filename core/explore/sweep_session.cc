#include "core/explore/sweep_session.h"

#include "core/api/session.h"
#include "core/explore/sla_view.h"
#include "core/explore/sweep_runner.h"

namespace servesim {

namespace {
/// Dumps without throwing on invalid UTF-8 in user strings.
std::string dump(const Json& j, int indent = -1) { return j.dump(indent, ' ', false, Json::error_handler_t::replace); }
}  // namespace

std::string SweepSession::load(const std::string& sweep_text) {
  text_.clear();
  spec_ = SweepSpec{};
  points_.clear();
  Errors errors;
  Json out;
  SweepSpec spec;
  const bool ok = parse_sweep(sweep_text, spec, errors);
  out["ok"] = ok;
  out["errors"] = Json::parse(errors_to_json(errors), nullptr, false);
  Json pts = Json::array();
  if (ok) {
    text_ = sweep_text;
    spec_ = std::move(spec);
    points_ = expand_sweep(spec_);
    for (const auto& p : points_)
      pts.push_back({{"index", p.index}, {"id", p.id}, {"group", p.group}, {"assignment", p.assignment}});
    out["sweep"] = spec_.name;
    out["group_by"] = spec_.group_by;
    out["percentile"] = spec_.percentile;
    out["sla"] = {{"ttft_ms", spec_.sla_ttft_ms}, {"tpot_ms", spec_.sla_tpot_ms}};
    out["total_gpus"] = spec_.total_gpus;
    Json axes = Json::array();
    for (const auto& a : spec_.axes) axes.push_back(a.name);
    out["axes"] = axes;
  }
  out["points"] = std::move(pts);
  return dump(out);
}

std::string SweepSession::evaluate(std::int64_t index, const ResourceLoader& loader) const {
  if (index < 0 || index >= size()) return "";
  return dump(evaluate_point(spec_, points_[static_cast<std::size_t>(index)], loader));
}

std::string SweepSession::scenario(std::int64_t index) const {
  if (index < 0 || index >= size()) return "";
  return dump(points_[static_cast<std::size_t>(index)].scenario, 2);
}

std::string SweepSession::merge(const std::string& records_json) const {
  Json out = {{"ok", false}, {"error", ""}, {"merged", ""}, {"csv", ""}};
  Json records = Json::parse(records_json, nullptr, false);
  if (points_.empty()) out["error"] = "no sweep is loaded";
  else if (records.is_discarded() || !records.is_array()) out["error"] = "records: expected a JSON array";
  else {
    for (const auto& r : records)
      if (!r.is_object() || !r.contains("index") || !r["index"].is_number_integer() || !r.contains("status")) {
        out["error"] = "records: every record needs an integer index and a status";
        return dump(out);
      }
    std::vector<Json> list(records.begin(), records.end());
    const Json shard = make_shard(spec_, text_, 0, 1, size(), std::move(list));
    std::string error;
    const std::string merged = merge_shards({dump(shard)}, error);
    if (merged.empty()) out["error"] = error;
    else {
      out["ok"] = true;
      out["merged"] = merged;
      out["csv"] = sweep_csv(merged);
    }
  }
  return dump(out);
}

std::string SweepSession::reframe(const std::string& merged_json, const std::string& view_json) {
  Json out = {{"ok", false}, {"errors", Json::array()}, {"merged", ""}, {"csv", ""}};
  Errors errors;
  SlaView view;
  const Json j = Json::parse(view_json, nullptr, false);
  if (j.is_discarded()) errors.add("", "the view is not valid JSON");
  else if (parse_sla_view(j, view, errors)) {
    std::string error;
    const std::string merged = reframe_merged(merged_json, view, error);
    if (merged.empty()) errors.add("", error);
    else {
      out["ok"] = true;
      out["merged"] = merged;
      out["csv"] = sweep_csv(merged);
    }
  }
  out["errors"] = Json::parse(errors_to_json(errors), nullptr, false);
  return dump(out);
}

}  // namespace servesim
