#pragma once
/// Helpers shared by tests: the bundled profiles, presets, and a one-call run.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/api/session.h"
#include "core/fidelity/batch_shape.h"
#include "core/fidelity/op_table.h"
#include "core/spec/deployment_spec.h"
#include "core/spec/engine_options.h"
#include "core/spec/gpu_spec.h"
#include "core/spec/model_spec.h"
#include "core/spec/resource_catalog.h"

namespace servesim::test {

/// Loader over the repository's profiles/.
ResourceLoader profiles_loader();
/// Catalog over the repository's profiles/.
const ResourceCatalog& catalog();
/// Text of presets/<name>.json.
std::string preset_text(const std::string& name);
/// Runs a scenario to completion; fails the test (REQUIRE) on errors. Returns the parsed result.
nlohmann::json run_scenario(const std::string& scenario_json, const SessionOptions& options = {});
/// Same, returning the raw result text (for byte comparisons).
std::string run_scenario_text(const std::string& scenario_json, const SessionOptions& options = {});
/// A bundled model / GPU by name (REQUIREs that it loads).
ModelSpec bundled_model(const std::string& name);
GpuSpec bundled_gpu(const std::string& name);
/// A bundled measured table, "<folder>/<file>" (REQUIREs that it loads).
OpTable bundled_table(const std::string& folder, const std::string& file);
/// One grid of a bundled measured table, "<folder>/<file>" by key (REQUIREs that it loads and is there).
OpGrid bundled_grid(const std::string& folder, const std::string& file, const std::vector<std::string>& key);
/// A small valid scenario (Llama-3.1-8B, one H100, fixed lengths) to edit in tests.
nlohmann::json small_scenario();

/// Engine options of `backend` with every other field at its default.
inline EngineOptions engine_for(const std::string& backend) {
  EngineOptions e;
  e.backend = backend;
  return e;
}

constexpr double kGiB = 1u << 30;

/// Tensor parallelism `tp` over `dp` data-parallel attention groups, the FFN over all tp x dp GPUs, one stage.
inline Parallelism tp_dp(int tp, int dp = 1) {
  Parallelism p;
  p.tp_attn = tp;
  p.dp_attn = dp;
  p.tp_ffn = tp * dp;
  return p;
}

/// A decode-only batch of `n` requests at context `ctx`, replayed from a CUDA graph.
inline BatchShape decode_batch(int n, int ctx) {
  BatchShape s;
  s.num_tokens = s.num_decode = s.num_sampled = n;
  for (int i = 0; i < n; ++i) s.decode_contexts.push_back(ctx);
  s.decode_context_sum = static_cast<std::int64_t>(n) * ctx;
  s.decode_context_max = ctx;
  s.cuda_graph = true;
  return s;
}

}  // namespace servesim::test
