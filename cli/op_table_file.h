#pragma once
/// Reading an operator table file from disk for the servesim_opcheck tools (the simulator itself loads through
/// ResourceCatalog).
#include <iostream>
#include <string>

#include "cli/file_io.h"
#include "core/fidelity/op_table.h"

namespace servesim {

/// Parses an operator table file; false when it is missing or malformed (the parse error goes to stderr).
inline bool load_op_table_file(const std::string& path, OpTable& t) {
  std::string text;
  if (!read_file(path, text)) return false;
  const std::string err = parse_op_table(text, t);
  if (!err.empty()) std::cerr << path << ": " << err << "\n";
  return err.empty();
}

}  // namespace servesim
