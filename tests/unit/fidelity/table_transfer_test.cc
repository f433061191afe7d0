#include "core/fidelity/table_transfer.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <optional>
#include <string>

#include "core/fidelity/interpolation.h"
#include "core/fidelity/op_table.h"
#include "core/fidelity/table_cost_model.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

/// A one-grid table of `op` with one cell per value of the last axis.
OpTable one_grid(const std::string& op, std::vector<std::string> key_fields, std::vector<std::string> key,
                 std::vector<std::string> axis_fields, std::vector<std::vector<double>> axes,
                 std::vector<double> values) {
  OpTable t;
  t.op = op;
  t.key_fields = std::move(key_fields);
  t.axis_fields = std::move(axis_fields);
  OpGrid g;
  g.key = std::move(key);
  g.axes = std::move(axes);
  for (const auto& a : g.axes) {
    std::vector<double> l;
    for (double x : a) l.push_back(interp_log(x));
    g.log_axes.push_back(l);
  }
  g.strides.assign(g.axes.size(), 1);
  for (std::size_t a = g.axes.size(); a-- > 1;) g.strides[a - 1] = g.strides[a] * g.axes[a].size();
  g.values = std::move(values);
  for (double v : g.values) g.log_values.push_back(interp_log(v));
  t.grids.push_back(std::move(g));
  return t;
}

/// A bf16 GEMM table of one (n, k) with m = 1 and m = 8192.
OpTable gemm_table(double n, double k, double t_m1, double t_m8192) {
  return one_grid("gemm", {"dtype"}, {"bfloat16"}, {"n", "k", "m"}, {{n}, {k}, {1, 8192}}, {t_m1, t_m8192});
}

GpuSpec with(GpuSpec g, const std::string& name, double bf16, double hbm, const std::string& cc) {
  g.name = name;
  g.bf16_tflops = bf16;
  g.fp8_tflops = 2 * bf16;
  g.hbm_tb_s = hbm;
  g.compute_capability = cc;
  g.tables_from.clear();
  return g;
}

std::unique_ptr<CostModel> cost_for(const std::string& model, const GpuSpec& gpu, int tensor_parallel,
                                    const ResourceCatalog& catalog = test::catalog()) {
  std::string err;
  auto c =
      make_cost_model(test::bundled_model(model), gpu, test::tp_dp(tensor_parallel), EngineOptions{}, &catalog, 1, err);
  REQUIRE(err.empty());
  REQUIRE(c);
  return c;
}

BatchShape prefill_batch(int tokens) {
  BatchShape s;
  s.num_tokens = tokens;
  s.num_sampled = 1;
  s.prefills.push_back(PrefillChunk{tokens, tokens});
  return s;
}

}  // namespace

TEST_CASE("the transfer rule follows the compute capability", "[fidelity][transfer]") {
  const GpuSpec h100 = test::bundled_gpu("H100-SXM");
  CHECK(transfer_rule(h100, test::bundled_gpu("H800")) == TransferRule::kSameArchitecture);
  CHECK(transfer_rule(h100, test::bundled_gpu("H20")) == TransferRule::kSameArchitecture);
  CHECK(transfer_rule(test::bundled_gpu("H200-SXM"), test::bundled_gpu("B200")) == TransferRule::kOtherArchitecture);
  CHECK(transfer_rule(test::bundled_gpu("A100-80G"), test::bundled_gpu("A10G")) == TransferRule::kOtherArchitecture);
  GpuSpec unknown = h100;
  unknown.compute_capability.clear();
  CHECK(transfer_rule(h100, unknown) == TransferRule::kOtherArchitecture);
}

TEST_CASE("a same-architecture transfer replaces the roofline time and keeps the rest", "[fidelity][transfer]") {
  const GpuSpec from = with(test::bundled_gpu("H100-SXM"), "from", 1000, 2.0, "9.0");
  const GpuSpec to = with(from, "to", 500, 4.0, "9.0");
  const double n = 4096, k = 4096;
  // m = 1: weight-bound, n k 2 bytes at 2 TB/s = 16.8 us of roofline; m = 8192: compute-bound, 274.9 us at 1 PFLOP/s.
  OpTable t = gemm_table(n, k, 30.0, 400.0);
  const ModelSpec none;
  CellWork w1, w2;
  REQUIRE(cell_work(t, 0, 0, none, w1));
  REQUIRE(cell_work(t, 0, 1, none, w2));
  CHECK(w1.flops == Approx(2 * n * k));
  CHECK(w2.flops == Approx(2 * 8192 * n * k));
  const double r1f = peak_time_us(w1, from), r1t = peak_time_us(w1, to);
  const double r2f = peak_time_us(w2, from), r2t = peak_time_us(w2, to);
  CHECK(r1t == Approx(r1f / 2));  // twice the bandwidth
  CHECK(r2t == Approx(r2f * 2));  // half the compute
  transfer_table(t, from, to, TransferRule::kSameArchitecture, none);
  CHECK(t.grids[0].values[0] == Approx(30.0 - r1f + r1t));
  CHECK(t.grids[0].values[1] == Approx(400.0 - r2f + r2t));
  CHECK(t.grids[0].log_values[1] == Approx(interp_log(t.grids[0].values[1])));
  // A cell measured faster than its roofline (the datasheet cannot explain it) scales instead of going negative.
  OpTable fast = gemm_table(n, k, 10.0, 400.0);
  transfer_table(fast, from, to, TransferRule::kSameArchitecture, none);
  CHECK(fast.grids[0].values[0] == Approx(10.0 * r1t / r1f));
}

