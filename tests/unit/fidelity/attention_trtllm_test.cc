// Attention tests: TensorRT-LLM's decode kernels: XQA's multi-block rule and the masked multi-head attention kernel's launch.
#include "core/fidelity/attention_predictor.h"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/unit/fidelity/attention_test_support.h"

using namespace servesim;
using namespace servesim::attention_test;

TEST_CASE("TensorRT-LLM's XQA decode splits the batch by its multi-block rule", "[fidelity][attention]") {
  AttentionGeometry g = geo(32, 8);
  set_split_rule(g, "torch_flow");
  CHECK(g.split_kv == AttentionGeometry::SplitKv::kXqa);
  // 8192 tokens: 64 blocks of 128, capped at round(sqrt(8 x 64)) = 23; 4 requests x 8 KV heads x 23 = 5.6 waves of
  // 132, under the 8 allowed.
  CHECK(decode_features(g, std::vector<std::int32_t>(4, 8192))[3] == Approx(4.0 * 8 * 23 / 132));
  // 64 requests: 89 waves, cut by 89 / 8 to floor(23 / 11.2) = 2 blocks.
  CHECK(decode_features(g, std::vector<std::int32_t>(64, 8192))[3] == Approx(64.0 * 8 * 2 / 132));
  // Under 256 tokens: one block.
  CHECK(decode_features(g, std::vector<std::int32_t>(4, 200))[3] == Approx(4.0 * 8 / 132));
  // Its CTAs run one to an SM: 4 x 8 x 23 = 736 CTAs make 6 waves, 5 beyond the first; 32 CTAs make one.
  CHECK(decode_features(g, std::vector<std::int32_t>(4, 8192))[9] == 5.0);
  CHECK(decode_features(g, std::vector<std::int32_t>(4, 200))[9] == 0.0);
  // The blocks' partial results reduced: 23 of them; none with one block (8 requests of 200 keys, on XQA).
  CHECK(decode_features(g, std::vector<std::int32_t>(4, 8192))[7] == 23.0);
  CHECK(decode_features(g, std::vector<std::int32_t>(8, 200))[7] == 0.0);
  // Not on a batch it leaves to the masked kernel (bf16, 2 requests x 8 KV heads x 1 block x 4 < 132).
  CHECK(decode_features(g, std::vector<std::int32_t>(2, 100))[9] == 0.0);
}

TEST_CASE("TensorRT-LLM decodes too small for XQA run on its masked multi-head attention kernel",
          "[fidelity][attention]") {
  // XQA only when KV heads x requests x max(1, longest history / 128), times 4, reach the SMs (132 / 4 = 33).
  AttentionGeometry g = geo(32, 2);
  set_split_rule(g, "torch_flow");
  const auto f16 = decode_features(g, std::vector<std::int32_t>(16, 100));  // 2 x 16 x 1 = 32 blocks
  CHECK(f16[6] == 1.0);
  CHECK(f16[7] == 1.0);  // the longest request's key tiles
  CHECK(decode_features(g, std::vector<std::int32_t>(17, 100))[6] == 0.0);   // 34 blocks
  CHECK(decode_features(g, std::vector<std::int32_t>(16, 256))[6] == 0.0);   // 2 x 16 x 2 = 64
  const auto f1 = decode_features(g, std::vector<std::int32_t>(1, 2048));    // 2 x 1 x 16 = 32
  CHECK(f1[6] == 1.0);
  CHECK(f1[7] == 16.0);
  // The longest history decides for the batch.
  std::vector<std::int32_t> mixed(15, 100);
  mixed.push_back(300);  // 2 x 16 x 2 = 64 blocks
  CHECK(decode_features(g, mixed)[6] == 0.0);
  // Nor with an FP8 KV cache, which the masked kernel does not read beside bf16 queries: XQA takes every batch.
  AttentionGeometry fp8 = g;
  fp8.kv_fp8 = true;
  CHECK(decode_features(fp8, std::vector<std::int32_t>(16, 100))[6] == 0.0);
  // Other kernels have no such fallback.
  AttentionGeometry fa3 = geo(32, 2);
  set_split_rule(fa3, "vllm_flash_attn_fa3");
  CHECK(decode_features(fa3, std::vector<std::int32_t>(16, 100))[6] == 0.0);
}

