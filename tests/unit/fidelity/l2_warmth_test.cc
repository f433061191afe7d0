// Decode attention read cold: the measured L2-warmth fit (profiles/<gpu>/l2_warmth.json) and where the table cost
// model adds it.
#include "core/fidelity/l2_warmth.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/fidelity/profile_tables.h"
#include "core/fidelity/table_cost_model.h"
#include "tests/test_support.h"

using namespace servesim;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

L2Warmth fit(double per_mib, double full, double zero) {
  L2Warmth w;
  w.us_per_mib = per_mib;
  w.full_mib = full;
  w.zero_mib = zero;
  w.l2_bytes = 50 * kMiB;
  return w;
}

}  // namespace

TEST_CASE("the cold-read extra grows with the bytes while they fit and tapers to nothing", "[fidelity][l2]") {
  const L2Warmth w = fit(0.2, 32, 44);
  CHECK(L2Warmth().extra_us(16 * kMiB) == 0);  // no fit: nothing added
  CHECK(w.extra_us(0) == 0);
  CHECK(w.extra_us(8 * kMiB) == Approx(1.6));
  CHECK(w.extra_us(32 * kMiB) == Approx(6.4));
  CHECK(w.extra_us(38 * kMiB) == Approx(0.2 * 38 * 0.5));                  // halfway down the taper
  CHECK(w.extra_us(32 * kMiB * (1 + 1e-9)) == Approx(6.4).epsilon(1e-6));  // continuous at full_mib
  CHECK(w.extra_us(44 * kMiB) == 0);
  CHECK(w.extra_us(1024 * kMiB) == 0);
}

TEST_CASE("a malformed l2_warmth.json is refused with the field named", "[fidelity][l2]") {
  L2Warmth w;
  CHECK(parse_l2_warmth(R"({"us_per_mib": 0.18, "full_mib": 32, "zero_mib": 44, "l2_bytes": 52428800})", w).empty());
  CHECK(w.ok());
  CHECK(w.full_mib == 32);
  CHECK(parse_l2_warmth("[1]", w) == "not a JSON object");
  CHECK(!w.ok());  // a refused file leaves no fit behind
  CHECK(parse_l2_warmth(R"({"full_mib": 32, "zero_mib": 44, "l2_bytes": 52428800})", w) ==
        "us_per_mib: missing or not a number");
  CHECK(parse_l2_warmth(R"({"us_per_mib": -1, "full_mib": 32, "zero_mib": 44, "l2_bytes": 52428800})", w) ==
        "us_per_mib: must be a positive number below 1e12");
  CHECK(parse_l2_warmth(R"({"us_per_mib": 0.1, "full_mib": 44, "zero_mib": 32, "l2_bytes": 52428800})", w) ==
        "zero_mib: must exceed full_mib");
  CHECK(parse_l2_warmth(R"({"us_per_mib": 0.1, "full_mib": 32, "zero_mib": 64, "l2_bytes": 52428800})", w)
            .rfind("zero_mib: beyond l2_bytes", 0) == 0);
}

TEST_CASE("the bundled H100 and H200 fits load and stay within their L2", "[fidelity][l2]") {
  for (const char* gpu : {"H100-SXM", "H200-SXM"}) {
    ProfileTables t;
    std::string err;
    REQUIRE(load_profile_tables(test::catalog(), gpu, "vllm", test::bundled_model("Llama-3.1-70B"), t, err));
    CHECK(err.empty());
    CHECK(t.l2.ok());
    CHECK(t.l2.zero_mib * kMiB <= t.l2.l2_bytes);
  }
  // The H200's faster HBM loses less per MiB read cold (measured: 0.100 against the H100's 0.178 us).
  ProfileTables h100, h200;
  std::string err;
  REQUIRE(load_profile_tables(test::catalog(), "H100-SXM", "vllm", test::bundled_model("Llama-3.1-70B"), h100, err));
  REQUIRE(load_profile_tables(test::catalog(), "H200-SXM", "vllm", test::bundled_model("Llama-3.1-70B"), h200, err));
  CHECK(h200.l2.us_per_mib < h100.l2.us_per_mib);
}

TEST_CASE("decode attention priced from the tables adds the cold reads of its K and V", "[fidelity][l2]") {
  // Llama-3.1-70B at TP8: one KV head of 128 per GPU, 512 bytes of K and V per key and layer in bf16.
  Parallelism p;
  p.tp_attn = p.tp_ffn = 8;
  const ModelSpec m = test::bundled_model("Llama-3.1-70B");
  ProfileTables tables;
  std::string err;
  REQUIRE(load_profile_tables(test::catalog(), "H100-SXM", "vllm", m, tables, err));
  REQUIRE(tables.l2.ok());
  const L2Warmth l2 = tables.l2;
  ProfileTables warm = tables;
  warm.l2 = L2Warmth();
  TableCostModel cold_model(m, test::bundled_gpu("H100-SXM"), p, EngineOptions{}, tables, EfficiencyCurves(), 1);
  TableCostModel warm_model(m, test::bundled_gpu("H100-SXM"), p, EngineOptions{}, warm, EfficiencyCurves(), 1);
  for (int keys_per_request : {1024, 4096, 16384, 65536}) {
    const std::vector<std::int32_t> ctx(16, keys_per_request);
    const double bytes = 16.0 * keys_per_request * 512;
    const double added = cold_model.decode_attention_us(ctx) - warm_model.decode_attention_us(ctx);
    CHECK(added == Approx(l2.extra_us(bytes)).margin(1e-9));
    if (bytes >= l2.zero_mib * kMiB) CHECK(added == 0);
    if (bytes <= l2.full_mib * kMiB) CHECK(added == Approx(l2.us_per_mib * bytes / kMiB));
  }
  CHECK(cold_model.describe().find("l2_warmth.json") != std::string::npos);
  CHECK(warm_model.describe().find("l2_warmth.json") == std::string::npos);
}