TEST_CASE("another architecture scales each cell by the ratio of the rooflines", "[fidelity][transfer]") {
  const GpuSpec from = with(test::bundled_gpu("H100-SXM"), "from", 1000, 2.0, "9.0");
  const GpuSpec to = with(from, "to", 500, 4.0, "10.0");
  OpTable t = gemm_table(4096, 4096, 30.0, 400.0);
  transfer_table(t, from, to, transfer_rule(from, to), ModelSpec());
  CHECK(t.grids[0].values[0] == Approx(15.0));   // weight-bound: half the time
  CHECK(t.grids[0].values[1] == Approx(800.0));  // compute-bound: twice
}

TEST_CASE("collectives move with the intra-node link, whatever the architecture", "[fidelity][transfer]") {
  const GpuSpec h100 = test::bundled_gpu("H100-SXM"), h800 = test::bundled_gpu("H800");
  OpTable t = one_grid("nccl", {"op", "dtype", "gpus"}, {"all_reduce", "half", "8"}, {"elements"}, {{1024, 1 << 24}},
                       {20.0, 900.0});
  transfer_table(t, h100, h800, transfer_rule(h100, h800), ModelSpec());
  const double ratio = h100.nvlink_gb_s / h800.nvlink_gb_s;  // 450 / 200 GB/s one way
  CHECK(t.grids[0].values[0] == Approx(20.0 * ratio));
  CHECK(t.grids[0].values[1] == Approx(900.0 * ratio));
}

TEST_CASE("moving tables to an identical datasheet leaves every measurement as it was", "[fidelity][transfer]") {
  GpuSpec twin = test::bundled_gpu("H100-SXM");
  twin.name = "H100 twin";
  twin.tables_from = "H100-SXM";
  const auto own = cost_for("Qwen3-30B-A3B", test::bundled_gpu("H100-SXM"), 2);
  const auto moved = cost_for("Qwen3-30B-A3B", twin, 2);
  CHECK(moved->report().kind == "datasheet-derived");
  CHECK(moved->report().transferred_to == "H100 twin");
  CHECK(moved->report().transfer == "same architecture");
  for (int tokens : {1, 64, 4096}) {
    const BatchCost a = own->price(prefill_batch(tokens)), b = moved->price(prefill_batch(tokens));
    for (int f = 0; f < static_cast<int>(OpFamily::kCount); ++f)
      CHECK(std::abs(static_cast<double>(a.by_family[f] - b.by_family[f])) <=
            1e-9 * static_cast<double>(a.by_family[f]) + 2);
  }
}

TEST_CASE("GPUs without tables are priced from the nearest GPU with tables", "[fidelity][transfer]") {
  const auto vllm = test::catalog().gpus_with_table("vllm/gemm");
  const auto trtllm = test::catalog().gpus_with_table("trtllm/gemm");
  CHECK(vllm == std::vector<std::string>{"A100-80G", "H100-SXM", "H200-SXM"});
  CHECK(trtllm == std::vector<std::string>{"H100-SXM", "H200-SXM"});
  auto nearest = [&](const char* gpu, const std::vector<std::string>& c) {
    return nearest_table_gpu(test::catalog(), test::bundled_gpu(gpu), c);
  };
  CHECK(nearest("H800", vllm) == "H100-SXM");  // the same chip with a slower NVLink
  CHECK(nearest("H20", vllm) == "H100-SXM");   // Hopper: 4.0 TB/s is nearer H100's 3.35 than H200's 4.8
  CHECK(nearest("H20-141G", vllm) == "H100-SXM");
  CHECK(nearest("B200", vllm) == "H200-SXM");  // no Blackwell tables: the nearest datasheet
  CHECK(nearest("L40S", vllm) == "A100-80G");
  CHECK(nearest("A10G", vllm) == "A100-80G");
  CHECK(nearest("L40S", trtllm) == "H100-SXM");  // TRT-LLM tables exist for Hopper only
  CHECK(nearest("H800", {}) == "");
}

