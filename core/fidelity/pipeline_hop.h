#pragma once
/// What one pipeline stage hands the next in each engine, read from the engines' code (not measured, not fitted).
/// Every engine sends two [tokens x hidden] activation tensors per hop, the hidden states and the residual that the
/// next stage's first fused add-norm consumes; they differ in how the stage's TP ranks share the send:
///   vllm    the worker sends IntermediateTensors{hidden_states, residual} with
///           `send_tensor_dict(..., all_gather_group=tp)`: each TP rank sends its 1/tp slice of each tensor and the
///           receiving stage rebuilds it with an all-gather over its TP group (vllm/distributed/parallel_state.py,
///           v1/worker/gpu_worker.py).
///   sglang  the scheduler's PP proxy tensors {hidden_states, residual} go through the same `send_tensor_dict` with
///           the attention-TP group as all_gather_group (scheduler_pp_mixin.py).
///   trtllm  the last layer of a stage calls `pp_send(hidden_states)` and `pp_send(residual)` (PyTorch backend,
///           _torch/models/modeling_utils.py, forward_before_send): every TP rank sends both whole tensors to its
///           peer, no all-gather.
/// Not priced: vLLM's and SGLang's pickled tensor metadata, sent over the CPU process group before the tensors
/// (host time; no measurement of it exists here).
#include <string>

namespace servesim {

struct PipelineHopShape {
  int tensors = 2;            ///< [tokens x hidden] 16-bit tensors per hop
  bool split_over_tp = true;  ///< each TP rank sends 1/tp of each tensor; the receiver all-gathers them over TP
};

/// The hop of a backend ("vllm", "sglang", "trtllm"; anything else is priced as vllm, the default backend).
PipelineHopShape pipeline_hop_shape(const std::string& backend);

/// One hop's time for `tensor_bytes` per tensor from the two prices a cost model has: `send(bytes)`, one
/// stage-to-stage send, and `gather(bytes)`, the receiver's all-gather of a whole tensor over its `tp` ranks.
template <class Send, class Gather>
double pipeline_hop_time(const PipelineHopShape& h, double tensor_bytes, int tp, Send send, Gather gather) {
  if (!h.split_over_tp || tp <= 1) return h.tensors * send(tensor_bytes);
  return h.tensors * (send(tensor_bytes / tp) + gather(tensor_bytes));
}

}  // namespace servesim
