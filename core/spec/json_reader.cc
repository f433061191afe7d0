#include "core/spec/json_reader.h"

#include <cmath>
#include <sstream>

namespace servesim {

std::string json_pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string describe(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case Json::value_t::string: {
      std::string s = v.get<std::string>();
      if (s.size() > 40) s = s.substr(0, 40) + "...";
      return "\"" + s + "\"";
    }
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    default: {
      std::string s = v.dump();
      return s.size() > 40 ? s.substr(0, 40) : s;
    }
  }
}

ObjectReader::ObjectReader(const Json& j, std::string path, Errors& errors)
    : obj_(j.is_object() ? &j : nullptr), path_(std::move(path)), errors_(errors) {
  if (!obj_) errors_.add(path_, "must be an object, got " + describe(j));
}

bool ObjectReader::has(const std::string& key) const { return obj_ && obj_->contains(key); }

const Json* ObjectReader::find(const std::string& key) {
  if (!obj_) return nullptr;
  used_.insert(key);
  auto it = obj_->find(key);
  if (it == obj_->end() || it->is_null()) return nullptr;
  return &*it;
}

const Json* ObjectReader::raw(const std::string& key) { return find(key); }

bool ObjectReader::get_int(const std::string& key, std::int64_t& out, std::int64_t lo, std::int64_t hi,
                           bool required) {
  const Json* v = find(key);
  if (!v) {
    if (required && obj_) errors_.add(path(key), "is required (an integer between " + std::to_string(lo) + " and " + std::to_string(hi) + ")");
    return false;
  }
  std::int64_t x = 0;
  if (v->is_number_integer()) {
    x = v->get<std::int64_t>();
  } else if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>() &&
             std::fabs(v->get<double>()) < 9e15) {
    x = static_cast<std::int64_t>(v->get<double>());
  } else {
    errors_.add(path(key), "must be an integer between " + std::to_string(lo) + " and " + std::to_string(hi) +
                               ", got " + describe(*v));
    return false;
  }
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) x = INT64_MAX;
  if (x < lo || x > hi) {
    errors_.add(path(key), "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                               describe(*v));
    return false;
  }
  out = x;
  return true;
}

bool ObjectReader::get_int(const std::string& key, int& out, std::int64_t lo, std::int64_t hi, bool required) {
  std::int64_t x = out;
  if (!get_int(key, x, lo, hi, required)) return false;
  out = static_cast<int>(x);
  return true;
}

static std::string fmt_num(double x) {
  std::ostringstream ss;
  ss << x;
  return ss.str();
}

bool ObjectReader::get_number(const std::string& key, double& out, double lo, double hi, bool required,
                              bool lo_open) {
  const Json* v = find(key);
  const std::string range = (lo_open ? "greater than " + fmt_num(lo) : "at least " + fmt_num(lo)) +
                            " and at most " + fmt_num(hi);
  if (!v) {
    if (required && obj_) errors_.add(path(key), "is required (a number " + range + ")");
    return false;
  }
  if (!v->is_number()) {
    errors_.add(path(key), "must be a number " + range + ", got " + describe(*v));
    return false;
  }
  const double x = v->get<double>();
  if (!std::isfinite(x) || x > hi || x < lo || (lo_open && x == lo)) {
    errors_.add(path(key), "must be a number " + range + ", got " + describe(*v));
    return false;
  }
  out = x;
  return true;
}

bool ObjectReader::get_number_or_zero(const std::string& key, double& out, double lo, double hi) {
  const Json* v = find(key);
  if (!v) return false;
  const double x = v->is_number() ? v->get<double>() : -1;
  if (!v->is_number() || !(x == 0 || (x >= lo && x <= hi))) {
    errors_.add(path(key), "must be 0 (none) or a number at least " + fmt_num(lo) + " and at most " + fmt_num(hi) +
                               ", got " + describe(*v));
    return false;
  }
  out = x;
  return true;
}

