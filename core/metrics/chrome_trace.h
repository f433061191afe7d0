#pragma once
/// Chrome / Perfetto trace of a run: one process per replica; per request, nested async slices for queued,
/// prefill chunks and decode; per iteration a complete slice on its own thread; counters for batch size
/// and KV usage. Open the file in ui.perfetto.dev or chrome://tracing.
#include <string>
#include <vector>

#include "core/metrics/metrics_collector.h"

namespace servesim {

/// Display name of each global replica index ("C[0] H100-SXM tp1").
using ReplicaNames = std::vector<std::string>;

/// Writes the trace JSON (needs the collector's phases and iterations to be kept).
std::string chrome_trace_json(const std::vector<Request>& pool, const MetricsCollector& m, const ReplicaNames& names);

}  // namespace servesim
