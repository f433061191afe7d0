// SGLang's DeepEP all-to-all: the measured tables' predictor and the sglang backend's use of it.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "core/fidelity/deepep_table.h"
#include "core/fidelity/table_cost_model.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

ProfileTables sglang_tables(const std::string& gpu, const ModelSpec& m) {
  ProfileTables t;
  std::string err;
  REQUIRE(load_profile_tables(test::catalog(), gpu, "sglang", m, t, err));
  return t;
}

const OpGrid* grid(const OpTable& t, const std::string& phase, std::int64_t hidden, std::int64_t topk,
                   std::int64_t experts) {
  std::vector<std::string> key = {phase, key_int(hidden), key_int(topk), key_int(experts)};
  if (t.key_fields.size() == 5) key.push_back(key_int(kDeepEpNormalSms));
  return t.find(key);
}

std::unique_ptr<TableCostModel> role(const std::string& backend, const std::string& gpu, int ep, int dp_attn,
                                     const std::string& a2a = "deepep") {
  const ModelSpec m = test::bundled_model("Qwen3-30B-A3B");
  ProfileTables t;
  std::string err;
  REQUIRE(load_role_tables(test::catalog(), test::bundled_gpu(gpu), backend, m, a2a == "deepep", t, err));
  EfficiencyCurves c;
  load_efficiency_curves(test::catalog(), c);
  Parallelism p;
  p.tp_attn = ep / dp_attn;
  p.dp_attn = dp_attn;
  p.tp_ffn = 1;
  p.ep_ffn = ep;
  EngineOptions e;
  e.backend = backend;
  e.moe_a2a_backend = a2a;
  return std::make_unique<TableCostModel>(m, test::bundled_gpu(gpu), p, e, std::move(t), std::move(c), 7);
}

/// One prefill chunk of `q` tokens per request, `n` requests (no decodes).
BatchShape prefill_batch(int n, int q) {
  BatchShape s;
  for (int i = 0; i < n; ++i) s.prefills.push_back({q, q});
  s.num_tokens = static_cast<std::int64_t>(n) * q;
  s.num_sampled = n;
  return s;
}

double all_to_all_us(const BatchCost& c) {
  return static_cast<double>(c.by_family[static_cast<int>(OpFamily::kAllToAll)]) / 1e3;
}

std::int64_t report_count(const FidelityReport& r, const std::string& family, bool extrapolated) {
  for (std::size_t i = 0; i < r.families.size(); ++i)
    if (r.families[i] == family) return extrapolated ? r.extrapolated[i] : r.lookups[i];
  return 0;
}

}  // namespace

TEST_CASE("the DeepEP predictor reproduces every measured point of each bundled MoE model's shape",
          "[fidelity][deepep]") {
  for (const char* name : {"Qwen3-30B-A3B", "Qwen3-235B-A22B", "Mixtral-8x7B", "DeepSeek-V3"}) {
    INFO(name);
    const ModelSpec m = test::bundled_model(name);
    const ProfileTables t = sglang_tables("H100-SXM", m);
    const auto H = static_cast<std::int64_t>(m.hidden_size), K = static_cast<std::int64_t>(m.num_experts_per_tok),
               E = static_cast<std::int64_t>(m.num_experts);
    for (const OpTable* table : {&t.deepep_ll, &t.deepep_normal}) {
      INFO(table->op);
      const DeepEpTable p(*table, H, K, E);
      REQUIRE(p.ok());
      CHECK(p.exact_shape());
      for (DeepEpPhase ph : {DeepEpPhase::kDispatch, DeepEpPhase::kCombine}) {
        const OpGrid* g = grid(*table, ph == DeepEpPhase::kDispatch ? "dispatch" : "combine", H, K, E);
        REQUIRE(g != nullptr);
        for (std::size_t i = 0; i < g->axes[0].size(); ++i) {
          bool ex = false;
          CHECK(p.us(ph, g->axes[0][i], &ex) == Approx(g->values[i]).epsilon(1e-12));
          CHECK_FALSE(ex);
        }
      }
    }
  }
}

