#pragma once
/// Collective communication from measured tables: vLLM's custom all-reduce (CUDA-graph and eager variants) for
/// the small messages it handles, NCCL (all_reduce, all_gather, reduce_scatter, alltoall) otherwise. Sizes are
/// in 16-bit elements as measured. Outside the measured sizes: below the smallest, the smallest message's time
/// (latency-bound); above the largest, scaled linearly in size from it (bandwidth-bound); both flagged. Between
/// measured sizes the time is linear in size where it rises (the alpha-beta law of one protocol, exact for
/// t0 + bytes / bw) and log-log where it falls (LogCurve::eval_affine); held-out sizes on the complementary
/// split (even indices) chose this over log-log for every table (docs/validation.md).
#include <map>
#include <string>
#include <utility>

#include "core/fidelity/interpolation.h"
#include "core/fidelity/op_table.h"

namespace servesim {

/// Result of one collective lookup.
struct CollectiveTime {
  double us = 0;
  bool ok = false;            ///< a table covered this GPU count
  bool extrapolated = false;  ///< size outside the measured range
  bool custom = false;        ///< priced with the custom all-reduce table
};

class CollectiveModel {
 public:
  /// Tables may be null (that family then reports !ok). `custom_max_bytes`: largest message the custom
  /// all-reduce takes (vLLM: 8 MiB); `custom_gpus_ok`: the topology allows it (full NVLink, 2/4/6/8 GPUs).
  void set_tables(const OpTable* nccl, const OpTable* custom, double custom_max_bytes);
  /// All-reduce of `elements` bf16 values over `gpus` GPUs; `graph`: replayed inside a CUDA graph.
  CollectiveTime all_reduce(double elements, int gpus, bool graph) const;
  /// An NCCL collective ("all_reduce", "all_gather", "reduce_scatter", "alltoall") of 16-bit elements.
  CollectiveTime nccl(const std::string& op, double elements, int gpus) const;
  bool has_nccl() const { return !nccl_.empty(); }
  bool has_custom() const { return !custom_.empty(); }

 private:
  static CollectiveTime lookup(const LogCurve& c, double elements);
  std::map<std::pair<std::string, int>, LogCurve> nccl_;    // (op, gpus), half precision
  std::map<std::pair<std::string, int>, LogCurve> custom_;  // (graph|eager, gpus)
  double custom_max_bytes_ = 0;
};

}  // namespace servesim
