#pragma once
/// Running sweep points and merging their records. One point is one Session run to completion, so the CLI's
/// thread pool, a batch system's array jobs and the page's worker pool all produce the same records; merging
/// sorts by expansion index, so any split into shards gives the same merged document.
#include <string>
#include <vector>

#include "core/explore/sweep_expansion.h"
#include "core/spec/resource_loader.h"

namespace servesim {

/// Runs (or pre-filters) one point; returns its record:
/// {index, id, group, assignment, status: ok | filtered | failed, reason?, metrics?: {...}, x, y, meets_sla}.
Json evaluate_point(const SweepSpec& spec, const SweepPoint& point, const ResourceLoader& loader);

/// A shard document: {"sweep", "sweep_hash", "shard", "shards", "total_points", "percentile", "sla", "points"}.
Json make_shard(const SweepSpec& spec, const std::string& sweep_text, int shard, int shards, std::int64_t total,
                std::vector<Json> records);

/// Merges shard documents of one sweep: checks they agree and cover every point exactly once, sorts records
/// by index, counts pre-filter reasons and adds the Pareto frontiers. "" with `error` on a mismatch.
std::string merge_shards(const std::vector<std::string>& shard_docs, std::string& error);

/// CSV of every point that ran: id, group, axes..., x, y, meets_sla, on_frontier, best.
std::string sweep_csv(const std::string& merged_json);

}  // namespace servesim
