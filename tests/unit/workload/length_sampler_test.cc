#include "core/workload/length_sampler.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/test_support.h"

using namespace servesim;

namespace {
LengthDist fixed(std::int64_t v) {
  LengthDist d;
  d.kind = LengthDist::Kind::kFixed;
  d.value = v;
  return d;
}
/// Fraction of `xs` at or below `x`.
double ecdf(const std::vector<std::int64_t>& sorted, double x) {
  return static_cast<double>(std::upper_bound(sorted.begin(), sorted.end(), static_cast<std::int64_t>(x)) -
                             sorted.begin()) /
         static_cast<double>(sorted.size());
}
}  // namespace

TEST_CASE("a fixed length is always its value and uses no randomness", "[workload][length_sampler]") {
  Rng r(1, 2), untouched(1, 2);
  for (int i = 0; i < 100; ++i) CHECK(sample_length(fixed(512), nullptr, r) == 512);
  CHECK(r.next_u64() == untouched.next_u64());
}

TEST_CASE("uniform lengths cover min and max inclusive with the midpoint mean", "[workload][length_sampler]") {
  LengthDist d;
  d.kind = LengthDist::Kind::kUniform;
  d.min = 10;
  d.max = 20;
  Rng r(3, 2);
  std::int64_t lo = 1000, hi = 0;
  double sum = 0;
  const int n = 100'000;
  for (int i = 0; i < n; ++i) {
    const auto v = sample_length(d, nullptr, r);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += static_cast<double>(v);
  }
  CHECK(lo == 10);
  CHECK(hi == 20);
  CHECK(sum / n == Approx(15.0).epsilon(0.005));
}

