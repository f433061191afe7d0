// The sweep's judgement while it runs, in the page: the same rules as the core's sla_view.cc (x and
// meets_sla of a record from its metrics under a percentile and SLA) and pareto.cc (frontiers per group,
// best point under the SLA), so frontier lines can be drawn as points arrive without a round trip to a
// busy worker. After the merge the page shows the core's own answer (sweep_reframe); tests check the two
// agree. Pure: no DOM.

export const PERCENTILES = Object.freeze(['p50', 'p90', 'p95', 'p99']);

/** A record judged under view {percentile, sla: {ttft_ms, tpot_ms}}: a copy with x, y and meets_sla. */
export function frameRecord(record, {percentile, sla = {}}) {
  if (record.status !== 'ok') return record;
  const m = record.metrics ?? {};
  const tpot = m[`${percentile}_tpot_ms`], ttft = m[`${percentile}_ttft_ms`];
  const ttftMax = sla.ttft_ms ?? 0, tpotMax = sla.tpot_ms ?? 0;
  return {
    ...record, x: tpot > 0 ? 1000 / tpot : 0, y: m.output_throughput_per_gpu,
    meets_sla: m.failed === 0 && (ttftMax <= 0 || ttft <= ttftMax) && (tpotMax <= 0 || tpot <= tpotMax),
  };
}

// std::string's operator< on ASCII ids: code-unit order, which is what JS's < does.
const before = (a, b) => a < b;

/**
 * Frontiers and best point of judged records (only status 'ok' counts): {frontiers: {group: [id]}, best: id
 * or ''}. Groups in first-seen order of the records as given (the core merges in index order).
 */
export function paretoFrontiers(records) {
  const ok = records.filter((r) => r.status === 'ok');
  const groups = [];
  for (const r of ok) if (!groups.includes(r.group)) groups.push(r.group);
  const frontiers = {};
  let best = null;
  for (const g of groups) {
    // Sorted by x descending, a point is on the frontier when it has the highest y among points of its x and a
    // higher y than every point of greater x: the dominance test of pareto.cc in O(n log n), equal points kept.
    const pts = ok.filter((r) => r.group === g && r.meets_sla).sort((a, b) => b.x - a.x);
    const front = [];
    let maxYRight = -Infinity;
    for (let i = 0; i < pts.length;) {
      let j = i, top = -Infinity;
      while (j < pts.length && pts[j].x === pts[i].x) top = Math.max(top, pts[j++].y);
      for (let k = i; k < j; k++) if (pts[k].y === top && top > maxYRight) front.push(pts[k]);
      maxYRight = Math.max(maxYRight, top);
      i = j;
    }
    front.sort((a, b) => (a.x !== b.x ? a.x - b.x : before(a.id, b.id) ? -1 : before(b.id, a.id) ? 1 : 0));
    for (const p of front) {
      if (!best || p.y > best.y || (p.y === best.y && (p.x > best.x || (p.x === best.x && before(p.id, best.id))))) best = p;
    }
    frontiers[g] = front.map((p) => p.id);
  }
  return {frontiers, best: best ? best.id : ''};
}

/** Records (any order) judged under `view`, sorted by index, with their frontiers and best point. */
export function judge(records, view) {
  const points = [...records].sort((a, b) => a.index - b.index).map((r) => frameRecord(r, view));
  return {points, ...paretoFrontiers(points)};
}
