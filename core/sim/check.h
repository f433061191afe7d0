#pragma once
/// Invariant checks. A broken invariant is a simulator bug, never bad input: it aborts with context.
#include <string>

namespace servesim {

/// Prints `file:line: message` to stderr and aborts.
[[noreturn]] void check_failed(const char* file, int line, const std::string& message);

}  // namespace servesim

#define SERVESIM_CHECK(cond, msg)                                   \
  do {                                                              \
    if (!(cond)) ::servesim::check_failed(__FILE__, __LINE__, (msg)); \
  } while (0)
