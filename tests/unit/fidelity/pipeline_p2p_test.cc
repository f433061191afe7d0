// Pipeline hops priced from the measured send/recv curves (profiles/<gpu>/p2p.json, Vidur's DGX-A100/H100 data):
// the placement follows whether the role's GPUs fit one node; GPUs without the file, and tables moved to another
// GPU, keep the link roofline.
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "core/fidelity/op_table.h"
#include "core/fidelity/table_cost_model.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

std::unique_ptr<CostModel> pipelined(const std::string& gpu, int tp, int pp) {
  Parallelism p = test::tp_dp(tp);
  p.pp = pp;
  std::string err;
  auto c = make_cost_model(test::bundled_model("Llama-3.1-70B"), test::bundled_gpu(gpu), p, EngineOptions{},
                           &test::catalog(), 1, err);
  REQUIRE(err.empty());
  REQUIRE(c);
  return c;
}

/// The measured send/recv curve of `placement` on `gpu`, read independently of the cost model.
LogCurve measured(const std::string& gpu, const std::string& placement) {
  auto text = test::catalog().load_text(gpu, "p2p.json");
  REQUIRE(text);
  OpTable t;
  REQUIRE(parse_op_table(*text, t).empty());
  const OpGrid* g = t.find({placement});
  REQUIRE(g);
  return LogCurve(g->axes[0], g->values);
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

TEST_CASE("pipeline hops inside a node are priced from the measured NVLink send/recv curve", "[fidelity][p2p]") {
  auto c = pipelined("H100-SXM", 2, 4);  // 8 GPUs: one node
  CHECK(c->source(OpFamily::kPipelineP2p) == PriceSource::kTable);
  auto* t = dynamic_cast<TableCostModel*>(c.get());
  REQUIRE(t);
  const LogCurve intra = measured("H100-SXM", "intra_node");
  for (int n : {1, 64, 512, 2048}) {
    const double bytes = n * 8192.0 * 2;  // Llama-3.1-70B hidden 8192, bf16 activations
    bool ex = false;
    CHECK(t->pipeline_hop_us(n, &ex) == Approx(intra.eval_affine(bytes)).epsilon(1e-9));
    CHECK_FALSE(ex);
    // Three hops between four stages, in nanoseconds in the step's cost.
    CHECK(p2p(c->price(decode(n))) == Approx(3 * 1e3 * intra.eval_affine(bytes)).epsilon(1e-6));
  }
}

TEST_CASE("pipeline hops across nodes read the inter-node curve, slower than NVLink", "[fidelity][p2p]") {
  auto across = pipelined("H100-SXM", 8, 2);  // 16 GPUs: two nodes
  auto within = pipelined("H100-SXM", 4, 2);  // 8 GPUs
  REQUIRE(across->source(OpFamily::kPipelineP2p) == PriceSource::kTable);
  auto* a = dynamic_cast<TableCostModel*>(across.get());
  auto* w = dynamic_cast<TableCostModel*>(within.get());
  REQUIRE(a);
  REQUIRE(w);
  const LogCurve inter = measured("H100-SXM", "inter_node");
  CHECK(a->pipeline_hop_us(1024) == Approx(inter.eval_affine(1024 * 8192.0 * 2)).epsilon(1e-9));
  CHECK(a->pipeline_hop_us(1024) > 3 * w->pipeline_hop_us(1024));
  // Past the largest measured message (64 MiB) the lookup is flagged and scales with the size (bandwidth-bound).
  bool ex = false;
  const double at_128mib = a->pipeline_hop_us(8192, &ex);  // 8192 x 8192 x 2 bytes = 128 MiB
  CHECK(ex);
  CHECK(at_128mib == Approx(2 * a->pipeline_hop_us(4096)).epsilon(1e-9));  // 64 MiB: the last measured size
  CHECK(a->pipeline_hop_us(16384) == Approx(2 * at_128mib).epsilon(1e-9));
}

TEST_CASE("without a measured send/recv curve pipeline hops keep the link roofline", "[fidelity][p2p]") {
  auto h200 = pipelined("H200-SXM", 2, 2);  // H200-SXM has tables but no p2p.json
  CHECK(h200->source(OpFamily::kPipelineP2p) == PriceSource::kRoofline);
  auto b200 = pipelined("B200", 2, 2);  // datasheet-derived: tables moved from another GPU, not its links
  CHECK(b200->source(OpFamily::kPipelineP2p) == PriceSource::kRoofline);
  auto* t = dynamic_cast<TableCostModel*>(h200.get());
  REQUIRE(t);
  CHECK(t->pipeline_hop_us(64) > 0);
  auto flat = pipelined("H100-SXM", 8, 1);
  auto* f = dynamic_cast<TableCostModel*>(flat.get());
  REQUIRE(f);
  CHECK(f->pipeline_hop_us(64) == 0);
}
