#include "core/fidelity/batch_split.h"

#include <catch2/catch.hpp>

using namespace servesim;

TEST_CASE("a batch splits into parts balanced by tokens, requests and context", "[fidelity][split]") {
  BatchShape s;
  for (int c : {100, 900, 200, 800, 300, 700, 400, 600}) {
    s.decode_contexts.push_back(c);
    s.decode_context_sum += c;
  }
  s.num_decode = s.num_sampled = 8;
  s.prefills.push_back({512, 512});
  s.num_tokens = 8 + 512;
  s.padded_tokens = 3;
  std::vector<BatchShape> parts;
  split_batch(s, 2, parts);
  REQUIRE(parts.size() == 2);
  // The prefill chunk goes first to part 0; the decodes then fill part 1 until it catches up in tokens.
  CHECK(parts[0].prefills.size() == 1);
  CHECK(parts[0].num_tokens + parts[1].num_tokens == s.num_tokens);
  CHECK(parts[0].num_decode + parts[1].num_decode == 8);
  CHECK(parts[0].decode_context_sum + parts[1].decode_context_sum == s.decode_context_sum);
  CHECK(parts[0].num_sampled + parts[1].num_sampled == 8);  // the decode rows
  CHECK(parts[0].padded_tokens + parts[1].padded_tokens == 3);

  BatchShape d;
  for (int c : {100, 900, 200, 800, 300, 700, 400, 600}) {
    d.decode_contexts.push_back(c);
    d.decode_context_sum += c;
  }
  d.num_decode = d.num_sampled = 8;
  d.num_tokens = 8;
  split_batch(d, 2, parts);
  CHECK(parts[0].num_decode == 4);
  CHECK(parts[1].num_decode == 4);
  CHECK(parts[0].decode_context_sum == 2000);  // 900+600+400+100 against 800+700+300+200
  CHECK(parts[1].decode_context_sum == 2000);
  split_batch(d, 16, parts);  // more parts than requests: some stay empty
  int empty = 0;
  for (const BatchShape& p : parts) empty += p.num_tokens == 0;
  CHECK(empty == 8);
}
