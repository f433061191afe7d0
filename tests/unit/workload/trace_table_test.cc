#include "core/workload/trace_table.h"

#include <catch2/catch.hpp>

#include "tests/test_support.h"

using namespace servesim;

TEST_CASE("a trace with arrivals parses into its columns", "[workload][trace_table]") {
  TraceTable t;
  REQUIRE(parse_trace_csv("arrival_ms,input_tokens,output_tokens\n0,10,20\n5.5,30,40\n5.5,7,8\n", t) == "");
  CHECK(t.arrival_ms == std::vector<double>{0.0, 5.5, 5.5});  // equal times are allowed
  CHECK(t.input_tokens == std::vector<std::int32_t>{10, 30, 7});
  CHECK(t.output_tokens == std::vector<std::int32_t>{20, 40, 8});
  CHECK(t.size() == 3);
  CHECK(t.clamped_rows == 0);
}

TEST_CASE("trace headers may reorder, add or omit columns", "[workload][trace_table]") {
  SECTION("no arrival column") {
    TraceTable t;
    REQUIRE(parse_trace_csv("input_tokens,output_tokens\n74,918\n290,905", t) == "");  // no final newline
    CHECK(t.arrival_ms.empty());
    CHECK(t.input_tokens == std::vector<std::int32_t>{74, 290});
    CHECK(t.output_tokens == std::vector<std::int32_t>{918, 905});
  }
  SECTION("reordered with extra columns, CRLF and blank lines") {
    TraceTable t;
    REQUIRE(parse_trace_csv("hash_ids,output_tokens,user,input_tokens,arrival_ms\r\n"
                            "0 1 2,5,alice,100,1.25\r\n"
                            "\r\n"
                            "3,6,bob,200,2.5\r\n",
                            t) == "");
    CHECK(t.arrival_ms == std::vector<double>{1.25, 2.5});
    CHECK(t.input_tokens == std::vector<std::int32_t>{100, 200});
    CHECK(t.output_tokens == std::vector<std::int32_t>{5, 6});
  }
  SECTION("a header without the length columns is refused") {
    TraceTable t;
    CHECK(parse_trace_csv("arrival_ms,prompt,completion\n0,1,2\n", t) ==
          "line 1: header must name input_tokens and output_tokens");
    TraceTable t2;
    CHECK(parse_trace_csv("arrival_ms,input_tokens\n0,1\n", t2) ==
          "line 1: header must name input_tokens and output_tokens");
  }
}

TEST_CASE("bad trace lines are refused with their line number", "[workload][trace_table]") {
  TraceTable t;
  CHECK(parse_trace_csv("arrival_ms,input_tokens,output_tokens\n0,1,2\nx,1,2\n", t) ==
        "line 3: expected numbers in the trace columns");
  TraceTable t2;  // the blank line still counts
  CHECK(parse_trace_csv("input_tokens,output_tokens\n1,2\n\n3\n", t2) ==
        "line 4: expected numbers in the trace columns");
  TraceTable t3;
  CHECK(parse_trace_csv("input_tokens,output_tokens\n1,2abc\n", t3) == "line 2: expected numbers in the trace columns");
  TraceTable t4;
  CHECK(parse_trace_csv("input_tokens,output_tokens\n1,\n", t4) == "line 2: expected numbers in the trace columns");
}

TEST_CASE("arrival times going backwards are refused", "[workload][trace_table]") {
  TraceTable t;
  CHECK(parse_trace_csv("arrival_ms,input_tokens,output_tokens\n0,1,1\n10,1,1\n9.99,1,1\n", t) ==
        "line 4: arrival_ms goes backwards");
}

TEST_CASE("zero lengths are raised to one token and counted", "[workload][trace_table]") {
  TraceTable t;
  REQUIRE(parse_trace_csv("input_tokens,output_tokens\n0,5\n7,0\n0,0\n3,4\n", t) == "");
  CHECK(t.input_tokens == std::vector<std::int32_t>{1, 7, 1, 3});
  CHECK(t.output_tokens == std::vector<std::int32_t>{5, 1, 1, 4});
  CHECK(t.clamped_rows == 3);
}

TEST_CASE("an empty trace is refused", "[workload][trace_table]") {
  TraceTable t;
  CHECK(parse_trace_csv("", t) == "the trace has no rows");
  TraceTable t2;
  CHECK(parse_trace_csv("input_tokens,output_tokens\n", t2) == "the trace has no rows");
}

TEST_CASE("every bundled trace parses", "[workload][trace_table]") {
  for (const auto& name : servesim::test::catalog().list("traces")) {
    INFO(name);
    const auto text = servesim::test::catalog().load_text("traces", name + ".csv");
    REQUIRE(text.has_value());
    TraceTable t;
    CHECK(parse_trace_csv(*text, t) == "");
    CHECK(t.size() > 100);
    if (!t.arrival_ms.empty()) CHECK(t.arrival_ms.size() == t.size());
  }
  TraceTable conv;
  REQUIRE(parse_trace_csv(*servesim::test::catalog().load_text("traces", "azure_conv_2023.csv"), conv) == "");
  REQUIRE(conv.size() >= 2);
  CHECK(conv.arrival_ms[1] == 4314.579);
  CHECK(conv.input_tokens[0] == 374);
  CHECK(conv.output_tokens[1] == 109);
}
