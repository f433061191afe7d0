#include "core/spec/engine_options.h"

#include <catch2/catch.hpp>

using namespace servesim;

TEST_CASE("engine defaults follow vLLM", "[spec][engine_options]") {
  const EngineOptions o;
  CHECK(o.max_num_seqs == 256);
  CHECK(o.max_num_batched_tokens == 8192);
  CHECK(o.block_size == 16);
  CHECK_FALSE(o.gpu_memory_utilization);  // unset: 0.9 under vllm and trtllm, SGLang's formula (memory_fraction)
  CHECK(o.enable_chunked_prefill);
}

TEST_CASE("engine fields present override the given options and the rest are kept", "[spec][engine_options]") {
  EngineOptions o;
  Errors e;
  read_engine_options({{"max_num_seqs", 128}}, "/engine", o, e);
  read_engine_options({{"block_size", 32}, {"kv_cache_dtype", "fp8"}, {"cuda_graph_sizes", {1, 2, 4}}},
                      "/deployment/roles/0/engine", o, e);
  INFO(e.joined());
  REQUIRE(e.ok());
  CHECK(o.max_num_seqs == 128);
  CHECK(o.block_size == 32);
  CHECK(o.kv_cache_dtype == "fp8");
  CHECK(o.cuda_graph_sizes == std::vector<std::int64_t>{1, 2, 4});
  CHECK(o.max_num_batched_tokens == 8192);
}

TEST_CASE("block_size accepts exactly the powers of two from 1 to 256", "[spec][engine_options]") {
  int accepted = 0;
  for (int bs = 0; bs <= 600; ++bs) {
    EngineOptions o;
    Errors e;
    read_engine_options({{"block_size", bs}}, "/engine", o, e);
    const bool pow2 = bs >= 1 && bs <= 256 && (bs & (bs - 1)) == 0;
    INFO("block_size " << bs);
    CHECK(e.ok() == pow2);
    CHECK(o.block_size == (pow2 ? bs : 16));
    accepted += e.ok();
  }
  CHECK(accepted == 9);  // 1, 2, 4, ..., 256
  for (const Json& v : {Json(-16), Json("16"), Json(true)}) {
    EngineOptions o;
    Errors e;
    read_engine_options({{"block_size", v}}, "/e", o, e);
    REQUIRE(e.list().size() == 1);
    CHECK(e.list()[0].to_string() == "/e/block_size: must be a power of two between 1 and 256, got " + describe(v));
  }
}

TEST_CASE("a token budget below the sequence cap is refused", "[spec][engine_options]") {
  EngineOptions o;
  Errors e;
  read_engine_options({{"max_num_seqs", 512}, {"max_num_batched_tokens", 256}}, "/engine", o, e);
  REQUIRE(e.list().size() == 1);
  CHECK(e.list()[0].to_string() == "/engine/max_num_batched_tokens: must be at least max_num_seqs (512), got 256");
}

TEST_CASE("enum engine fields list what is allowed", "[spec][engine_options]") {
  EngineOptions o;
  Errors e;
  read_engine_options({{"dtype", "int4"}, {"backend", "tgi"}}, "/engine", o, e);
  REQUIRE(e.list().size() == 2);
  CHECK(e.list()[0].to_string() == "/engine/backend: must be one of: vllm, sglang, trtllm; got \"tgi\"");
  CHECK(e.list()[1].to_string() == "/engine/dtype: must be one of: bfloat16, float16, fp8; got \"int4\"");
  CHECK(o.dtype == "bfloat16");
}

TEST_CASE("dtype sizes in bytes", "[spec][engine_options]") {
  CHECK(dtype_bytes("fp8") == 1.0);
  CHECK(dtype_bytes("fp8_e5m2") == 1.0);
  CHECK(dtype_bytes("bfloat16") == 2.0);
  CHECK(dtype_bytes("float16") == 2.0);
  CHECK(dtype_bytes("float32") == 4.0);
}

TEST_CASE("host.overlaps_pipeline is read as a boolean and a wrong type names its path", "[spec][engine_options]") {
  EngineOptions o;
  Errors e;
  read_engine_options({{"host", {{"overlaps_pipeline", true}}}}, "/engine", o, e);
  REQUIRE(e.ok());
  CHECK(o.host.overlaps_pipeline);
  EngineOptions bad;
  Errors e2;
  read_engine_options({{"host", {{"overlaps_pipeline", "yes"}}}}, "/engine", bad, e2);
  CHECK_FALSE(e2.ok());
  CHECK_THAT(e2.joined(), Catch::Contains("/engine/host/overlaps_pipeline"));
  CHECK_FALSE(bad.host.overlaps_pipeline);
}

TEST_CASE("moe_a2a_backend follows SGLang: none by default, deepep only for the sglang backend",
          "[spec][engine_options]") {
  CHECK(EngineOptions{}.moe_a2a_backend == "none");
  EngineOptions o;
  Errors e;
  read_engine_options({{"backend", "sglang"}, {"moe_a2a_backend", "deepep"}}, "/engine", o, e);
  INFO(e.joined());
  CHECK(e.ok());
  CHECK(o.moe_a2a_backend == "deepep");
  for (const char* backend : {"vllm", "trtllm"}) {
    EngineOptions v;
    Errors ve;
    read_engine_options({{"backend", backend}, {"moe_a2a_backend", "deepep"}}, "/engine", v, ve);
    CHECK_FALSE(ve.ok());
    CHECK(ve.joined().find("/engine/moe_a2a_backend") != std::string::npos);
  }
  Errors be;
  EngineOptions b;
  read_engine_options({{"backend", "sglang"}, {"moe_a2a_backend", "pplx"}}, "/engine", b, be);
  CHECK_FALSE(be.ok());
  CHECK(be.joined().find("moe_a2a_backend") != std::string::npos);
}

TEST_CASE("async_scheduling is a tri-state option of every backend - only vLLM's hides host time",
          "[spec][engine_options]") {
  CHECK_FALSE(EngineOptions{}.async_scheduling.has_value());
  for (const char* backend : {"vllm", "sglang", "trtllm"}) {
    INFO(backend);
    EngineOptions d;
    Errors de;
    read_engine_options({{"backend", backend}}, "/engine", d, de);
    CHECK(async_scheduling_on(d, 1));        // vLLM's async scheduling, TRT-LLM's and SGLang's overlap: on by default
    CHECK_FALSE(async_scheduling_on(d, 2));  // ... but not with pipeline parallelism
    // vLLM's host constants were fitted synchronous, the others' on overlapped runs (engine_options.h).
    CHECK(async_hides_host_time(d, 1) == (std::string(backend) == "vllm"));
    for (bool on : {true, false}) {
      EngineOptions o;
      Errors e;
      read_engine_options({{"backend", backend}, {"async_scheduling", on}}, "/engine", o, e);
      INFO(e.joined());
      CHECK(e.ok());
      REQUIRE(o.async_scheduling.has_value());
      CHECK(*o.async_scheduling == on);
      CHECK(async_scheduling_on(o, 1) == on);
      CHECK(async_scheduling_on(o, 2) == on);
    }
  }
  EngineOptions n;
  Errors ne;
  read_engine_options({{"async_scheduling", "yes"}}, "/engine", n, ne);
  CHECK_FALSE(ne.ok());
  CHECK(ne.joined().find("/engine/async_scheduling") != std::string::npos);
  CHECK_FALSE(n.async_scheduling.has_value());
}
