#pragma once
/// The event list: a binary heap ordered by time, then by insertion sequence (ties keep FIFO order).
#include <cstdint>
#include <vector>

#include "core/sim/sim_time.h"

namespace servesim {

class Simulator;
struct Event;

/// Anything that receives events: replicas, the controller, the workload driver.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  /// Called when an event addressed to this handler reaches the head of the queue.
  virtual void on_event(Simulator& sim, const Event& ev) = 0;
};

/// One scheduled occurrence. `kind` and `arg` are interpreted by the target handler.
struct Event {
  SimTime time = 0;            ///< when it fires
  std::uint64_t seq = 0;       ///< insertion order, breaks ties deterministically
  EventHandler* target = nullptr;
  std::int32_t kind = 0;       ///< handler-defined event type
  std::int64_t arg = 0;        ///< handler-defined payload (an id or index)
};

/// Min-heap of events keyed by (time, seq).
class EventQueue {
 public:
  /// Adds an event; returns its sequence number.
  std::uint64_t push(SimTime time, EventHandler* target, std::int32_t kind, std::int64_t arg);
  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop();
  /// The earliest event without removing it. Precondition: !empty().
  const Event& top() const { return heap_.front(); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }

 private:
  static bool later(const Event& a, const Event& b) {
    return a.time != b.time ? a.time > b.time : a.seq > b.seq;
  }
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace servesim
