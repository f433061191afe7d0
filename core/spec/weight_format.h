#pragma once
/// How each module's weights are stored and multiplied: from the checkpoint's quantization_config when it is
/// pre-quantised, else from the engine's dtype (online FP8 with dtype "fp8", 16-bit otherwise).
///
/// This decides which measured grid prices a module (gemm.json / moe.json "dtype" key, the MLA module tables'
/// gemm_type) and how many bytes its weights take (memory_model.h):
///   checkpoint quant_method fp8 + weight_block_size [n, k]  block-scaled FP8 (DeepSeek-V3, MiniMax-M2.x): linear
///       layers and routed experts 1 byte per weight + one fp32 scale per n x k block; the fp8_block grids
///   checkpoint quant_method fp8 without weight_block_size     per-tensor FP8: 1 byte per weight; the fp8 grids
///   checkpoint quant_method mxfp4                             MXFP4 routed experts (gpt-oss): 4-bit values with one
///       8-bit shared exponent per 32 (4.25 bits a weight), multiplied by weight-only w4a16 kernels on GPUs without
///       FP4 tensor cores (the w4a16_mxfp4 MoE grid); every linear layer stays 16-bit (vLLM's Mxfp4Config has no
///       linear method: the checkpoint lists attention, router, embedding and LM head in modules_to_not_convert)
///   no quantization_config                                    engine dtype: "fp8" = online per-tensor FP8 of the
///       linear layers and experts (the fp8 grids), else 16-bit. TensorRT-LLM quantises nothing at load time, so
///       there it stands for a per-tensor export (ModelOpt) and the scenario warns so (scenario.cc)
/// On a GPU without FP8 tensor cores (A100) FP8 weights are multiplied weight-only in 16-bit math (the cost model's
/// math_format): the bf16 grids price them while they keep 1 byte each in memory.
/// Modules listed in modules_to_not_convert whose name contains "self_attn" keep 16-bit attention projections.
/// The router, the embedding and the LM head are 16-bit in every case.
#include <string>

#include "core/spec/model_spec.h"

namespace servesim {

enum class WeightFormat { kBf16, kFp8, kFp8Block, kMxfp4 };

/// The formats of one model's modules.
struct WeightFormats {
  WeightFormat attention = WeightFormat::kBf16;  ///< q/k/v/o (MLA: q_a, kv_a, q_b, kv_b, o) projections
  WeightFormat dense = WeightFormat::kBf16;      ///< dense FFN layers and shared experts
  WeightFormat experts = WeightFormat::kBf16;    ///< routed experts
  bool from_checkpoint = false;                  ///< true when the checkpoint's quantization_config set them
};

WeightFormats weight_formats(const ModelSpec& model, const std::string& engine_dtype);

/// Bytes per weight including scales (fp8 blocks: + 4 bytes per block; MXFP4: 4.25 bits).
double weight_format_bytes(WeightFormat f, const ModelSpec& model);
/// The "dtype" key of gemm.json for this format (bfloat16, fp8, fp8_block); MXFP4 has no GEMM grid (bfloat16).
const char* gemm_table_dtype(WeightFormat f);
/// The "dtype" key of moe.json (bfloat16, fp8, fp8_block, w4a16_mxfp4).
const char* moe_table_dtype(WeightFormat f);
/// True for the FP8 formats (FP8 tensor-core math).
inline bool is_fp8(WeightFormat f) { return f == WeightFormat::kFp8 || f == WeightFormat::kFp8Block; }
/// "bfloat16", "fp8", "fp8_block", "mxfp4" (result and error messages).
const char* weight_format_name(WeightFormat f);

}  // namespace servesim
