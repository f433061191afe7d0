#include "core/fidelity/pipeline_hop.h"

namespace servesim {

PipelineHopShape pipeline_hop_shape(const std::string& backend) {
  PipelineHopShape h;
  if (backend == "trtllm") h.split_over_tp = false;
  return h;
}

}  // namespace servesim
