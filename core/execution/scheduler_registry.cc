#include "core/execution/scheduler_registry.h"

#include "core/execution/sglang_scheduler.h"
#include "core/execution/trtllm_scheduler.h"
#include "core/execution/vllm_v1_scheduler.h"

namespace servesim {

namespace {
struct Entry {
  SchedulerKind kind;
  const char* name;
};
constexpr Entry kSchedulers[] = {
    {SchedulerKind::kVllmV1, "vllm_v1"}, {SchedulerKind::kSglang, "sglang"}, {SchedulerKind::kTrtllm, "trtllm"}};
}  // namespace

bool scheduler_from_string(const std::string& name, SchedulerKind& out) {
  for (const auto& e : kSchedulers)
    if (name == e.name) {
      out = e.kind;
      return true;
    }
  return false;
}

const char* scheduler_to_string(SchedulerKind k) {
  for (const auto& e : kSchedulers)
    if (e.kind == k) return e.name;
  return "?";
}

std::string scheduler_names() {
  std::string s;
  for (const auto& e : kSchedulers) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

std::unique_ptr<Scheduler> make_scheduler(SchedulerKind k, ClusterCounters* counters) {
  switch (k) {
    case SchedulerKind::kVllmV1: return std::make_unique<VllmV1Scheduler>(counters);
    case SchedulerKind::kSglang: return std::make_unique<SglangScheduler>(counters);
    case SchedulerKind::kTrtllm:
      return std::make_unique<TrtllmScheduler>(counters);
  }
  return nullptr;
}

}  // namespace servesim
