#pragma once
/// What the fidelity plane needs to price one iteration: token counts and per-request attention work.
#include <cstdint>
#include <vector>

namespace servesim {

/// One request's prompt work in an iteration: `q` new tokens attending to `context` tokens in total
/// (context includes the q new ones).
struct PrefillChunk {
  std::int32_t q = 0;
  std::int64_t context = 0;
};

/// Shape of one forward pass on one replica.
struct BatchShape {
  std::int64_t num_tokens = 0;      ///< real tokens (prefill chunks + decodes)
  std::int64_t padded_tokens = 0;   ///< extra tokens added by CUDA-graph padding
  std::int32_t num_decode = 0;      ///< requests decoding one token
  std::int64_t decode_context_sum = 0;  ///< sum of decode requests' KV lengths
  std::int64_t decode_context_max = 0;
  std::int32_t num_sampled = 0;     ///< requests that produce a token this iteration (LM head rows)
  std::vector<PrefillChunk> prefills;
  std::vector<std::int32_t> decode_contexts;  ///< each decode request's KV length (including its new token)
  bool cuda_graph = false;          ///< replayed from a captured graph (no per-kernel launches)
  void clear() {
    num_tokens = padded_tokens = decode_context_sum = decode_context_max = 0;
    num_decode = num_sampled = 0;
    prefills.clear();
    decode_contexts.clear();
    cuda_graph = false;
  }
};

}  // namespace servesim
