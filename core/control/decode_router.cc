#include "core/control/decode_router.h"

#include <algorithm>

namespace servesim {

double DecodeInstanceState::current_load() const {
  double load = 0;
  for (const Request* k : active) load += static_cast<double>(k->prompt_tokens) + k->generated;
  return load;
}

namespace {

std::size_t argmin(const std::vector<double>& v) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] < v[best]) best = i;
  return best;
}

class RoundRobinDecodeRouter : public DecodeRouter {
 public:
  std::size_t pick(const Request&, SimTime, const std::vector<DecodeInstanceState>& d) override {
    return next_++ % d.size();
  }

 private:
  std::size_t next_ = 0;
};

/// Instantaneous least load (ILS): the smallest token occupancy now, blind to what is in flight.
class LeastLoadDecodeRouter : public DecodeRouter {
 public:
  std::size_t pick(const Request&, SimTime, const std::vector<DecodeInstanceState>& d) override {
    std::vector<double> load(d.size());
    for (std::size_t j = 0; j < d.size(); ++j) load[j] = d[j].current_load();
    return argmin(load);
  }
};

/// SIBYL: minimises the projected load at the handoff moment tau (Eq. 1).
class SibylDecodeRouter : public DecodeRouter {
 public:
  SibylDecodeRouter(const SibylSpec& spec, std::int64_t max_output, HandoffEstimate est, double decode_rate)
      : spec_(spec), survival_(spec.bucket_tokens, max_output, spec.ema_alpha), est_(std::move(est)),
        v_sys_(decode_rate) {}

  std::size_t pick(const Request& r, SimTime now, const std::vector<DecodeInstanceState>& d) override {
    const SimTime tau = now + est_(r);  // Algorithm 1, lines 2-3
    if (static_cast<std::size_t>(r.id) >= tau_.size()) tau_.resize(static_cast<std::size_t>(r.id) + 1, 0);
    tau_[static_cast<std::size_t>(r.id)] = tau;
    const bool prob = spec_.variant != "prob_at_1";
    const bool tokens = spec_.variant != "request_level";
    std::vector<double> load(d.size(), 0.0);
    for (std::size_t j = 0; j < d.size(); ++j) {
      double L = 0;
      if (spec_.variant != "no_type1") {
        for (const Request* k : d[j].active) {  // Type 1, Eq. 6
          const double l_now = k->generated;
          const double elapsed = as_sec(now - k->transfer_end);
          const double v_k = elapsed > 0 && k->generated > 1 ? (k->generated - 1) / elapsed : v_sys_;
          const double l_tau = l_now + v_k * as_sec(tau - now);
          const double M = tokens ? k->prompt_tokens + l_tau : 1.0;
          L += M * (prob ? survival_.conditional(l_now, l_tau) : 1.0);
        }
      }
      for (const Request* k : d[j].pending) {
        const double gap = as_sec(tau - tau_[static_cast<std::size_t>(k->id)]) * v_sys_;
        if (gap > 0) {
          if (spec_.variant == "no_type2") continue;  // Type 2, Eq. 7
          const double M = tokens ? k->prompt_tokens + gap : 1.0;
          L += M * (prob ? survival_.survival(gap) : 1.0);
        } else {
          if (spec_.variant == "no_type3") continue;  // Type 3, Eq. 8: ReLU(l_in - v_sys (tau_k - tau))
          // Algorithm 1 line 17 prints max(0, l_in - gap), which grows with distance; Eq. 8's decay is used.
          const double x = k->prompt_tokens + gap;
          L += tokens ? std::max(0.0, x) : (x > 0 ? 1.0 : 0.0);
        }
      }
      load[j] = L;
    }
    return argmin(load);
  }

  void on_completed(const Request& r) override {
    survival_.observe(r.generated);
    const double decode_s = as_sec(r.finished - r.transfer_end);
    if (decode_s > 0 && r.generated > 1) v_sys_ = 0.9 * v_sys_ + 0.1 * ((r.generated - 1) / decode_s);
  }

 private:
  SibylSpec spec_;
  SurvivalEstimator survival_;
  HandoffEstimate est_;
  double v_sys_;                // system-average decode speed, tokens/s per request (EMA over completions)
  std::vector<SimTime> tau_;    // projected handoff time per request id
};

}  // namespace

std::unique_ptr<DecodeRouter> make_decode_router(const std::string& name, const SibylSpec& sibyl,
                                                 std::int64_t max_output, HandoffEstimate estimate,
                                                 double decode_rate) {
  if (name == "least_load") return std::make_unique<LeastLoadDecodeRouter>();
  if (name == "sibyl") return std::make_unique<SibylDecodeRouter>(sibyl, max_output, std::move(estimate), decode_rate);
  return std::make_unique<RoundRobinDecodeRouter>();
}

}  // namespace servesim
