#include "core/sim/rng.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

using namespace servesim;

namespace {
struct Moments {
  double mean = 0, var = 0;
};
template <typename F>
Moments moments(int n, F draw) {
  double sum = 0, sq = 0;
  std::vector<double> xs(static_cast<std::size_t>(n));
  for (auto& x : xs) {
    x = draw();
    sum += x;
  }
  Moments m;
  m.mean = sum / n;
  for (double x : xs) sq += (x - m.mean) * (x - m.mean);
  m.var = sq / n;
  return m;
}
}  // namespace

TEST_CASE("the same seed and stream give the same sequence", "[sim][rng]") {
  Rng a(12345, 3), b(12345, 3);
  for (int i = 0; i < 1000; ++i) REQUIRE(a.next_u64() == b.next_u64());
  Rng c(12345, 3), d(12345, 3);
  for (int i = 0; i < 1000; ++i) REQUIRE(c.gamma(0.7, 2.0) == d.gamma(0.7, 2.0));
}

TEST_CASE("different streams and different seeds give different sequences", "[sim][rng]") {
  Rng s1(42, 1), s2(42, 2), other_seed(43, 1);
  int same_stream = 0, same_seed = 0;
  for (int i = 0; i < 100; ++i) {
    const auto x = s1.next_u64();
    if (x == s2.next_u64()) ++same_stream;
    if (x == other_seed.next_u64()) ++same_seed;
  }
  CHECK(same_stream == 0);
  CHECK(same_seed == 0);
  // Stream 0 is the default argument.
  Rng d(42), z(42, 0);
  CHECK(d.next_u64() == z.next_u64());
}

TEST_CASE("splitmix64 matches the published reference output", "[sim][rng]") {
  // Reference: splitmix64 from state 0 yields 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f.
  std::uint64_t st = 0;
  CHECK(splitmix64(st) == 0xe220a8397b1dcdafULL);
  CHECK(st == 0x9e3779b97f4a7c15ULL);
  CHECK(splitmix64(st) == 0x6e789e6aa1b965f4ULL);
  CHECK(splitmix64(st) == 0x06c45d188009454fULL);
}

TEST_CASE("Rng(42, 0) produces pinned golden values", "[sim][rng]") {
  // Computed independently (Python big-int xoshiro256** seeded by splitmix64 from 42 ^ 0 * 0xd1b54a32d192ed03).
  // A change here shifts every simulation's numbers: only update deliberately.
  Rng r(42, 0);
  CHECK(r.next_u64() == 0x15780b2e0c2ec716ULL);
  CHECK(r.next_u64() == 0x6104d9866d113a7eULL);
  CHECK(r.next_u64() == 0xae17533239e499a1ULL);
}

TEST_CASE("uniform draws lie in the half-open unit interval and average one half", "[sim][rng]") {
  Rng r(7, 1);
  double lo = 1, hi = 0, sum = 0;
  const int n = 1'000'000;
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    sum += u;
  }
  CHECK(sum / n == Approx(0.5).margin(0.002));
  CHECK(lo < 1e-5);
  CHECK(hi > 1 - 1e-5);
  // 53 random bits: the top 53 bits of next_u64 scaled by 2^-53.
  Rng a(99, 0), b(99, 0);
  CHECK(a.uniform() == static_cast<double>(b.next_u64() >> 11) / 9007199254740992.0);
}

TEST_CASE("uniform_int covers both inclusive bounds evenly and nothing outside", "[sim][rng]") {
  Rng r(5, 2);
  std::vector<int> hist(5, 0);
  const int n = 50'000;
  for (int i = 0; i < n; ++i) {
    const auto v = r.uniform_int(3, 7);
    REQUIRE(v >= 3);
    REQUIRE(v <= 7);
    ++hist[static_cast<std::size_t>(v - 3)];
  }
  for (int c : hist) CHECK(c == Approx(n / 5.0).epsilon(0.05));
  CHECK(r.uniform_int(-4, -4) == -4);
  bool saw_neg = false, saw_pos = false;
  for (int i = 0; i < 200; ++i) {
    const auto v = r.uniform_int(-1, 1);
    REQUIRE(std::abs(v) <= 1);
    saw_neg |= v == -1;
    saw_pos |= v == 1;
  }
  CHECK(saw_neg);
  CHECK(saw_pos);
}

TEST_CASE("exponential samples have mean 1/rate within 2% over 200k draws", "[sim][rng]") {
  for (double rate : {0.5, 4.0, 250.0}) {
    Rng r(2024, 1);
    const auto m = moments(200'000, [&] { return r.exponential(rate); });
    INFO("rate " << rate);
    CHECK(m.mean == Approx(1.0 / rate).epsilon(0.02));
    CHECK(m.var == Approx(1.0 / (rate * rate)).epsilon(0.04));
  }
}

TEST_CASE("standard normal samples have mean 0 and variance 1", "[sim][rng]") {
  Rng r(11, 4);
  const auto m = moments(200'000, [&] { return r.normal(); });
  CHECK(m.mean == Approx(0.0).margin(0.01));
  CHECK(m.var == Approx(1.0).epsilon(0.02));
}

TEST_CASE("gamma samples have mean shape*scale and variance shape*scale^2", "[sim][rng]") {
  struct Case {
    double shape, scale;
  };
  for (const Case c : {Case{0.5, 2.0}, Case{3.0, 0.5}, Case{1.0, 1.5}}) {
    Rng r(31337, 5);
    const auto m = moments(200'000, [&] { return r.gamma(c.shape, c.scale); });
    INFO("shape " << c.shape << " scale " << c.scale);
    CHECK(m.mean == Approx(c.shape * c.scale).epsilon(0.02));
    CHECK(m.var == Approx(c.shape * c.scale * c.scale).epsilon(0.04));
  }
}

TEST_CASE("gamma samples are positive even for a small shape", "[sim][rng]") {
  Rng r(1, 1);
  for (int i = 0; i < 100'000; ++i) REQUIRE(r.gamma(0.1, 1.0) >= 0.0);
}

TEST_CASE("lognormal samples have median e^mu", "[sim][rng]") {
  Rng r(8, 2);
  std::vector<double> xs(100'001);
  for (auto& x : xs) x = r.lognormal(std::log(300.0), 0.8);
  std::nth_element(xs.begin(), xs.begin() + 50'000, xs.end());
  CHECK(xs[50'000] == Approx(300.0).epsilon(0.02));
}
