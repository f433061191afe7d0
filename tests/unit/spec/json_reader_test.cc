#include "core/spec/json_reader.h"

#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace servesim;

TEST_CASE("JSON pointer tokens escape tilde and slash", "[spec][json_reader]") {
  CHECK(json_pointer_token("plain") == "plain");
  CHECK(json_pointer_token("a/b~c") == "a~1b~0c");
  CHECK(json_pointer_token("~/") == "~0~1");
  Errors e;
  const Json empty = Json::object();  // the reader keeps a pointer: the document must outlive it
  ObjectReader r(empty, "/x", e);
  CHECK(r.path("a/b") == "/x/a~1b");
}

TEST_CASE("describe gives short human descriptions of values", "[spec][json_reader]") {
  CHECK(describe(Json()) == "null");
  CHECK(describe(Json(true)) == "true");
  CHECK(describe(Json("hi")) == "\"hi\"");
  CHECK(describe(Json(std::string(50, 'x'))) == "\"" + std::string(40, 'x') + "...\"");
  CHECK(describe(Json::array({1})) == "an array");
  CHECK(describe(Json::object()) == "an object");
  CHECK(describe(Json(-3)) == "-3");
  CHECK(describe(Json(0.25)) == "0.25");
}

TEST_CASE("get_int reads integers and integral floats within range and refuses the rest", "[spec][json_reader]") {
  const Json j = {{"a", 5}, {"b", 7.0}, {"c", 7.5}, {"d", "5"}, {"e", 100}, {"f", 1e16}, {"g", nullptr}};
  Errors e;
  ObjectReader r(j, "/o", e);
  std::int64_t a = 0, b = 0, c = -1, d = -1, x = -1, f = -1, g = -9;
  CHECK(r.get_int("a", a, 0, 10));
  CHECK(a == 5);
  CHECK(r.get_int("b", b, 0, 10));
  CHECK(b == 7);
  CHECK_FALSE(r.get_int("c", c, 0, 10));
  CHECK(c == -1);
  CHECK_FALSE(r.get_int("d", d, 0, 10));
  CHECK_FALSE(r.get_int("e", x, 0, 10));
  CHECK(x == -1);  // untouched on error
  CHECK_FALSE(r.get_int("f", f, 0, INT64_MAX));  // too large to be exact in a double
  CHECK_FALSE(r.get_int("g", g, 0, 10, true));   // null counts as absent
  CHECK(g == -9);
  std::int64_t absent = 42;
  CHECK_FALSE(r.get_int("missing", absent, 0, 10));  // optional: no error
  CHECK(absent == 42);
  r.finish();
  REQUIRE(e.list().size() == 5);
  CHECK(e.list()[0].to_string() == "/o/c: must be an integer between 0 and 10, got 7.5");
  CHECK(e.list()[1].to_string() == "/o/d: must be an integer between 0 and 10, got \"5\"");
  CHECK(e.list()[2].to_string() == "/o/e: must be between 0 and 10, got 100");
  CHECK(e.list()[3].path == "/o/f");
  CHECK(e.list()[4].to_string() == "/o/g: is required (an integer between 0 and 10)");
}

TEST_CASE("get_number honours open and closed bounds and refuses non-numbers", "[spec][json_reader]") {
  const Json j = {{"zero", 0}, {"one", 1.0}, {"s", "1"}};
  Errors e;
  ObjectReader r(j, "", e);
  double z = -1, o = -1, s = -1;
  CHECK_FALSE(r.get_number("zero", z, 0, 1, false, true));
  CHECK(z == -1);
  CHECK(r.get_number("one", o, 0, 1, false, true));
  CHECK(o == 1.0);
  CHECK_FALSE(r.get_number("s", s, 0, 1));
  REQUIRE(e.list().size() == 2);
  CHECK(e.list()[0].to_string() == "/zero: must be a number greater than 0 and at most 1, got 0");
  CHECK(e.list()[1].to_string() == "/s: must be a number at least 0 and at most 1, got \"1\"");
}

