#pragma once
/// Seeded random numbers and samplers written here (never <random> distributions, which differ between
/// standard libraries): xoshiro256** seeded by splitmix64, with independent named streams.
#include <cstdint>

namespace servesim {

/// splitmix64 step: mixes a 64-bit state; used for seeding and stream derivation.
std::uint64_t splitmix64(std::uint64_t& state);

/// A deterministic pseudo-random stream.
class Rng {
 public:
  /// Stream from a seed; `stream` selects an independent sub-stream (arrivals, lengths, routing, ...).
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0);
  /// Next raw 64 bits.
  std::uint64_t next_u64();
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Uniform integer in [lo, hi] (inclusive); unbiased (rejection).
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
  /// Exponential with the given rate (mean 1/rate).
  double exponential(double rate);
  /// Standard normal (Marsaglia polar method: only log and sqrt).
  double normal();
  /// Gamma(shape, scale) (Marsaglia-Tsang; shape < 1 by the boost u^(1/shape)).
  double gamma(double shape, double scale);
  /// exp(N(mu, sigma^2)).
  double lognormal(double mu, double sigma);

 private:
  std::uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0;
};

/// Named stream ids so adding a new consumer never shifts an existing one's numbers.
enum class RngStream : std::uint64_t { kArrivals = 1, kLengths = 2, kRouting = 3, kTrace = 4, kMoe = 5 };

}  // namespace servesim
