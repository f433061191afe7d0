#include "core/control/router.h"

namespace servesim {

std::size_t LeastOutstandingTokensRouter::pick(const Request&, const std::vector<Replica*>& replicas) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < replicas.size(); ++i)
    if (replicas[i]->outstanding_tokens() < replicas[best]->outstanding_tokens()) best = i;
  return best;
}

namespace {
struct Entry {
  RouterKind kind;
  const char* name;
};
constexpr Entry kRouters[] = {{RouterKind::kRoundRobin, "round_robin"},
                              {RouterKind::kLeastOutstandingTokens, "least_outstanding_tokens"}};
}  // namespace

bool router_from_string(const std::string& name, RouterKind& out) {
  for (const auto& e : kRouters)
    if (name == e.name) {
      out = e.kind;
      return true;
    }
  return false;
}

const char* router_to_string(RouterKind k) {
  for (const auto& e : kRouters)
    if (e.kind == k) return e.name;
  return "?";
}

std::unique_ptr<Router> make_router(RouterKind k) {
  switch (k) {
    case RouterKind::kRoundRobin: return std::make_unique<RoundRobinRouter>();
    case RouterKind::kLeastOutstandingTokens: return std::make_unique<LeastOutstandingTokensRouter>();
  }
  return nullptr;
}

}  // namespace servesim
