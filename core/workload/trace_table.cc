#include "core/workload/trace_table.h"

#include <cstdlib>

namespace servesim {

namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t c = line.find(',', start);
    out.push_back(line.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return out;
}

bool to_double(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

}  // namespace

std::string parse_trace_csv(const std::string& text, TraceTable& out) {
  std::size_t pos = 0;
  int col_arrival = -1, col_in = -1, col_out = -1;
  std::size_t line_no = 0;
  bool header_seen = false;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto cells = split(line);
    if (!header_seen) {
      header_seen = true;
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (cells[i] == "arrival_ms") col_arrival = static_cast<int>(i);
        if (cells[i] == "input_tokens") col_in = static_cast<int>(i);
        if (cells[i] == "output_tokens") col_out = static_cast<int>(i);
      }
      if (col_in < 0 || col_out < 0) return "line " + std::to_string(line_no) + ": header must name input_tokens and output_tokens";
      continue;
    }
    double in = 0, outv = 0, at = 0;
    const std::size_t need = static_cast<std::size_t>(std::max(col_in, std::max(col_out, col_arrival))) + 1;
    if (cells.size() < need || !to_double(cells[col_in], in) || !to_double(cells[col_out], outv) ||
        (col_arrival >= 0 && !to_double(cells[col_arrival], at)))
      return "line " + std::to_string(line_no) + ": expected numbers in the trace columns";
    if (col_arrival >= 0) {
      if (!out.arrival_ms.empty() && at < out.arrival_ms.back())
        return "line " + std::to_string(line_no) + ": arrival_ms goes backwards";
      out.arrival_ms.push_back(at);
    }
    if (in < 1 || outv < 1) ++out.clamped_rows;
    // Zero-length rows exist in public traces; a request has at least one token each way.
    out.input_tokens.push_back(static_cast<std::int32_t>(in < 1 ? 1 : in));
    out.output_tokens.push_back(static_cast<std::int32_t>(outv < 1 ? 1 : outv));
  }
  if (out.size() == 0) return "the trace has no rows";
  return "";
}

}  // namespace servesim
