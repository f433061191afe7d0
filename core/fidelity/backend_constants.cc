#include "core/fidelity/backend_constants.h"

namespace servesim {

BackendConstants backend_constants(const std::string& backend) {
  // Host-side time per iteration, calibrated on the vLLM aggregated rows of silicon_h100.csv with a held-out
  // split by model (scripts/validate_e2e.py --calibrate; docs/validation.md lists the fit and its error).
  // launch_us: host time per op outside a CUDA graph (PyTorch dispatch + kernel launch, ~10-15 us in eager
  // vLLM; an estimate, no eager silicon rows exist); it matters when a layer's kernels are shorter than the host
  // takes to issue them (small decode batches run eagerly).
  BackendConstants k;
  if (backend == "sglang") {
    // SGLang: fitted on its 84 agg rows (all Qwen3-32B, so held out by TP size 8 and by ISL 4096 instead of by
    // model; scripts/validate_e2e.py --calibrate, docs/validation.md). Refitted 2026-11-26, once decode attention
    // read cold (l2_warmth.h) and SGLang's custom all-reduce on NVLinked groups (up to its 8 MiB buffer, NCCL above;
    // TableCostModel) were priced: per_request_us 22.8 on all rows (28.4 without TP 8, 20.4 without ISL 4096);
    // iteration_us stays at its bound, 0, as SGLang's overlap scheduler prepares step n+1 while the GPU runs step n.
    // Before, with NCCL all-reduces and warm decode attention, both constants sat at 0.
    k.cpu_iteration_us = 0.0;
    k.cpu_per_request_us = 22.8;
    k.cpu_per_token_us = 0.0;
    k.launch_us = 3;
  } else if (backend == "trtllm") {
    // TensorRT-LLM's executor: fitted on the TPOT of the 177 Llama-3.1-8B TRT-LLM agg rows and held out on
    // its Qwen3-32B and Qwen3-235B-A22B rows (docs/validation.md). Those runs had TRT-LLM's overlap scheduler on,
    // so this is the host time it leaves exposed; it is added whether or not the role overlaps (async_scheduling).
    // Refitted 2026-11-26 once decode attention read cold was priced (l2_warmth.h; 386.2 / 15.0 before).
    k.qk_norm_kernels = 0;
    k.cpu_iteration_us = 369.3;
    k.cpu_per_request_us = 12.3;
    k.cpu_per_token_us = 0.0;
    k.launch_us = 3;
  } else {
    // vLLM. Fitted on the TPOT of the 45 Llama-3.1-70B agg rows (`validate_e2e.py --calibrate`, 2026-11-25, after
    // the QK-norm kernels and the fused FP8 input quantisation were priced; 772.0 / 44.4 before, fitted on 138 rows
    // of Llama-3.1-70B and Qwen3-32B): 949.0 us per step (scheduler, input preparation, sampling and output
    // processing, not overlapped with the GPU: those rows ran synchronously; engine.async_scheduling hides it under
    // the GPU) and 48.1 us per scheduled request (bookkeeping, detokenisation, streaming).
    // Held out by model (Qwen3-32B, gpt-oss-120b, MiniMax-M2.5): see the calibration table of docs/validation.md.
    k.cpu_iteration_us = 949.0;
    k.cpu_per_request_us = 48.1;
    k.cpu_per_token_us = 0.0;
    k.launch_us = 12;
  }
  return k;
}

}  // namespace servesim
