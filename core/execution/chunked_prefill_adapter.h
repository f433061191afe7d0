#pragma once
/// Chunked prefill: lets the scheduler split a prompt across iterations so decodes keep flowing beside a
/// long prefill (vLLM enable_chunked_prefill, long_prefill_token_threshold). Without it a prompt must fit
/// the token budget whole.
#include <cstdint>

#include "core/execution/runtime_adapter.h"

namespace servesim {

class ChunkedPrefillAdapter : public RuntimeAdapter {
 public:
  explicit ChunkedPrefillAdapter(std::int64_t long_prefill_token_threshold)
      : threshold_(long_prefill_token_threshold) {}
  const char* name() const override { return "chunked_prefill"; }
  void before_schedule(SchedulerLimits& limits) override {
    limits.allow_chunking = true;
    limits.long_prefill_token_threshold = threshold_;
  }

 private:
  std::int64_t threshold_;
};

}  // namespace servesim
