#pragma once
/// The fidelity plane's interface: the time one iteration takes on one replica.
#include <cstdint>
#include <string>
#include <vector>

#include "core/fidelity/batch_shape.h"
#include "core/sim/sim_time.h"

namespace servesim {

/// Where an op's time came from.
/// kDatasheet: the roofline corrected by efficiency curves fitted on GPUs with tables ("datasheet-derived");
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

/// The cost of one iteration, split for reporting.
struct BatchCost {
  SimTime total = 0;
  SimTime by_family[static_cast<int>(OpFamily::kCount)] = {};
};

/// What a cost model tells the result about itself: the profile it used, that profile's measured error and how
/// often a lookup fell outside the measured grids.
struct FidelityReport {
  std::string kind = "roofline";  ///< "table", "datasheet-derived" or "roofline"
  std::string profile;            ///< "H100-SXM/vllm" (tables used), empty otherwise
  std::string profile_version;    ///< backend version the tables were measured with
  std::string measured_error_json;  ///< JSON object from the profile's validation.json, empty if none
  std::vector<std::string> families;  ///< op families with lookups, in OpFamily order
  std::vector<std::int64_t> lookups, extrapolated;  ///< per entry of `families`
};

/// Prices iterations of one role's replicas (model x GPU x parallelism x engine).
class CostModel {
 public:
  virtual ~CostModel() = default;
  /// Time of one forward pass (all pipeline stages) plus per-iteration CPU overhead.
  virtual BatchCost price(const BatchShape& shape) = 0;
  /// Which source priced each op family (roofline until tables exist).
  virtual PriceSource source(OpFamily f) const = 0;
  /// Human-readable description ("roofline (datasheet H100-SXM)").
  virtual std::string describe() const = 0;
  /// Profile, measured error and extrapolation counts for the result.
  virtual FidelityReport report() const { return {}; }
};

}  // namespace servesim
