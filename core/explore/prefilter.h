#pragma once
/// The static pre-filter: drops sweep points that cannot run, before any simulation, with a counted reason
/// (invalid scenario, over the GPU budget, weights that do not fit, a KV cache smaller than vLLM accepts).
#include <string>

#include "core/explore/sweep_expansion.h"
#include "core/spec/resource_catalog.h"

namespace servesim {

/// Empty when the point may run; otherwise a short reason category, then ": " and the detail.
std::string prefilter_point(const SweepPoint& p, std::int64_t total_gpus, const ResourceCatalog& catalog);

}  // namespace servesim
