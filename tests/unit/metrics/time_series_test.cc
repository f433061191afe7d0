#include "core/metrics/time_series.h"

#include <catch2/catch.hpp>

using namespace servesim;

TEST_CASE("samples in one bucket give its mean and max per series", "[metrics][time_series]") {
  TimeSeries ts({"a", "b"}, 4, kNsPerMs);
  const double v1[] = {1, 10}, v2[] = {3, 30}, v3[] = {8, -5};
  ts.add(200 * kNsPerUs, v1);
  ts.add(700 * kNsPerUs, v2);
  ts.add(2500 * kNsPerUs, v3);  // bucket 2; bucket 1 stays empty
  const auto j = ts.to_json();
  CHECK(j["bucket_s"].get<double>() == 0.001);
  CHECK(j["t_s"] == nlohmann::ordered_json::array({0.0005, 0.0025}));  // bucket centres; the empty one skipped
  CHECK(j["a"]["mean"] == nlohmann::ordered_json::array({2.0, 8.0}));
  CHECK(j["a"]["max"] == nlohmann::ordered_json::array({3.0, 8.0}));
  CHECK(j["b"]["mean"] == nlohmann::ordered_json::array({20.0, -5.0}));
  CHECK(j["b"]["max"] == nlohmann::ordered_json::array({30.0, -5.0}));
  CHECK(ts.bucket_width() == kNsPerMs);
}

TEST_CASE("a long series keeps at most twice the requested points and merges exactly", "[metrics][time_series]") {
  TimeSeries ts({"v"}, 4, kNsPerMs);
  for (int ms = 0; ms < 100; ++ms) {
    const double v = ms;
    ts.add(ms * kNsPerMs, &v);
  }
  // 100 ms in at most 8 buckets: the width doubles 1 -> 2 -> 4 -> 8 -> 16 ms, giving 7 buckets.
  CHECK(ts.bucket_width() == 16 * kNsPerMs);
  const auto j = ts.to_json();
  REQUIRE(j["t_s"].size() == 7);
  for (std::size_t k = 0; k < 6; ++k) {
    INFO("bucket " << k);
    CHECK(j["v"]["mean"][k].get<double>() == 16.0 * k + 7.5);  // mean of 16k .. 16k+15
    CHECK(j["v"]["max"][k].get<double>() == 16.0 * k + 15);
    CHECK(j["t_s"][k].get<double>() == Approx(0.016 * k + 0.008));
  }
  CHECK(j["v"]["mean"][6].get<double>() == 97.5);  // 96 .. 99
  CHECK(j["v"]["max"][6].get<double>() == 99.0);
}

TEST_CASE("merging weights bucket means by their sample counts", "[metrics][time_series]") {
  TimeSeries ts({"v"}, 1, kNsPerMs);  // at most 2 buckets
  const double one = 1, five = 5, nine = 9;
  ts.add(0, &one);
  ts.add(100, &one);
  ts.add(200, &one);
  ts.add(kNsPerMs, &five);
  ts.add(2 * kNsPerMs, &nine);  // bucket 2 does not fit: merge to 2 ms buckets
  CHECK(ts.bucket_width() == 2 * kNsPerMs);
  const auto j = ts.to_json();
  CHECK(j["t_s"] == nlohmann::ordered_json::array({0.001, 0.003}));
  CHECK(j["v"]["mean"] == nlohmann::ordered_json::array({2.0, 9.0}));  // (1+1+1+5)/4, not (1+5)/2
  CHECK(j["v"]["max"] == nlohmann::ordered_json::array({5.0, 9.0}));

  // A sample far in the future merges repeatedly in one add.
  const double x = 3;
  ts.add(100 * kNsPerMs, &x);
  CHECK(ts.bucket_width() == 64 * kNsPerMs);
  const auto k = ts.to_json();
  CHECK(k["t_s"] == nlohmann::ordered_json::array({0.032, 0.096}));
  CHECK(k["v"]["mean"] == nlohmann::ordered_json::array({17.0 / 5, 3.0}));  // (1+1+1+5+9)/5 and the new sample
  CHECK(k["v"]["max"] == nlohmann::ordered_json::array({9.0, 3.0}));
}
