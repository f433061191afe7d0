#include "core/fidelity/afd_cost_model.h"

#include <algorithm>
#include <cstdio>

namespace servesim {

namespace {

constexpr int kF = static_cast<int>(OpFamily::kCount);

bool ffn_family(OpFamily f) { return f == OpFamily::kMoe || f == OpFamily::kAllToAll; }

/// The share of `total` that layer `l` of `layers` gets: an exact integer partition (shares sum to total),
/// floor(total (l + 1) / layers) - floor(total l / layers) computed without the products, which pass int64 for a
/// total near the horizon.
SimTime layer_share(SimTime total, int l, int layers) {
  const SimTime q = total / layers, r = total % layers;
  return q + r * (l + 1) / layers - r * l / layers;
}

}  // namespace

AfdCostModel::AfdCostModel(std::unique_ptr<CostModel> attention, std::unique_ptr<CostModel> ffn, int micro_batches,
                           AfdLink link, int layers, double hidden)
    : attention_(std::move(attention)),
      ffn_(std::move(ffn)),
      m_(std::max(1, micro_batches)),
      link_(link),
      layers_(std::max(1, layers)),
      hidden_(hidden) {}

SimTime AfdCostModel::transfer_ns(std::int64_t tokens) const {
  if (tokens <= 0) return 0;
  const double bytes = static_cast<double>(tokens) * hidden_ * 2.0;  // 16-bit activations
  return add_spans(span_ns(bytes / link_.bytes_per_s * 1e9), link_.latency);
}

BatchCost AfdCostModel::price(const BatchShape& s) {
  split_batch(s, m_, parts_);
  // Busy time per family over all micro-batches; per micro-batch per-layer durations on A, F and the link.
  std::int64_t busy[kF] = {};
  struct Part {
    SimTime attn_layers = 0, ffn_layers = 0, embed = 0, head = 0, xfer = 0;
  };
  std::vector<Part> p;
  for (const BatchShape& mb : parts_) {
    if (mb.num_tokens + mb.padded_tokens <= 0) continue;
    const BatchCost a = attention_->price(mb);
    const BatchCost f = ffn_->price(mb);
    Part q;
    for (int i = 0; i < kF; ++i) {
      const auto fam = static_cast<OpFamily>(i);
      if (fam == OpFamily::kOverhead || fam == OpFamily::kPipelineP2p) continue;  // once per batch, below
      busy[i] = add_spans(busy[i], a.by_family[i] + f.by_family[i]);
      if (fam == OpFamily::kEmbedding) q.embed += a.by_family[i];
      else if (fam == OpFamily::kLmHead) q.head += a.by_family[i];
      else q.attn_layers += a.by_family[i];
      q.ffn_layers += f.by_family[i];
    }
    q.xfer = transfer_ns(mb.num_tokens + mb.padded_tokens);
    busy[static_cast<int>(OpFamily::kAfTransfer)] =
        add_spans(busy[static_cast<int>(OpFamily::kAfTransfer)], span_ns(2.0 * layers_ * static_cast<double>(q.xfer)));
    p.push_back(q);
  }
  AfdSchedule sc;
  sc.micro_batches = static_cast<int>(p.size());
  // List schedule over (layer, micro-batch), its sums held at the horizon (add_spans).
  SimTime a_free = 0, f_free = 0, af_free = 0, fa_free = 0;
  std::vector<SimTime> ready(p.size(), 0);
  for (int l = 0; l < layers_; ++l) {
    for (std::size_t j = 0; j < p.size(); ++j) {
      const Part& q = p[j];
      const SimTime a_dur = layer_share(q.attn_layers, l, layers_) + (l == 0 ? q.embed : 0);
      const SimTime a_end = add_spans(std::max(a_free, ready[j]), a_dur);
      a_free = a_end;
      const SimTime sent = add_spans(std::max(a_end, af_free), q.xfer);
      af_free = sent;
      const SimTime f_end = add_spans(std::max(sent, f_free), layer_share(q.ffn_layers, l, layers_));
      f_free = f_end;
      const SimTime back = add_spans(std::max(f_end, fa_free), q.xfer);
      fa_free = back;
      ready[j] = back;
      sc.attention_busy = add_spans(sc.attention_busy, a_dur);
      sc.ffn_busy = add_spans(sc.ffn_busy, layer_share(q.ffn_layers, l, layers_));
      sc.transfer_busy = add_spans(sc.transfer_busy, 2 * q.xfer);
    }
  }
  for (std::size_t j = 0; j < p.size(); ++j) {
    a_free = add_spans(std::max(a_free, ready[j]), p[j].head);
    sc.attention_busy = add_spans(sc.attention_busy, p[j].head);
  }
  sc.span = a_free;
  sc.serial = add_spans(add_spans(sc.attention_busy, sc.ffn_busy), sc.transfer_busy);
  // Host overhead once for the whole batch (the A replica schedules it), and the pipeline sends.
  const BatchCost whole = attention_->price(s);
  const SimTime overhead = whole.by_family[static_cast<int>(OpFamily::kOverhead)];
  const SimTime p2p = whole.by_family[static_cast<int>(OpFamily::kPipelineP2p)];
  sc.serial_extra = add_spans(overhead, p2p);

  // Attribution: overlapped families scaled by span / serial (shares of the resource-busy time), the
  // rounding remainder to the largest family, so the families sum exactly to the iteration. The shares divide by
  // the families' own sum, which is `serial` unless the horizon held some of them (then they still sum to the span).
  double busy_sum = 0;
  for (std::int64_t b : busy) busy_sum += static_cast<double>(b);
  BatchCost c;
  SimTime assigned = 0;
  int largest = -1;
  for (int i = 0; i < kF; ++i) {
    if (busy[i] <= 0) continue;
    c.by_family[i] = static_cast<SimTime>(static_cast<double>(busy[i]) * static_cast<double>(sc.span) / busy_sum);
    assigned += c.by_family[i];
    if (largest < 0 || busy[i] > busy[largest]) largest = i;
  }
  if (largest >= 0) c.by_family[largest] += sc.span - assigned;
  c.by_family[static_cast<int>(OpFamily::kOverhead)] += overhead;
  c.by_family[static_cast<int>(OpFamily::kPipelineP2p)] += p2p;
  sum_families(c);  // span + overhead + p2p
  // With pp > 1 each stage is an A/F pair of its own layers; the replica keeps up to pp batches in flight
  // (core/execution/replica.cc), each stage taking an even share of the schedule.
  split_pipeline(c, pipeline_stages(), 0);
  last_ = sc;
  return c;
}

PriceSource AfdCostModel::source(OpFamily f) const {
  if (f == OpFamily::kAfTransfer) return PriceSource::kRoofline;
  return ffn_family(f) ? ffn_->source(f) : attention_->source(f);
}

std::string AfdCostModel::describe() const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%d micro-batches, activation link %.1f GB/s", m_, link_.bytes_per_s / 1e9);
  return "A/F: attention on " + attention_->describe() + " | FFN on " + ffn_->describe() + " | " + buf;
}

}  // namespace servesim
