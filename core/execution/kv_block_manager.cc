#include "core/execution/kv_block_manager.h"

#include "core/sim/check.h"

namespace servesim {

KvBlockManager::KvBlockManager(std::int64_t num_blocks, int block_size, double watermark)
    : num_blocks_(num_blocks),
      free_(num_blocks),
      watermark_blocks_(static_cast<std::int64_t>(watermark * static_cast<double>(num_blocks))),
      block_size_(block_size) {
  SERVESIM_CHECK(num_blocks > 0 && block_size > 0, "KV pool needs at least one block");
}

bool KvBlockManager::allocate(Request& r, std::int64_t total_tokens, bool admission) {
  const std::int64_t need = blocks_for(total_tokens) - r.num_blocks;
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

std::int64_t KvBlockManager::max_admissible_tokens() const {
  return (num_blocks_ - watermark_blocks_) * block_size_;
}

}  // namespace servesim
