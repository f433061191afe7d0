#include "core/explore/sweep_runner.h"

#include <algorithm>
#include <map>

#include "core/api/session.h"
#include "core/explore/pareto.h"
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
  const Json result = Json::parse(session->result_json());
  const Json& s = result["summary"];
  Json m;
  for (const char* k : kMetricKeys) m[k] = s.contains(k) ? s[k] : Json();
  rec["metrics"] = m;
  if (p.status != "completed") {
    rec["status"] = "failed";
    rec["reason"] = result.value("message", p.status);
    return rec;
  }
  rec["status"] = "ok";
  const std::string& pc = spec.percentile;
  const double tpot = s[pc + "_tpot_ms"].get<double>(), ttft = s[pc + "_ttft_ms"].get<double>();
  rec["x"] = tpot > 0 ? 1000.0 / tpot : 0.0;
  rec["y"] = s["output_throughput_per_gpu"].get<double>();
  rec["meets_sla"] = s["failed"].get<std::int64_t>() == 0 && (spec.sla_ttft_ms <= 0 || ttft <= spec.sla_ttft_ms) &&
                     (spec.sla_tpot_ms <= 0 || tpot <= spec.sla_tpot_ms);
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
  std::vector<ParetoInput> in;
  std::map<std::string, std::int64_t> reasons;
  for (const auto& p : all) {
    if (p["status"] == "ok")
      in.push_back({p["id"].get<std::string>(), p["group"].get<std::string>(), p["x"].get<double>(),
                    p["y"].get<double>(), p["meets_sla"].get<bool>()});
    else
      reasons[p["reason"].get<std::string>().substr(0, p["reason"].get<std::string>().find(':'))] += 1;
  }
  const ParetoResult pr = pareto_frontiers(in);
  Json m;
  m["sweep"] = first["sweep"];
  m["sweep_hash"] = first["sweep_hash"];
  m["total_points"] = total;
  m["percentile"] = first["percentile"];
  m["sla"] = first["sla"];
  m["ran"] = static_cast<std::int64_t>(in.size());
  m["filtered_by_reason"] = reasons;
  Json fronts = Json::object();
  for (const auto& [g, ids] : pr.frontiers) fronts[g] = ids;
  m["frontiers"] = fronts;
  m["best"] = pr.best_id;
  m["points"] = std::move(all);
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
