#include "core/explore/sweep_runner.h"

#include <algorithm>
#include <map>

#include "core/api/session.h"
#include "core/explore/sla_view.h"
#include "core/explore/prefilter.h"
#include "core/spec/resource_catalog.h"

namespace servesim {

namespace {

/// Summary keys copied into each record.
constexpr const char* kMetricKeys[] = {
    "completed", "failed", "request_throughput", "output_throughput", "output_throughput_per_gpu", "num_gpus",
    "usd_per_hour", "usd_per_mtok_output", "mean_ttft_ms", "p50_ttft_ms", "p90_ttft_ms", "p95_ttft_ms",
    "p99_ttft_ms", "mean_tpot_ms", "p50_tpot_ms", "p90_tpot_ms", "p95_tpot_ms", "p99_tpot_ms"};

}  // namespace

Json evaluate_point(const SweepSpec& spec, const SweepPoint& point, const ResourceLoader& loader) {
  Json rec;
  rec["index"] = point.index;
  rec["id"] = point.id;
  rec["group"] = point.group;
  rec["assignment"] = point.assignment;
  const ResourceCatalog catalog(loader);
  const std::string reason = prefilter_point(point, spec.total_gpus, catalog);
  if (!reason.empty()) {
    rec["status"] = "filtered";
    rec["reason"] = reason;
    return rec;
  }
  Errors errors;
  auto session = Session::create(point.scenario.dump(), loader, errors);
  if (!session) {
    rec["status"] = "filtered";
    rec["reason"] = "invalid: " + errors.list().front().to_string();
    return rec;
  }
  Progress p;
  do p = session->step(1'000'000);
  while (!p.finished);
  // The summary alone: building and parsing the whole result document cost a sweep point more than it uses.
  const Json s = Json::parse(session->summary_json());
  Json m;
  for (const char* k : kMetricKeys) m[k] = s.contains(k) ? s[k] : Json();
  rec["metrics"] = m;
  if (p.status != "completed") {
    rec["status"] = "failed";
    rec["reason"] = Json::parse(session->result_json()).value("message", p.status);
    return rec;
  }
  rec["status"] = "ok";
  frame_record(rec, SlaView{spec.percentile, spec.sla_ttft_ms, spec.sla_tpot_ms});
  return rec;
}

Json make_shard(const SweepSpec& spec, const std::string& sweep_text, int shard, int shards, std::int64_t total,
                std::vector<Json> records) {
  Json d;
  d["sweep"] = spec.name;
  d["sweep_hash"] = fnv1a_hex(sweep_text);
  d["shard"] = shard;
  d["shards"] = shards;
  d["total_points"] = total;
  d["percentile"] = spec.percentile;
  d["sla"] = {{"ttft_ms", spec.sla_ttft_ms}, {"tpot_ms", spec.sla_tpot_ms}};
  d["points"] = std::move(records);
  return d;
}

std::string merge_shards(const std::vector<std::string>& docs, std::string& error) {
  if (docs.empty()) {
    error = "no shard files";
    return "";
  }
  std::vector<Json> all;
  Json first;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    Json d = Json::parse(docs[i], nullptr, false);
    if (d.is_discarded() || !d.is_object() || !d.contains("points") || !d.contains("sweep_hash")) {
      error = "shard " + std::to_string(i) + " is not a servesim sweep shard";
      return "";
    }
    if (i == 0) first = d;
    else if (d["sweep_hash"] != first["sweep_hash"]) {
      error = "shards come from different sweep files (sweep_hash differs)";
      return "";
    }
    for (auto& p : d["points"]) all.push_back(std::move(p));
  }
  std::sort(all.begin(), all.end(), [](const Json& a, const Json& b) { return a["index"] < b["index"]; });
  const auto total = first["total_points"].get<std::int64_t>();
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(all.size()); ++i)
    if (all[static_cast<std::size_t>(i)]["index"].get<std::int64_t>() != i) {
      error = "point " + std::to_string(i) + " is missing or duplicated across shards";
      return "";
    }
  if (static_cast<std::int64_t>(all.size()) != total) {
    error = "shards hold " + std::to_string(all.size()) + " of " + std::to_string(total) + " points";
    return "";
  }
  std::int64_t ran = 0;
  std::map<std::string, std::int64_t> reasons;
  for (const auto& p : all) {
    if (p["status"] == "ok") ++ran;
    else reasons[p["reason"].get<std::string>().substr(0, p["reason"].get<std::string>().find(':'))] += 1;
  }
  Json m;
  m["sweep"] = first["sweep"];
  m["sweep_hash"] = first["sweep_hash"];
  m["total_points"] = total;
  m["percentile"] = first["percentile"];
  m["sla"] = first["sla"];
  m["ran"] = ran;
  m["filtered_by_reason"] = reasons;
  m["points"] = std::move(all);
  set_frontiers(m);
  return m.dump();
}

std::string sweep_csv(const std::string& merged_json) {
  const Json m = Json::parse(merged_json, nullptr, false);
  if (m.is_discarded() || !m.contains("points")) return "";
  std::vector<std::string> axes;
  for (const auto& p : m["points"]) {
    for (auto it = p["assignment"].begin(); it != p["assignment"].end(); ++it)
      if (std::find(axes.begin(), axes.end(), it.key()) == axes.end()) axes.push_back(it.key());
    break;
  }
  std::string out = "id,group";
  for (const auto& a : axes) out += "," + a;
  out += ",tokens_per_s_per_user,output_tokens_per_s_per_gpu,meets_sla,on_frontier,best\n";
  auto cell = [](const Json& v) {
    std::string s = v.is_string() ? v.get<std::string>() : v.dump();
    if (s.find_first_of(",\"\n") != std::string::npos) {
      std::string q = "\"";
      for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
      return q + "\"";
    }
    return s;
  };
  for (const auto& p : m["points"]) {
    if (p["status"] != "ok") continue;
    const std::string id = p["id"].get<std::string>();
    bool front = false;
    for (auto it = m["frontiers"].begin(); it != m["frontiers"].end(); ++it)
      for (const auto& f : it.value()) front |= f == id;
    out += id + "," + cell(p["group"]);
    for (const auto& a : axes) out += "," + cell(p["assignment"].value(a, Json()));
    out += "," + p["x"].dump() + "," + p["y"].dump() + "," + (p["meets_sla"].get<bool>() ? "1" : "0") + "," +
           (front ? "1" : "0") + "," + (m["best"] == id ? "1" : "0") + "\n";
  }
  return out;
}

}  // namespace servesim
