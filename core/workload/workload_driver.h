#pragma once
/// The clients: generates requests at their send times, enforces the client-side concurrency cap
/// (closed loop = N clients), and hands each request to the global controller.
#include <cstdint>
#include <vector>

#include "core/sim/rng.h"
#include "core/sim/simulator.h"
#include "core/spec/workload_spec.h"
#include "core/workload/length_sampler.h"
#include "core/workload/request.h"

namespace servesim {

/// Receives requests as clients send them.
class RequestSink {
 public:
  virtual ~RequestSink() = default;
  /// `req` has its id, lengths and arrival (= now) set.
  virtual void submit(Simulator& sim, Request& req) = 0;
};

/// Open-loop (Poisson/gamma, trace) and closed-loop request generation.
class WorkloadDriver : public EventHandler {
 public:
  /// `pool` holds num_requests requests (index = id); `arrival_trace` is used for trace arrivals;
  /// `response_preamble_tokens` is the model's (ModelSpec), counted when the spec's ttft_from is kFirstText.
  WorkloadDriver(const WorkloadSpec& spec, std::uint64_t seed, std::vector<Request>& pool, LengthSampler lengths,
                 const TraceTable* arrival_trace, RequestSink* sink, int response_preamble_tokens = 0);
  /// Sends what is due at time 0 and schedules the rest.
  void start(Simulator& sim);
  /// A request finished or failed: its client slot frees (after the think time in closed loop).
  void on_request_done(Simulator& sim, const Request& req);
  void on_event(Simulator& sim, const Event& ev) override;
  /// Requests sent so far.
  std::int64_t sent() const { return next_; }

 private:
  enum Kind : std::int32_t { kWake = 1, kSlotFree = 2 };
  /// Generation time of request `next_` (before concurrency gating).
  SimTime generation_time(std::int64_t index);
  void pump(Simulator& sim);

  WorkloadSpec spec_;
  std::vector<Request>& pool_;
  LengthSampler lengths_;
  const TraceTable* arrival_trace_;
  RequestSink* sink_;
  Rng arrival_rng_;
  Rng length_rng_;
  double trace_scale_ = 1.0;
  std::int64_t next_ = 0;            ///< next request index to send
  SimTime next_gen_time_ = 0;        ///< its generation time
  SimTime wake_pending_ = -1;        ///< time of the scheduled wake-up, -1 if none
  std::int64_t in_flight_ = 0;
  std::int64_t cap_ = 0;             ///< 0 = unlimited
  std::int32_t first_text_token_ = 1;  ///< Request::first_text_token before the clamp to the output length
};

}  // namespace servesim
