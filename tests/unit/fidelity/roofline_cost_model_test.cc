#include "core/fidelity/roofline_cost_model.h"

#include <catch2/catch.hpp>

#include "core/fidelity/memory_model.h"
#include "core/spec/resource_catalog.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

BatchShape decode_shape(int n, std::int64_t context) {
  BatchShape s;
  s.num_tokens = n;
  s.num_decode = n;
  s.num_sampled = n;
  s.decode_context_sum = n * context;
  s.decode_context_max = context;
  return s;
}

BatchShape prefill_shape(std::int32_t tokens) {
  BatchShape s;
  s.num_tokens = tokens;
  s.num_sampled = 1;
  s.prefills.push_back({tokens, tokens});
  return s;
}

SimTime fam(const BatchCost& c, OpFamily f) { return c.by_family[static_cast<int>(f)]; }

}  // namespace

TEST_CASE("decode time grows with the context the batch attends to", "[fidelity][roofline]") {
  RooflineCostModel cm(test::bundled_model("Llama-3.1-8B"), test::bundled_gpu("H100-SXM"), test::tp_dp(1),
                       EngineOptions{});
  SimTime prev_total = 0, prev_attn = 0;
  for (std::int64_t ctx : {128, 1024, 8192, 32768}) {
    const BatchCost c = cm.price(decode_shape(32, ctx));
    CHECK(c.total > prev_total);
    CHECK(fam(c, OpFamily::kAttentionDecode) > prev_attn);
    prev_total = c.total;
    prev_attn = fam(c, OpFamily::kAttentionDecode);
  }
  // At long context the KV read is memory bound: 32 x 32768 tokens x 131072 B over 0.8 x 3.35 TB/s, + 32 kernels.
  const double kv_read_ns = 32.0 * 32768 * 131072 / (3.35e12 * 0.8) * 1e9 + 32 * 3000.0;
  CHECK(static_cast<double>(prev_attn) == Approx(kv_read_ns).epsilon(1e-6));
}

TEST_CASE("prefill time grows about linearly with tokens once compute bound", "[fidelity][roofline]") {
  RooflineCostModel cm(test::bundled_model("Llama-3.1-8B"), test::bundled_gpu("H100-SXM"), test::tp_dp(1),
                       EngineOptions{});
  const BatchCost c2k = cm.price(prefill_shape(2048));
  const BatchCost c4k = cm.price(prefill_shape(4096));
  const double gemm_ratio = static_cast<double>(fam(c4k, OpFamily::kGemm)) / fam(c2k, OpFamily::kGemm);
  CHECK(gemm_ratio == Approx(2.0).epsilon(0.02));
  const double total_ratio = static_cast<double>(c4k.total) / c2k.total;
  CHECK(total_ratio > 1.8);
  CHECK(total_ratio < 2.3);  // attention adds a little more than linear
  // Compute bound: 2 x params-in-linear-layers x tokens over 0.7 x 989.4 TFLOP/s dominates the GEMM family.
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  const double linear_params = 32.0 * (41'943'040.0 + 176'160'768.0);
  const double gemm_ns = 2.0 * linear_params * 4096 / (989.4e12 * 0.7) * 1e9 + 32 * 4 * 3000.0;
  CHECK(static_cast<double>(fam(c4k, OpFamily::kGemm)) == Approx(gemm_ns).epsilon(1e-6));
}

TEST_CASE("tensor parallelism 2 shrinks GEMM time but adds all-reduces", "[fidelity][roofline]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  RooflineCostModel one(m, test::bundled_gpu("H100-SXM"), test::tp_dp(1), EngineOptions{});
  RooflineCostModel two(m, test::bundled_gpu("H100-SXM"), test::tp_dp(2), EngineOptions{});
  const BatchShape s = prefill_shape(4096);
  const BatchCost c1 = one.price(s), c2 = two.price(s);
  CHECK(fam(c1, OpFamily::kAllReduce) == 0);
  CHECK(fam(c2, OpFamily::kAllReduce) > 0);
  CHECK(fam(c2, OpFamily::kGemm) < fam(c1, OpFamily::kGemm));
  CHECK(static_cast<double>(fam(c2, OpFamily::kGemm)) / fam(c1, OpFamily::kGemm) == Approx(0.5).epsilon(0.03));
  // 64 all-reduces of 4096 x 4096 x 2 B, ring over 2 GPUs at 0.8 x 450 GB/s, + 10 us each.
  const double ar_ns = 64 * (2.0 * 1 / 2 * 4096.0 * 4096 * 2 / (450e9 * 0.8) * 1e9 + 10'000);
  CHECK(static_cast<double>(fam(c2, OpFamily::kAllReduce)) == Approx(ar_ns).epsilon(1e-6));
  CHECK(two.all_reduce_ns(1e6, 1) == 0);
}

TEST_CASE("CUDA graphs remove eager launch overhead from a tiny batch", "[fidelity][roofline]") {
  // A small model: 16 layers of cheap kernels, so launching 11 kernels/layer (5 us each) costs more than the GPU work.
  ModelSpec m;
  m.name = "tiny";
  m.hidden_size = 1024;
  m.num_hidden_layers = 16;
  m.num_attention_heads = 16;
  m.num_key_value_heads = 8;
  m.head_dim = 64;
  m.intermediate_size = 4096;
  m.vocab_size = 32000;
  m.max_position_embeddings = 4096;
  EngineOptions sync;
  sync.async_scheduling = false;
  RooflineCostModel cm(m, test::bundled_gpu("H100-SXM"), test::tp_dp(1), sync);
  BatchShape eager = decode_shape(1, 100);
  BatchShape graph = eager;
  graph.cuda_graph = true;
  const BatchCost ce = cm.price(eager), cg = cm.price(graph);
  SimTime gpu = 0;
  for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f)
    if (f != static_cast<int>(OpFamily::kOverhead)) gpu += cg.by_family[f];
  const double launch_ns = 5000.0 * 11 * 16;
  REQUIRE(launch_ns > static_cast<double>(gpu));
  CHECK(ce.total > cg.total);
  const double extra = static_cast<double>(fam(ce, OpFamily::kOverhead) - fam(cg, OpFamily::kOverhead));
  CHECK(extra == Approx(launch_ns - static_cast<double>(gpu)).margin(1.0));
  // Graph mode: only the CPU iteration (0.6 ms) and one request's bookkeeping (4 us).
  CHECK(fam(cg, OpFamily::kOverhead) == 600'000 + 4'000);
}

