#include "cli/cell_log.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace servesim;

TEST_CASE("the held-out cell log writes one CSV line per comparison, a failed prediction as 100% off",
          "[cli][opcheck]") {
  const std::string path = (std::filesystem::temp_directory_path() / "servesim_cell_log_test.csv").string();
  {
    CellLog log;
    CHECK_FALSE(log.on());
    log.add("gemm", {"bfloat16"}, "n", {{"n", 1}}, 10, 11);  // closed: nothing written, no crash
    REQUIRE(log.open(path));
    CHECK(log.on());
    log.add("gemm", {"bfloat16"}, "n", {{"n", 64}, {"k", 4096}, {"m", 268435456}}, 10, 11);
    log.add("attention_decode", {"fp8", "128", "32", "4"}, "batch", {{"batch", 2}}, 8, -1);
    log.add("moe", {"x"}, "tokens", {{"tokens", 2}}, 0, 5);  // no measurement: not a comparison
    CHECK(log.close());
    CHECK_FALSE(log.on());
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  CHECK(text.str() ==
        "family,table,held_out,at,measured_us,predicted_us,ape_pct\n"
        "gemm,bfloat16,n,n=64;k=4096;m=268435456,10,11,10.0000\n"
        "attention_decode,fp8/128/32/4,batch,batch=2,8,nan,100.0000\n");
  CellLog bad;
  CHECK_FALSE(bad.open("/nonexistent-servesim-dir/cells.csv"));
  CHECK_FALSE(bad.on());
}
