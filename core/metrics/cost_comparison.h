#pragma once
/// Frontier's heterogeneous-GPU scores (seed 000, Sec. 6.3) of a run against a baseline run:
/// SR = Price(baseline) / Price(run) (spend ratio: > 1 is cheaper), and
/// CE = (T(run) / Price(run)) / (T(baseline) / Price(baseline)) (cost efficiency: > 1 is more tokens per
/// dollar), with Price the deployment's $/hour and T its aggregated token throughput.
#include <string>

namespace servesim {

/// Adds {"baseline": {name, usd_per_hour, total_token_throughput, spend_ratio, cost_efficiency}} to a result
/// document given the baseline's result document. Returns the new document, or "" when either is not a
/// result or a price is missing (the message goes to `error`).
std::string add_baseline_comparison(const std::string& result_json, const std::string& baseline_json,
                                    std::string& error);

}  // namespace servesim
