#include "core/metrics/cost_comparison.h"

#include <nlohmann/json.hpp>

namespace servesim {

std::string add_baseline_comparison(const std::string& result_json, const std::string& baseline_json,
                                    std::string& error) {
  using OJson = nlohmann::ordered_json;
  OJson run = OJson::parse(result_json, nullptr, false);
  const OJson base = OJson::parse(baseline_json, nullptr, false);
  auto summary_number = [](const OJson& doc, const char* key) {
    if (!doc.is_object() || !doc.contains("summary") || !doc["summary"].contains(key) ||
        !doc["summary"][key].is_number())
      return -1.0;
    return doc["summary"][key].get<double>();
  };
  const double p_run = summary_number(run, "usd_per_hour"), p_base = summary_number(base, "usd_per_hour");
  const double t_run = summary_number(run, "total_token_throughput");
  const double t_base = summary_number(base, "total_token_throughput");
  if (p_run < 0 || p_base < 0 || t_run < 0 || t_base < 0) {
    error = "both documents must be servesim results with a summary";
    return "";
  }
  if (p_run <= 0 || p_base <= 0) {
    error = "a GPU in one of the deployments has no usd_per_hour in the catalog, so SR and CE are undefined";
    return "";
  }
  if (t_base <= 0) {
    error = "the baseline completed no tokens";
    return "";
  }
  OJson b;
  b["name"] = base["scenario"].value("name", "");
  b["usd_per_hour"] = p_base;
  b["total_token_throughput"] = t_base;
  b["spend_ratio"] = p_base / p_run;
  b["cost_efficiency"] = (t_run / p_run) / (t_base / p_base);
  run["baseline"] = b;
  return run.dump();
}

}  // namespace servesim
