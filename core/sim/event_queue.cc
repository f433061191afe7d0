#include "core/sim/event_queue.h"

#include <algorithm>

namespace servesim {

std::uint64_t EventQueue::push(SimTime time, EventHandler* target, std::int32_t kind, std::int64_t arg) {
  const std::uint64_t seq = next_seq_++;
  heap_.push_back(Event{time, seq, target, kind, arg});
  std::push_heap(heap_.begin(), heap_.end(), later);
  return seq;
}

Event EventQueue::pop() {
  std::pop_heap(heap_.begin(), heap_.end(), later);
  Event ev = heap_.back();
  heap_.pop_back();
  return ev;
}

}  // namespace servesim
