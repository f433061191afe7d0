#pragma once
/// Collective communication from measured tables: the backend's own TP all-reduce (CUDA-graph and eager variants)
/// over the sizes its table measured, NCCL (all_reduce, all_gather, reduce_scatter, alltoall) otherwise. That table
/// is the engine's all-reduce entry point as it dispatches by size, not one kernel: AIConfigurator's collector times
/// vLLM's `tensor_model_parallel_all_reduce` (custom all-reduce up to its buffer, then symmetric-memory or custom
/// two-shot, then NCCL; the H100 tables cross NCCL's at those limits) and TRT-LLM's AllReduce with strategy AUTO,
/// from 128 to 512M elements. Sizes are
/// in 16-bit elements as measured. Outside the measured sizes: below the smallest, the smallest message's time
/// (latency-bound); above the largest, scaled linearly in size from it (bandwidth-bound); both flagged. Between
/// measured sizes where the time rises, halfway between the chord (linear in size: the alpha-beta law of one
/// protocol, exact for t0 + bytes / bw) and the bound the neighbouring segments' lines set on the side the curve
/// bends (between_sizes: where a faster law takes over or a latency floor gives way, the chord misses); log-log
/// where it falls (LogCurve::eval_affine). Evidence on both held-out splits in docs/validation.md.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/fidelity/interpolation.h"
#include "core/fidelity/op_table.h"

namespace servesim {

/// vLLM's custom all-reduce buffer: it takes messages strictly below this many bytes (should_custom_ar).
inline constexpr double kVllmCustomAllReduceBytes = 8.0 * (1 << 20);

/// Whether vLLM on a GPU of this compute capability ("major.minor") sends messages of the custom kernel's buffer
/// and more to NCCL: its symmetric-memory all-reduce runs on 9.0 and newer only. False when unknown ("").
bool vllm_all_reduce_nccl_at_buffer(const std::string& compute_capability);

/// Result of one collective lookup.
struct CollectiveTime {
  double us = 0;
  bool ok = false;            ///< a table covered this GPU count
  bool extrapolated = false;  ///< size outside the measured range
  bool custom = false;        ///< priced with the custom all-reduce table
};

class CollectiveModel {
 public:
  /// Tables may be null (that family then reports !ok). `custom_max_bytes`: largest message of vLLM's custom
  /// all-reduce kernel (8 MiB), up to which eager steps read the eager variant; larger messages read the graph
  /// variant up to the table's largest size, NCCL beyond. `beyond_buffer` false: NCCL above custom_max_bytes (an
  /// engine running the same custom kernel but not vLLM's dispatch above its buffer: SGLang).
  /// `split_at_buffer`: the custom table's cells from custom_max_bytes on were timed on NCCL (vLLM on a GPU without
  /// its symmetric-memory all-reduce, ProfileTables::custom_allreduce_nccl_at_buffer): a message below the buffer
  /// reads the cells below it only, linear in size past the last of them (one protocol's bandwidth law); a message
  /// from the buffer on reads the cells from it on (lookup_extended).
  void set_tables(const OpTable* nccl, const OpTable* custom, double custom_max_bytes, bool beyond_buffer = true,
                  bool split_at_buffer = false);
  /// All-reduce of `elements` bf16 values over `gpus` GPUs; `graph`: replayed inside a CUDA graph.
  CollectiveTime all_reduce(double elements, int gpus, bool graph) const;
  /// An NCCL collective ("all_reduce", "all_gather", "reduce_scatter", "alltoall") of 16-bit elements.
  CollectiveTime nccl(const std::string& op, double elements, int gpus) const;
  bool has_nccl() const { return !nccl_.empty(); }
  bool has_custom() const { return !custom_.empty(); }
  /// One measured message-size curve read at `size` (its own unit: elements here, bytes for point-to-point): the
  /// rule of this header, linear/log-log between sizes, the smallest size's time below, linear in size above.
  static CollectiveTime lookup(const LogCurve& c, double size);
  /// The time at `size` strictly between two measured sizes given the chord's (`chord`, linear in size). Engines
  /// run the fastest of several alpha-beta laws (NCCL's protocols and channel counts, one- and two-shot
  /// all-reduce), a lower envelope of lines: where the law switches between two measured sizes the curve is concave,
  /// the chord a lower bound and each neighbouring segment's line, like the larger size's time, an upper bound.
  /// Where a latency floor gives way to a bandwidth slope it is convex: the chord an upper bound, the lines and the
  /// smaller size's time lower bounds. Where time rises, the midpoint of the chord and the tightest bound on the side
  /// both lines fall (halving the worst case of either); the chord where they fall on different sides or either
  /// neighbouring segment is missing (one line alone does not show which way the curve bends).
  static double between_sizes(const LogCurve& c, double size, double chord);
  /// lookup() within the curve's sizes; beyond either end along the end segment (flagged extrapolated): the custom
  /// kernel's cells below its buffer and NCCL's from it on, read apart (split_at_buffer).
  static CollectiveTime lookup_extended(const LogCurve& c, double size);
  /// A measured curve (16-bit elements, NaN cells skipped) cut at `buffer_bytes`: the sizes below it and those from
  /// it on, each part made non-decreasing on its own when `monotone` (two kernels: NCCL from the buffer on may be
  /// faster than the custom kernel below it). False (both left empty) unless each part has two sizes.
  static bool split_curve(const std::vector<double>& elements, const std::vector<double>& us, double buffer_bytes,
                          LogCurve& below, LogCurve& from, bool monotone = true);
  /// A measured size curve made non-decreasing by an L1 isotonic fit (NaN cells skipped): one collective's
  /// latency does not fall as its message grows, so a cell above a larger message's time is a slow repetition
  /// (host jitter), not the cost a step pays. The curve read from the fitted values at the measured sizes.
  static LogCurve monotone_curve(const std::vector<double>& sizes, std::vector<double> us);

 private:
  std::map<std::pair<std::string, int>, LogCurve> nccl_;    // (op, gpus), half precision
  std::map<std::pair<std::string, int>, LogCurve> custom_;  // (graph|eager, gpus)
  /// With split_at_buffer: the same curves cut at the buffer, the custom kernel's cells and the NCCL cells.
  std::map<std::pair<std::string, int>, std::pair<LogCurve, LogCurve>> custom_split_;
  double custom_max_bytes_ = 0;
  bool beyond_buffer_ = true;
};

}  // namespace servesim
