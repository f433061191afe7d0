// Pure helpers of the sweep chart (no DOM): axis ticks, series colours, the figure's data from the records
// and their judgement, and the rows of a point's hover card. Which points are on a frontier and which is best
// come from the core's merge or reframe (core/explore/pareto), or while the sweep runs from
// lib/sweep_pareto.js; nothing is computed here but layout.

/** Colour-blind-safe series colours (Okabe-Ito), in series order. */
export const SERIES_COLORS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442'];

/** About `count` round ticks covering [min, max]: {ticks, lo, top}. */
export function niceTicks(max, count = 5, min = 0) {
  if (!Number.isFinite(max) || !Number.isFinite(min) || !(max > min)) {
    const v = Number.isFinite(max) && max > 0 ? max : 1;
    return {ticks: [0, v], lo: 0, top: v};
  }
  const raw = (max - min) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const lo = Math.floor(min / step + 1e-9) * step;
  const top = Math.ceil(max / step - 1e-9) * step;
  const ticks = [];
  for (let v = lo; v <= top + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  return {ticks, lo: Number(lo.toPrecision(12)), top: Number(top.toPrecision(12))};
}

/**
 * What the chart draws: {groups: [name], points: [{index, id, group, x, y, meetsSla, onFrontier, best,
 * record}], frontiers: {group: [point]}, best: point|null, final: bool}. Groups come in expansion order.
 * `merged` ({frontiers, best}) judges the records; final: the sweep is over (the chart says "running…" if not).
 */
export function figureData(expansion, records, merged, final = Boolean(merged)) {
  const groups = [];
  for (const p of expansion?.points ?? []) if (!groups.includes(p.group)) groups.push(p.group);
  const onFrontier = new Set(Object.values(merged?.frontiers ?? {}).flat());
  const best = merged?.best || '';
  const points = records.filter((r) => r.status === 'ok').sort((a, b) => a.index - b.index).map((r) => ({
    index: r.index, id: r.id, group: r.group, x: r.x, y: r.y, meetsSla: r.meets_sla,
    onFrontier: onFrontier.has(r.id), best: r.id === best, record: r,
  }));
  const byId = new Map(points.map((p) => [p.id, p]));
  const frontiers = {};
  for (const [g, ids] of Object.entries(merged?.frontiers ?? {})) frontiers[g] = ids.map((id) => byId.get(id)).filter(Boolean);
  return {groups, points, frontiers, best: byId.get(best) ?? null, final};
}

const num = (v, d = 1) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(d) : '-');

/** [label, value] rows of a point's hover card: its assignment, then the metrics. */
export function pointRows(record, percentile = 'p95') {
  const rows = [['id', record.id]];
  for (const [k, v] of Object.entries(record.assignment ?? {})) rows.push([k, typeof v === 'string' ? v : JSON.stringify(v)]);
  const m = record.metrics ?? {};
  rows.push(['tokens/s per user', num(record.x)], ['output tok/s per GPU', num(record.y)],
    [`${percentile} TTFT`, `${num(m[`${percentile}_ttft_ms`])} ms`], [`${percentile} TPOT`, `${num(m[`${percentile}_tpot_ms`], 2)} ms`],
    ['GPUs', String(m.num_gpus ?? '-')], ['meets SLA', record.meets_sla ? 'yes' : 'no']);
  return rows;
}
