#include "core/metrics/chrome_trace.h"

#include <cinttypes>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace servesim {

namespace {

/// Microseconds with nanosecond digits, printed from integers (no floating-point formatting differences).
std::string us(SimTime ns) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
  return buf;
}

void async_slice(std::string& out, const char* name, std::int64_t id, int pid, SimTime b, SimTime e,
                 const std::string& args = "") {
  char head[160];
  std::snprintf(head, sizeof head, "{\"name\":\"%s\",\"cat\":\"request\",\"id\":%" PRId64 ",\"pid\":%d,\"tid\":0,",
                name, id, pid);
  out += head;
  out += "\"ph\":\"b\",\"ts\":" + us(b) + (args.empty() ? "" : ",\"args\":" + args) + "},\n";
  out += head;
  out += "\"ph\":\"e\",\"ts\":" + us(e) + "},\n";
}

}  // namespace

std::string chrome_trace_json(const std::vector<Request>& pool, const MetricsCollector& m, const ReplicaNames& names) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  for (std::size_t i = 0; i < names.size(); ++i) {
    const int pid = static_cast<int>(i) + 1;
    out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
           ",\"args\":{\"name\":" + nlohmann::json(names[i]).dump() + "}},\n";
    out += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
           ",\"tid\":0,\"args\":{\"name\":\"requests\"}},\n";
    out += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
           ",\"tid\":1,\"args\":{\"name\":\"iterations\"}},\n";
  }
  // Prefill chunks per request, in log order.
  std::vector<std::vector<const PhaseSegment*>> chunks(pool.size());
  for (const PhaseSegment& s : m.phases())
    if ((s.kind == kPhasePrefill || s.kind == kPhaseKvTransfer || s.kind == kPhaseKvWait) &&
        static_cast<std::size_t>(s.req) < pool.size())
      chunks[s.req].push_back(&s);
  for (const Request& r : pool) {
    if (r.state != RequestState::kFinished) continue;
    const int pid = r.replica + 1;
    const std::string args = "{\"prompt_tokens\":" + std::to_string(r.prompt_tokens) +
                             ",\"output_tokens\":" + std::to_string(r.generated) +
                             ",\"preemptions\":" + std::to_string(r.preemptions) + "}";
    async_slice(out, "request", r.id, pid, r.arrival, r.finished, args);
    const int entry_pid = r.prefill_replica >= 0 ? r.prefill_replica + 1 : pid;
    if (r.first_scheduled > r.arrival) async_slice(out, "queued", r.id, entry_pid, r.arrival, r.first_scheduled);
    for (const PhaseSegment* c : chunks[r.id]) {
      // Prefill and transfer ran on the P replica's process; the request's own slices sit on its decode replica.
      const int at = c->kind == kPhasePrefill ? entry_pid : pid;
      async_slice(out, phase_kind_name(c->kind), r.id, at, c->start, c->end,
                  "{\"tokens\":" + std::to_string(c->tokens) + "}");
    }
    if (r.finished > r.first_token) async_slice(out, "decode", r.id, pid, r.first_token, r.finished);
  }
  // Pipelined replicas (pp > 1) overlap batches; a complete slice must not overlap another on its thread, so each
  // batch takes the first lane free at its start (lane 0 is the "iterations" thread). Records come in commit
  // order, which is also start order inside one pipeline, so this uses no more lanes than batches in flight.
  std::vector<std::vector<SimTime>> lane_end(names.size());
  for (const IterationRecord& it : m.iterations()) {
    const std::string pid = std::to_string(it.replica + 1);
    std::size_t lane = 0;
    std::vector<SimTime>* lanes = static_cast<std::size_t>(it.replica) < lane_end.size() ? &lane_end[it.replica] : nullptr;
    if (lanes) {
      while (lane < lanes->size() && (*lanes)[lane] > it.start) ++lane;
      if (lane == lanes->size()) {
        lanes->push_back(0);
        if (lane > 0)
          out += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":" + std::to_string(lane + 1) +
                 ",\"args\":{\"name\":\"batches in flight " + std::to_string(lane + 1) + "\"}},\n";
      }
      (*lanes)[lane] = it.end;
    }
    out += "{\"name\":\"iteration\",\"ph\":\"X\",\"pid\":" + pid + ",\"tid\":" + std::to_string(lane + 1) +
           ",\"ts\":" + us(it.start) +
           ",\"dur\":" + us(it.end - it.start) + ",\"args\":{\"batch_size\":" + std::to_string(it.batch_size) +
           ",\"tokens\":" + std::to_string(it.tokens) + "}},\n";
    char kv[32];
    std::snprintf(kv, sizeof kv, "%.4f", static_cast<double>(it.kv_usage));
    out += "{\"name\":\"batch\",\"ph\":\"C\",\"pid\":" + pid + ",\"ts\":" + us(it.start) +
           ",\"args\":{\"requests\":" + std::to_string(it.batch_size) + ",\"tokens\":" + std::to_string(it.tokens) +
           "}},\n";
    out += "{\"name\":\"kv_usage\",\"ph\":\"C\",\"pid\":" + pid + ",\"ts\":" + us(it.start) +
           ",\"args\":{\"fraction\":" + kv + "}},\n";
  }
  if (out.size() >= 2 && out[out.size() - 2] == ',') out.erase(out.size() - 2, 1);
  out += "]}\n";
  return out;
}

}  // namespace servesim