bool ObjectReader::get_bool(const std::string& key, bool& out, bool required) {
  const Json* v = find(key);
  if (!v) {
    if (required && obj_) errors_.add(path(key), "is required (true or false)");
    return false;
  }
  if (!v->is_boolean()) {
    errors_.add(path(key), "must be true or false, got " + describe(*v));
    return false;
  }
  out = v->get<bool>();
  return true;
}

bool ObjectReader::get_string(const std::string& key, std::string& out, bool required, std::size_t max_len) {
  const Json* v = find(key);
  if (!v) {
    if (required && obj_) errors_.add(path(key), "is required (a string)");
    return false;
  }
  if (!v->is_string()) {
    errors_.add(path(key), "must be a string, got " + describe(*v));
    return false;
  }
  const auto& s = v->get_ref<const std::string&>();
  if (s.size() > max_len) {
    errors_.add(path(key), "must be at most " + std::to_string(max_len) + " characters, got " +
                               std::to_string(s.size()));
    return false;
  }
  out = s;
  return true;
}

bool ObjectReader::get_enum(const std::string& key, std::string& out, std::initializer_list<const char*> allowed,
                            bool required) {
  std::string s;
  std::string list;
  for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  const Json* v = obj_ ? (obj_->contains(key) ? &(*obj_)[key] : nullptr) : nullptr;
  if (!v || v->is_null()) {
    used_.insert(key);
    if (required && obj_) errors_.add(path(key), "is required (one of: " + list + ")");
    return false;
  }
  if (!get_string(key, s)) return false;
  for (const char* a : allowed) {
    if (s == a) {
      out = s;
      return true;
    }
  }
  errors_.add(path(key), "must be one of: " + list + "; got " + describe(*v));
  return false;
}

bool ObjectReader::get_int_list(const std::string& key, std::vector<std::int64_t>& out, std::int64_t lo,
                                std::int64_t hi, std::size_t max_items) {
  const Json* v = find(key);
  if (!v) return false;
  if (!v->is_array() || v->size() > max_items) {
    errors_.add(path(key), "must be an array of at most " + std::to_string(max_items) + " integers");
    return false;
  }
  std::vector<std::int64_t> tmp;
  bool ok = true;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const Json& e = (*v)[i];
    if (!e.is_number_integer() || e.get<std::int64_t>() < lo || e.get<std::int64_t>() > hi) {
      errors_.add(path(key) + "/" + std::to_string(i),
                  "must be an integer between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                      describe(e));
      ok = false;
      continue;
    }
    tmp.push_back(e.get<std::int64_t>());
  }
  if (ok) out = std::move(tmp);
  return ok;
}

void ObjectReader::ignore(std::initializer_list<const char*> keys) {
  for (const char* k : keys) used_.insert(k);
}

std::vector<std::string> ObjectReader::unread_keys() const {
  std::vector<std::string> out;
  if (!obj_) return out;
  for (auto it = obj_->begin(); it != obj_->end(); ++it)
    if (!used_.count(it.key())) out.push_back(it.key());
  return out;
}

void ObjectReader::finish() {
  if (finished_) return;
  finished_ = true;
  if (allow_unknown_) return;
  for (const auto& k : unread_keys()) {
    std::string known;
    for (const auto& u : used_) known += (known.empty() ? "" : ", ") + u;
    errors_.add(path(k), "unknown key (known keys here: " + known + ")");
  }
}

}  // namespace servesim

namespace servesim {

namespace {
/// SAX handler that accepts everything and records the first syntax error.
struct SyntaxErrorSax : nlohmann::json_sax<Json> {
  std::string message;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex) override {
    std::string tok = last_token.size() > 30 ? last_token.substr(0, 30) + "..." : last_token;
    message = "syntax error at byte " + std::to_string(position) + " near '" + tok + "'";
    (void)ex;
    return false;
  }
};
}  // namespace

std::string json_syntax_error(const std::string& text) {
  SyntaxErrorSax sax;
  Json::sax_parse(text, &sax, nlohmann::detail::input_format_t::json, true);
  return sax.message.empty() ? std::string("syntax error") : sax.message;
}

}  // namespace servesim
