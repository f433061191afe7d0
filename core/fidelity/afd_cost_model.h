#pragma once
/// Attention/FFN disaggregation (Frontier Sec. 3.2, Appendix A.3): one decode iteration of an AF instance (an A
/// replica paired with an F replica) as an explicit schedule over (layer, micro-batch).
///
/// The batch is split into m micro-batches (split_batch: balanced by requests and context). For every layer
/// each micro-batch runs attention on A, sends its activations A->F (tokens x hidden x 2 bytes), runs the
/// FFN/MoE on F (EP dispatch, slowest rank, combine) and sends them back F->A. A, F and the two link directions
/// are each one resource used in order, so attention of one micro-batch overlaps the FFN of another
/// (ping-pong). List scheduling in the fixed order (layer, micro-batch) on integer nanoseconds:
///   a_start = max(A free, micro-batch back from F);  send = max(a_end, A->F link free)
///   f_start = max(send end, F free);                 back = max(f_end, F->A link free) + transfer
/// The embedding runs before a micro-batch's first layer and the LM head after its last, both on A; the host
/// overhead of the whole batch and pipeline sends are serial. Per-op prices come from two cost models that
/// price only their domain (CostPart): attention on A's GPU and parallelism, FFN on F's.
#include <memory>
#include <string>
#include <vector>

#include "core/fidelity/batch_split.h"
#include "core/fidelity/cost_model.h"

namespace servesim {

/// The activation link between A and F.
struct AfdLink {
  double bytes_per_s = 50e9;  ///< achieved bandwidth of one direction for one AF instance
  SimTime latency = 10000;    ///< per-transfer latency, ns
};

/// What the last priced iteration's schedule looked like (for tests and the trace).
struct AfdSchedule {
  SimTime span = 0;            ///< first attention to the last LM head (overlapped part)
  SimTime serial = 0;          ///< the same work with no overlap: sum of every attention, FFN and transfer
  SimTime attention_busy = 0;  ///< time A computes (layers, embedding, LM head)
  SimTime ffn_busy = 0;        ///< time F computes
  SimTime transfer_busy = 0;   ///< A->F plus F->A transfer time
  SimTime serial_extra = 0;    ///< host overhead and pipeline sends, added after the span
  int micro_batches = 0;       ///< non-empty micro-batches
};

class AfdCostModel : public CostModel {
 public:
  /// `attention` prices CostPart::kAttention on A, `ffn` CostPart::kFfn on F; `layers`, `hidden` from the model.
  AfdCostModel(std::unique_ptr<CostModel> attention, std::unique_ptr<CostModel> ffn, int micro_batches, AfdLink link,
               int layers, double hidden);
  /// Families of the iteration scaled so they sum to its time: each family's busy time x span / serial,
  /// host overhead and pipeline sends as they are; af_transfer is the (scaled) activation transfer time.
  BatchCost price(const BatchShape& shape) override;
  PriceSource source(OpFamily f) const override;
  /// A and F share pp (validated), so the AF instance pipelines like any replica.
  int pipeline_stages() const override { return attention_->pipeline_stages(); }
  std::string describe() const override;
  FidelityReport report() const override { return attention_->report(); }
  /// The FFN side's model (the F role reports its fidelity from it).
  const CostModel& ffn() const { return *ffn_; }
  const AfdSchedule& last_schedule() const { return last_; }
  /// One activation transfer of `tokens` tokens (one direction, one layer), ns.
  SimTime transfer_ns(std::int64_t tokens) const;

 private:
  std::unique_ptr<CostModel> attention_, ffn_;
  int m_;
  AfdLink link_;
  int layers_;
  double hidden_;
  AfdSchedule last_;
  std::vector<BatchShape> parts_;
};

}  // namespace servesim
