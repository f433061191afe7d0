#include "core/execution/kv_block_manager.h"

#include <algorithm>

#include "core/sim/check.h"

namespace servesim {

KvBlockManager::KvBlockManager(std::int64_t num_blocks, int block_size, double watermark)
    : num_blocks_(num_blocks),
      free_(num_blocks),
      watermark_blocks_(static_cast<std::int64_t>(watermark * static_cast<double>(num_blocks))),
      block_size_(block_size) {
  SERVESIM_CHECK(num_blocks > 0 && block_size > 0, "KV pool needs at least one block");
}

std::int64_t KvBlockManager::blocks_needed(const Request& r, std::int64_t total_tokens) const {
  const std::int64_t all = blocks_for(total_tokens);
  if (layout_.sliding_groups <= 0) return layout_.full_groups * all;
  const std::int64_t skipped = std::max<std::int64_t>(0, r.num_computed - layout_.window + 1) / block_size_;
  return layout_.full_groups * all + layout_.sliding_groups * std::max<std::int64_t>(0, all - skipped);
}

bool KvBlockManager::allocate(Request& r, std::int64_t total_tokens, bool admission) {
  const std::int64_t need = blocks_needed(r, total_tokens) - r.num_blocks;
  if (need < 0 && layout_.sliding_groups > 0) {  // blocks that left every sliding window go back to the pool
    free_ -= need;
    r.num_blocks += static_cast<std::int32_t>(need);
    SERVESIM_CHECK(free_ <= num_blocks_, "KV free pool exceeds the pool");
    return true;
  }
  if (need <= 0) return true;
  const std::int64_t reserve = admission ? watermark_blocks_ : 0;
  if (free_ - need < reserve) return false;
  free_ -= need;
  r.num_blocks += static_cast<std::int32_t>(need);
  SERVESIM_CHECK(free_ >= 0, "KV free pool went negative");
  return true;
}

void KvBlockManager::free(Request& r) {
  free_ += r.num_blocks;
  r.num_blocks = 0;
  SERVESIM_CHECK(free_ <= num_blocks_, "KV blocks freed twice");
}

void KvBlockManager::hold(Request& r) {
  r.held_blocks += r.num_blocks;
  r.num_blocks = 0;
}

void KvBlockManager::release_held(Request& r) {
  free_ += r.held_blocks;
  r.held_blocks = 0;
  SERVESIM_CHECK(free_ <= num_blocks_, "held KV blocks released twice");
}

std::int64_t KvBlockManager::sliding_peak_blocks(std::int64_t step_tokens) const {
  // The window's keys before a step of step_tokens new tokens, the step's, and one block of misalignment.
  const std::int64_t step = std::max<std::int64_t>(1, step_tokens);
  return layout_.sliding_groups > 0 ? layout_.sliding_groups * (blocks_for(layout_.window - 1 + step) + 1) : 0;
}

std::int64_t KvBlockManager::peak_blocks(std::int64_t total_tokens, std::int64_t step_tokens) const {
  const std::int64_t all = blocks_for(total_tokens);
  if (layout_.sliding_groups <= 0) return layout_.full_groups * all;
  return layout_.full_groups * all + std::min(layout_.sliding_groups * all, sliding_peak_blocks(step_tokens));
}

std::int64_t KvBlockManager::max_admissible_tokens() const {
  return max_tokens_within(num_blocks_ - watermark_blocks_);
}

std::int64_t KvBlockManager::max_tokens_within(std::int64_t blocks) const {
  if (layout_.sliding_groups <= 0 && layout_.full_groups == 1) return blocks * block_size_;
  // A request's peak: its full groups' blocks plus the sliding groups' window under the largest step.
  const std::int64_t window_blocks = sliding_peak_blocks(layout_.max_step_tokens);
  const std::int64_t left = blocks - window_blocks;
  if (left <= 0) return 0;
  if (layout_.full_groups <= 0) return std::int64_t{1} << 40;  // every layer sliding: any length fits
  return left / layout_.full_groups * block_size_;
}

}  // namespace servesim