TEST_CASE("TensorRT-LLM's masked multi-head attention launch follows the kernel's own rules", "[fidelity][attention]") {
  // 12 query heads of 128 over as many KV heads on 132 SMs. One request: 12 CTAs leave SMs free, so multi-block
  // mode with 1024-thread CTAs (four 256-thread ones fit an SM by the registers), a key loop of 1024 threads / 16
  // threads per value x 8 = 512 keys, at most ceil(132 / 12) = 11 blocks per request; the keys are kv_len + 1.
  AttentionGeometry g = geo(12, 12);
  set_split_rule(g, "torch_flow");
  MmhaLaunch l = mmha_launch(g, 1, 4096);
  CHECK(l.threads == 1024);
  CHECK(l.tiles == 9);  // ceil(4097 / 512)
  CHECK(l.keys_per_cta == 456);
  CHECK(l.waves == 1);
  CHECK(mmha_launch(g, 1, 511).tiles == 1);
  CHECK(mmha_launch(g, 1, 512).tiles == 2);
  CHECK(mmha_launch(g, 1, 65536).tiles == 11);
  // Two requests: 6 blocks each, 144 CTAs of 1024 threads, one per SM: a second wave.
  l = mmha_launch(g, 2, 4096);
  CHECK(l.tiles == 6);
  CHECK(l.waves == 2);
  // 16 requests: 192 CTAs fill the SMs, no multi-block; 3 x 256 threads rounds to 512, two per SM: one wave ...
  l = mmha_launch(g, 16, 2048);
  CHECK(l.threads == 512);
  CHECK(l.tiles == 1);
  CHECK(l.keys_per_cta == 2049);
  CHECK(l.waves == 1);
  // ... until a CTA's logits (32769 keys: 8193 x 24 bytes + 1 KiB) leave room for one per SM.
  CHECK(mmha_launch(g, 16, 32768).waves == 2);
  // 64 requests: 768 CTAs of 256 threads over 4 x 132.
  l = mmha_launch(g, 64, 2);
  CHECK(l.threads == 256);
  CHECK(l.waves == 2);
  // The key loop follows the head size: 1024 keys at head 64, 256 at head 256.
  AttentionGeometry h64 = g;
  h64.head_dim = 64;
  CHECK(mmha_launch(h64, 1, 1023).tiles == 1);
  CHECK(mmha_launch(h64, 1, 1024).tiles == 2);
  AttentionGeometry h256 = g;
  h256.head_dim = 256;
  CHECK(mmha_launch(h256, 1, 255).tiles == 1);
  CHECK(mmha_launch(h256, 1, 256).tiles == 2);
}

TEST_CASE("TensorRT-LLM runs ungrouped heads and groups over 32 on its masked kernel, priced by its launch",
          "[fidelity][attention]") {
  // As many KV heads as query heads: never XQA, whatever the batch (16 x 16 x 1 x 4 blocks would reach the SMs).
  AttentionGeometry mha = geo(16, 16);
  set_split_rule(mha, "torch_flow");
  const auto f = decode_features(mha, std::vector<std::int32_t>(16, 100));
  CHECK(f[6] == 0.0);                              // no fallback beside XQA: the grid is the masked kernel's
  CHECK(f[3] == Approx(16.0 * 16 / 132));          // one CTA per (request, query head): 256 over 132 SMs
  CHECK(f[8] == 0.0);                              // 512-thread CTAs, two per SM: one wave
  CHECK(decode_features(mha, std::vector<std::int32_t>(17, 100))[8] == 1.0);  // 272 of 512 threads: two
  // One request of 4096 keys: ceil(132 / 16) = 9 blocks, each a ninth of the keys; 144 CTAs of 1024 threads, one
  // per SM: two waves.
  const auto f1 = decode_features(mha, std::vector<std::int32_t>(1, 4096));
  CHECK(f1[3] == Approx(16.0 * 9 / 132));
  CHECK(f1[4] == Approx(16.0 / 132));              // the blocks' partial results combined
  CHECK(f1[5] == 1.0);                             // multi-block mode
  CHECK(f1[8] == 1.0);
  CHECK(f1[2] == Approx(2 * std::ceil(4097.0 / 9) / 128));  // the longest CTA's keys (key by key), twice
  // 1024 requests x 16 heads: 16384 CTAs of 256 threads, 4 per SM: 32 waves.
  CHECK(decode_features(mha, std::vector<std::int32_t>(1024, 2))[8] == 31.0);
  // Multi-block from the second key loop: head 128 between 511 and 512 keys, head 64 at 1024.
  CHECK(decode_features(mha, std::vector<std::int32_t>(1, 511))[5] == 0.0);
  CHECK(decode_features(mha, std::vector<std::int32_t>(1, 512))[5] == 1.0);
  mha.head_dim = 64;
  CHECK(decode_features(mha, std::vector<std::int32_t>(1, 512))[5] == 0.0);

  // With a sliding window the kernel reads the window's keys: 4096 keys under a 128-key window price as 128.
  AttentionGeometry local = mha;
  local.window = 128;
  const auto fw = decode_features(local, std::vector<std::int32_t>(4, 4096));
  const auto f128 = decode_features(mha, std::vector<std::int32_t>(4, 128));
  for (int i : {2, 3, 4, 5, 8}) CHECK(fw[static_cast<std::size_t>(i)] == Approx(f128[static_cast<std::size_t>(i)]));

  // 64 query heads over one KV head: a group over 32, also the masked kernel's.
  AttentionGeometry wide = geo(64, 1);
  set_split_rule(wide, "torch_flow");
  CHECK(decode_features(wide, std::vector<std::int32_t>(64, 2048))[3] == Approx(64.0 * 64 / 132));
  // 32 over one: XQA's, with one block per KV head and request (2048 / 128 = 16, 64 x 16 = 1024 blocks).
  AttentionGeometry grouped = geo(32, 1);
  set_split_rule(grouped, "torch_flow");
  const auto fx = decode_features(grouped, std::vector<std::int32_t>(64, 2048));
  CHECK(fx[5] == 0.0);
  CHECK(fx[8] == 0.0);
  CHECK(fx[3] < 64.0 * 32 / 132);
}
