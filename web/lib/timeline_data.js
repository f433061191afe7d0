// The request timeline's data: the result's request and phase columns as typed arrays, with each request's
// phase segments grouped (CSR offsets) so a row can be drawn or described without scanning every segment.

export function buildTimelineData(result) {
  const r = result.requests;
  if (!r || !r.arrival_ms) return null;
  const n = r.arrival_ms.length;
  const d = {
    n,
    arrival: Float64Array.from(r.arrival_ms),
    scheduled: Float64Array.from(r.first_scheduled_ms),
    firstToken: Float64Array.from(r.first_token_ms),
    finished: Float64Array.from(r.finished_ms),
    replica: Int32Array.from(r.replica),
    prompt: Int32Array.from(r.prompt_tokens),
    output: Int32Array.from(r.output_tokens),
    preemptions: Int32Array.from(r.preemptions),
    failed: Uint8Array.from(r.failed),
    tMin: Infinity,
    tMax: -Infinity,
  };
  for (let i = 0; i < n; i++) {
    if (d.arrival[i] < d.tMin) d.tMin = d.arrival[i];
    const end = Math.max(d.finished[i], d.firstToken[i], d.scheduled[i], d.arrival[i]);
    if (end > d.tMax) d.tMax = end;
  }
  if (n === 0) d.tMin = d.tMax = 0;
  d.replicaNames = replicaNames(result.deployment?.roles);
  Object.assign(d, groupPhases(result.phases, n));
  return d;
}

/** Names of the global replica indices of the request columns: the roles' replicas in order. A role without
 * replicas of its own (an F role: its result entry has kv_cache null) takes no index. */
function replicaNames(roles) {
  const names = [];
  for (const r of roles ?? []) {
    if (!r.kv_cache) continue;
    for (let i = 0; i < r.replicas; i++) names.push(`${r.name}[${i}]`);
  }
  return names;
}

/** Phase segments sorted by request: segments of request i are [offsets[i], offsets[i + 1]). */
function groupPhases(phases, n) {
  const m = phases?.request?.length ?? 0;
  const offsets = new Int32Array(n + 1);
  for (let k = 0; k < m; k++) {
    const req = phases.request[k];
    if (req >= 0 && req < n) offsets[req + 1]++;
  }
  for (let i = 0; i < n; i++) offsets[i + 1] += offsets[i];
  const fill = offsets.slice(0, n);
  const start = new Float64Array(m), end = new Float64Array(m), tokens = new Int32Array(m);
  const kind = new Uint8Array(m);
  const kindNames = [];
  const kindIndex = new Map();
  for (let k = 0; k < m; k++) {
    const req = phases.request[k];
    if (req < 0 || req >= n) continue;
    const at = fill[req]++;
    const name = String(phases.kind[k]);
    if (!kindIndex.has(name)) {
      kindIndex.set(name, kindNames.length);
      kindNames.push(name);
    }
    kind[at] = kindIndex.get(name);
    start[at] = phases.start_ms[k];
    end[at] = phases.end_ms[k];
    tokens[at] = phases.tokens?.[k] ?? 0;
  }
  // How the raster draws each segment: 1 = prefill span, 2 = preemption mark, 3 = any other phase span.
  const classOf = kindNames.map((k) => (k === 'prefill' ? 1 : k === 'preempted' ? 2 : 3));
  const segClass = kind.map((k) => classOf[k] ?? 3);
  return {segOffsets: offsets, segStart: start, segEnd: end, segTokens: tokens, segKind: kind, segClass, kindNames};
}

/** Plain-language facts about request i for the hover tooltip (numbers straight from the result). */
export function describeRequest(d, i) {
  const ms = (t) => (t < 0 ? 'never' : t >= 1000 ? `${(t / 1000).toFixed(3)} s` : `${t.toFixed(1)} ms`);
  const dur = (a, b) => ms(b - a);
  const rows = [
    ['request', `#${i}${d.failed[i] ? ' (failed)' : ''}`],
    ['replica', d.replicaNames?.[d.replica[i]] ? `${d.replicaNames[d.replica[i]]} (#${d.replica[i]})` : String(d.replica[i])],
    ['arrival', ms(d.arrival[i])],
    ['first scheduled', ms(d.scheduled[i])],
    ['first token', ms(d.firstToken[i])],
    ['finished', ms(d.finished[i])],
  ];
  if (d.scheduled[i] >= 0) rows.push(['queued', dur(d.arrival[i], d.scheduled[i])]);
  if (d.firstToken[i] >= 0) rows.push(['TTFT', dur(d.arrival[i], d.firstToken[i])]);
  if (d.finished[i] >= 0 && !d.failed[i]) rows.push(['E2EL', dur(d.arrival[i], d.finished[i])]);
  rows.push(['prompt / output tokens', `${d.prompt[i]} / ${d.output[i]}`]);
  const counts = new Map();
  for (let k = d.segOffsets[i]; k < d.segOffsets[i + 1]; k++) {
    const name = d.kindNames[d.segKind[k]];
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  if (counts.has('prefill')) rows.push(['prefill chunks', String(counts.get('prefill'))]);
  rows.push(['preemptions', String(d.preemptions[i])]);
  for (const [name, c] of counts) if (name !== 'prefill' && name !== 'preempted') rows.push([name, String(c)]);
  return rows;
}
