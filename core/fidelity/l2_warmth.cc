#include "core/fidelity/l2_warmth.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/fidelity/interpolation.h"

namespace servesim {

double L2Warmth::extra_us(double bytes) const {
  if (!ok() || !(bytes > 0)) return 0;
  const double mib = bytes / (1024.0 * 1024.0);
  if (mib >= zero_mib) return 0;
  // Linear taper between full_mib and zero_mib: the share of the call's K and V a repeated call still finds in L2.
  const double hit = mib <= full_mib ? 1.0 : (zero_mib - mib) / (zero_mib - full_mib);
  return us_per_mib * mib * hit;
}

OpGrid read_cold(const OpGrid& g, const L2Warmth& w, double bytes_per_key, double window) {
  OpGrid c = g;
  if (!w.ok() || g.axes.size() != 2) return c;
  const auto& B = g.axes[0];
  const auto& S = g.axes[1];
  for (std::size_t i = 0; i < B.size(); ++i)
    for (std::size_t j = 0; j < S.size(); ++j) {
      double& v = c.values[i * S.size() + j];
      if (std::isnan(v)) continue;
      const double keys = window > 0 ? std::min(S[j], window) : S[j];
      v += w.extra_us(B[i] * keys * bytes_per_key);
      c.log_values[i * S.size() + j] = interp_log(v);
    }
  return c;
}

double grid_kv_bytes_per_key(const OpGrid& g) {
  if (g.key.size() < 4) return 0;
  const double elem = g.key[0] == "fp8" ? 1.0 : 2.0;
  return 2.0 * std::atof(g.key[3].c_str()) * std::atof(g.key[1].c_str()) * elem;
}

std::string parse_l2_warmth(const std::string& text, L2Warmth& out) {
  out = L2Warmth();
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "not a JSON object";
  L2Warmth w;
  for (const auto& [name, field] : {std::pair<const char*, double*>{"us_per_mib", &w.us_per_mib},
                                    {"full_mib", &w.full_mib},
                                    {"zero_mib", &w.zero_mib},
                                    {"l2_bytes", &w.l2_bytes}}) {
    if (!j.contains(name) || !j[name].is_number()) return std::string(name) + ": missing or not a number";
    *field = j[name].get<double>();
    if (!std::isfinite(*field) || *field <= 0 || *field > 1e12)
      return std::string(name) + ": must be a positive number below 1e12";
  }
  if (w.zero_mib <= w.full_mib) return "zero_mib: must exceed full_mib";
  if (w.zero_mib * 1024.0 * 1024.0 > w.l2_bytes)
    return "zero_mib: beyond l2_bytes (a call cannot stay in a smaller L2)";
  out = w;
  return "";
}

}  // namespace servesim
