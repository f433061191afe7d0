#include "core/sim/rng.h"

#include <cmath>

#include "core/sim/det_math.h"

namespace servesim {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t st = seed ^ (stream * 0xd1b54a32d192ed03ULL);
  for (auto& s : s_) s = splitmix64(st);
}

static inline std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

std::int64_t Rng::uniform_int(std::int64_t lo, std::int64_t hi) {
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
  if (span == 0) return static_cast<std::int64_t>(next_u64());
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % span;
  std::uint64_t v;
  do v = next_u64();
  while (v >= limit);
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + v % span);
}

double Rng::exponential(double rate) { return -det_log(1.0 - uniform()) / rate; }

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u, v, s;
  do {
    u = 2.0 * uniform() - 1.0;
    v = 2.0 * uniform() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double f = std::sqrt(-2.0 * det_log(s) / s);
  spare_ = v * f;
  has_spare_ = true;
  return u * f;
}

double Rng::gamma(double shape, double scale) {
  if (shape < 1.0) {
    const double u = uniform();
    return gamma(shape + 1.0, scale) * det_pow(u > 0 ? u : 0x1.0p-53, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v * scale;
    if (det_log(u) < 0.5 * x * x + d * (1.0 - v + det_log(v))) return d * v * scale;
  }
}

double Rng::lognormal(double mu, double sigma) { return det_exp(mu + sigma * normal()); }

}  // namespace servesim
