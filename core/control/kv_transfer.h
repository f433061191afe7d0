#pragma once
/// KV-cache transfers from prefill (P) to decode (D) replicas. Pull-based: a finished prefill waits in its
/// target D's queue; D pulls (reserves blocks) only when its free pool can hold the prompt, so P keeps the
/// KV until then (back-pressure). A D whose scheduler books whole requests (TRT-LLM's GUARANTEED_NO_EVICT) pulls
/// only when the request's whole length fits the blocks neither its scheduler nor the transfers under way have
/// booked, and the transfer books the rest of the request's length until it lands. Concurrent transfers share links:
/// each transfer runs at min(P egress / transfers leaving that P, D ingress / transfers entering that D), recomputed
/// whenever a transfer starts or ends; a fixed setup latency follows the data.
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "core/control/cluster.h"
#include "core/sim/simulator.h"

namespace servesim {

class KvTransferManager : public EventHandler {
 public:
  /// Called when a request's KV has landed on its decode replica.
  using LandedFn = std::function<void(Simulator&, Request&)>;
  /// KV bytes a prompt of that many tokens sends (kv_transfer_bytes).
  using PromptBytesFn = std::function<double(std::int64_t)>;
  /// Bandwidths are per replica (all its GPUs), bytes/s.
  KvTransferManager(Cluster& cluster, PromptBytesFn prompt_bytes, double p_bytes_per_s, double d_bytes_per_s,
                    SimTime latency, LandedFn landed);
  /// A prefill finished: queue the request at its decode target and pull if blocks allow.
  void request_pull(Simulator& sim, Request& r);
  /// Retries queued pulls of decode replica `d` (global index) after its pool may have grown.
  void try_pull(Simulator& sim, int d);
  bool has_waiting(int d) const { return !queues_[local(d)].empty(); }
  void on_event(Simulator& sim, const Event& ev) override;
  std::int64_t transfers_done() const { return done_; }
  double bytes_moved() const { return bytes_moved_; }

 private:
  enum Kind : std::int32_t { kDataDone = 1, kLanded = 2 };
  struct Transfer {
    Request* req = nullptr;
    double remaining = 0;  // bytes
    double rate = 0;       // bytes/s
    SimTime last = 0;
    std::uint32_t version = 0;
    int p = -1, d = -1;    // global replica indices
    std::int64_t booked = 0;  // D blocks promised to the request beyond those it holds (whole-request booking)
    bool active = false;
  };
  int local(int d) const { return d - d_base_; }
  void start(Simulator& sim, Request& r, std::int64_t booked);
  /// Brings every transfer touching P `p` or D `d` up to now and re-times it.
  void retime(Simulator& sim, int p, int d);

  Cluster& cluster_;
  PromptBytesFn prompt_bytes_;
  double p_bw_, d_bw_;
  SimTime latency_;
  LandedFn landed_;
  int d_base_ = 0;                          // global index of the first D replica
  std::vector<std::deque<Request*>> queues_;  // per D replica, FIFO
  std::vector<Transfer> slots_;
  std::vector<int> free_slots_;
  std::vector<int> active_;                 // slot ids of transfers moving data
  std::vector<int> from_p_, to_d_;          // active transfer counts per global replica index
  std::vector<std::int64_t> booked_;        // per D replica: blocks the transfers into it have booked
  std::int64_t done_ = 0;
  double bytes_moved_ = 0;
};

}  // namespace servesim