TEST_CASE("lognormal lengths have the requested median and respect the clamps", "[workload][length_sampler]") {
  LengthDist d;
  d.kind = LengthDist::Kind::kLognormal;
  d.median = 1000;
  d.sigma = 1.0;
  Rng r(5, 2);
  std::vector<std::int64_t> xs(100'000);
  for (auto& x : xs) x = sample_length(d, nullptr, r);
  std::sort(xs.begin(), xs.end());
  CHECK(static_cast<double>(xs[xs.size() / 2]) == Approx(1000.0).epsilon(0.03));
  // sigma 1: the 84th percentile is e^1 times the median.
  CHECK(static_cast<double>(xs[static_cast<std::size_t>(0.8413 * xs.size())]) == Approx(2718.28).epsilon(0.04));

  d.min = 500;
  d.max = 1500;
  for (int i = 0; i < 10'000; ++i) {
    const auto v = sample_length(d, nullptr, r);
    REQUIRE(v >= 500);
    REQUIRE(v <= 1500);
  }
}

TEST_CASE("the empirical CDF interpolates linearly inside each bucket, from 1 token", "[workload][length_sampler]") {
  EmpiricalCdf c;
  c.x = {100, 200, 400};
  c.p = {0.2, 0.5, 1.0};
  CHECK(c.sample(0.0) == 1.0);
  CHECK(c.sample(0.1) == Approx(50.5));   // 1 + 99 * 0.1/0.2
  CHECK(c.sample(0.2) == Approx(100.0));
  CHECK(c.sample(0.35) == Approx(150.0));  // 100 + 100 * 0.15/0.3
  CHECK(c.sample(0.75) == Approx(300.0));  // 200 + 200 * 0.25/0.5
  CHECK(c.sample(1.0) == Approx(400.0));
  // A flat step (no mass between 200 and 300) is skipped.
  EmpiricalCdf flat;
  flat.x = {200, 300, 400};
  flat.p = {0.5, 0.5, 1.0};
  CHECK(flat.sample(0.75) == Approx(350.0));
}

TEST_CASE("CDF samples reproduce the CDF at its grid points within 1%", "[workload][length_sampler]") {
  EmpiricalCdf c;
  c.x = {100, 200, 400, 1000};
  c.p = {0.2, 0.5, 0.9, 1.0};
  LengthDist d;
  d.kind = LengthDist::Kind::kCdf;
  Rng r(9, 2);
  std::vector<std::int64_t> xs(200'000);
  for (auto& x : xs) x = sample_length(d, &c, r);
  std::sort(xs.begin(), xs.end());
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    INFO("x " << c.x[i]);
    CHECK(ecdf(xs, c.x[i]) == Approx(c.p[i]).margin(0.01));
  }
  CHECK(xs.front() >= 1);
  CHECK(xs.back() == 1000);

  // A scale multiplies the sampled value.
  d.scale = 0.5;
  Rng r2(9, 2);
  for (int i = 0; i < 1000; ++i) REQUIRE(sample_length(d, &c, r2) <= 500);
}

TEST_CASE("a bundled CDF file parses and sampling matches its points", "[workload][length_sampler]") {
  const auto text = servesim::test::catalog().load_text("workloads", "azure_cdf.json");
  REQUIRE(text.has_value());
  EmpiricalCdf c;
  REQUIRE(parse_cdf_json(*text, c) == "");
  REQUIRE(c.x.size() >= 5);
  CHECK(c.p.back() == 1.0);
  LengthDist d;
  d.kind = LengthDist::Kind::kCdf;
  Rng r(10, 2);
  std::vector<std::int64_t> xs(200'000);
  for (auto& x : xs) x = sample_length(d, &c, r);
  std::sort(xs.begin(), xs.end());
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    INFO("x " << c.x[i]);
    CHECK(ecdf(xs, c.x[i]) == Approx(c.p[i]).margin(0.01));
  }
}

TEST_CASE("malformed CDF documents are refused with the reason", "[workload][length_sampler]") {
  EmpiricalCdf c;
  CHECK(parse_cdf_json("[1]", c) == "a CDF file must be an object with \"points\": [[tokens, cumulative_fraction], ...]");
  EmpiricalCdf c2;
  CHECK(parse_cdf_json(R"({"points": [[10, 0.5], [5, 1.0]]})", c2) ==
        "CDF points must have increasing tokens >= 1 and non-decreasing fractions in [0, 1]");
  EmpiricalCdf c3;
  CHECK(parse_cdf_json(R"({"points": [[10, 0.5], [20, 0.4]]})", c3) ==
        "CDF points must have increasing tokens >= 1 and non-decreasing fractions in [0, 1]");
  EmpiricalCdf c4;
  CHECK(parse_cdf_json(R"({"points": [[10, 0.5], [20, 0.9]]})", c4) == "a CDF must end at cumulative fraction 1");
  EmpiricalCdf c5;
  CHECK(parse_cdf_json(R"({"points": [[10, 0.5, 1]]})", c5) == "each CDF point must be [tokens, cumulative_fraction]");
  EmpiricalCdf ok;
  CHECK(parse_cdf_json(R"({"points": [[10, 0.5], [20, 0.9999995]]})", ok) == "");
  CHECK(ok.p.back() == 1.0);  // snapped to exactly 1
}

TEST_CASE("the sampler draws input then output from their distributions", "[workload][length_sampler]") {
  LengthSpec spec;
  spec.input = fixed(300);
  spec.output.kind = LengthDist::Kind::kUniform;
  spec.output.min = 1;
  spec.output.max = 4;
  LengthSampler s(spec, nullptr, nullptr, nullptr, nullptr);
  Rng r(1, 2), ref(1, 2);
  for (int i = 0; i < 50; ++i) {
    const auto [in, out] = s.next(i, r);
    CHECK(in == 300);
    CHECK(out == ref.uniform_int(1, 4));
  }
}

TEST_CASE("trace lengths come in file order with wrap-around, or at random rows", "[workload][length_sampler]") {
  TraceTable t;
  t.input_tokens = {10, 20, 30};
  t.output_tokens = {1, 2, 3};
  LengthSpec spec;
  spec.source = LengthSpec::Source::kTrace;
  spec.shuffle = false;
  LengthSampler seq(spec, &t, nullptr, nullptr, nullptr);
  Rng r(1, 2);
  CHECK(seq.next(0, r) == std::pair<std::int32_t, std::int32_t>{10, 1});
  CHECK(seq.next(2, r) == std::pair<std::int32_t, std::int32_t>{30, 3});
  CHECK(seq.next(4, r) == std::pair<std::int32_t, std::int32_t>{20, 2});

  spec.shuffle = true;
  LengthSampler shuf(spec, &t, nullptr, nullptr, nullptr);
  std::vector<int> seen(3, 0);
  for (int i = 0; i < 3000; ++i) {
    const auto [in, out] = shuf.next(0, r);  // the index is ignored when shuffling
    REQUIRE(in == out * 10);
    ++seen[static_cast<std::size_t>(out - 1)];
  }
  for (int c : seen) CHECK(c == Approx(1000).epsilon(0.1));
}

TEST_CASE("cdf_total splits a total into output share and the rest", "[workload][length_sampler]") {
  EmpiricalCdf total;  // all mass between 999 and 1000 tokens
  total.x = {999, 1000};
  total.p = {0.0, 1.0};
  LengthSpec spec;
  spec.source = LengthSpec::Source::kCdfTotal;
  spec.output_fraction = 0.25;
  LengthSampler s(spec, nullptr, nullptr, nullptr, &total);
  Rng r(4, 2);
  for (int i = 0; i < 1000; ++i) {
    const auto [in, out] = s.next(i, r);
    REQUIRE(out == 250);  // round(999.x * 0.25)
    REQUIRE((in == 749 || in == 750));
  }
  // A tiny output share still yields one output token.
  spec.output_fraction = 1e-6;
  LengthSampler tiny(spec, nullptr, nullptr, nullptr, &total);
  const auto [in, out] = tiny.next(0, r);
  CHECK(out == 1);
  CHECK((in == 998 || in == 999));
}
