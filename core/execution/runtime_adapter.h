#pragma once
/// Runtime adapters hook the replica's scheduler-batch loop. An adapter may change scheduler-visible state
/// before scheduling, the batch's shape after scheduling, and per-request progress after the batch ran.
#include "core/execution/batch.h"
#include "core/execution/scheduler.h"

namespace servesim {

/// One engine feature expressed as loop hooks.
class RuntimeAdapter {
 public:
  virtual ~RuntimeAdapter() = default;
  virtual const char* name() const = 0;
  /// Before schedule(): adjust what the scheduler sees.
  virtual void before_schedule(SchedulerLimits& limits) {}
  /// After schedule(), before pricing: reshape the batch (padding, extra tokens).
  virtual void shape_batch(Batch& batch) {}
  /// After the batch ran, before tokens are emitted: adjust per-request progress.
  virtual void after_batch(Batch& batch) {}
};

}  // namespace servesim
