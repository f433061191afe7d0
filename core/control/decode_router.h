#pragma once
/// Decode-instance assignment for P/D disaggregation, decided at prefill start (early assignment so the KV
/// transfer can overlap): round robin, instantaneous least load (ILS), and SIBYL's projected load at the
/// handoff moment (seed 003, Eq. 1-8 and Algorithm 1).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/control/survival_estimator.h"
#include "core/spec/deployment_spec.h"
#include "core/workload/request.h"

namespace servesim {

/// What a decode router sees of one decode instance.
struct DecodeInstanceState {
  std::vector<Request*> active;   ///< decoding there now (KV landed)
  std::vector<Request*> pending;  ///< assigned there, still in prefill or transfer
  /// Token occupancy: sum of prompt + generated over active requests (SIBYL's physical pressure at now).
  double current_load() const;
};

/// A decode-instance assignment policy.
class DecodeRouter {
 public:
  virtual ~DecodeRouter() = default;
  /// Index into `instances` for `r`, arriving now.
  virtual std::size_t pick(const Request& r, SimTime now, const std::vector<DecodeInstanceState>& instances) = 0;
  /// A request finished decoding (estimator updates).
  virtual void on_completed(const Request& r) {}
};

/// Estimated time from prefill start to the handoff of a request (prefill, plus the KV transfer here).
using HandoffEstimate = std::function<SimTime(const Request&)>;

/// Builds a decode router by name ("round_robin", "least_load", "sibyl").
/// `decode_rate` = initial system decode speed (tokens/s per request) before any completion.
std::unique_ptr<DecodeRouter> make_decode_router(const std::string& name, const SibylSpec& sibyl,
                                                 std::int64_t max_output, HandoffEstimate estimate,
                                                 double decode_rate);

}  // namespace servesim
