#pragma once
/// servesim_opcheck --cells FILE: every held-out comparison behind a family's reported figure (its "all"), one CSV
/// line each, so a row of docs/validation.md can be traced to the cells that make it:
///   family,table,held_out,at,measured_us,predicted_us,ape_pct
/// `table` is the grid's key joined by '/', `held_out` the axis whose lines were held out, `at` the cell's
/// coordinates as name=value joined by ';'. The error is ApeStats's: a prediction that is not a positive finite time
/// counts as 100% off.
#include <cstdio>
#include <string>
#include <vector>

namespace servesim {

class CellLog {
 public:
  CellLog() = default;
  CellLog(const CellLog&) = delete;
  CellLog& operator=(const CellLog&) = delete;
  ~CellLog() { close(); }
  /// Opens `path` for writing and writes the header; false (nothing open) when it cannot.
  bool open(const std::string& path);
  /// Flushes and closes; false when a write failed.
  bool close();
  bool on() const { return f_ != nullptr; }
  void add(const std::string& family, const std::string& table, const std::string& held_out, const std::string& at,
           double measured_us, double predicted_us);

 private:
  std::FILE* f_ = nullptr;
  bool failed_ = false;
};

/// The log servesim_opcheck's checks write to (closed unless --cells).
CellLog& cell_log();
/// A grid key as the log names its table: the fields joined by '/'.
std::string cell_table(const std::vector<std::string>& key);
/// "name=value" pairs joined by ';', values with up to 10 significant digits.
std::string cell_at(const std::vector<std::pair<const char*, double>>& coordinates);

}  // namespace servesim
