#pragma once
/// One iteration's batch: which requests advance by how many tokens, and the shape the fidelity plane prices.
#include <cstdint>
#include <vector>

#include "core/fidelity/batch_shape.h"
#include "core/workload/request.h"

namespace servesim {

/// A request and the tokens it computes this iteration.
struct ScheduledItem {
  Request* req = nullptr;
  std::int32_t num_tokens = 0;
  bool prefill = false;  ///< advances the prompt (or a recompute) rather than decoding one token
};

/// The scheduler's output, reshaped by runtime adapters.
struct Batch {
  std::vector<ScheduledItem> items;
  std::vector<Request*> preempted;  ///< requests preempted while forming this batch
  BatchShape shape;
  std::int64_t token_count() const { return shape.num_tokens; }
  void clear() {
    items.clear();
    preempted.clear();
    shape.clear();
  }
};

}  // namespace servesim