TEST_CASE("get_string, get_bool and get_enum check type, length and allowed values", "[spec][json_reader]") {
  const Json j = {{"s", "abcdef"}, {"b", "yes"}, {"k", "blue"}, {"k2", "red"}};
  Errors e;
  ObjectReader r(j, "/p", e);
  std::string s, k, k2 = "none";
  bool b = false;
  CHECK_FALSE(r.get_string("s", s, false, 5));
  CHECK(s.empty());
  CHECK_FALSE(r.get_bool("b", b));
  CHECK_FALSE(r.get_enum("k", k, {"red", "green"}));
  CHECK(r.get_enum("k2", k2, {"red", "green"}));
  CHECK(k2 == "red");
  CHECK_FALSE(r.get_enum("k3", k, {"red"}, true));
  REQUIRE(e.list().size() == 4);
  CHECK(e.list()[0].to_string() == "/p/s: must be at most 5 characters, got 6");
  CHECK(e.list()[1].to_string() == "/p/b: must be true or false, got \"yes\"");
  CHECK(e.list()[2].to_string() == "/p/k: must be one of: red, green; got \"blue\"");
  CHECK(e.list()[3].to_string() == "/p/k3: is required (one of: red)");
}

TEST_CASE("get_int_list reports each bad element by index and keeps the old list", "[spec][json_reader]") {
  const Json j = {{"ok", {1, 2, 3}}, {"bad", {1, 0, "x", 4}}, {"long", {1, 2, 3}}};
  Errors e;
  ObjectReader r(j, "", e);
  std::vector<std::int64_t> ok, bad = {9}, lng;
  CHECK(r.get_int_list("ok", ok, 1, 4, 8));
  CHECK(ok == std::vector<std::int64_t>{1, 2, 3});
  CHECK_FALSE(r.get_int_list("bad", bad, 1, 4, 8));
  CHECK(bad == std::vector<std::int64_t>{9});
  CHECK_FALSE(r.get_int_list("long", lng, 1, 4, 2));
  REQUIRE(e.list().size() == 3);
  CHECK(e.list()[0].to_string() == "/bad/1: must be an integer between 1 and 4, got 0");
  CHECK(e.list()[1].to_string() == "/bad/2: must be an integer between 1 and 4, got \"x\"");
  CHECK(e.list()[2].to_string() == "/long: must be an array of at most 2 integers");
}

TEST_CASE("unknown keys are reported once, unless ignored or allowed", "[spec][json_reader]") {
  const Json j = {{"a", 1}, {"doc", "x"}, {"zz", 2}};
  Errors e;
  {
    ObjectReader r(j, "/w", e);
    std::int64_t a = 0;
    r.get_int("a", a, 0, 5);
    r.ignore({"doc"});
    CHECK(r.unread_keys() == std::vector<std::string>{"zz"});
    r.finish();
    r.finish();  // idempotent
  }              // and the destructor adds nothing more
  REQUIRE(e.list().size() == 1);
  CHECK(e.list()[0].to_string() == "/w/zz: unknown key (known keys here: a, doc)");

  Errors e2;
  {
    ObjectReader r(j, "/w", e2);
    r.allow_unknown();
    CHECK(r.unread_keys().size() == 3);
  }
  CHECK(e2.ok());
}

TEST_CASE("a non-object is reported at its path and reads nothing", "[spec][json_reader]") {
  Errors e;
  const Json three = 3;
  ObjectReader r(three, "/q", e);
  CHECK_FALSE(r.valid());
  std::int64_t x = 1;
  CHECK_FALSE(r.get_int("a", x, 0, 5, true));  // no second error for a missing field of a non-object
  CHECK_FALSE(r.has("a"));
  CHECK(r.raw("a") == nullptr);
  r.finish();
  CHECK(e.joined() == "/q: must be an object, got 3\n");
}
