#pragma once
/// Paged KV cache of one replica: a free pool of fixed-size blocks, per-request block counts, a watermark
/// for admissions. Block contents are not modelled (no prefix sharing yet), so the pool is a count.
#include <cstdint>

#include "core/workload/request.h"

namespace servesim {

/// Hybrid KV-cache layout (vLLM's hybrid allocator; memory_model.h KvBudget): one pool block holds block_size
/// tokens of one group's layers. A request holds blocks in every full group for all its tokens, and in every
/// sliding group only from the first block that still holds a key inside the window: blocks whose keys all lie
/// window or more behind the next token are returned to the pool (vLLM's SlidingWindowManager drops the first
/// (num_computed - window + 1) / block_size blocks), so a sliding group keeps about window + one block of tokens.
struct KvLayout {
  std::int64_t full_groups = 1;
  std::int64_t sliding_groups = 0;
  std::int64_t window = 0;           ///< keys per sliding layer, the new token included
  std::int64_t max_step_tokens = 0;  ///< most tokens one step computes for a request (max_num_batched_tokens)
};

/// Allocation of KV blocks to requests.
class KvBlockManager {
 public:
  /// `watermark` = share of blocks that must stay free after admitting a new request.
  KvBlockManager(std::int64_t num_blocks, int block_size, double watermark);
  /// Blocks covering `tokens` tokens.
  std::int64_t blocks_for(std::int64_t tokens) const { return (tokens + block_size_ - 1) / block_size_; }
  /// Sets the group layout (default: one full group, every block all layers).
  void set_layout(const KvLayout& layout) { layout_ = layout; }
  const KvLayout& layout() const { return layout_; }
  /// Blocks `r` holds once it has KV for `total_tokens` tokens (r.num_computed of them computed before this step).
  std::int64_t blocks_needed(const Request& r, std::int64_t total_tokens) const;
  /// Grows `r` to hold `total_tokens` (and returns sliding-group blocks that left the window); false (and no
  /// change) when the pool is short. An admission also keeps the watermark free.
  bool allocate(Request& r, std::int64_t total_tokens, bool admission);
  /// Returns all of `r`'s blocks to the pool.
  void free(Request& r);
  /// Moves `r`'s blocks to its held count: still allocated here, but no longer the request's working set
  /// (prefill-side KV waiting for the decode side to pull it).
  void hold(Request& r);
  /// Returns blocks held by `hold` once the transfer is done.
  void release_held(Request& r);
  /// Most blocks a request holds on its way to `total_tokens` tokens when no step computes more than
  /// `step_tokens` of them: all of them in the full groups, the window's in the sliding ones (the peak that
  /// max_admissible_tokens counts with max_step_tokens, there with the watermark).
  std::int64_t peak_blocks(std::int64_t total_tokens, std::int64_t step_tokens) const;
  /// Largest request (in tokens) that can ever be admitted on an empty replica.
  std::int64_t max_admissible_tokens() const;
  /// Longest request (in tokens) whose peak (peak_blocks under the largest step) fits `blocks` blocks, in whole
  /// blocks: max_admissible_tokens without the watermark is max_tokens_within(num_blocks()).
  std::int64_t max_tokens_within(std::int64_t blocks) const;
  std::int64_t num_blocks() const { return num_blocks_; }
  std::int64_t free_blocks() const { return free_; }
  std::int64_t used_blocks() const { return num_blocks_ - free_; }
  int block_size() const { return block_size_; }
  double usage() const { return num_blocks_ ? static_cast<double>(used_blocks()) / num_blocks_ : 0.0; }

 private:
  /// Blocks the sliding groups hold at most for one request whose steps compute up to `step_tokens` tokens (0
  /// without sliding groups).
  std::int64_t sliding_peak_blocks(std::int64_t step_tokens) const;

  std::int64_t num_blocks_;
  std::int64_t free_;
  std::int64_t watermark_blocks_;
  int block_size_;
  KvLayout layout_;
};

}  // namespace servesim
