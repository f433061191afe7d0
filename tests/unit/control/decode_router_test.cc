#include "core/control/decode_router.h"

#include <catch2/catch.hpp>

using namespace servesim;

namespace {
Request decoding(std::int64_t id, int prompt, int generated, SimTime landed) {
  Request r;
  r.id = id;
  r.prompt_tokens = prompt;
  r.generated = generated;
  r.output_tokens = 8192;
  r.transfer_end = landed;
  return r;
}
}  // namespace

TEST_CASE("least load picks the smallest token occupancy and ignores pending work", "[control][decode_router]") {
  auto router = make_decode_router("least_load", {}, 8192, [](const Request&) { return SimTime{0}; }, 10.0);
  Request a = decoding(0, 1000, 10, 0), b = decoding(1, 100, 10, 0), big = decoding(2, 5000, 0, -1);
  std::vector<DecodeInstanceState> d(2);
  d[0].active = {&a};
  d[1].active = {&b};
  d[1].pending = {&big};  // invisible to an instantaneous snapshot
  Request r = decoding(3, 10, 0, -1);
  CHECK(router->pick(r, 0, d) == 1);
}

TEST_CASE("SIBYL counts pending prefills that will land before the new request", "[control][decode_router]") {
  // Every prefill is estimated at 1 s; a request submitted earlier lands earlier (Type 2 shadow).
  SibylSpec spec;
  auto router = make_decode_router("sibyl", spec, 8192, [](const Request&) { return from_sec(1.0); }, 10.0);
  std::vector<DecodeInstanceState> d(2);
  Request a = decoding(0, 1000, 10, 0);
  d[0].active = {&a};  // instance 0 is busier now...
  Request shadow = decoding(1, 0, 0, -1);
  shadow.prompt_tokens = 4000;
  CHECK(router->pick(shadow, 0, d) == 1);  // ...so the big prompt goes to 1 (tau_1 = 1 s)
  d[1].pending = {&shadow};
  Request r = decoding(2, 10, 0, -1);
  // At t = 0.5 s, r lands at 1.5 s, after the shadow (Type 2): instance 1 will hold ~4000 tokens, instance 0 ~1000.
  CHECK(router->pick(r, from_sec(0.5), d) == 0);
  // A least-load router would have sent it to the empty-looking instance 1.
  auto ils = make_decode_router("least_load", {}, 8192, [](const Request&) { return SimTime{0}; }, 10.0);
  CHECK(ils->pick(r, from_sec(0.5), d) == 1);
}

TEST_CASE("SIBYL's no_type2 variant ignores pre-handoff shadows", "[control][decode_router]") {
  SibylSpec spec;
  spec.variant = "no_type2";
  auto router = make_decode_router("sibyl", spec, 8192, [](const Request&) { return from_sec(1.0); }, 10.0);
  std::vector<DecodeInstanceState> d(2);
  Request a = decoding(0, 1000, 10, 0);
  d[0].active = {&a};
  Request shadow = decoding(1, 4000, 0, -1);
  CHECK(router->pick(shadow, 0, d) == 1);
  d[1].pending = {&shadow};
  Request r = decoding(2, 10, 0, -1);
  CHECK(router->pick(r, from_sec(0.5), d) == 1);
}

TEST_CASE("round robin cycles over decode instances", "[control][decode_router]") {
  auto router = make_decode_router("round_robin", {}, 8192, [](const Request&) { return SimTime{0}; }, 10.0);
  std::vector<DecodeInstanceState> d(3);
  Request r;
  CHECK(router->pick(r, 0, d) == 0);
  CHECK(router->pick(r, 0, d) == 1);
  CHECK(router->pick(r, 0, d) == 2);
  CHECK(router->pick(r, 0, d) == 0);
}
