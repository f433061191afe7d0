#pragma once
/// Strict reading of one JSON object: typed getters with range checks, every error carries its JSON
/// pointer, and keys nobody asked for are reported as unknown when the reader finishes.
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/spec/errors.h"

namespace servesim {

using Json = nlohmann::json;

/// Escapes a key for a JSON pointer ("~" -> "~0", "/" -> "~1").
std::string json_pointer_token(const std::string& key);

/// Reads fields of one object. Call finish() (or let the destructor) to report unknown keys.
class ObjectReader {
 public:
  /// `j` may be any JSON value; a non-object is reported at `path`.
  ObjectReader(const Json& j, std::string path, Errors& errors);
  ~ObjectReader() { finish(); }
  ObjectReader(const ObjectReader&) = delete;
  ObjectReader& operator=(const ObjectReader&) = delete;

  bool valid() const { return obj_ != nullptr; }
  bool has(const std::string& key) const;
  /// The raw value (marks the key as used) or nullptr.
  const Json* raw(const std::string& key);
  /// Path of a child field.
  std::string path(const std::string& key) const { return path_ + "/" + json_pointer_token(key); }
  const std::string& path() const { return path_; }

  /// Integer in [lo, hi]; leaves `out` untouched when absent (unless required).
  bool get_int(const std::string& key, std::int64_t& out, std::int64_t lo, std::int64_t hi, bool required = false);
  bool get_int(const std::string& key, int& out, std::int64_t lo, std::int64_t hi, bool required = false);
  /// Number in [lo, hi] (inclusive unless the flags say otherwise).
  bool get_number(const std::string& key, double& out, double lo, double hi, bool required = false,
                  bool lo_open = false);
  /// 0 (none: the caller's default) or a number in [lo, hi]: a rate or bandwidth where a tiny positive value would
  /// make simulated time overflow rather than mean anything.
  bool get_number_or_zero(const std::string& key, double& out, double lo, double hi);
  bool get_bool(const std::string& key, bool& out, bool required = false);
  bool get_string(const std::string& key, std::string& out, bool required = false, std::size_t max_len = 256);
  /// String among `allowed`; the error lists them.
  bool get_enum(const std::string& key, std::string& out, std::initializer_list<const char*> allowed,
                bool required = false);
  /// Array of integers, each in [lo, hi], at most `max_items`.
  bool get_int_list(const std::string& key, std::vector<std::int64_t>& out, std::int64_t lo, std::int64_t hi,
                    std::size_t max_items);
  /// Marks keys as known without reading them (documentation fields such as "description").
  void ignore(std::initializer_list<const char*> keys);
  /// Reports keys never asked for. Idempotent.
  void finish();
  /// Keys present but never read (for foreign documents such as an HF config.json).
  std::vector<std::string> unread_keys() const;
  /// Stop reporting unknown keys (foreign documents).
  void allow_unknown() { allow_unknown_ = true; }

  Errors& errors() { return errors_; }

 private:
  const Json* find(const std::string& key);
  const Json* obj_;
  std::string path_;
  Errors& errors_;
  std::set<std::string> used_;
  bool finished_ = false;
  bool allow_unknown_ = false;
};

/// Short human description of a JSON value for messages ("a string", "-3", ...).
std::string describe(const Json& v);

}  // namespace servesim

namespace servesim {
/// Where and why `text` is not valid JSON ("syntax error at byte 17: ..."), without exceptions
/// (the wasm build has none).
std::string json_syntax_error(const std::string& text);
}  // namespace servesim