TEST_CASE("the DeepEP predictor is monotone in tokens wherever the measurements are", "[fidelity][deepep]") {
  const ModelSpec m = test::bundled_model("DeepSeek-V3");
  const ProfileTables t = sglang_tables("H100-SXM", m);
  int rising = 0;
  for (const OpTable* table : {&t.deepep_ll, &t.deepep_normal}) {
    const DeepEpTable p(*table, 7168, 8, 256);
    for (DeepEpPhase ph : {DeepEpPhase::kDispatch, DeepEpPhase::kCombine}) {
      const OpGrid* g = grid(*table, ph == DeepEpPhase::kDispatch ? "dispatch" : "combine", 7168, 8, 256);
      REQUIRE(g != nullptr);
      const auto& x = g->axes[0];
      for (std::size_t i = 0; i + 1 < x.size(); ++i) {
        if (!(g->values[i + 1] >= g->values[i])) continue;  // measured dips (noise at a few tokens) are kept
        ++rising;
        double prev = g->values[i];
        for (int k = 1; k <= 8; ++k) {
          const double tok = x[i] + (x[i + 1] - x[i]) * k / 8.0;
          const double v = p.us(ph, tok);
          CHECK(v >= prev - 1e-9);
          CHECK(v <= g->values[i + 1] + 1e-9);
          prev = v;
        }
      }
    }
  }
  CHECK(rising > 50);
}

TEST_CASE("DeepEP lookups outside the measured shapes are flagged", "[fidelity][deepep]") {
  const ProfileTables t = sglang_tables("H100-SXM", test::bundled_model("DeepSeek-V3"));
  const OpTable& n = t.deepep_normal;
  const OpGrid* d4096 = grid(n, "dispatch", 4096, 8, 256);
  const OpGrid* d6144 = grid(n, "dispatch", 6144, 8, 256);
  const OpGrid* d7168 = grid(n, "dispatch", 7168, 8, 256);
  const OpGrid* d2048 = grid(n, "dispatch", 2048, 8, 256);
  REQUIRE((d4096 && d6144 && d7168 && d2048));
  const std::size_t i = 15;  // 1024 tokens per rank
  REQUIRE(d4096->axes[0][i] == 1024);

  SECTION("hidden between two measured sizes: linear in hidden, not flagged") {
    const DeepEpTable p(n, 5120, 8, 256);
    bool ex = false;
    CHECK(p.us(DeepEpPhase::kDispatch, 1024, &ex) ==
          Approx(0.5 * d4096->values[i] + 0.5 * d6144->values[i]).epsilon(1e-12));
    CHECK_FALSE(ex);
    CHECK(p.exact_shape());
  }
  SECTION("hidden above the largest measured: scaled from it, flagged") {
    const DeepEpTable p(n, 8192, 8, 256);
    bool ex = false;
    CHECK(p.us(DeepEpPhase::kDispatch, 1024, &ex) == Approx(d7168->values[i] * 8192.0 / 7168.0).epsilon(1e-12));
    CHECK(ex);
    CHECK_FALSE(p.exact_shape());
  }
  SECTION("hidden below the smallest measured: held at it, flagged") {
    const DeepEpTable p(n, 1024, 8, 256);
    bool ex = false;
    CHECK(p.us(DeepEpPhase::kDispatch, 1024, &ex) == Approx(d2048->values[i]).epsilon(1e-12));
    CHECK(ex);
  }
  SECTION("more tokens than measured: linear in tokens from the last point, flagged") {
    const DeepEpTable p(n, 7168, 8, 256);
    const double top = d7168->axes[0].back();
    bool ex = false;
    CHECK(p.us(DeepEpPhase::kDispatch, 2 * top, &ex) == Approx(2 * d7168->values.back()).epsilon(1e-12));
    CHECK(ex);
    const DeepEpTable ll(t.deepep_ll, 7168, 8, 256);
    bool ex_ll = false;
    ll.us(DeepEpPhase::kCombine, 1024, &ex_ll);
    CHECK_FALSE(ex_ll);
    ll.us(DeepEpPhase::kCombine, 4096, &ex_ll);  // low-latency mode was measured up to 1024 tokens per rank
    CHECK(ex_ll);
  }
  SECTION("an unmeasured (topk, experts): the nearest measured configuration, flagged") {
    const DeepEpTable p(n, 7168, 8, 300);  // top-8 of 300: the top-8 configurations have 128, 160, 256, 384
    bool ex = false;
    CHECK(p.us(DeepEpPhase::kDispatch, 1024, &ex) == Approx(d7168->values[i]).epsilon(1e-12));
    CHECK(ex);
    CHECK_FALSE(p.exact_shape());
    CHECK(p.describe().find("experts 256") != std::string::npos);
  }
  SECTION("zero tokens cost nothing") {
    const DeepEpTable p(n, 7168, 8, 256);
    CHECK(p.us(DeepEpPhase::kCombine, 0) == 0);
  }
}

