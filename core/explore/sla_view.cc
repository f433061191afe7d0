#include "core/explore/sla_view.h"

#include <cstdint>
#include <vector>

#include "core/explore/pareto.h"

namespace servesim {

void frame_record(Json& rec, const SlaView& view) {
  const Json& m = rec["metrics"];
  const double tpot = m[view.percentile + "_tpot_ms"].get<double>();
  const double ttft = m[view.percentile + "_ttft_ms"].get<double>();
  rec["x"] = tpot > 0 ? 1000.0 / tpot : 0.0;
  rec["y"] = m["output_throughput_per_gpu"].get<double>();
  rec["meets_sla"] = m["failed"].get<std::int64_t>() == 0 && (view.ttft_ms <= 0 || ttft <= view.ttft_ms) &&
                     (view.tpot_ms <= 0 || tpot <= view.tpot_ms);
}

void set_frontiers(Json& merged) {
  std::vector<ParetoInput> in;
  for (const auto& p : merged["points"])
    if (p["status"] == "ok")
      in.push_back({p["id"].get<std::string>(), p["group"].get<std::string>(), p["x"].get<double>(),
                    p["y"].get<double>(), p["meets_sla"].get<bool>()});
  const ParetoResult pr = pareto_frontiers(in);
  Json fronts = Json::object();
  for (const auto& [g, ids] : pr.frontiers) fronts[g] = ids;
  merged["frontiers"] = fronts;
  merged["best"] = pr.best_id;
}

bool parse_sla_view(const Json& j, SlaView& view, Errors& errors) {
  const std::size_t before = errors.list().size();
  {
    // The readers report unknown keys when they go out of scope, so count the errors after this block.
    ObjectReader r(j, "", errors);
    if (!r.valid()) return false;
    r.get_enum("percentile", view.percentile, {"p50", "p90", "p95", "p99"}, true);
    if (const Json* sla = r.raw("sla")) {
      ObjectReader sr(*sla, "/sla", errors);
      sr.get_number("ttft_ms", view.ttft_ms, 0, 1e9);
      sr.get_number("tpot_ms", view.tpot_ms, 0, 1e9);
    }
  }
  return errors.list().size() == before;
}

std::string reframe_merged(const std::string& merged_json, const SlaView& view, std::string& error) {
  Json m = Json::parse(merged_json, nullptr, false);
  if (m.is_discarded() || !m.is_object() || !m.contains("points") || !m["points"].is_array()) {
    error = "not a merged sweep document";
    return "";
  }
  for (auto& p : m["points"]) {
    if (!p.is_object() || p.value("status", "") != "ok") continue;
    const Json* metrics = p.contains("metrics") ? &p["metrics"] : nullptr;
    for (const char* k : {"_tpot_ms", "_ttft_ms"})
      if (!metrics || !(*metrics).contains(view.percentile + k) || !(*metrics)[view.percentile + k].is_number()) {
        error = "point " + p.value("id", std::string("?")) + " has no " + view.percentile + k + " metric";
        return "";
      }
    if (!(*metrics).contains("failed") || !(*metrics)["failed"].is_number_integer() ||
        !(*metrics).contains("output_throughput_per_gpu") || !(*metrics)["output_throughput_per_gpu"].is_number()) {
      error = "point " + p.value("id", std::string("?")) + " lacks failed or output_throughput_per_gpu";
      return "";
    }
    frame_record(p, view);
  }
  m["percentile"] = view.percentile;
  m["sla"] = {{"ttft_ms", view.ttft_ms}, {"tpot_ms", view.tpot_ms}};
  set_frontiers(m);
  return m.dump();
}

}  // namespace servesim