TEST_CASE("an H800 prices from H100's tables: the same kernels, a slower NVLink", "[fidelity][transfer]") {
  const auto h100 = cost_for("Llama-3.1-70B", test::bundled_gpu("H100-SXM"), 8);
  const auto h800 = cost_for("Llama-3.1-70B", test::bundled_gpu("H800"), 8);
  const FidelityReport r = h800->report();
  CHECK(r.kind == "datasheet-derived");
  CHECK(r.profile == "H100-SXM/vllm");
  CHECK(r.transferred_to == "H800");
  CHECK(h800->source(OpFamily::kGemm) == PriceSource::kDatasheet);
  CHECK_THAT(h800->describe(), Catch::Contains("moved to the H800 datasheet"));
  for (int tokens : {8, 2048}) {
    const BatchCost a = h100->price(prefill_batch(tokens)), b = h800->price(prefill_batch(tokens));
    const int gemm = static_cast<int>(OpFamily::kGemm), ar = static_cast<int>(OpFamily::kAllReduce);
    CHECK(b.by_family[gemm] == a.by_family[gemm]);  // same SMs, same HBM: the measurement as it is
    CHECK(static_cast<double>(b.by_family[ar]) == Approx(2.25 * static_cast<double>(a.by_family[ar])).epsilon(1e-4));
  }
}

TEST_CASE("a GPU naming tables_from is priced from that GPU's tables", "[fidelity][transfer]") {
  GpuSpec g = test::bundled_gpu("H100-SXM");
  g.name = "H100 from H200";
  g.tables_from = "H200-SXM";
  const auto c = cost_for("Llama-3.1-8B", g, 1);
  CHECK(c->report().profile == "H200-SXM/vllm");
  CHECK(c->report().transfer == "same architecture");
}

TEST_CASE("with no GPU's tables in the catalog the datasheet curves price everything", "[fidelity][transfer]") {
  // The bundled profiles with an index that lists no tables.
  const ResourceLoader base = test::profiles_loader();
  const ResourceCatalog bare([base](const std::string& path) -> std::optional<std::string> {
    if (path != "index.json") return base(path);
    auto j = nlohmann::json::parse(*base(path));
    j["tables"] = nlohmann::json::array();
    return j.dump();
  });
  const auto c = cost_for("Llama-3.1-8B", test::bundled_gpu("H800"), 1, bare);
  CHECK(c->report().kind == "datasheet-derived");
  CHECK(c->report().transferred_to.empty());
  CHECK_THAT(c->describe(), Catch::Contains("efficiency curves"));
}

TEST_CASE("moved from H100, the H200 tables' MoE and decode cells are nearer H200's measurements than H100's",
          "[fidelity][transfer]") {
  // The validation of docs/validation.md in miniature: a transfer that did nothing useful would lose here.
  const GpuSpec h100 = test::bundled_gpu("H100-SXM"), h200 = test::bundled_gpu("H200-SXM");
  // Mean |log error| of the moved tables against H100's values as they are: 0.6x for MoE, 0.84x for decode
  // attention when this test was written (most decode cells are not bandwidth-bound; large ones are).
  for (const auto& [file, bound] :
       {std::pair<const char*, double>{"moe.json", 0.7}, {"generation_attention.json", 0.9}}) {
    OpTable from, truth;
    REQUIRE(parse_op_table(*test::catalog().load_text("H100-SXM/vllm", file), from).empty());
    REQUIRE(parse_op_table(*test::catalog().load_text("H200-SXM/vllm", file), truth).empty());
    OpTable moved = from;
    transfer_table(moved, h100, h200, TransferRule::kSameArchitecture, ModelSpec());
    double err_moved = 0, err_as_is = 0;
    std::size_t n = 0;
    for (std::size_t gi = 0; gi < truth.grids.size(); ++gi) {
      const OpGrid* m = moved.find(truth.grids[gi].key);
      const OpGrid* f = from.find(truth.grids[gi].key);
      if (!m || m->values.size() != truth.grids[gi].values.size() || m->axes != truth.grids[gi].axes) continue;
      for (std::size_t c = 0; c < m->values.size(); ++c) {
        const double t = truth.grids[gi].values[c];
        if (!(t > 0) || !(m->values[c] > 0)) continue;
        err_moved += std::fabs(std::log(m->values[c] / t));
        err_as_is += std::fabs(std::log(f->values[c] / t));
        ++n;
      }
    }
    INFO(file << ": " << n << " cells, mean |log error| moved " << err_moved / n << ", as measured " << err_as_is / n);
    REQUIRE(n > 1000);
    CHECK(err_moved < bound * err_as_is);
  }
}

