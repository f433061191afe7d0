#pragma once
/// The fidelity plane's interface: the time one iteration takes on one replica.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/fidelity/batch_shape.h"
#include "core/sim/sim_time.h"

namespace servesim {

/// Where an op's time came from.
/// kDatasheet: the roofline corrected by efficiency curves fitted on GPUs with tables, or another GPU's tables
/// moved to this GPU's datasheet ("datasheet-derived");
/// kCalibrated: constants fitted on measured end-to-end runs (CPU overhead).
enum class PriceSource : std::uint8_t { kRoofline = 0, kTable = 1, kDatasheet = 2, kCalibrated = 3, kCount };
const char* price_source_name(PriceSource s);

/// Op families priced separately (for attribution in the result).
enum class OpFamily : std::uint8_t {
  kGemm, kMoe, kAttentionPrefill, kAttentionDecode, kNorm, kEmbedding, kLmHead, kAllReduce, kPipelineP2p, kOverhead,
  kAllToAll,   ///< MoE expert-parallel dispatch and combine
  kAfTransfer, ///< attention/FFN disaggregation: A->F and F->A activation transfers
  kCount
};
const char* op_family_name(OpFamily f);

/// Which operators a cost model prices. Attention/FFN disaggregation (A/F roles) prices the attention domain
/// (embedding, qkv/o GEMMs, attention, norms, TP all-reduce, LM head, host overhead) on the A GPUs and the FFN
/// domain (dense FFN or router + shared expert + routed experts with their EP all-to-all, FFN all-reduce) on
/// the F GPUs; kWhole is the whole model on one replica.
enum class CostPart : std::uint8_t { kWhole, kAttention, kFfn };

/// The cost of one iteration, split for reporting and, for pipeline parallelism, by stage.
/// With `stages` > 1 the parts add up exactly to `total`:
///   total = host + stages * stage_gpu + first_stage_extra + last_stage_extra + (stages - 1) * p2p_hop.
struct BatchCost {
  SimTime total = 0;
  SimTime by_family[static_cast<int>(OpFamily::kCount)] = {};
  int stages = 1;                  ///< pipeline stages the batch passes through
  SimTime host = 0;                ///< host time before stage 0 (scheduling, input preparation, sampling)
  SimTime stage_gpu = 0;           ///< GPU time of one stage's layers (layer work split evenly over stages)
  SimTime first_stage_extra = 0;   ///< stage 0 only: the embedding
  SimTime last_stage_extra = 0;    ///< last stage only: the LM head (plus the ns left over by the even split)
  SimTime p2p_hop = 0;             ///< activations sent from one stage to the next
  /// Occupancy of stage `s`: stage 0 includes the host time (it cannot take the next batch before the host
  /// has prepared it). A single-stage cost is its total.
  SimTime stage_time(int s) const {
    if (stages <= 1) return total;
    return stage_gpu + (s == 0 ? host + first_stage_extra : 0) + (s == stages - 1 ? last_stage_extra : 0);
  }
};

/// The sum of `c`'s families in ns, as a double (their int64 sum may pass the clock; see sum_families).
double families_ns(const BatchCost& c);

/// Sets `c.total` to the sum of its families. Each family is held at the horizon (span_ns), not their sum: a sum
/// past it scales the families down in proportion, so they still add up to the total, which then lies at most on
/// the horizon, where the run stops (SessionImpl::step).
void sum_families(BatchCost& c);

/// Fills the stage split of `c` from its families for `stages` pipeline stages: the host part of cpu_overhead
/// before stage 0, embedding on stage 0, LM head on the last stage, pipeline_p2p as (stages - 1) equal hops,
/// and the rest (layer work, plus `per_stage_launch_ns` of cpu_overhead: kernel launches each stage's host
/// issues for its own layers) split evenly. Leaves `total` and `by_family` unchanged.
void split_pipeline(BatchCost& c, int stages, SimTime per_stage_launch_ns);

/// What a cost model tells the result about itself: the profile it used, that profile's measured error and how
/// often a lookup fell outside the measured grids.
struct FidelityReport {
  std::string kind = "roofline";  ///< "table", "datasheet-derived" or "roofline"
  std::string profile;            ///< "H100-SXM/vllm" (tables used), empty otherwise
  std::string profile_version;    ///< backend version the tables were measured with
  std::string transferred_to;     ///< the GPU the profile's tables were moved to (table_transfer.h), "" if none
  std::string transfer;           ///< the transfer rule ("same architecture" / "other architecture")
  /// Grids the moved tables lacked, added from further GPUs (ProfileTables::supplements), moved by `transfer` rule.
  struct Supplement {
    std::string from, transfer;
    std::vector<std::string> tables;
  };
  std::vector<Supplement> supplements;
  std::string measured_error_json;  ///< JSON object from the profile's validation.json, empty if none
  /// The per-step host constants the role runs with (the backend's calibrated ones, or engine.host overrides).
  struct Host {
    bool known = false;  ///< false for models that report none (the plain roofline)
    std::string source;  ///< "calibrated (<backend>)" or "engine.host" when the scenario overrides any
    double iteration_us = 0, per_request_us = 0, per_token_us = 0, launch_us = 0;
    bool hidden_under_gpu = false;  ///< only host time beyond the step's GPU time shows (vLLM async scheduling)
  } host;
  std::vector<std::string> families;  ///< op families with lookups, in OpFamily order
  std::vector<std::int64_t> lookups, extrapolated;  ///< per entry of `families`
};

/// Host time a step shows: all of it when the engine schedules synchronously; with vLLM's async scheduling only what
/// exceeds the step's GPU time, as the host prepared this step while the GPU ran the previous one.
inline double exposed_host_time(double host, double gpu, bool async_scheduling) {
  return async_scheduling ? std::max(0.0, host - gpu) : host;
}

/// Prices iterations of one role's replicas (model x GPU x parallelism x engine).
class CostModel {
 public:
  virtual ~CostModel() = default;
  /// Time of one forward pass (all pipeline stages) plus per-iteration CPU overhead, with its stage split.
  virtual BatchCost price(const BatchShape& shape) = 0;
  /// Pipeline stages of the replicas it prices (the most batches they keep in flight).
  virtual int pipeline_stages() const { return 1; }
  /// Which source priced each op family (roofline until tables exist).
  virtual PriceSource source(OpFamily f) const = 0;
  /// Human-readable description ("roofline (datasheet H100-SXM)").
  virtual std::string describe() const = 0;
  /// Profile, measured error and extrapolation counts for the result.
  virtual FidelityReport report() const { return {}; }
};

}  // namespace servesim
