#pragma once
/// Reading a profile file from disk for the servesim_opcheck tools (the simulator itself loads through
/// ResourceCatalog).
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "core/fidelity/op_table.h"

namespace servesim {

/// The whole file as text; false when it cannot be opened.
inline bool read_text_file(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

/// Parses an operator table file; false when it is missing or malformed (the parse error goes to stderr).
inline bool load_op_table_file(const std::string& path, OpTable& t) {
  std::string text;
  if (!read_text_file(path, text)) return false;
  const std::string err = parse_op_table(text, t);
  if (!err.empty()) std::cerr << path << ": " << err << "\n";
  return err.empty();
}

}  // namespace servesim