TEST_CASE("moved tables are reused within a process only for the same datasheets", "[fidelity][transfer]") {
  const GpuSpec h20 = test::bundled_gpu("H20");
  GpuSpec faster = h20;  // same name, twice the HBM bandwidth: must not reuse H20's moved tables
  faster.hbm_tb_s *= 2;
  const BatchShape step = test::decode_batch(64, 4096);
  const SimTime first = cost_for("Llama-3.1-8B", h20, 1)->price(step).total;
  const SimTime again = cost_for("Llama-3.1-8B", h20, 1)->price(step).total;
  const SimTime other = cost_for("Llama-3.1-8B", faster, 1)->price(step).total;
  CHECK(again == first);
  CHECK(other < first);
}

namespace {

std::unique_ptr<CostModel> cost_with_dtype(const std::string& model, const GpuSpec& gpu, int tensor_parallel,
                                           const std::string& dtype, const ResourceCatalog& catalog = test::catalog()) {
  EngineOptions e;
  e.dtype = dtype;
  std::string err;
  auto c = make_cost_model(test::bundled_model(model), gpu, test::tp_dp(tensor_parallel), e, &catalog, 1, err);
  REQUIRE(err.empty());
  REQUIRE(c);
  return c;
}

/// The bundled profiles with an index listing only the tables `keep` accepts.
ResourceCatalog catalog_listing(std::function<bool(const std::string&)> keep) {
  const ResourceLoader base = test::profiles_loader();
  return ResourceCatalog([base, keep](const std::string& path) -> std::optional<std::string> {
    if (path != "index.json") return base(path);
    auto j = nlohmann::json::parse(*base(path));
    auto kept = nlohmann::json::array();
    for (const auto& t : j["tables"])
      if (keep(t.get<std::string>())) kept.push_back(t);
    j["tables"] = kept;
    return j.dump();
  });
}

}  // namespace

TEST_CASE("GPUs with tables are ordered same architecture first, then by datasheet distance", "[fidelity][transfer]") {
  const auto vllm = test::catalog().gpus_with_table("vllm/gemm");
  const auto l40s = table_gpus_by_distance(test::catalog(), test::bundled_gpu("L40S"), vllm);
  REQUIRE(l40s.size() == 3);
  CHECK(l40s.front() == "A100-80G");  // nearest_table_gpu's choice comes first
  const auto h800 = table_gpus_by_distance(test::catalog(), test::bundled_gpu("H800"), vllm);
  CHECK(h800 == std::vector<std::string>{"H100-SXM", "H200-SXM", "A100-80G"});  // Hopper before Ampere
  CHECK(table_gpus_by_distance(test::catalog(), test::bundled_gpu("H800"), {"no-such-gpu"}).empty());
  // No order over a partly read set: in the browser a datasheet not fetched yet reads as missing, and the nearest
  // of the others would fetch a GPU's tables the repeated call does not use (H200's for L40S, H100's not read).
  CHECK(table_gpus_by_distance(test::catalog(), test::bundled_gpu("L40S"), {"A100-80G", "no-such-gpu"}).empty());
  CHECK(nearest_table_gpu(test::catalog(), test::bundled_gpu("L40S"), {"H200-SXM", "no-such-gpu"}).empty());
}

TEST_CASE("grids the nearest GPU lacks come from the next GPU with tables, not from the curves",
          "[fidelity][transfer]") {
  const GpuSpec l40s = test::bundled_gpu("L40S");
  // A100 measured no FP8 GEMMs: an FP8 model on L40S takes H100's, moved by the other-architecture rule.
  const auto fp8 = cost_with_dtype("Llama-3.1-8B", l40s, 1, "fp8");
  const FidelityReport r = fp8->report();
  CHECK(r.profile == "A100-80G/vllm");
  CHECK(r.transferred_to == "L40S");
  REQUIRE(r.supplements.size() == 1);
  CHECK(r.supplements[0].from == "H100-SXM");
  CHECK(r.supplements[0].transfer == "other architecture");
  CHECK(r.supplements[0].tables == std::vector<std::string>{"gemm"});
  CHECK_THAT(fp8->describe(), Catch::Contains("gemm grids the A100-80G tables lack from H100-SXM"));
  CHECK_THAT(fp8->describe(), !Catch::Contains("not in the tables: gemm"));
  // A bf16 model finds everything on A100: nothing is added.
  const auto bf16 = cost_with_dtype("Llama-3.1-8B", l40s, 1, "bfloat16");
  CHECK(bf16->report().supplements.empty());
  // GPUs with their own tables, and GPUs whose source has every grid, take nothing from elsewhere.
  CHECK(cost_with_dtype("Llama-3.1-8B", test::bundled_gpu("H100-SXM"), 1, "fp8")->report().supplements.empty());
  CHECK(cost_with_dtype("Llama-3.1-8B", test::bundled_gpu("H800"), 1, "fp8")->report().supplements.empty());
}

