#include "core/fidelity/cost_model.h"

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

}  // namespace servesim
