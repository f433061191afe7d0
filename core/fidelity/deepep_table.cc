#include "core/fidelity/deepep_table.h"

#include <array>
#include <cstdlib>
#include <map>
#include <utility>

namespace servesim {

namespace {

int field_index(const OpTable& t, const char* name) {
  for (std::size_t i = 0; i < t.key_fields.size(); ++i)
    if (t.key_fields[i] == name) return static_cast<int>(i);
  return -1;
}

double log_distance(std::int64_t a, std::int64_t b) {
  const double d = interp_log(static_cast<double>(a)) - interp_log(static_cast<double>(b));
  return d < 0 ? -d : d;
}

}  // namespace

DeepEpTable::DeepEpTable(const OpTable& table, std::int64_t hidden, std::int64_t topk, std::int64_t experts,
                         std::int64_t sms)
    : topk_(topk), experts_(experts), hidden_(hidden) {
  const int f_phase = field_index(table, "phase"), f_hidden = field_index(table, "hidden"),
            f_topk = field_index(table, "topk"), f_experts = field_index(table, "experts"),
            f_sms = field_index(table, "sms");
  if (f_phase < 0 || f_hidden < 0 || f_topk < 0 || f_experts < 0 || hidden <= 0 || topk <= 0 || experts <= 0) return;
  // (topk, experts) -> hidden -> grid per phase; only grids with both phases count as measured shapes.
  std::map<std::pair<std::int64_t, std::int64_t>, std::map<std::int64_t, std::array<const OpGrid*, 2>>> shapes;
  for (const OpGrid& g : table.grids) {
    if (g.axes.size() != 1) continue;
    if (f_sms >= 0 && std::atoll(g.key[f_sms].c_str()) != sms) continue;
    const std::string& ph = g.key[f_phase];
    const int side = ph == "dispatch" ? 0 : (ph == "combine" ? 1 : -1);
    if (side < 0) continue;
    std::array<const OpGrid*, 2>& slot = shapes[{std::atoll(g.key[f_topk].c_str()), std::atoll(g.key[f_experts].c_str())}]
                       [std::atoll(g.key[f_hidden].c_str())];
    slot[side] = &g;
  }
  for (auto& s : shapes) {
    for (auto it = s.second.begin(); it != s.second.end();)
      it = (it->second[0] && it->second[1]) ? std::next(it) : s.second.erase(it);
  }
  // The model's (topk, experts), else the nearest measured pair: top-k first (it sets how many ranks each token
  // reaches, so the bytes moved), then the expert count; ties go to the smaller pair (map order).
  const std::pair<std::int64_t, std::int64_t>* best = nullptr;
  double best_k = 0, best_e = 0;
  for (const auto& s : shapes) {
    if (s.second.empty()) continue;
    const double dk = log_distance(s.first.first, topk), de = log_distance(s.first.second, experts);
    if (!best || dk < best_k || (dk == best_k && de < best_e)) {
      best = &s.first;
      best_k = dk;
      best_e = de;
    }
  }
  if (!best) return;
  config_flag_ = best->first != topk || best->second != experts;
  topk_ = best->first;
  experts_ = best->second;
  const auto& by_hidden = shapes.at(*best);
  // Hidden sizes around the model's: linear between them; outside, the nearest edge (scaled above the largest).
  auto hi_it = by_hidden.lower_bound(hidden);
  const std::array<const OpGrid*, 2>* lo = nullptr;
  const std::array<const OpGrid*, 2>* hi = nullptr;
  if (hi_it == by_hidden.end()) {
    const auto last = std::prev(by_hidden.end());
    lo = hi = &last->second;
    h_lo_ = h_hi_ = last->first;
    hidden_flag_ = true;
    scale_ = static_cast<double>(hidden) / static_cast<double>(last->first);
  } else if (hi_it->first == hidden || hi_it == by_hidden.begin()) {
    lo = hi = &hi_it->second;
    h_lo_ = h_hi_ = hi_it->first;
    hidden_flag_ = hi_it->first != hidden;
  } else {
    const auto lo_it = std::prev(hi_it);
    lo = &lo_it->second;
    hi = &hi_it->second;
    h_lo_ = lo_it->first;
    h_hi_ = hi_it->first;
  }
  const double w = h_hi_ == h_lo_ ? 0.0
                                  : static_cast<double>(hidden - h_lo_) / static_cast<double>(h_hi_ - h_lo_);
  for (int p = 0; p < 2; ++p) {
    side_[p].lo = LogCurve((*lo)[p]->axes[0], (*lo)[p]->values);
    side_[p].hi = LogCurve((*hi)[p]->axes[0], (*hi)[p]->values);
    side_[p].w = w;
  }
  ok_ = !side_[0].lo.empty() && !side_[1].lo.empty() && !side_[0].hi.empty() && !side_[1].hi.empty();
}

double DeepEpTable::us(DeepEpPhase phase, double tokens, bool* extrapolated) const {
  if (!ok_ || tokens <= 0) return 0;
  bool flag = config_flag_ || hidden_flag_;
  auto at = [tokens, &flag](const LogCurve& c) {
    const double top = c.xs().back();
    if (tokens > top) {  // bandwidth-bound beyond the largest measurement: linear in the bytes moved
      flag = true;
      return c.ys().back() * (tokens / top);
    }
    return c.eval_affine(tokens, &flag);
  };
  const Side& s = side_[static_cast<int>(phase)];
  double v = at(s.lo);
  if (s.w > 0) v = (1 - s.w) * v + s.w * at(s.hi);
  v *= scale_;
  if (extrapolated && flag) *extrapolated = true;
  return v;
}

std::string DeepEpTable::describe() const {
  if (!ok_) return "";
  std::string h = h_lo_ == h_hi_ ? key_int(h_lo_) : key_int(hidden_) + " (between " + key_int(h_lo_) + " and " +
                                                        key_int(h_hi_) + ")";
  std::string d = "hidden " + h + ", topk " + key_int(topk_) + ", experts " + key_int(experts_);
  if (config_flag_ || hidden_flag_) d += ", nearest measured shape";
  return d;
}

}  // namespace servesim
