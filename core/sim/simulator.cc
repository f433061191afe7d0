#include "core/sim/simulator.h"

#include "core/sim/check.h"

namespace servesim {

void Simulator::schedule(SimTime at, EventHandler* target, std::int32_t kind, std::int64_t arg) {
  SERVESIM_CHECK(at >= now_, "event scheduled in the past: at=" + std::to_string(at) + " now=" + std::to_string(now_));
  queue_.push(at, target, kind, arg);
}

std::uint64_t Simulator::run(std::uint64_t max_events, SimTime until) {
  std::uint64_t n = 0;
  while (n < max_events && !queue_.empty() && queue_.top().time <= until) {
    Event ev = queue_.pop();
    SERVESIM_CHECK(ev.time >= now_, "time went backwards");
    now_ = ev.time;
    ++processed_;
    ++n;
    ev.target->on_event(*this, ev);
  }
  return n;
}

}  // namespace servesim
