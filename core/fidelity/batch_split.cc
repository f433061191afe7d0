#include "core/fidelity/batch_split.h"

#include <algorithm>
#include <cstdint>

namespace servesim {

namespace {

struct Item {
  std::int64_t tokens = 0, context = 0;
  int index = 0;       // decode i, or num_decode + prefill chunk i
  bool decode = false;
};

struct Load {
  std::int64_t tokens = 0, context = 0, requests = 0;
};

}  // namespace

void split_batch(const BatchShape& s, int parts, std::vector<BatchShape>& out) {
  if (parts < 1) parts = 1;
  out.assign(static_cast<std::size_t>(parts), BatchShape());
  std::vector<Item> items;
  const int decodes = static_cast<int>(s.decode_contexts.size());
  items.reserve(static_cast<std::size_t>(decodes) + s.prefills.size());
  for (int i = 0; i < decodes; ++i) items.push_back({1, s.decode_contexts[static_cast<std::size_t>(i)], i, true});
  if (decodes == 0 && s.num_decode > 0) {  // a shape without per-request lengths: the mean for every request
    const std::int64_t mean = s.decode_context_sum / s.num_decode;
    for (int i = 0; i < s.num_decode; ++i) items.push_back({1, mean, i, true});
  }
  const int nd = static_cast<int>(items.size());
  for (std::size_t i = 0; i < s.prefills.size(); ++i)
    items.push_back({s.prefills[i].q, s.prefills[i].context, nd + static_cast<int>(i), false});
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.tokens != b.tokens) return a.tokens > b.tokens;
    if (a.context != b.context) return a.context > b.context;
    return a.index < b.index;
  });
  std::vector<Load> load(static_cast<std::size_t>(parts));
  for (const Item& it : items) {
    std::size_t best = 0;
    for (std::size_t p = 1; p < load.size(); ++p) {
      const Load& a = load[p];
      const Load& b = load[best];
      if (a.tokens != b.tokens ? a.tokens < b.tokens
                               : a.context != b.context ? a.context < b.context : a.requests < b.requests)
        best = p;
    }
    load[best].tokens += it.tokens;
    load[best].context += it.context;
    ++load[best].requests;
    BatchShape& o = out[best];
    o.num_tokens += it.tokens;
    if (it.decode) {
      ++o.num_decode;
      o.decode_context_sum += it.context;
      o.decode_context_max = std::max(o.decode_context_max, it.context);
      o.decode_contexts.push_back(static_cast<std::int32_t>(it.context));
    } else {
      o.prefills.push_back({static_cast<std::int32_t>(it.tokens), it.context});
    }
  }
  std::int64_t sampled = s.num_sampled;
  for (BatchShape& o : out) {  // decode rows are always sampled
    const std::int64_t take = std::min<std::int64_t>(sampled, o.num_decode);
    o.num_sampled = static_cast<std::int32_t>(take);
    sampled -= take;
  }
  for (BatchShape& o : out) {
    const std::int64_t take = std::min<std::int64_t>(sampled, static_cast<std::int64_t>(o.prefills.size()));
    o.num_sampled += static_cast<std::int32_t>(take);
    sampled -= take;
  }
  for (int p = 0; p < parts; ++p) {
    BatchShape& o = out[static_cast<std::size_t>(p)];
    o.padded_tokens = s.padded_tokens / parts + (p < s.padded_tokens % parts ? 1 : 0);
    o.cuda_graph = s.cuda_graph;
  }
}

}  // namespace servesim
