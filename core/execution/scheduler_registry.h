#pragma once
/// The scheduler family, listed explicitly (no self-registration).
#include <memory>
#include <string>

#include "core/execution/scheduler.h"

namespace servesim {

enum class SchedulerKind { kVllmV1, kSglang, kTrtllm };

/// Parses a scheduler name; false for an unknown one.
bool scheduler_from_string(const std::string& name, SchedulerKind& out);
const char* scheduler_to_string(SchedulerKind k);
/// Names accepted by scheduler_from_string, comma separated.
std::string scheduler_names();
/// Creates a scheduler.
std::unique_ptr<Scheduler> make_scheduler(SchedulerKind k, ClusterCounters* counters);

}  // namespace servesim