TEST_CASE("tables moved to another GPU's datasheet add no cold reads", "[fidelity][l2]") {
  Parallelism p;
  p.tp_attn = p.tp_ffn = 8;
  std::unique_ptr<CostModel> holder;
  std::string err;
  holder = make_cost_model(test::bundled_model("Llama-3.1-70B"), test::bundled_gpu("H20"), p, EngineOptions{},
                           &test::catalog(), 1, err);
  REQUIRE(err.empty());
  auto* tm = dynamic_cast<TableCostModel*>(holder.get());
  REQUIRE(tm != nullptr);
  CHECK(tm->describe().find("moved to the H20") != std::string::npos);
  CHECK(tm->describe().find("l2_warmth.json") == std::string::npos);
}

TEST_CASE("a sliding-window layer adds the cold reads of the keys inside its window only", "[fidelity][l2]") {
  // gpt-oss-120b at TP1: 8 KV heads of 64, 2 KiB of K and V per key and layer; window 128.
  const ModelSpec m = test::bundled_model("gpt-oss-120b");
  REQUIRE(m.sliding_window == 128);
  Parallelism p;
  ProfileTables tables;
  std::string err;
  REQUIRE(load_profile_tables(test::catalog(), "H100-SXM", "vllm", m, tables, err));
  REQUIRE(tables.l2.ok());
  ProfileTables warm = tables;
  warm.l2 = L2Warmth();
  TableCostModel cold_model(m, test::bundled_gpu("H100-SXM"), p, EngineOptions{}, tables, EfficiencyCurves(), 1);
  TableCostModel warm_model(m, test::bundled_gpu("H100-SXM"), p, EngineOptions{}, warm, EfficiencyCurves(), 1);
  const std::vector<std::int32_t> ctx(16, 4096);  // 128 MiB of keys in full, 4 MiB inside the windows
  const double window_added = cold_model.decode_window_attention_us(ctx) - warm_model.decode_window_attention_us(ctx);
  CHECK(window_added == Approx(tables.l2.extra_us(16.0 * 128 * 2048)));
  CHECK(window_added > 0);
  // 128 MiB: none (the same cell; the cold grid's work model differs, so only to rounding).
  CHECK(cold_model.decode_attention_us(ctx) == Approx(warm_model.decode_attention_us(ctx)).epsilon(1e-9));
}

TEST_CASE("a decode grid read cold adds each cell's cold reads, within its window", "[fidelity][l2]") {
  L2Warmth w;
  w.us_per_mib = 0.2;
  w.full_mib = 32;
  w.zero_mib = 44;
  w.l2_bytes = 50 * kMiB;
  OpGrid g;
  g.key = {"bfloat16", "128", "8", "1"};
  g.axes = {{1, 64}, {1024, 4096}};
  g.log_axes = {{0, std::log(64.0)}, {std::log(1024.0), std::log(4096.0)}};
  g.strides = {2, 1};
  g.values = {10, 12, 20, std::nan("")};
  for (double v : g.values) g.log_values.push_back(std::isnan(v) ? v : std::log(v));
  const double per_key = 512;  // one KV head of 128, bf16, K and V
  const OpGrid c = read_cold(g, w, per_key);
  CHECK(c.values[0] == Approx(10 + w.extra_us(1024 * per_key)));
  CHECK(c.values[1] == Approx(12 + w.extra_us(4096 * per_key)));
  CHECK(c.values[2] == Approx(20 + w.extra_us(64.0 * 1024 * per_key)));  // 32 MiB: the whole of it
  CHECK(c.values[2] == Approx(20 + 0.2 * 32));
  CHECK(std::isnan(c.values[3]));
  CHECK(c.log_values[2] == Approx(std::log(c.values[2])));
  // A 256-key window: a cell reads at most 256 keys per request.
  const OpGrid win = read_cold(g, w, per_key, 256);
  CHECK(win.values[2] == Approx(20 + w.extra_us(64.0 * 256 * per_key)));
  // No fit (another GPU's tables): the grid as it is.
  const OpGrid same = read_cold(g, L2Warmth(), per_key);
  CHECK(same.values[2] == 20);
}
