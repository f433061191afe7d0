#include "core/fidelity/l2_warmth.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace servesim {

double L2Warmth::extra_us(double bytes) const {
  if (!ok() || !(bytes > 0)) return 0;
  const double mib = bytes / (1024.0 * 1024.0);
  if (mib >= zero_mib) return 0;
  // Linear taper between full_mib and zero_mib: the share of the call's K and V a repeated call still finds in L2.
  const double hit = mib <= full_mib ? 1.0 : (zero_mib - mib) / (zero_mib - full_mib);
  return us_per_mib * mib * hit;
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
