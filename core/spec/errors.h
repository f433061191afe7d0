#pragma once
/// Input errors: each names the JSON pointer of the offending field and what is allowed.
#include <string>
#include <vector>

namespace servesim {

/// One problem with user input.
struct SpecError {
  std::string path;     ///< JSON pointer, e.g. "/engine/block_size" ("" = the document)
  std::string message;  ///< what is wrong and what is allowed
  std::string to_string() const { return (path.empty() ? std::string("/") : path) + ": " + message; }
};

/// Collects every error of a document so `validate` can print them all at once.
class Errors {
 public:
  void add(std::string path, std::string message) { list_.push_back({std::move(path), std::move(message)}); }
  bool ok() const { return list_.empty(); }
  const std::vector<SpecError>& list() const { return list_; }
  /// All errors, one per line.
  std::string joined() const {
    std::string s;
    for (const auto& e : list_) s += e.to_string() + "\n";
    return s;
  }

 private:
  std::vector<SpecError> list_;
};

}  // namespace servesim
