#include "core/workload/length_sampler.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/sim/check.h"

namespace servesim {

double EmpiricalCdf::sample(double u) const {
  // First bucket: from 1 token up to x[0] with mass p[0].
  double x0 = 1.0, p0 = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (u <= p[i] && p[i] > p0) return x0 + (x[i] - x0) * (u - p0) / (p[i] - p0);
    x0 = x[i];
    p0 = p[i];
  }
  return x.back();
}

std::string parse_cdf_json(const std::string& text, EmpiricalCdf& out) {
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("points") || !doc["points"].is_array())
    return "a CDF file must be an object with \"points\": [[tokens, cumulative_fraction], ...]";
  for (const auto& pt : doc["points"]) {
    if (!pt.is_array() || pt.size() != 2 || !pt[0].is_number() || !pt[1].is_number())
      return "each CDF point must be [tokens, cumulative_fraction]";
    const double x = pt[0].get<double>(), p = pt[1].get<double>();
    if (x < 1 || p < 0 || p > 1 || (!out.x.empty() && (x <= out.x.back() || p < out.p.back())))
      return "CDF points must have increasing tokens >= 1 and non-decreasing fractions in [0, 1]";
    out.x.push_back(x);
    out.p.push_back(p);
  }
  if (out.x.empty() || out.p.back() < 0.999999) return "a CDF must end at cumulative fraction 1";
  out.p.back() = 1.0;
  return "";
}

std::int64_t sample_length(const LengthDist& d, const EmpiricalCdf* cdf, Rng& rng) {
  double v = 0;
  switch (d.kind) {
    case LengthDist::Kind::kFixed: return d.value;
    case LengthDist::Kind::kUniform: return rng.uniform_int(d.min, d.max);
    case LengthDist::Kind::kLognormal: {
      // The median of exp(N(mu, sigma^2)) is e^mu, so scale a unit-median draw.
      v = d.median * rng.lognormal(0.0, d.sigma);
      break;
    }
    case LengthDist::Kind::kCdf:
      SERVESIM_CHECK(cdf != nullptr, "CDF length without a loaded CDF");
      v = cdf->sample(rng.uniform()) * d.scale;
      break;
  }
  const std::int64_t n = static_cast<std::int64_t>(v + 0.5);
  return std::clamp<std::int64_t>(n, d.min, d.max);
}

LengthSampler::LengthSampler(const LengthSpec& spec, const TraceTable* trace, const EmpiricalCdf* input_cdf,
                             const EmpiricalCdf* output_cdf, const EmpiricalCdf* total_cdf)
    : spec_(spec), trace_(trace), input_cdf_(input_cdf), output_cdf_(output_cdf), total_cdf_(total_cdf) {}

std::pair<std::int32_t, std::int32_t> LengthSampler::next(std::int64_t index, Rng& rng) {
  switch (spec_.source) {
    case LengthSpec::Source::kDistributions: {
      const auto in = sample_length(spec_.input, input_cdf_, rng);
      const auto out = sample_length(spec_.output, output_cdf_, rng);
      return {static_cast<std::int32_t>(in), static_cast<std::int32_t>(out)};
    }
    case LengthSpec::Source::kTrace: {
      SERVESIM_CHECK(trace_ && trace_->size() > 0, "trace lengths without a loaded trace");
      const std::size_t n = trace_->size();
      const std::size_t row = spec_.shuffle ? static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(n) - 1))
                                            : static_cast<std::size_t>(index) % n;
      return {trace_->input_tokens[row], trace_->output_tokens[row]};
    }
    case LengthSpec::Source::kCdfTotal: {
      SERVESIM_CHECK(total_cdf_ != nullptr, "cdf_total lengths without a loaded CDF");
      const double total = total_cdf_->sample(rng.uniform());
      std::int64_t out = static_cast<std::int64_t>(total * spec_.output_fraction + 0.5);
      out = std::max<std::int64_t>(out, 1);
      const std::int64_t in = std::max<std::int64_t>(static_cast<std::int64_t>(total + 0.5) - out, 1);
      return {static_cast<std::int32_t>(in), static_cast<std::int32_t>(out)};
    }
  }
  return {1, 1};
}

}  // namespace servesim
