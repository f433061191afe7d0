#include "core/control/kv_transfer.h"

#include <algorithm>

#include "core/sim/check.h"

namespace servesim {

KvTransferManager::KvTransferManager(Cluster& cluster, PromptBytesFn prompt_bytes, double p_bytes_per_s,
                                     double d_bytes_per_s, SimTime latency, LandedFn landed)
    : cluster_(cluster),
      prompt_bytes_(std::move(prompt_bytes)),
      p_bw_(p_bytes_per_s),
      d_bw_(d_bytes_per_s),
      latency_(latency),
      landed_(std::move(landed)) {
  const RoleCluster& d = cluster_.roles[cluster_.decode_role];
  d_base_ = d.replicas.front()->index();
  queues_.resize(d.replicas.size());
  booked_.assign(d.replicas.size(), 0);
  from_p_.assign(cluster_.all_replicas.size(), 0);
  to_d_.assign(cluster_.all_replicas.size(), 0);
}

void KvTransferManager::request_pull(Simulator& sim, Request& r) {
  queues_[local(r.decode_target)].push_back(&r);
  try_pull(sim, r.decode_target);
}

void KvTransferManager::try_pull(Simulator& sim, int d) {
  auto& q = queues_[local(d)];
  Replica& replica = *cluster_.all_replicas[d];
  KvBlockManager& kv = replica.kv_mutable();
  const Scheduler& scheduler = replica.scheduler();
  // FIFO: a large prompt at the head is not overtaken (no starvation).
  while (!q.empty()) {
    Request& r = *q.front();
    const std::int64_t whole_blocks = scheduler.whole_request_blocks(kv, r);
    const bool whole = whole_blocks > 0;
    if (whole && whole_blocks > kv.free_blocks() - replica.booked_blocks() - booked_[local(d)]) break;
    // Room for the prompt's KV and the first decode step's token, so the request can start without
    // allocating again once it lands (and the engine's watermark, which whole-request booking does without).
    if (!kv.allocate(r, static_cast<std::int64_t>(r.prompt_tokens) + 1, !whole)) break;
    q.pop_front();
    start(sim, r, whole ? std::max<std::int64_t>(0, whole_blocks - r.num_blocks) : 0);
  }
}

void KvTransferManager::start(Simulator& sim, Request& r, std::int64_t booked) {
  int id;
  if (!free_slots_.empty()) {
    id = free_slots_.back();
    free_slots_.pop_back();
  } else {
    id = static_cast<int>(slots_.size());
    slots_.emplace_back();
  }
  Transfer& t = slots_[id];
  t.req = &r;
  t.remaining = prompt_bytes_(r.prompt_tokens);
  t.rate = 0;
  t.last = sim.now();
  t.p = r.prefill_replica;
  t.d = r.decode_target;
  t.booked = booked;
  booked_[local(t.d)] += booked;
  t.active = true;
  r.transfer_start = sim.now();
  bytes_moved_ += t.remaining;
  active_.push_back(id);
  ++from_p_[t.p];
  ++to_d_[t.d];
  retime(sim, t.p, t.d);
}

void KvTransferManager::retime(Simulator& sim, int p, int d) {
  const SimTime now = sim.now();
  for (int id : active_) {
    Transfer& t = slots_[id];
    if (t.p != p && t.d != d) continue;
    t.remaining -= t.rate * as_sec(now - t.last);
    if (t.remaining < 0) t.remaining = 0;
    t.last = now;
    t.rate = std::min(p_bw_ / from_p_[t.p], d_bw_ / to_d_[t.d]);
    ++t.version;
    const SimTime dt = span_ns(t.remaining / t.rate * 1e9);
    // The version rides in the event payload: a re-timed transfer ignores its earlier completion events.
    sim.schedule(now + dt, this, kDataDone, (static_cast<std::int64_t>(id) << 32) | t.version);
  }
}

void KvTransferManager::on_event(Simulator& sim, const Event& ev) {
  if (ev.kind == kLanded) {
    Transfer& t = slots_[static_cast<std::size_t>(ev.arg)];
    Request& r = *t.req;
    booked_[local(t.d)] -= t.booked;  // the decode replica's scheduler books the request from here on
    t.booked = 0;
    free_slots_.push_back(static_cast<int>(ev.arg));
    ++done_;
    r.transfer_end = sim.now();
    Replica& p = *cluster_.all_replicas[r.prefill_replica];
    p.kv_mutable().release_held(r);
    p.kick(sim);  // a prefill replica full of held KV may now admit new prompts
    landed_(sim, r);
    return;
  }
  const int id = static_cast<int>(ev.arg >> 32);
  const auto version = static_cast<std::uint32_t>(ev.arg & 0xffffffff);
  Transfer& t = slots_[id];
  if (!t.active || t.version != version) return;
  t.active = false;
  active_.erase(std::find(active_.begin(), active_.end(), id));
  --from_p_[t.p];
  --to_d_[t.d];
  retime(sim, t.p, t.d);
  sim.schedule(sim.now() + latency_, this, kLanded, id);
}

}  // namespace servesim
