#pragma once
/// The fidelity plane's interface: the time one iteration takes on one replica.
#include <cstdint>
#include <string>

#include "core/fidelity/batch_shape.h"
#include "core/sim/sim_time.h"

namespace servesim {

/// Where an op's time came from.
enum class PriceSource : std::uint8_t { kRoofline = 0, kTable = 1, kCount };
const char* price_source_name(PriceSource s);

/// Op families priced separately (for attribution in the result).
enum class OpFamily : std::uint8_t {
  kGemm, kAttentionPrefill, kAttentionDecode, kNorm, kEmbedding, kLmHead, kAllReduce, kPipelineP2p, kOverhead, kCount
};
const char* op_family_name(OpFamily f);

/// The cost of one iteration, split for reporting.
struct BatchCost {
  SimTime total = 0;
  SimTime by_family[static_cast<int>(OpFamily::kCount)] = {};
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
};

}  // namespace servesim