TEST_CASE("an FP8 GEMM supplied from another GPU is that GPU's cell moved to the target datasheet",
          "[fidelity][transfer]") {
  // L40S priced from A100 with H100's fp8 grid against an L40S priced from H100 alone (tables_from): the FP8 GEMMs
  // are the same moved cells.
  const GpuSpec l40s = test::bundled_gpu("L40S");
  GpuSpec from_h100 = l40s;
  from_h100.name = "L40S from H100";
  from_h100.tables_from = "H100-SXM";
  const auto mixed = cost_with_dtype("Llama-3.1-8B", l40s, 1, "fp8");
  const auto direct = cost_with_dtype("Llama-3.1-8B", from_h100, 1, "fp8");
  REQUIRE(direct->report().supplements.empty());
  const int gemm = static_cast<int>(OpFamily::kGemm);
  for (int tokens : {16, 4096}) {
    const BatchShape s = prefill_batch(tokens);
    // The gemm family is the layer GEMMs, all FP8 here (the bf16 LM head is a family of its own).
    const double a = static_cast<double>(mixed->price(s).by_family[gemm]);
    const double b = static_cast<double>(direct->price(s).by_family[gemm]);
    CHECK(a == Approx(b).epsilon(1e-9));
  }
}

TEST_CASE("with no GPU holding the grid, the curves still price it and say so", "[fidelity][transfer]") {
  // Only A100's tables listed: nothing has FP8 GEMMs.
  const ResourceCatalog a100_only = catalog_listing([](const std::string& t) { return t.rfind("A100-80G/", 0) == 0; });
  const auto c = cost_with_dtype("Llama-3.1-8B", test::bundled_gpu("L40S"), 1, "fp8", a100_only);
  CHECK(c->report().profile == "A100-80G/vllm");
  CHECK(c->report().supplements.empty());
  CHECK_THAT(c->describe(), Catch::Contains("not in the tables: gemm"));
}

TEST_CASE("a table laid out otherwise on the source GPU is replaced by the next GPU's (MLA modules on L40S)",
          "[fidelity][transfer]") {
  // A100's MLA tables are per kernel and price no DeepSeek-V3 attention; H100's module tables do.
  Parallelism p = test::tp_dp(8);
  p.pp = 4;
  EngineOptions e;
  e.dtype = "fp8";
  std::string err;
  auto c =
      make_cost_model(test::bundled_model("DeepSeek-V3"), test::bundled_gpu("L40S"), p, e, &test::catalog(), 1, err);
  REQUIRE(c);
  const FidelityReport r = c->report();
  REQUIRE(r.supplements.size() == 1);
  CHECK(r.supplements[0].from == "H100-SXM");
  const auto& t = r.supplements[0].tables;
  CHECK(std::find(t.begin(), t.end(), "mla_context") != t.end());
  CHECK(std::find(t.begin(), t.end(), "mla_generation") != t.end());
  CHECK_THAT(c->describe(), Catch::Contains("MLA attention from module tables"));
  CHECK_THAT(c->describe(), !Catch::Contains("attention_prefill"));
}

TEST_CASE("a FlashAttention table moved to another architecture takes the kernel vLLM runs there",
          "[fidelity][transfer]") {
  GpuSpec hopper, ada, blackwell;
  hopper.compute_capability = "9.0";
  ada.compute_capability = "8.9";
  blackwell.compute_capability = "10.0";
  CHECK(flash_attention_kernel_on("vllm_flash_attn", hopper) == "vllm_flash_attn_fa3");
  CHECK(flash_attention_kernel_on("vllm_flash_attn_fa3", ada) == "vllm_flash_attn");
  CHECK(flash_attention_kernel_on("vllm_flash_attn_fa3", blackwell) == "vllm_flash_attn_fa3");  // unknown: kept
  CHECK(flash_attention_kernel_on("torch_flow", hopper) == "torch_flow");
}
