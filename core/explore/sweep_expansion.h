#pragma once
/// Expands a sweep into points: the cartesian product of its axes in a fixed order, each point with a
/// stable id (a hash of its assignment, so the same configuration has the same id in every sweep and shard),
/// its series label, and its fully resolved scenario.
#include <cstdint>
#include <string>
#include <vector>

#include "core/explore/sweep_spec.h"

namespace servesim {

struct SweepPoint {
  std::int64_t index = 0;   ///< position in the expansion order
  std::string id;           ///< "pt-" + 16 hex digits of FNV-1a over the canonical assignment
  Json assignment;          ///< {axis name: value or variant label}
  std::string group;        ///< series (value of the group_by axis, "all" without one)
  Json scenario;            ///< base with the assignment applied and GPU shares resolved
  std::string error;        ///< why the point could not be built (bad pointer, share of 0 replicas)
};

/// Sets `ptr` in `doc`, creating missing object members; false with `error` if the path is unusable.
bool set_json_pointer(Json& doc, const std::string& ptr, const Json& value, std::string& error);

/// All points in order. Roles may give {"replicas": {"gpu_share": f}}, resolved against total_gpus.
std::vector<SweepPoint> expand_sweep(const SweepSpec& spec);

/// FNV-1a 64 of text, as 16 hex digits.
std::string fnv1a_hex(const std::string& text);

}  // namespace servesim