TEST_CASE("sglang roles price the DP-attention EP exchange with DeepEP: normal mode with prefill tokens, "
          "low-latency mode for decode-only steps",
          "[fidelity][deepep][ep]") {
  auto m = role("sglang", "H100-SXM", 8, 8);
  REQUIRE(m->uses_deepep());
  CHECK(m->source(OpFamily::kAllToAll) == PriceSource::kTable);
  CHECK(m->describe().find("DeepEP") != std::string::npos);
  const double layers = static_cast<double>(test::bundled_model("Qwen3-30B-A3B").moe_layers());
  // 64 decodes over 8 DP ranks: 8 tokens per rank, low-latency kernels.
  const DeepEpTable& ll = m->deepep(false);
  const DeepEpTable& normal = m->deepep(true);
  const double ll8 = ll.us(DeepEpPhase::kDispatch, 8) + ll.us(DeepEpPhase::kCombine, 8);
  CHECK(all_to_all_us(m->price(test::decode_batch(64, 1000))) == Approx(layers * ll8).margin(1e-3 * layers));
  // 8 prompts of 512 tokens: one per DP rank, normal-mode kernels at 512 tokens per rank.
  const double n512 = normal.us(DeepEpPhase::kDispatch, 512) + normal.us(DeepEpPhase::kCombine, 512);
  CHECK(all_to_all_us(m->price(prefill_batch(8, 512))) == Approx(layers * n512).margin(1e-3 * layers));
  // A mixed step (one prefill chunk among decodes) runs normal mode on every rank: SGLang gathers
  // is_extend_in_batch over the DP ranks.
  BatchShape mixed = test::decode_batch(63, 1000);
  mixed.cuda_graph = false;
  mixed.prefills.push_back({1, 1});
  mixed.num_tokens += 1;
  mixed.num_sampled += 1;
  const double n8 = normal.us(DeepEpPhase::kDispatch, 8) + normal.us(DeepEpPhase::kCombine, 8);
  CHECK(n8 > ll8);  // normal mode's fixed cost is higher at a few tokens
  CHECK(all_to_all_us(m->price(mixed)) == Approx(layers * n8).margin(1e-3 * layers));
  const FidelityReport r = m->report();
  CHECK(report_count(r, "all_to_all", false) == 3);
  CHECK(report_count(r, "all_to_all", true) == 0);

  // 4 EP ranks: the 8-rank measurement as it is, every lookup flagged.
  auto ep4 = role("sglang", "H100-SXM", 4, 4);
  REQUIRE(ep4->uses_deepep());
  ep4->price(test::decode_batch(32, 1000));
  CHECK(report_count(ep4->report(), "all_to_all", true) == 1);
}

TEST_CASE("other backends and EP groups beyond a node keep the NCCL all-to-all - GPUs without DeepEP tables borrow "
          "the nearest measured GPU's",
          "[fidelity][deepep][ep]") {
  const double layers = static_cast<double>(test::bundled_model("Qwen3-30B-A3B").moe_layers());
  for (const char* backend : {"vllm", "trtllm", "sglang"}) {
    INFO(backend);
    // SGLang's default --moe-a2a-backend none keeps the standard path; the others have no DeepEP option.
    auto m = role(backend, "H100-SXM", 8, 8, "none");
    CHECK_FALSE(m->uses_deepep());
    CHECK(m->deepep_us(8, false) == 0);
    CHECK(all_to_all_us(m->price(test::decode_batch(64, 1000))) ==
          Approx(layers * 2 * m->all_to_all_us(64)).margin(1e-3 * layers));
    CHECK(all_to_all_us(m->price(prefill_batch(8, 512))) ==
          Approx(layers * 2 * m->all_to_all_us(4096)).margin(1e-3 * layers));
  }
  // H200 has no SGLang measurements: H100's DeepEP tables moved to its datasheet (the same NVLink: unchanged).
  auto h100 = role("sglang", "H100-SXM", 8, 8);
  auto h200 = role("sglang", "H200-SXM", 8, 8);
  CHECK(h200->uses_deepep());
  CHECK(h200->source(OpFamily::kAllToAll) == PriceSource::kDatasheet);
  CHECK_THAT(h200->describe(), Catch::Contains("DeepEP tables H100-SXM/sglang moved to the H200-SXM datasheet"));
  CHECK(h200->deepep_us(64, false) == Approx(h100->deepep_us(64, false)));
  // On an H800 (200 GB/s NVLink against 450) the dispatch and combine take 2.25 times as long.
  auto h800 = role("sglang", "H800", 8, 8);
  CHECK(h800->uses_deepep());
  CHECK(h800->deepep_us(64, false) == Approx(2.25 * h100->deepep_us(64, false)));
  auto ep16 = role("sglang", "H100-SXM", 16, 16);  // two nodes: DeepEP was measured inside one
  CHECK_FALSE(ep16->uses_deepep());
  CHECK(ep16->source(OpFamily::kAllToAll) == PriceSource::kRoofline);
}
