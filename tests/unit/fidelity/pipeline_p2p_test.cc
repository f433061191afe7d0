// Pipeline hops priced from the measured send/recv curves (profiles/<gpu>/p2p.json, Vidur's DGX-A100/H100 data):
// the placement follows whether the role's GPUs fit one node; GPUs without the file, and tables moved to another
// GPU, keep the link roofline. What is sent follows the backend (core/fidelity/pipeline_hop.h): hidden states and
// residual, 1/tp of each per TP rank plus an all-gather at the receiver (vLLM, SGLang), or whole (TRT-LLM).
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/fidelity/op_table.h"
#include "core/fidelity/table_cost_model.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

std::unique_ptr<CostModel> pipelined(const std::string& gpu, int tp, int pp, const std::string& backend = "vllm") {
  Parallelism p = test::tp_dp(tp);
  p.pp = pp;
  EngineOptions e;
  e.backend = backend;
  std::string err;
  auto c = make_cost_model(test::bundled_model("Llama-3.1-70B"), test::bundled_gpu(gpu), p, e, &test::catalog(), 1,
                           err);
  REQUIRE(err.empty());
  REQUIRE(c);
  return c;
}

/// A measured size curve of `gpu`'s `file` (p2p.json by placement, nccl.json by op, dtype and GPUs), read
/// independently of the cost model.
LogCurve measured_curve(const std::string& gpu, const std::string& file, const std::vector<std::string>& key) {
  const OpGrid g = test::bundled_grid(gpu, file, key);
  return LogCurve(g.axes[0], g.values);
}
LogCurve measured(const std::string& gpu, const std::string& placement) {
  return measured_curve(gpu, "p2p.json", {placement});
}
LogCurve all_gather(const std::string& gpu, int gpus) {
  return measured_curve(gpu, "nccl.json", {"all_gather", "half", std::to_string(gpus)});
}

BatchShape decode(int n) {
  BatchShape s;
  s.num_tokens = n;
  s.num_decode = n;
  s.num_sampled = n;
  for (int i = 0; i < n; ++i) s.decode_contexts.push_back(1024);
  s.decode_context_sum = static_cast<std::int64_t>(n) * 1024;
  s.decode_context_max = 1024;
  return s;
}

double p2p(const BatchCost& c) { return static_cast<double>(c.by_family[static_cast<int>(OpFamily::kPipelineP2p)]); }

}  // namespace

TEST_CASE("vLLM's pipeline hop: two tensors, 1/tp of each per rank over NVLink, all-gathered at the receiver",
          "[fidelity][p2p]") {
  auto c = pipelined("H100-SXM", 2, 4);  // 8 GPUs: one node
  CHECK(c->source(OpFamily::kPipelineP2p) == PriceSource::kTable);
  auto* t = dynamic_cast<TableCostModel*>(c.get());
  REQUIRE(t);
  const LogCurve intra = measured("H100-SXM", "intra_node");
  const LogCurve gather = all_gather("H100-SXM", 2);
  for (int n : {1, 64, 512, 2048}) {
    const double elements = n * 8192.0;  // Llama-3.1-70B hidden 8192, bf16 activations
    const double hop = 2 * (intra.eval_affine(elements * 2 / 2) + gather.eval_affine(elements));
    bool ex = false;
    CHECK(t->pipeline_hop_us(n, &ex) == Approx(hop).epsilon(1e-9));
    CHECK_FALSE(ex);
    // Three hops between four stages, in nanoseconds in the step's cost.
    CHECK(p2p(c->price(decode(n))) == Approx(3 * 1e3 * hop).epsilon(1e-6));
  }
  // SGLang sends the same tensors the same way; a stage without TP sends them whole.
  auto sglang = pipelined("H100-SXM", 2, 4, "sglang");
  CHECK(dynamic_cast<TableCostModel*>(sglang.get())->pipeline_hop_us(512) == Approx(t->pipeline_hop_us(512)));
  auto flat_tp = pipelined("H100-SXM", 1, 4);
  CHECK(dynamic_cast<TableCostModel*>(flat_tp.get())->pipeline_hop_us(512) ==
        Approx(2 * intra.eval_affine(512 * 8192.0 * 2)).epsilon(1e-9));
}

TEST_CASE("TRT-LLM's pipeline hop sends hidden states and residual whole from every TP rank", "[fidelity][p2p]") {
  auto c = pipelined("H100-SXM", 2, 4, "trtllm");
  auto* t = dynamic_cast<TableCostModel*>(c.get());
  REQUIRE(t);
  const LogCurve intra = measured("H100-SXM", "intra_node");
  for (int n : {1, 512, 2048})
    CHECK(t->pipeline_hop_us(n) == Approx(2 * intra.eval_affine(n * 8192.0 * 2)).epsilon(1e-9));
  // Past the largest measured message (64 MiB) the lookup is flagged and scales with the size (bandwidth-bound).
  bool ex = false;
  const double at_128mib = t->pipeline_hop_us(8192, &ex);  // 8192 x 8192 x 2 bytes = 128 MiB per tensor
  CHECK(ex);
  CHECK(at_128mib == Approx(2 * t->pipeline_hop_us(4096)).epsilon(1e-9));  // 64 MiB: the last measured size
  CHECK(t->pipeline_hop_us(16384) == Approx(2 * at_128mib).epsilon(1e-9));
}

