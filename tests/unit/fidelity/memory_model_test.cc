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
  const KvBudget b = compute_kv_budget(m, g, test::tp_dp(1), e);
  CHECK(b.error.empty());
  const double weights = m.param_count() * 2.0;
  CHECK(b.weights_bytes == Approx(weights).epsilon(1e-12));
  CHECK(b.kv_bytes_per_token == 2.0 * 32 * 8 * 128 * 2);
  CHECK(b.kv_bytes_per_token == 131072.0);
  CHECK(b.usable_bytes == Approx(0.9 * 85029158912.0));
  // 1. Profile-run activation peak, term by term (memory_model.h):
  //    residual stream 2 x T x hidden x 2 B + the wider of attention (q, k, v + output) and the MLP
  //    (gate/up 2 x 14336 + activation 14336) at T = 8192 tokens; sampler: min(256 seqs, 8192) rows x vocab
  //    x 38.9 B (vLLM's native top-k/top-p, measured). The peak is the larger of the two: the forward pass's
  //    activations are freed before the sampler runs.
  const double residual = 2.0 * 8192 * 4096 * 2;
  const double attn = 8192.0 * ((32 + 2 * 8) * 128 + 32 * 128) * 2;
  const double mlp = 8192.0 * 3 * 14336 * 2;
  CHECK(attn < mlp);
  CHECK(b.forward_peak_bytes == Approx(residual + mlp).epsilon(1e-12));
  CHECK(b.forward_peak_bytes == 838'860'800.0);
  CHECK(b.sampler_bytes == Approx(256.0 * 128256 * 38.9).epsilon(1e-12));
  const double activation = 256.0 * 128256 * 38.9;  // 1.19 GiB: above the forward pass's 0.78
  CHECK(b.activation_bytes == Approx(activation).epsilon(1e-12));
  // 2. CUDA graphs: 51 default sizes (1, 2, 4, 8..256 by 8, 272..512 by 16), largest 512, each captured twice
  //    (full + piecewise) at 2 MiB, plus the pool = forward peak at 512 tokens. Reported, not subtracted: vLLM
  //    captures them after sizing the KV cache, from the memory gpu_memory_utilization leaves.
  const double graphs = (2.0 * 512 * 4096 * 2 + 512.0 * 3 * 14336 * 2) + 2.0 * 51 * 2 * (1u << 20);
  CHECK(b.cuda_graph_bytes == Approx(graphs).epsilon(1e-12));
  // 3. No communication workspaces at TP 1; 4. non-torch 0.15 GiB.
  CHECK(b.comm_bytes == 0);
  CHECK(b.non_torch_bytes == Approx(0.15 * (1u << 30)));
  const double overhead = 0.15 * (1u << 30);
  CHECK(b.overhead_bytes == Approx(overhead).epsilon(1e-12));
  const double kv = 0.9 * 85029158912.0 - weights - activation - overhead;
  const auto blocks = static_cast<std::int64_t>(std::floor(kv / (131072.0 * 16)));
  CHECK(b.num_gpu_blocks == blocks);
  // The same number computed once by hand: 71.27 - 14.96 - 1.19 - 0.15 = 54.97 GiB of KV, 450,336 tokens.
  CHECK(b.kv_bytes / test::kGiB == Approx(54.97).margin(0.005));
  CHECK(b.num_gpu_blocks == 28146);
  CHECK(b.max_tokens() == 28146 * 16);
  // The hand-built spec gives the same budget.
  CHECK(compute_kv_budget(llama8b_by_hand(), g, test::tp_dp(1), e).num_gpu_blocks == 28146);
}

TEST_CASE("tensor parallelism 2 halves KV heads and weights per GPU and adds NCCL buffers", "[fidelity][memory]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  const GpuSpec g = test::bundled_gpu("H100-SXM");
  EngineOptions e;
  const KvBudget one = compute_kv_budget(m, g, test::tp_dp(1), e);
  const KvBudget two = compute_kv_budget(m, g, test::tp_dp(2), e);
  CHECK(two.error.empty());
  CHECK(two.kv_bytes_per_token == 2.0 * 32 * 4 * 128 * 2);  // 4 KV heads per GPU
  CHECK(two.weights_bytes == Approx(one.weights_bytes / 2).epsilon(1e-12));
  // NCCL communicator buffers (0.3 GiB) and the custom all-reduce buffers (32 MiB) join the overhead.
  CHECK(two.comm_bytes == Approx(0.3 * (1u << 30) + 32.0 * (1u << 20)));
  CHECK(two.overhead_bytes == Approx(two.comm_bytes + 0.15 * (1u << 30)));
  // The MLP intermediate halves; the residual stream and the sampler's full-vocabulary logits do not.
  const double fwd2 = 2.0 * 8192 * 4096 * 2 + 8192.0 * 3 * (14336 / 2.0) * 2;
  CHECK(two.forward_peak_bytes == Approx(fwd2).epsilon(1e-12));
  CHECK(two.sampler_bytes == one.sampler_bytes);
  const double kv2 = 0.9 * 85029158912.0 - m.param_count() - two.activation_bytes - two.overhead_bytes;
  CHECK(two.num_gpu_blocks == static_cast<std::int64_t>(std::floor(kv2 / (65536.0 * 16))));
  CHECK(two.num_gpu_blocks > 2 * one.num_gpu_blocks);  // more room and half the bytes per token
  // KV heads never drop below one per GPU (TP 16 over 8 KV heads replicates them).
  CHECK(compute_kv_budget(m, g, test::tp_dp(16), e).kv_bytes_per_token == 2.0 * 32 * 1 * 128 * 2);
}

