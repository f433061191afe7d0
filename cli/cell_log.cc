#include "cli/cell_log.h"

#include <cmath>

namespace servesim {

bool CellLog::open(const std::string& path) {
  close();
  f_ = std::fopen(path.c_str(), "w");
  if (!f_) return false;
  failed_ = std::fputs("family,table,held_out,at,measured_us,predicted_us,ape_pct\n", f_) < 0;
  return !failed_;
}

bool CellLog::close() {
  if (!f_) return !failed_;
  const bool ok = std::fclose(f_) == 0 && !failed_;
  f_ = nullptr;
  failed_ = false;
  return ok;
}

void CellLog::add(const char* family, const std::vector<std::string>& table, const char* held_out,
                  std::initializer_list<std::pair<const char*, double>> at, double measured_us, double predicted_us) {
  if (!f_ || !(measured_us > 0)) return;
  std::string key, coords;
  for (const std::string& k : table) key += (key.empty() ? "" : "/") + k;
  char buf[64];
  for (const auto& [name, value] : at) {
    std::snprintf(buf, sizeof buf, "%s%s=%.10g", coords.empty() ? "" : ";", name, value);
    coords += buf;
  }
  const bool valid = predicted_us > 0 && std::isfinite(predicted_us);
  const double ape = valid ? std::fabs(predicted_us / measured_us - 1.0) * 100.0 : 100.0;
  if (std::fprintf(f_, "%s,%s,%s,%s,%.6g,%.6g,%.4f\n", family, key.c_str(), held_out, coords.c_str(), measured_us,
                   valid ? predicted_us : std::nan(""), ape) < 0)
    failed_ = true;
}

CellLog& cell_log() {
  static CellLog log;
  return log;
}

}  // namespace servesim
