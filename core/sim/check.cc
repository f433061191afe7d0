#include "core/sim/check.h"

#include <cstdio>
#include <cstdlib>

namespace servesim {

void check_failed(const char* file, int line, const std::string& message) {
  std::fprintf(stderr, "servesim invariant broken at %s:%d: %s\n", file, line, message.c_str());
  std::abort();
}

}  // namespace servesim
