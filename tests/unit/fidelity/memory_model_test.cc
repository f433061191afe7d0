#include "core/fidelity/memory_model.h"

#include <cmath>

#include <catch2/catch.hpp>

#include "core/spec/resource_catalog.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {


/// Llama-3.1-8B from its Hugging Face config.json numbers.
ModelSpec llama8b_by_hand() {
  ModelSpec m;
  m.name = "Llama-3.1-8B";
  m.hidden_size = 4096;
  m.num_hidden_layers = 32;
  m.num_attention_heads = 32;
  m.num_key_value_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 14336;
  m.vocab_size = 128256;
  m.max_position_embeddings = 131072;
  m.tie_word_embeddings = false;
  return m;
}

Parallelism tp(int n) {
  Parallelism p;
  p.tp_attn = p.tp_ffn = n;
  return p;
}

}  // namespace

TEST_CASE("the bundled Llama-3.1-8B matches its Hugging Face shape and has about 8.03 B parameters",
          "[fidelity][memory]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  const ModelSpec h = llama8b_by_hand();
  CHECK(m.hidden_size == h.hidden_size);
  CHECK(m.num_hidden_layers == h.num_hidden_layers);
  CHECK(m.num_attention_heads == h.num_attention_heads);
  CHECK(m.num_key_value_heads == h.num_key_value_heads);
  CHECK(m.head_dim == h.head_dim);
  CHECK(m.intermediate_size == h.intermediate_size);
  CHECK(m.vocab_size == h.vocab_size);
  CHECK_FALSE(m.tie_word_embeddings);
  // embed + lm_head 2 x 525,336,576; per layer attention 41,943,040 + MLP 176,160,768; norms 65 x 4096.
  CHECK(m.param_count() == 8'030'261'248.0);
  CHECK(m.param_count() == Approx(8.03e9).epsilon(0.005));
}

TEST_CASE("Llama-3.1-8B on one H100 at 0.9 leaves the KV blocks the documented formula gives",
          "[fidelity][memory]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  const GpuSpec g = test::bundled_gpu("H100-SXM");
  REQUIRE(g.memory_bytes == 85029158912.0);
  EngineOptions e;  // 0.9, block 16, 8192 batched tokens, 256 seqs, bf16
  const KvBudget b = compute_kv_budget(m, g, tp(1), e);
  CHECK(b.error.empty());
  const double weights = m.param_count() * 2.0;
  CHECK(b.weights_bytes == Approx(weights).epsilon(1e-12));
  CHECK(b.kv_bytes_per_token == 2.0 * 32 * 8 * 128 * 2);
  CHECK(b.kv_bytes_per_token == 131072.0);
  CHECK(b.usable_bytes == Approx(0.9 * 85029158912.0));
  // Activation peak: T x (3 x intermediate + 4 x hidden) x 2 bytes + 2 x max_num_seqs x vocab x 4 bytes.
  const double activation = 8192.0 * (3 * 14336 + 4 * 4096) * 2 + 2.0 * 256 * 128256 * 4;
  CHECK(activation == 1'235'746'816.0);
  CHECK(b.activation_bytes == Approx(activation).epsilon(1e-12));
  const double overhead = 0.6 * (1u << 30);  // non-torch memory, no NCCL at TP 1
  CHECK(b.overhead_bytes == Approx(overhead));
  const double kv = 0.9 * 85029158912.0 - weights - activation - overhead;
  const auto blocks = static_cast<std::int64_t>(std::floor(kv / (131072.0 * 16)));
  CHECK(b.num_gpu_blocks == blocks);
  CHECK(b.num_gpu_blocks == 27935);  // the same number computed once by hand
  CHECK(b.max_tokens() == 27935 * 16);
  // The hand-built spec gives the same budget.
  CHECK(compute_kv_budget(llama8b_by_hand(), g, tp(1), e).num_gpu_blocks == 27935);
}

TEST_CASE("tensor parallelism 2 halves KV heads and weights per GPU and adds NCCL buffers", "[fidelity][memory]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  const GpuSpec g = test::bundled_gpu("H100-SXM");
  EngineOptions e;
  const KvBudget one = compute_kv_budget(m, g, tp(1), e);
  const KvBudget two = compute_kv_budget(m, g, tp(2), e);
  CHECK(two.error.empty());
  CHECK(two.kv_bytes_per_token == 2.0 * 32 * 4 * 128 * 2);  // 4 KV heads per GPU
  CHECK(two.weights_bytes == Approx(one.weights_bytes / 2).epsilon(1e-12));
  CHECK(two.overhead_bytes == Approx(0.6 * (1u << 30) + 0.4 * (1u << 30)));
  const double act2 = 8192.0 * (3 * 14336 / 2.0 + 4 * 4096) * 2 + 2.0 * 256 * (128256 / 2.0) * 4;
  CHECK(two.activation_bytes == Approx(act2).epsilon(1e-12));
  const double kv2 = 0.9 * 85029158912.0 - m.param_count() - act2 - 1.0 * (1u << 30);
  CHECK(two.num_gpu_blocks == static_cast<std::int64_t>(std::floor(kv2 / (65536.0 * 16))));
  CHECK(two.num_gpu_blocks > 2 * one.num_gpu_blocks);  // more room and half the bytes per token
  // KV heads never drop below one per GPU (TP 16 over 8 KV heads replicates them).
  CHECK(compute_kv_budget(m, g, tp(16), e).kv_bytes_per_token == 2.0 * 32 * 1 * 128 * 2);
}

TEST_CASE("Llama-3.1-70B does not fit one H100 and the error names the weights", "[fidelity][memory]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-70B");
  EngineOptions e;
  const KvBudget b = compute_kv_budget(m, test::bundled_gpu("H100-SXM"), tp(1), e);
  CHECK(b.num_gpu_blocks == 0);
  CHECK_THAT(b.error, Catch::Contains("weights"));
  CHECK(b.weights_bytes > b.usable_bytes);
}

TEST_CASE("Llama-3.1-70B at tensor parallelism 4 fits an H100 node slice", "[fidelity][memory]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-70B");
  EngineOptions e;
  const KvBudget b = compute_kv_budget(m, test::bundled_gpu("H100-SXM"), tp(4), e);
  INFO(b.error);
  CHECK(b.error.empty());
  CHECK(b.weights_bytes == Approx(m.param_count() * 2 / 4).epsilon(1e-12));
  CHECK(b.num_gpu_blocks > 0);
  CHECK(b.max_tokens() > 100'000);  // tens of GiB left per GPU
}

TEST_CASE("a tiny memory share leaves no KV blocks and says so", "[fidelity][memory]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  EngineOptions e;
  e.gpu_memory_utilization = 0.21;  // 16.6 GiB usable: weights fit (14.96), activations + overhead do not
  const KvBudget b = compute_kv_budget(m, test::bundled_gpu("H100-SXM"), tp(1), e);
  CHECK(b.num_gpu_blocks == 0);
  CHECK_THAT(b.error, Catch::Contains("no memory left for the KV cache"));
}