TEST_CASE("Llama-3.1-70B does not fit one H100 and the error names the weights", "[fidelity][memory]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-70B");
  EngineOptions e;
  const KvBudget b = compute_kv_budget(m, test::bundled_gpu("H100-SXM"), test::tp_dp(1), e);
  CHECK(b.num_gpu_blocks == 0);
  CHECK_THAT(b.error, Catch::Contains("weights"));
  CHECK(b.weights_bytes > b.usable_bytes);
}

TEST_CASE("Llama-3.1-70B at tensor parallelism 4 fits an H100 node slice", "[fidelity][memory]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-70B");
  EngineOptions e;
  const KvBudget b = compute_kv_budget(m, test::bundled_gpu("H100-SXM"), test::tp_dp(4), e);
  INFO(b.error);
  CHECK(b.error.empty());
  CHECK(b.weights_bytes == Approx(m.param_count() * 2 / 4).epsilon(1e-12));
  CHECK(b.num_gpu_blocks > 0);
  CHECK(b.max_tokens() > 100'000);  // tens of GiB left per GPU
}

TEST_CASE("a tiny memory share leaves no KV blocks and says so", "[fidelity][memory]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  EngineOptions e;
  e.gpu_memory_utilization = 0.2;  // 15.8 GiB usable: weights fit (14.96), activations + overhead do not
  const KvBudget b = compute_kv_budget(m, test::bundled_gpu("H100-SXM"), test::tp_dp(1), e);
  CHECK(b.num_gpu_blocks == 0);
  CHECK_THAT(b.error, Catch::Contains("no memory left for the KV cache"));
}

TEST_CASE("FP8 weights keep the embedding and LM head in 16 bits", "[fidelity][memory]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  EngineOptions e;
  e.dtype = "fp8";
  const double vocab = 2.0 * 128256 * 4096;  // embedding + untied LM head
  CHECK(weights_bytes_per_gpu(m, test::tp_dp(1), e) == Approx(m.param_count() - vocab + 2 * vocab).epsilon(1e-12));
  // At TP 2 both halves shard the vocabulary too.
  CHECK(weights_bytes_per_gpu(m, test::tp_dp(2), e) == Approx((m.param_count() - vocab) / 2 + vocab).epsilon(1e-12));
}

TEST_CASE("CUDA graphs lie outside vLLM's KV budget, and its activation peak is the forward pass or the sampler",
          "[fidelity][memory]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  const GpuSpec g = test::bundled_gpu("H100-SXM");
  EngineOptions e;
  const KvBudget graphs = compute_kv_budget(m, g, test::tp_dp(1), e);
  e.enforce_eager = true;
  const KvBudget eager = compute_kv_budget(m, g, test::tp_dp(1), e);
  CHECK(graphs.cuda_graph_bytes > 0);
  CHECK(eager.cuda_graph_bytes == 0);
  CHECK(eager.num_gpu_blocks == graphs.num_gpu_blocks);  // captured after the KV cache is sized
  // 256 sampled rows (1.19 GiB) outweigh a forward pass of 8192 tokens (0.78 GiB) ...
  CHECK(eager.activation_bytes == eager.sampler_bytes);
  CHECK(eager.sampler_bytes > eager.forward_peak_bytes);
  // ... and a forward pass of 16384 tokens (1.56 GiB) outweighs them: the peak follows it, not their sum.
  e.max_num_batched_tokens = 16384;
  const KvBudget wide = compute_kv_budget(m, g, test::tp_dp(1), e);
  CHECK(wide.forward_peak_bytes == Approx(2 * eager.forward_peak_bytes).epsilon(1e-12));
  CHECK(wide.activation_bytes == wide.forward_peak_bytes);
  CHECK(wide.num_gpu_blocks < eager.num_gpu_blocks);
  // 1024 sampled rows, vLLM serve's default on an H100: 4.76 GiB, the peak vLLM 0.11 logs for this model.
  e.max_num_batched_tokens = 8192;
  e.max_num_seqs = 1024;
  CHECK(compute_kv_budget(m, g, test::tp_dp(1), e).activation_bytes / test::kGiB == Approx(4.76).margin(0.005));
}

