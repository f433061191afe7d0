#include "core/fidelity/collective_model.h"

#include <catch2/catch.hpp>

#include "tests/test_support.h"

using namespace servesim;

namespace {

struct Tables {
  OpTable nccl, custom;
  Tables() {
    auto a = test::catalog().load_text("H100-SXM", "nccl.json");
    auto b = test::catalog().load_text("H100-SXM/vllm", "custom_allreduce.json");
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(parse_op_table(*a, nccl).empty());
    REQUIRE(parse_op_table(*b, custom).empty());
  }
};

}  // namespace

TEST_CASE("small all-reduces use vLLM's custom all-reduce, graph replays cheaper than eager",
          "[fidelity][collective]") {
  Tables t;
  CollectiveModel c;
  c.set_tables(&t.nccl, &t.custom, 8.0 * (1 << 20));
  const CollectiveTime graph = c.all_reduce(4096 * 64, 4, true);
  const CollectiveTime eager = c.all_reduce(4096 * 64, 4, false);
  CHECK(graph.ok);
  CHECK(graph.custom);
  CHECK(eager.custom);
  CHECK(graph.us < eager.us);
  // Exact at a measured size: the graph table's value.
  const OpGrid* g = t.custom.find({"graph", "4"});
  REQUIRE(g != nullptr);
  CHECK(c.all_reduce(g->axes[0][5], 4, true).us == g->values[5]);
}

TEST_CASE("messages above the custom all-reduce limit go to NCCL; sizes beyond the table scale linearly",
          "[fidelity][collective]") {
  Tables t;
  CollectiveModel c;
  c.set_tables(&t.nccl, &t.custom, 8.0 * (1 << 20));
  const CollectiveTime big = c.all_reduce(8192.0 * 8192, 8, true);  // 128 MiB
  CHECK(big.ok);
  CHECK_FALSE(big.custom);
  CHECK(big.us == Approx(c.nccl("all_reduce", 8192.0 * 8192, 8).us));
  const OpGrid* g = t.nccl.find({"all_reduce", "half", "8"});
  REQUIRE(g != nullptr);
  const double hi = g->axes[0].back();
  const CollectiveTime beyond = c.nccl("all_reduce", 4 * hi, 8);
  CHECK(beyond.extrapolated);
  CHECK(beyond.us == Approx(4 * g->values.back()));
  // Monotone in size over the measured range.
  double prev = 0;
  for (double e = 1024; e <= hi; e *= 2) {
    const double us = c.nccl("all_reduce", e, 8).us;
    CHECK(us >= prev * 0.9);  // measurements are noisy at the latency floor
    prev = us;
  }
  // No table for 16 GPUs (inter-node): not ok, the cost model falls back to the datasheet.
  CHECK_FALSE(c.all_reduce(1e6, 16, true).ok);
  CHECK(c.all_reduce(1e6, 1, true).us == 0);
}
