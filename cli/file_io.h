#pragma once
/// Whole-file reads and writes for the CLI commands.
#include <string>

/// Reads `path` into `out`; false when it cannot be opened.
bool read_file(const std::string& path, std::string& out);
/// Writes `text` to `path`, creating missing parent folders; false on failure.
bool write_file(const std::string& path, const std::string& text);