TEST_CASE("pipeline hops across nodes read the inter-node curve, slower than NVLink", "[fidelity][p2p]") {
  auto across = pipelined("H100-SXM", 8, 2, "trtllm");  // 16 GPUs: two nodes
  auto within = pipelined("H100-SXM", 4, 2, "trtllm");  // 8 GPUs
  REQUIRE(across->source(OpFamily::kPipelineP2p) == PriceSource::kTable);
  auto* a = dynamic_cast<TableCostModel*>(across.get());
  auto* w = dynamic_cast<TableCostModel*>(within.get());
  REQUIRE(a);
  REQUIRE(w);
  const LogCurve inter = measured("H100-SXM", "inter_node");
  CHECK(a->pipeline_hop_us(1024) == Approx(2 * inter.eval_affine(1024 * 8192.0 * 2)).epsilon(1e-9));
  CHECK(a->pipeline_hop_us(1024) > 3 * w->pipeline_hop_us(1024));
  // vLLM's ranks each send an eighth across the network and the eight GPUs of the next stage all-gather on NVLink.
  auto vllm = pipelined("H100-SXM", 8, 2);
  auto* v = dynamic_cast<TableCostModel*>(vllm.get());
  REQUIRE(v);
  const double elements = 1024 * 8192.0;
  CHECK(v->pipeline_hop_us(1024) ==
        Approx(2 * (inter.eval_affine(elements * 2 / 8) + all_gather("H100-SXM", 8).eval_affine(elements)))
            .epsilon(1e-9));
  CHECK(v->pipeline_hop_us(1024) < a->pipeline_hop_us(1024));
}

TEST_CASE("without a measured send/recv curve pipeline hops keep the link roofline", "[fidelity][p2p]") {
  auto h200 = pipelined("H200-SXM", 2, 2);  // H200-SXM has tables but no p2p.json
  CHECK(h200->source(OpFamily::kPipelineP2p) == PriceSource::kRoofline);
  auto b200 = pipelined("B200", 2, 2);  // datasheet-derived: tables moved from another GPU, not its links
  CHECK(b200->source(OpFamily::kPipelineP2p) == PriceSource::kRoofline);
  auto* t = dynamic_cast<TableCostModel*>(h200.get());
  REQUIRE(t);
  // The send at the link's bandwidth x efficiency plus its latency (RooflineConstants: 0.8, 10 us); the
  // receiver's all-gather still reads H200's NCCL table.
  const double bw = test::bundled_gpu("H200-SXM").intra_node_gb_s() * 1e9 * 0.8;
  const double elements = 64 * 8192.0;
  CHECK(t->pipeline_hop_us(64) ==
        Approx(2 * (elements * 2 / 2 / bw * 1e6 + 10 + all_gather("H200-SXM", 2).eval_affine(elements))).epsilon(1e-9));
  auto trt = pipelined("H200-SXM", 2, 2, "trtllm");
  CHECK(dynamic_cast<TableCostModel*>(trt.get())->pipeline_hop_us(64) ==
        Approx(2 * (elements * 2 / bw * 1e6 + 10)).epsilon(1e-9));
  auto flat = pipelined("H100-SXM", 8, 1);
  auto* f = dynamic_cast<TableCostModel*>(flat.get());
  REQUIRE(f);
  CHECK(f->pipeline_hop_us(64) == 0);
}

TEST_CASE("with data-parallel attention each group hands only its own tokens to the next stage", "[fidelity][p2p]") {
  // Two attention-DP groups of TP 2 per stage: a decode batch of 64 splits 32 / 32, and the groups' hops run in
  // parallel on their own GPUs, so the step pays one hop of 32 tokens (not of the batch's 64).
  Parallelism p = test::tp_dp(2, 2);
  p.pp = 2;
  std::string err;
  auto c = make_cost_model(test::bundled_model("Qwen3-235B-A22B"), test::bundled_gpu("H100-SXM"), p, EngineOptions{},
                           &test::catalog(), 1, err);
  REQUIRE(err.empty());
  auto* t = dynamic_cast<TableCostModel*>(c.get());
  REQUIRE(t);
  CHECK(p2p(c->price(decode(64))) == Approx(1e3 * t->pipeline_hop_us(32)).epsilon(1e-6));
  CHECK(t->pipeline_hop_us(32) < t->pipeline_hop_us(64));
}
