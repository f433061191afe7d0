#include "core/spec/resource_loader.h"

#include <fstream>
#include <sstream>

namespace servesim {

ResourceLoader directory_loader(std::string root) {
  return [root = std::move(root)](const std::string& rel) -> std::optional<std::string> {
    std::ifstream in(root + "/" + rel, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
}

bool is_safe_resource_name(const std::string& name) {
  if (name.empty() || name.size() > 128 || name.find("..") != std::string::npos) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace servesim