TEST_CASE("an MoE model's activation peak includes the fused-experts caches of its top-k rows",
          "[fidelity][memory]") {
  const ModelSpec m = test::bundled_model("Qwen3-30B-A3B");
  Parallelism p;
  const double T = 8192;
  // hidden 2048, 8 of 128 experts, expert width 768: caches T x 8 x (3 x 768 + 2048) x 2 B, fp32 router logits.
  const double moe = T * 8 * (3 * 768.0 + 2048) * 2 + T * 128 * 4;
  const double residual = 2 * T * 2048 * 2;
  CHECK(forward_peak_bytes(m, p, T) == Approx(residual + moe).epsilon(1e-12));
}

namespace {

/// The result's warnings that report vLLM refusing to start (cluster.cc), for one role of `sc`.
std::vector<std::string> refusals(const nlohmann::json& sc) {
  std::vector<std::string> out;
  const nlohmann::json result = test::run_scenario(sc.dump());
  for (const auto& w : result["warnings"])
    if (w.get<std::string>().find("would refuse to start") != std::string::npos) out.push_back(w.get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("a vLLM role whose KV cache cannot hold one max_model_len request is flagged with the length that fits",
          "[fidelity][memory]") {
  // Qwen3-32B on one H100 as llm-d's vLLM 0.11 run had it: blocks of 128, 1024 sequences, 8192 tokens. 4.46 GiB of
  // KV at 256 KiB a token hold 142 blocks, 18,176 tokens; vLLM logged 4.45 GiB at max_model_len 16,000 and refused
  // to start at 32,000.
  const GpuSpec g = test::bundled_gpu("H100-SXM");
  const ModelSpec m = test::bundled_model("Qwen3-32B");
  EngineOptions e;
  e.block_size = 128;
  e.max_num_seqs = 1024;
  e.max_model_len = 16000;
  const KvBudget ok = compute_kv_budget(m, g, test::tp_dp(1), e);
  CHECK(ok.error.empty());
  CHECK(ok.num_gpu_blocks == 142);
  nlohmann::json sc = test::small_scenario();
  sc["model"] = "Qwen3-32B";
  sc["workload"]["num_requests"] = 4;
  sc["engine"] = {{"block_size", 128}, {"max_num_seqs", 1024}, {"max_model_len", 16000}};
  CHECK(refusals(sc).empty());
  sc["engine"]["max_model_len"] = 18176;  // 142 whole blocks
  CHECK(refusals(sc).empty());
  sc["engine"]["max_model_len"] = 18177;
  const std::vector<std::string> over = refusals(sc);
  REQUIRE(over.size() == 1);  // simulated as set, with the refusal among the warnings
  CHECK_THAT(over[0], Catch::StartsWith("/deployment/roles/0: vLLM would refuse to start") &&
                          Catch::Contains("max_model_len 18177") && Catch::Contains("needs 143 blocks") &&
                          Catch::Contains("holds 142") && Catch::Contains("at most 18176"));
  sc["engine"]["max_model_len"] = 32000;
  REQUIRE(refusals(sc).size() == 1);
  CHECK_THAT(refusals(sc)[0], Catch::Contains("at most 18176"));
  // Sliding-window layers need only their window and one chunk: gpt-oss-120b's 18 full and 18 sliding layers form
  // one group each, so a request of L tokens takes ceil(L / 128) full blocks and ceil((127 + 8192) / 128) + 1
  // sliding ones.
  sc["model"] = "gpt-oss-120b";
  sc["engine"]["max_model_len"] = 131072;
  REQUIRE(refusals(sc).size() == 1);
  CHECK_THAT(refusals(sc)[0], Catch::Contains("needs 1090 blocks"));  // 1024 + 66
  sc["engine"].erase("max_model_len");                                // the model's own 131,072 on two GPUs fits
  sc["deployment"]["roles"][0]["tensor_parallel_size"] = 2;
  CHECK(refusals(sc).empty());
  // SGLang and TRT-LLM roles start regardless (their limits bound each request instead).
  sc["model"] = "Qwen3-32B";
  sc["deployment"]["roles"][0]["tensor_parallel_size"] = 1;
  sc["engine"] = {{"backend", "sglang"}, {"max_model_len", 40960}, {"gpu_memory_utilization", 0.85}};
  CHECK(refusals(sc).empty());
}

TEST_CASE("the result lists vLLM's refusal to start among its warnings and still runs", "[fidelity][memory][api]") {
  nlohmann::json sc = test::small_scenario();
  sc["model"] = "Qwen3-32B";
  sc["engine"]["max_model_len"] = 40960;
  sc["engine"]["gpu_memory_utilization"] = 0.85;
  const nlohmann::json r = test::run_scenario(sc.dump());
  int found = 0;
  for (const auto& w : r["warnings"])
    if (w.get<std::string>().rfind("/deployment/roles/0: vLLM would refuse to start: max_model_len 40960", 0) == 0)
      ++found;
  CHECK(found == 1);
  CHECK(r["summary"]["completed"].get<int>() == 50);
  sc["engine"]["max_model_len"] = 16384;  // fits: no such warning
  CHECK(refusals(sc).empty());
}
