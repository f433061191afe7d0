#include "core/execution/kv_block_manager.h"

#include <catch2/catch.hpp>

using namespace servesim;

TEST_CASE("blocks_for rounds token counts up to whole blocks", "[execution][kv]") {
  KvBlockManager kv(100, 16, 0.0);
  CHECK(kv.blocks_for(0) == 0);
  CHECK(kv.blocks_for(1) == 1);
  CHECK(kv.blocks_for(15) == 1);
  CHECK(kv.blocks_for(16) == 1);
  CHECK(kv.blocks_for(17) == 2);
  CHECK(kv.blocks_for(32) == 2);
  CHECK(kv.blocks_for(33) == 3);
  KvBlockManager kv1(10, 1, 0.0);
  CHECK(kv1.blocks_for(7) == 7);
}

TEST_CASE("allocate grows a request only by the blocks it lacks", "[execution][kv]") {
  KvBlockManager kv(100, 16, 0.0);
  Request r;
  REQUIRE(kv.allocate(r, 20, true));  // 2 blocks
  CHECK(r.num_blocks == 2);
  CHECK(kv.free_blocks() == 98);
  REQUIRE(kv.allocate(r, 32, false));  // still 2 blocks
  CHECK(r.num_blocks == 2);
  CHECK(kv.free_blocks() == 98);
  REQUIRE(kv.allocate(r, 33, false));  // one more
  CHECK(r.num_blocks == 3);
  CHECK(kv.free_blocks() == 97);
  REQUIRE(kv.allocate(r, 5, false));  // shrinking is a no-op that succeeds
  CHECK(r.num_blocks == 3);
  CHECK(kv.free_blocks() == 97);
  CHECK(kv.used_blocks() == 3);
  CHECK(kv.usage() == Approx(0.03));
}

TEST_CASE("a refused allocation leaves the pool and the request unchanged", "[execution][kv]") {
  KvBlockManager kv(10, 16, 0.0);
  Request a, b;
  REQUIRE(kv.allocate(a, 8 * 16, true));
  REQUIRE(kv.free_blocks() == 2);
  CHECK_FALSE(kv.allocate(b, 3 * 16, true));  // needs 3, 2 free
  CHECK(b.num_blocks == 0);
  CHECK(kv.free_blocks() == 2);
  CHECK_FALSE(kv.allocate(a, 11 * 16, false));  // grow by 3, 2 free
  CHECK(a.num_blocks == 8);
  CHECK(kv.free_blocks() == 2);
  CHECK(kv.allocate(a, 10 * 16, false));  // exactly the rest
  CHECK(a.num_blocks == 10);
  CHECK(kv.free_blocks() == 0);
}

TEST_CASE("the watermark holds back blocks from admissions but not from running requests", "[execution][kv]") {
  KvBlockManager kv(100, 16, 0.25);  // 25 blocks reserved for admissions
  Request a, b;
  CHECK_FALSE(kv.allocate(a, 76 * 16, true));  // would leave 24 < 25
  CHECK(kv.free_blocks() == 100);
  REQUIRE(kv.allocate(a, 75 * 16, true));  // leaves exactly 25
  CHECK(kv.free_blocks() == 25);
  CHECK_FALSE(kv.allocate(b, 1, true));  // any admission now dips into the watermark
  CHECK(b.num_blocks == 0);
  REQUIRE(kv.allocate(a, 100 * 16, false));  // growth may use the reserve, down to zero
  CHECK(kv.free_blocks() == 0);
  CHECK(a.num_blocks == 100);
}

TEST_CASE("free returns every block of a request to the pool", "[execution][kv]") {
  KvBlockManager kv(50, 8, 0.0);
  Request a, b;
  REQUIRE(kv.allocate(a, 100, true));  // 13 blocks
  REQUIRE(kv.allocate(b, 8, true));    // 1 block
  REQUIRE(kv.allocate(a, 120, false));  // 15 blocks
  CHECK(kv.free_blocks() == 50 - 15 - 1);
  kv.free(a);
  CHECK(a.num_blocks == 0);
  CHECK(kv.free_blocks() == 49);
  kv.free(b);
  CHECK(kv.free_blocks() == 50);
  CHECK(kv.used_blocks() == 0);
  kv.free(b);  // freeing an empty request is harmless
  CHECK(kv.free_blocks() == 50);
}

TEST_CASE("the free count never goes negative however hard the pool is pushed", "[execution][kv]") {
  KvBlockManager kv(37, 4, 0.0);
  std::vector<Request> reqs(20);
  int granted = 0;
  for (int round = 1; round <= 10; ++round)
    for (Request& r : reqs) {
      const std::int64_t before = kv.free_blocks();
      const std::int32_t held = r.num_blocks;
      const bool ok = kv.allocate(r, round * 3, false);
      granted += ok;
      CHECK(kv.free_blocks() >= 0);
      CHECK(kv.free_blocks() + r.num_blocks == before + held);  // conservation
    }
  std::int64_t held = 0;
  for (const Request& r : reqs) held += r.num_blocks;
  CHECK(held + kv.free_blocks() == 37);
  CHECK(granted > 0);
  CHECK(granted < 200);  // some growth was refused: the pool ran dry
  CHECK(kv.free_blocks() == 0);
}

TEST_CASE("max_admissible_tokens is the pool minus the watermark, in tokens", "[execution][kv]") {
  KvBlockManager kv(100, 16, 0.1);  // watermark 10 blocks
  CHECK(kv.max_admissible_tokens() == 90 * 16);
  Request a, b;
  CHECK(kv.allocate(a, 90 * 16, true));
  kv.free(a);
  CHECK_FALSE(kv.allocate(b, 90 * 16 + 1, true));
  CHECK(KvBlockManager(64, 32, 0.0).max_admissible_tokens() == 64 * 32);
  CHECK(KvBlockManager(3, 16, 0.5).max_admissible_tokens() == 2 * 16);  // floor(1.5) = 1 block reserved
}
