#include "core/fidelity/cost_model.h"

#include <algorithm>
#include <iterator>

#include "core/sim/check.h"

namespace servesim {

const char* price_source_name(PriceSource s) {
  switch (s) {
    case PriceSource::kRoofline: return "roofline";
    case PriceSource::kTable: return "table";
    case PriceSource::kDatasheet: return "datasheet-derived";
    case PriceSource::kCalibrated: return "calibrated";
    default: return "?";
  }
}

const char* op_family_name(OpFamily f) {
  switch (f) {
    case OpFamily::kGemm: return "gemm";
    case OpFamily::kMoe: return "moe";
    case OpFamily::kAttentionPrefill: return "attention_prefill";
    case OpFamily::kAttentionDecode: return "attention_decode";
    case OpFamily::kNorm: return "norm";
    case OpFamily::kEmbedding: return "embedding";
    case OpFamily::kLmHead: return "lm_head";
    case OpFamily::kAllReduce: return "all_reduce";
    case OpFamily::kPipelineP2p: return "pipeline_p2p";
    case OpFamily::kOverhead: return "cpu_overhead";
    case OpFamily::kAllToAll: return "all_to_all";
    case OpFamily::kAfTransfer: return "af_transfer";
    default: return "?";
  }
}

double families_ns(const BatchCost& c) {
  double sum = 0;
  for (SimTime t : c.by_family) sum += static_cast<double>(t);
  return sum;
}

void sum_families(BatchCost& c) {
  const double sum = families_ns(c);
  const bool past = sum > static_cast<double>(kMaxSimTime);
  if (past) {
    const double scale = static_cast<double>(kMaxSimTime) / sum;
    for (SimTime& t : c.by_family) t = static_cast<SimTime>(static_cast<double>(t) * scale);
  }
  c.total = 0;
  for (SimTime t : c.by_family) c.total += t;
  if (past && c.total > kMaxSimTime) {
    // The scaled sum's rounding (a few ns): taken from the largest family.
    SimTime* largest = std::max_element(std::begin(c.by_family), std::end(c.by_family));
    *largest -= c.total - kMaxSimTime;
    c.total = kMaxSimTime;
  }
}

void split_pipeline(BatchCost& c, int stages, SimTime per_stage_launch_ns) {
  auto fam = [&c](OpFamily f) { return c.by_family[static_cast<int>(f)]; };
  c.stages = stages < 1 ? 1 : stages;
  const SimTime overhead = fam(OpFamily::kOverhead);
  const SimTime launch = per_stage_launch_ns < 0 ? 0 : (per_stage_launch_ns > overhead ? overhead : per_stage_launch_ns);
  c.host = overhead - launch;
  c.first_stage_extra = fam(OpFamily::kEmbedding);
  const SimTime p2p = fam(OpFamily::kPipelineP2p);
  c.p2p_hop = c.stages > 1 ? p2p / (c.stages - 1) : 0;
  const SimTime layers = c.total - c.host - c.first_stage_extra - fam(OpFamily::kLmHead) - p2p;
  c.stage_gpu = layers / c.stages;
  // Integer remainders of the even splits go to the last stage, so the parts add up to the total exactly.
  c.last_stage_extra = fam(OpFamily::kLmHead) + layers % c.stages + (c.stages > 1 ? p2p % (c.stages - 1) : p2p);
  SERVESIM_CHECK(c.host + c.stages * c.stage_gpu + c.first_stage_extra + c.last_stage_extra +
                         (c.stages - 1) * c.p2p_hop == c.total,
                 "pipeline split does not add up to the batch total");
}

}  // namespace servesim