TEST_CASE("an 8B decode step at batch 1 on an H100 is within physical bounds", "[fidelity][roofline]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  const GpuSpec g = test::bundled_gpu("H100-SXM");
  RooflineCostModel cm(m, g, test::tp_dp(1), EngineOptions{});
  BatchShape s = decode_shape(1, 512);
  s.cuda_graph = true;
  const BatchCost c = cm.price(s);
  const double weights_ns = m.param_count() * 2 / (g.hbm_tb_s * 1e12) * 1e9;  // ~4.79 ms: every weight read once
  CHECK(weights_ns == Approx(4.794e6).epsilon(0.001));
  CHECK(static_cast<double>(c.total) >= weights_ns);
  CHECK(static_cast<double>(c.total) < 3 * weights_ns);
}

TEST_CASE("async scheduling exposes only the host time beyond the step's GPU time", "[fidelity][roofline]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  EngineOptions sync, async;
  sync.async_scheduling = false;
  async.async_scheduling = true;
  RooflineCostModel cs(m, test::bundled_gpu("H100-SXM"), test::tp_dp(1), sync),
      ca(m, test::bundled_gpu("H100-SXM"), test::tp_dp(1), async);
  RooflineCostModel unset(m, test::bundled_gpu("H100-SXM"), test::tp_dp(1), EngineOptions{});
  for (const BatchShape& s : {decode_shape(4, 100), prefill_shape(1000)}) {
    BatchShape g = s;
    g.cuda_graph = true;
    const BatchCost a = ca.price(g), b = cs.price(g);
    const SimTime gpu = b.total - fam(b, OpFamily::kOverhead);
    const SimTime host = fam(b, OpFamily::kOverhead);
    CHECK(host > 0);
    CHECK(a.total - fam(a, OpFamily::kOverhead) == gpu);  // the kernels do not change
    CHECK(fam(a, OpFamily::kOverhead) == std::max<SimTime>(0, host - gpu));
    CHECK(unset.price(g).total == a.total);  // vLLM's default resolution: on
  }
  // vLLM resolves an unset option to off with pipeline parallelism. SGLang's overlap schedule is on, but its host
  // constants were fitted on overlapped runs: they are added as they are.
  Parallelism pp2 = test::tp_dp(1);
  pp2.pp = 2;
  CHECK_FALSE(async_scheduling_on(EngineOptions{}, pp2.pp));
  CHECK(async_scheduling_on(async, pp2.pp));
  EngineOptions sg;
  sg.backend = "sglang";
  CHECK(async_scheduling_on(sg, 1));
  CHECK_FALSE(async_hides_host_time(sg, 1));
  EngineOptions sg_sync = sg;
  sg_sync.async_scheduling = false;
  RooflineCostModel on(m, test::bundled_gpu("H100-SXM"), test::tp_dp(1), sg),
      off(m, test::bundled_gpu("H100-SXM"), test::tp_dp(1), sg_sync);
  BatchShape d = decode_shape(4, 100);
  d.cuda_graph = true;
  CHECK(fam(on.price(d), OpFamily::kOverhead) > 0);
  CHECK(on.price(d).total == off.price(d).total);
}

