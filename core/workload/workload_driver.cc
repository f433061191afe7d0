#include "core/workload/workload_driver.h"

#include <algorithm>
#include <cmath>

#include "core/sim/check.h"

namespace servesim {

WorkloadDriver::WorkloadDriver(const WorkloadSpec& spec, std::uint64_t seed, std::vector<Request>& pool,
                               LengthSampler lengths, const TraceTable* arrival_trace, RequestSink* sink,
                               int response_preamble_tokens)
    : spec_(spec),
      pool_(pool),
      lengths_(std::move(lengths)),
      arrival_trace_(arrival_trace),
      sink_(sink),
      arrival_rng_(seed, static_cast<std::uint64_t>(RngStream::kArrivals)),
      length_rng_(seed, static_cast<std::uint64_t>(RngStream::kLengths)),
      cap_(spec.arrival.max_concurrency),
      first_text_token_(spec.ttft_from == WorkloadSpec::TtftFrom::kFirstText ? 1 + response_preamble_tokens : 1) {
  if (spec_.arrival.process == ArrivalSpec::Process::kTrace) {
    SERVESIM_CHECK(arrival_trace_ && arrival_trace_->arrival_ms.size() >= pool_.size(), "trace shorter than the run");
    trace_scale_ = spec_.arrival.time_scale;
    if (spec_.arrival.trace_rate > 0 && pool_.size() > 1) {
      const double span_s = (arrival_trace_->arrival_ms[pool_.size() - 1] - arrival_trace_->arrival_ms[0]) / 1e3;
      if (span_s > 0) trace_scale_ = static_cast<double>(pool_.size() - 1) / (spec_.arrival.trace_rate * span_s);
    }
  }
}

SimTime WorkloadDriver::generation_time(std::int64_t index) {
  const ArrivalSpec& a = spec_.arrival;
  switch (a.process) {
    case ArrivalSpec::Process::kClosedLoop: return 0;
    case ArrivalSpec::Process::kTrace:
      return from_ms((arrival_trace_->arrival_ms[index] - arrival_trace_->arrival_ms[0]) * trace_scale_);
    case ArrivalSpec::Process::kPoisson: {
      if (index == 0 || std::isinf(a.request_rate)) return index == 0 ? 0 : next_gen_time_;
      // vllm bench: gaps ~ Gamma(shape = burstiness, scale = 1 / (rate * burstiness)); shape 1 is Poisson.
      const double gap_s = a.burstiness == 1.0 ? arrival_rng_.exponential(a.request_rate)
                                               : arrival_rng_.gamma(a.burstiness, 1.0 / (a.request_rate * a.burstiness));
      return next_gen_time_ + from_sec(gap_s);
    }
  }
  return 0;
}

void WorkloadDriver::start(Simulator& sim) {
  if (!pool_.empty()) next_gen_time_ = generation_time(0);
  pump(sim);
}

void WorkloadDriver::pump(Simulator& sim) {
  const std::int64_t n = static_cast<std::int64_t>(pool_.size());
  while (next_ < n && (cap_ == 0 || in_flight_ < cap_) && next_gen_time_ <= sim.now()) {
    Request& r = pool_[next_];
    r.id = next_;
    auto [in, out] = lengths_.next(next_, length_rng_);
    r.prompt_tokens = in;
    r.output_tokens = out;
    r.first_text_token = std::min<std::int32_t>(first_text_token_, out);
    r.arrival = sim.now();
    ++in_flight_;
    ++next_;
    if (next_ < n) next_gen_time_ = generation_time(next_);
    sink_->submit(sim, r);
  }
  if (next_ < n && (cap_ == 0 || in_flight_ < cap_) && next_gen_time_ > sim.now() &&
      wake_pending_ != next_gen_time_) {
    wake_pending_ = next_gen_time_;
    sim.schedule(next_gen_time_, this, kWake);
  }
}

void WorkloadDriver::on_request_done(Simulator& sim, const Request& req) {
  const double think = spec_.arrival.process == ArrivalSpec::Process::kClosedLoop ? spec_.arrival.think_time_ms : 0;
  if (cap_ == 0) {  // no client waits on this slot
    --in_flight_;
    pump(sim);
    return;
  }
  // The slot frees as an event, even with no think time: a client learns of its response only after the engine has
  // sent it, and every engine forms its next batch right after sending a step's outputs, so a follow-up request
  // cannot join the batch formed at its predecessor's completion (the replica forms it in this same call). With a
  // front-end (engine.frontend) the client has its response when the last token was streamed, after the engine.
  sim.schedule(add_spans(std::max(sim.now(), req.finished), from_ms(std::max(0.0, think))), this, kSlotFree);
}

void WorkloadDriver::on_event(Simulator& sim, const Event& ev) {
  if (ev.kind == kSlotFree) --in_flight_;
  if (ev.kind == kWake && wake_pending_ == ev.time) wake_pending_ = -1;
  pump(sim);
}

}  // namespace servesim
