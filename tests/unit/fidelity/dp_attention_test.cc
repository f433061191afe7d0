// Data-parallel attention (SGLang's DP attention): each attention group runs its own requests; the FFN runs on
// every token of the replica.
#include <catch2/catch.hpp>

#include "core/fidelity/memory_model.h"
#include "core/fidelity/table_cost_model.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

using test::decode_batch;

std::unique_ptr<CostModel> model(const Parallelism& p, bool tables) {
  std::string err;
  auto c = make_cost_model(test::bundled_model("Qwen3-32B"), test::bundled_gpu("H100-SXM"), p, EngineOptions{},
                           tables ? &test::catalog() : nullptr, 1, err);
  REQUIRE(c);
  return c;
}

SimTime fam(const BatchCost& c, OpFamily f) { return c.by_family[static_cast<int>(f)]; }

}  // namespace

TEST_CASE("two attention groups of tp 4 each attend over half of 8 equal decode requests", "[fidelity][dp]") {
  for (bool tables : {true, false}) {
    INFO((tables ? "tables" : "roofline"));
    auto dp2 = model(test::tp_dp(4, 2), tables);
    auto dp1 = model(test::tp_dp(4, 1), tables);
    const BatchCost eight_dp2 = dp2->price(decode_batch(8, 2000));
    const BatchCost eight_dp1 = dp1->price(decode_batch(8, 2000));
    const BatchCost four_dp1 = dp1->price(decode_batch(4, 2000));
    // Same heads per GPU (tp 4) in both: a group of the dp 2 replica does exactly the attention of 4 requests.
    CHECK(fam(eight_dp2, OpFamily::kAttentionDecode) == fam(four_dp1, OpFamily::kAttentionDecode));
    CHECK(fam(eight_dp2, OpFamily::kAttentionDecode) < fam(eight_dp1, OpFamily::kAttentionDecode));
    // The FFN spans all 8 GPUs (tp_ffn 8) over all 8 tokens, so the dp 2 replica's GEMMs are not those of 4 tokens
    // on tp 4.
    CHECK(fam(eight_dp2, OpFamily::kGemm) != fam(four_dp1, OpFamily::kGemm));
    std::int64_t sum = 0;
    for (SimTime v : eight_dp2.by_family) sum += v;
    CHECK(sum == eight_dp2.total);
  }
}

TEST_CASE("a replica with data-parallel attention holds one KV pool per attention group", "[fidelity][dp]") {
  const ModelSpec m = test::bundled_model("Qwen3-32B");
  const GpuSpec g = test::bundled_gpu("H100-SXM");
  const KvBudget dp2 = compute_kv_budget(m, g, test::tp_dp(4, 2), EngineOptions{});
  REQUIRE(dp2.error.empty());
  // The per-GPU budget holds kv_heads / tp_attn heads of the group's requests; two groups hold twice the blocks.
  const std::int64_t per_group =
      static_cast<std::int64_t>(std::floor(dp2.kv_bytes / (dp2.kv_bytes_per_token * static_cast<double>(dp2.block_size))));
  CHECK(dp2.num_gpu_blocks == 2 * per_group);
}