TEST_CASE("price attributes time to op families and the total is their sum", "[fidelity][roofline]") {
  const ModelSpec m = test::bundled_model("Llama-3.1-8B");
  EngineOptions sync;
  sync.async_scheduling = false;  // synchronous: every step exposes its host time
  RooflineCostModel cm(m, test::bundled_gpu("H100-SXM"), test::tp_dp(1), sync);
  BatchShape mixed = decode_shape(16, 2000);
  mixed.prefills.push_back({512, 1024});
  mixed.num_tokens += 512;
  mixed.num_sampled += 1;
  for (const BatchShape& s : {decode_shape(4, 100), prefill_shape(1000), mixed}) {
    const BatchCost c = cm.price(s);
    SimTime sum = 0;
    for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f) {
      CHECK(c.by_family[f] >= 0);
      sum += c.by_family[f];
    }
    CHECK(c.total == sum);
    CHECK(fam(c, OpFamily::kGemm) > 0);
    CHECK(fam(c, OpFamily::kNorm) > 0);
    CHECK(fam(c, OpFamily::kLmHead) > 0);
    CHECK(fam(c, OpFamily::kOverhead) > 0);
    CHECK(fam(c, OpFamily::kAllReduce) == 0);    // TP 1
    CHECK(fam(c, OpFamily::kPipelineP2p) == 0);  // PP 1
    CHECK((fam(c, OpFamily::kAttentionPrefill) > 0) == !s.prefills.empty());
    CHECK((fam(c, OpFamily::kAttentionDecode) > 0) == (s.num_decode > 0));
  }
  Parallelism pp2;
  pp2.pp = 2;
  RooflineCostModel piped(m, test::bundled_gpu("H100-SXM"), pp2, EngineOptions{});
  CHECK(fam(piped.price(prefill_shape(1000)), OpFamily::kPipelineP2p) > 0);
  CHECK(cm.source(OpFamily::kGemm) == PriceSource::kRoofline);
}

TEST_CASE("roofline pipeline hops send what the backend sends", "[fidelity][roofline][p2p]") {
  // Hidden states and residual per hop (core/fidelity/pipeline_hop.h). vLLM: each of the 4 TP ranks sends a quarter
  // of each, then the receiving stage all-gathers; TRT-LLM: both whole. NVLink at 0.8 efficiency, 10 us latency.
  const ModelSpec m = test::bundled_model("Llama-3.1-70B");
  const GpuSpec g = test::bundled_gpu("H100-SXM");
  Parallelism par = test::tp_dp(4);
  par.pp = 2;
  EngineOptions vllm, trt;
  trt.backend = "trtllm";
  const RooflineCostModel v(m, g, par, vllm), t(m, g, par, trt);
  const double bytes = 1000 * 8192.0 * 2, bw = g.intra_node_gb_s() * 1e9 * 0.8;
  const double gather = 3.0 / 4 * bytes / bw * 1e9 + 10e3;
  CHECK(v.pipeline_hop_ns(1000) == Approx(2 * (bytes / 4 / bw * 1e9 + 10e3 + gather)).epsilon(1e-12));
  CHECK(t.pipeline_hop_ns(1000) == Approx(2 * (bytes / bw * 1e9 + 10e3)).epsilon(1e-12));
  CHECK(v.all_gather_ns(bytes, 4) == Approx(gather).epsilon(1e-12));
  // One hop between the two stages, in the step's cost.
  RooflineCostModel priced(m, g, par, trt);
  CHECK(fam(priced.price(prefill_shape(1000)), OpFamily::kPipelineP2p) ==
        static_cast<SimTime>(t.pipeline_hop_ns(1000) + 0.5));
}

TEST_CASE("the roofline prices each module's weights in the checkpoint's format", "[fidelity][roofline][quant]") {
  const GpuSpec h100 = test::bundled_gpu("H100-SXM");
  Parallelism p;
  EngineOptions e;  // dtype bfloat16: a pre-quantised checkpoint's own format is used all the same
  // GEMMs: FP8 weights take one byte (half the time where the weights' bytes bound it) and run at the FP8 peak
  // where the products bound it.
  RooflineCostModel r(test::bundled_model("Llama-3.1-8B"), h100, p, e);
  const double fixed = r.constants().kernel_fixed_us * 1e3;
  CHECK((r.gemm_ns(1, 8192, 8192, WeightFormat::kFp8) - fixed) ==
        Approx(0.5 * (r.gemm_ns(1, 8192, 8192, WeightFormat::kBf16) - fixed)).epsilon(0.01));
  CHECK((r.gemm_ns(16384, 8192, 8192, WeightFormat::kFp8) - fixed) ==
        Approx((r.gemm_ns(16384, 8192, 8192, WeightFormat::kBf16) - fixed) * h100.bf16_tflops / h100.fp8_tflops)
            .epsilon(1e-9));
  // gpt-oss-120b's routed experts are MXFP4 (4.25 bits a weight): a one-token decode step streams the 4 experts it
  // touches at that size, not at 16 bits.
  const ModelSpec oss = test::bundled_model("gpt-oss-120b");
  ModelSpec oss16 = oss;
  oss16.quant_method.clear();
  RooflineCostModel q(oss, h100, p, e), b(oss16, h100, p, e);
  const double ratio = (q.moe_experts_ns(1) - 2 * fixed) / (b.moe_experts_ns(1) - 2 * fixed);
  CHECK(ratio == Approx(4.25 / 16).epsilon(0.02));
}
