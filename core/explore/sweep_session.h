#pragma once
/// One sweep held open for a front end (the page's workers): parse and expand once, then evaluate points by
/// index, hand out a point's scenario, and merge records into the document `servesim sweep` writes. Every
/// method returns text and never throws on bad input, so wasm/bindings.cc can forward to it one line each.
#include <cstdint>
#include <string>
#include <vector>

#include "core/explore/sweep_expansion.h"
#include "core/spec/resource_loader.h"

namespace servesim {

class SweepSession {
 public:
  /// Parses and expands `sweep_text`. Returns {ok, errors: [{path, message}], sweep, group_by, percentile,
  /// sla: {ttft_ms, tpot_ms}, total_gpus, axes: [names], points: [{index, id, group, assignment}]}
  /// (no scenarios: see scenario()).
  std::string load(const std::string& sweep_text);
  /// Number of points of the loaded sweep (0 before a successful load()).
  std::int64_t size() const { return static_cast<std::int64_t>(points_.size()); }
  /// The record of point `index` (evaluate_point's JSON); "" when nothing is loaded or `index` is out of range.
  std::string evaluate(std::int64_t index, const ResourceLoader& loader) const;
  /// The resolved scenario of point `index` (pretty-printed JSON); "" when out of range.
  std::string scenario(std::int64_t index) const;
  /// Merges records (a JSON array of evaluate() outputs, any order) as one shard, exactly as `servesim sweep`
  /// without --shard does. Returns {ok, error, merged: text of sweep.json without its final newline, csv}.
  std::string merge(const std::string& records_json) const;
  /// A merged document (merge()'s "merged") judged under another view, `view_json` = {percentile, sla:
  /// {ttft_ms, tpot_ms}} (sla_view.h), without running any point again. Returns {ok, errors: [{path,
  /// message}], merged, csv}; errors name the view's field, or the path "" when `merged_json` is not a sweep.
  static std::string reframe(const std::string& merged_json, const std::string& view_json);

 private:
  std::string text_;
  SweepSpec spec_;
  std::vector<SweepPoint> points_;
};

}  // namespace servesim
