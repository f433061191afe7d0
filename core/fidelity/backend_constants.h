#pragma once
/// The host-side constants of each serving engine (scheduler, input preparation, sampling, kernel launches),
/// calibrated on silicon_h100.csv (scripts/validate_e2e.py --calibrate, docs/validation.md).
#include <string>

namespace servesim {

/// Per-backend CPU and launch constants (calibrated; see docs/validation.md and scripts/validate_e2e.py).
struct BackendConstants {
  double cpu_iteration_us = 0;    ///< fixed per-iteration host time: schedule, prepare inputs, sample, update
  double cpu_per_request_us = 0;  ///< per scheduled request (input preparation, output processing)
  double cpu_per_token_us = 0;    ///< per scheduled token (input tensors, positions, slot mapping)
  double launch_us = 0;           ///< host time to launch one kernel outside a CUDA graph
  int kernels_per_layer = 12;     ///< eager launches per layer: qkv, rope, attn, o, 2 norms, gate_up, act, down,
                                  ///< 2 all-reduces, residual add
  /// Kernels a per-head QK RMSNorm adds to a layer (ModelSpec::qk_norm_per_head) beyond the RoPE kernel that every
  /// layer is priced with: vLLM 1 (its Inductor combo kernel normalises q and k in one kernel, vLLM PR 26682: "1 for
  /// qk-norm and 1 for qk-rope"), SGLang 1 (q_norm and k_norm run at once on two streams, apply_qk_norm), TRT-LLM 0
  /// (Qwen3's attention fuses the norm with RoPE in one kernel, fuse_qk_norm_rope, the RoPE kernel priced already).
  int qk_norm_kernels = 1;
};

/// The constants for a backend name ("vllm", "trtllm", "sglang").
BackendConstants backend_constants(const std::string& backend);

}  // namespace servesim
