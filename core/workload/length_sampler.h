#pragma once
/// Draws (prompt, output) token lengths: fixed, uniform, lognormal, an empirical CDF, or trace rows.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/sim/rng.h"
#include "core/spec/workload_spec.h"
#include "core/workload/trace_table.h"

namespace servesim {

/// A piecewise-linear CDF over token counts ([[tokens, cumulative_fraction], ...]).
struct EmpiricalCdf {
  std::vector<double> x;  ///< increasing token counts
  std::vector<double> p;  ///< non-decreasing cumulative fractions ending at 1
  /// Inverse-CDF sample with linear interpolation inside a bucket (the first bucket starts at 1 token).
  double sample(double u) const;
};

/// Parses a profiles/workloads CDF document ({"points": [[x, p], ...]}); returns "" or the problem.
std::string parse_cdf_json(const std::string& text, EmpiricalCdf& out);

/// Samples one length distribution.
std::int64_t sample_length(const LengthDist& d, const EmpiricalCdf* cdf, Rng& rng);

/// Produces lengths for successive requests.
class LengthSampler {
 public:
  /// `trace` is needed for LengthSpec::Source::kTrace, `input_cdf`/`output_cdf`/`total_cdf` for CDFs.
  LengthSampler(const LengthSpec& spec, const TraceTable* trace, const EmpiricalCdf* input_cdf,
                const EmpiricalCdf* output_cdf, const EmpiricalCdf* total_cdf);
  /// Lengths of request `index` (trace rows in order use the index; random ones use `rng`).
  std::pair<std::int32_t, std::int32_t> next(std::int64_t index, Rng& rng);

 private:
  LengthSpec spec_;
  const TraceTable* trace_;
  const EmpiricalCdf* input_cdf_;
  const EmpiricalCdf* output_cdf_;
  const EmpiricalCdf* total_cdf_;
};

}  // namespace servesim
