#pragma once
/// Splits one iteration's batch into parts: the data-parallel attention groups of a replica (dp_attn) and the
/// micro-batches of an attention/FFN-disaggregated iteration.
#include <vector>

#include "core/fidelity/batch_shape.h"

namespace servesim {

/// Deterministic balanced split of `s` into `parts` shapes (parts >= 1; some may be empty when the batch has
/// fewer requests than parts). Longest-processing-time first: requests sorted by new tokens, then context
/// (both descending, ties by position in the batch) go one by one to the part with the fewest tokens so far,
/// then the least context, then the fewest requests, then the lowest index. Equal decode requests therefore
/// alternate over the parts and contexts balance. CUDA-graph padding is split evenly (the remainder to the
/// first parts); sampled rows follow the requests (decode requests first, then prefill chunks, in part order).
void split_batch(const BatchShape& s, int parts, std::vector<BatchShape>& out);

}  // namespace servesim
