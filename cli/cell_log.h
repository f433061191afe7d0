#pragma once
/// servesim_opcheck --cells FILE: every held-out comparison behind a family's reported figure (its "all"), one CSV
/// line each, so a row of docs/validation.md can be traced to the cells that make it:
///   family,table,held_out,at,measured_us,predicted_us,ape_pct
/// `table` is the grid's key joined by '/', `held_out` the axis whose lines were held out, `at` the cell's
/// coordinates as name=value joined by ';' (values with up to 10 significant digits). The error is ApeStats's: a
/// prediction that is not a positive finite time counts as 100% off.
#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>
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
  /// One comparison (nothing when closed, or without a measurement): the table's key fields and the cell's
  /// coordinates are formatted here, only while the log is open.
  void add(const char* family, const std::vector<std::string>& table, const char* held_out,
           std::initializer_list<std::pair<const char*, double>> at, double measured_us, double predicted_us);

 private:
  std::FILE* f_ = nullptr;
  bool failed_ = false;
};

/// The log servesim_opcheck's checks write to (closed unless --cells).
CellLog& cell_log();

}  // namespace servesim
