#pragma once
/// Global routers: pick the replica a new request goes to.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/execution/replica.h"

namespace servesim {

/// A routing policy over the replicas of one role.
class Router {
 public:
  virtual ~Router() = default;
  /// Index into `replicas` (non-empty).
  virtual std::size_t pick(const Request& r, const std::vector<Replica*>& replicas) = 0;
};

/// Cycles through replicas in order.
class RoundRobinRouter : public Router {
 public:
  std::size_t pick(const Request&, const std::vector<Replica*>& replicas) override {
    return next_++ % replicas.size();
  }

 private:
  std::size_t next_ = 0;
};

/// The replica with the fewest outstanding tokens (prompts not yet past their first token + ungenerated
/// output); ties go to
/// the lowest index.
class LeastOutstandingTokensRouter : public Router {
 public:
  std::size_t pick(const Request&, const std::vector<Replica*>& replicas) override;
};

enum class RouterKind { kRoundRobin, kLeastOutstandingTokens };

/// Registry: name <-> kind, factory.
bool router_from_string(const std::string& name, RouterKind& out);
const char* router_to_string(RouterKind k);
std::unique_ptr<Router> make_router(RouterKind k);

}  // namespace servesim
