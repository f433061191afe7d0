#pragma once
/// The event loop: owns the clock and the queue, and is passed explicitly to every handler (no globals).
#include <cstdint>
#include <string>

#include "core/sim/event_queue.h"

namespace servesim {

/// Drives events in time order. Several simulators can coexist (tests, sweeps).
class Simulator {
 public:
  /// Current simulated time.
  SimTime now() const { return now_; }
  /// Schedules `kind`/`arg` for `target` at absolute time `at` (>= now).
  void schedule(SimTime at, EventHandler* target, std::int32_t kind, std::int64_t arg = 0);
  /// Schedules after a delay from now.
  void schedule_in(SimTime delay, EventHandler* target, std::int32_t kind, std::int64_t arg = 0) {
    schedule(now_ + delay, target, kind, arg);
  }
  /// Processes at most `max_events` events with time <= `until`; returns how many ran. Stops early when the
  /// queue is empty or the next event lies after `until`.
  std::uint64_t run(std::uint64_t max_events, SimTime until = kTimeInfinity);
  /// Time of the next event (kTimeInfinity when idle).
  SimTime next_time() const { return queue_.empty() ? kTimeInfinity : queue_.top().time; }
  /// True when no event is pending.
  bool idle() const { return queue_.empty(); }
  /// Events processed so far.
  std::uint64_t events_processed() const { return processed_; }
  /// Events waiting in the queue.
  std::size_t pending() const { return queue_.size(); }

 private:
  EventQueue queue_;
  SimTime now_ = 0;
  std::uint64_t processed_ = 0;
};

}  // namespace servesim
