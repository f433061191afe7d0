#include "core/spec/weight_format.h"

namespace servesim {

WeightFormats weight_formats(const ModelSpec& m, const std::string& engine_dtype) {
  WeightFormats f;
  if (m.quant_method.empty()) {
    // A 16-bit checkpoint: the engine quantises online (vLLM --quantization fp8: per-tensor FP8 weights).
    const WeightFormat w = engine_dtype == "fp8" ? WeightFormat::kFp8 : WeightFormat::kBf16;
    f.attention = f.dense = f.experts = w;
    return f;
  }
  f.from_checkpoint = true;
  if (m.quant_method == "mxfp4") {
    f.experts = WeightFormat::kMxfp4;  // attention and any dense layers stay 16-bit
    return f;
  }
  // quant_method fp8 (read_hf_config accepts no other): every linear layer and expert.
  const WeightFormat w = m.quant_block_n > 0 ? WeightFormat::kFp8Block : WeightFormat::kFp8;
  f.attention = f.dense = f.experts = w;
  for (const std::string& name : m.quant_not_converted)
    if (name.find("self_attn") != std::string::npos) f.attention = WeightFormat::kBf16;
  return f;
}

double weight_format_bytes(WeightFormat f, const ModelSpec& m) {
  switch (f) {
    case WeightFormat::kFp8:
      return 1.0;  // one scale per tensor
    case WeightFormat::kFp8Block:
      // One fp32 scale (weight_scale_inv) per quant_block_n x quant_block_k block.
      return 1.0 + 4.0 / static_cast<double>(m.quant_block_n * (m.quant_block_k > 0 ? m.quant_block_k : 1));
    case WeightFormat::kMxfp4:
      return 4.25 / 8.0;  // 4-bit E2M1 values, one 8-bit E8M0 scale per 32
    case WeightFormat::kBf16:
      break;
  }
  return 2.0;
}

const char* gemm_table_dtype(WeightFormat f) {
  switch (f) {
    case WeightFormat::kFp8:
      return "fp8";
    case WeightFormat::kFp8Block:
      return "fp8_block";
    default:
      return "bfloat16";
  }
}

const char* moe_table_dtype(WeightFormat f) {
  return f == WeightFormat::kMxfp4 ? "w4a16_mxfp4" : gemm_table_dtype(f);  // MXFP4 experts run weight-only
}

const char* weight_format_name(WeightFormat f) {
  return f == WeightFormat::kMxfp4 ? "mxfp4" : gemm_table_dtype(f);
}

}  // namespace servesim
