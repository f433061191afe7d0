#pragma once
/// A request trace from profiles/traces: optional arrival times and prompt/output lengths.
#include <cstdint>
#include <string>
#include <vector>

namespace servesim {

/// Columns of one trace file.
struct TraceTable {
  std::vector<double> arrival_ms;  ///< empty when the trace has no timestamps
  std::vector<std::int32_t> input_tokens;
  std::vector<std::int32_t> output_tokens;
  std::size_t clamped_rows = 0;  ///< rows with a 0 length raised to 1 (reported as a warning)
  std::size_t size() const { return input_tokens.size(); }
};

/// Parses CSV text with header columns arrival_ms (optional), input_tokens, output_tokens (others ignored).
/// Returns an empty string on success, else what is wrong (with the line number).
std::string parse_trace_csv(const std::string& text, TraceTable& out);

}  // namespace servesim
