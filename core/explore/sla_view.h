#pragma once
/// How a sweep's points are judged: the latency percentile that sets x (tokens/s per user = 1000 / TPOT) and
/// the SLA, and the SLA's bounds. A record keeps every percentile in its metrics, so a merged sweep can be
/// judged again under another view without running a point again (the page's SLA and percentile controls).
#include <string>

#include "core/spec/json_reader.h"

namespace servesim {

struct SlaView {
  std::string percentile = "p95";  ///< p50 | p90 | p95 | p99
  double ttft_ms = 0;              ///< 0: no TTFT bound
  double tpot_ms = 0;              ///< 0: no TPOT bound
};

/// Sets x, y and meets_sla of a record whose status is "ok" from its metrics (the summary's keys).
void frame_record(Json& record, const SlaView& view);

/// Sets "frontiers" (per group, ids by increasing x) and "best" of a merged document from its ok points.
void set_frontiers(Json& merged);

/// Reads a view {percentile, sla: {ttft_ms, tpot_ms}}; errors name the field ("/sla/tpot_ms").
bool parse_sla_view(const Json& j, SlaView& view, Errors& errors);

/// The merged document judged under `view`: every ok point's x and meets_sla, the frontiers, the best point,
/// "percentile" and "sla". Under the sweep's own view this gives the merged document back byte for byte.
/// "" with `error` when `merged_json` is not a merged sweep.
std::string reframe_merged(const std::string& merged_json, const SlaView& view, std::string& error);

}  // namespace servesim
