// "Where the pricing came from" for one role (deployment.roles[].fidelity): which source priced each op family this
// run used, the host constants, reads past the measured grids, and the profile's measured error laid out as the
// tables of docs/validation.md (held-out grid lines, end-to-end replays, MoE routing, datasheet transfers).
import {h, fmt} from '../lib/dom.js';

/** The role's pricing; `shareByOp` (the role's time_share_by_op, or the run's for a role without iterations of its
 *  own) sets apart the families that took no time (a dense model's moe, a single GPU's all_reduce, a P role's decode
 *  attention). The host overhead always shows: hidden under the GPU time it takes none, and the host line says so. */
export function renderFidelity(f, shareByOp) {
  if (!f) return null;
  const used = new Map(), unused = [];
  for (const [op, src] of Object.entries(f.sources ?? {})) {
    if (shareByOp && !(shareByOp[op] > 0) && op !== 'cpu_overhead') { unused.push(op); continue; }
    if (!used.has(src)) used.set(src, []);
    used.get(src).push(op);
  }
  const shown = new Set(['model', 'sources', 'host', 'lookups', 'measured_error', 'kind', 'profile', 'profile_version']);
  const extra = Object.entries(f).filter(([k]) => !shown.has(k));
  return h('div', {class: 'fidelity'},
    h('div', {}, h('span', {class: 'badge', text: 'pricing'}), ` ${f.model ?? ''}`),
    h('ul', {class: 'sources'}, [...used].map(([src, ops]) =>
      h('li', {}, h('span', {class: 'mono', text: src}), `: ${ops.join(', ')}`))),
    unused.length ? h('div', {class: 'muted unused-ops', text: `took no time in this run: ${unused.join(', ')}`}) : null,
    hostLine(f.host),
    pastEdge(f),
    extra.length ? h('div', {class: 'fidelity-extra'}, extra.map(([k, v]) =>
      h('div', {}, h('span', {class: 'mono', text: k}), `: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`))) : null,
    measuredError(f.measured_error, shareByOp));
}

/** The engine's host time per step as the role ran it (fidelity.host: calibrated constants or engine.host). */
function hostLine(host) {
  if (!host) return null;
  const perToken = host.per_token_us ? ` + ${fmt(host.per_token_us, 1)} us per token` : '';
  return h('div', {class: 'host-line'}, h('span', {class: 'mono', text: 'host'}),
    `: ${fmt(host.iteration_us, 1)} us per step + ${fmt(host.per_request_us, 1)} us per request${perToken}` +
    ` (${host.source}); ${host.hidden_under_gpu ? 'hidden under the GPU time (async scheduling)' : 'added to each step'}` +
    ` · eager launch ${fmt(host.launch_us, 1)} us per kernel`);
}

/** Op families the role read past its measured tables (fidelity.lookups: flagged extrapolated lookups), each with
 *  the held-out error of such reads where the profile records one (measured_error.beyond_edge_ape_pct). */
const EDGE_FIGURE = {gemm: 'gemm', lm_head: 'gemm', attention_prefill: 'attention_prefill',
  attention_decode: 'attention_decode', moe: 'moe'};
function pastEdge(f) {
  const past = Object.entries(f.lookups ?? {}).filter(([, l]) => l.extrapolated > 0);
  if (!past.length) return null;
  const edges = f.measured_error?.beyond_edge_ape_pct ?? {};
  return h('ul', {class: 'past-edge'}, past.map(([fam, l]) => {
    const e = edges[EDGE_FIGURE[fam]];
    const err = e ? ` (read past the edge; held out there: p50 ${fmt(e.p50, 2)}%, p95 ${fmt(e.p95, 2)}%)` : '';
    return h('li', {}, h('span', {class: 'mono', text: fam}),
      `: ${count(l.extrapolated)} of ${count(l.lookups)} lookups past the measured tables${err}`);
  }));
}

/** One part of the measured error: a caption line above its table (a caption inside would wrap to the table's
 *  width). */
function part(name, caption, ...rows) {
  return h('div', {class: 'error-part', dataset: {part: name}}, h('div', {class: 'error-caption', text: caption}),
    h('table', {class: 'error-table'}, ...rows));
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const pct = (v, digits = 2) => (typeof v === 'number' ? `${fmt(v, digits)}%` : '-');
const count = (v) => (typeof v === 'number' ? v.toLocaleString('en-US') : '-');

/** What the profile's validation.json summary says (measured_error), each part as a small table; a part this page
 *  does not know is shown as its JSON, so nothing the result carries is hidden. */
function measuredError(err, shareByOp) {
  if (!err || typeof err !== 'object') return h('div', {class: 'muted', text: 'No measured error figure for this profile yet.'});
  const known = new Set(['report', 'transfer', 'ops_heldout_ape_pct', 'beyond_edge_ape_pct', 'transfer_ape_pct',
    'leave_one_gpu_out_ape_pct', 'e2e_median_abs_pct', 'moe_routing_ape_pct']);
  const rest = Object.entries(err).filter(([k, v]) => !known.has(k) || (k !== 'report' && k !== 'transfer' && !isObject(v)));
  const source = err.report ? ` (${err.report})` : '';
  return h('div', {class: 'measured-error'},
    h('div', {class: 'measured-error-title', text: `Measured error of this pricing${source}`}),
    isObject(err.ops_heldout_ape_pct) ? opsTable(err.ops_heldout_ape_pct, err.beyond_edge_ape_pct, shareByOp) : null,
    isObject(err.transfer_ape_pct) ? familyTable('transfer', 'Measured tables moved to another GPU with tables ' +
      `(${err.transfer ?? 'transfer'}), against that GPU's own measurements, absolute % error`, err.transfer_ape_pct) : null,
    isObject(err.leave_one_gpu_out_ape_pct) ? leaveOneOut(err.leave_one_gpu_out_ape_pct) : null,
    isObject(err.e2e_median_abs_pct) ? e2eTable(err.e2e_median_abs_pct) : null,
    isObject(err.moe_routing_ape_pct) && !(shareByOp && !(shareByOp.moe > 0))
      ? familyTable('moe-routing', 'MoE routing (absolute % error of power-law measurements)', err.moe_routing_ape_pct,
        (k) => MOE_ROUTING[k] ?? k) : null,
    rest.map(([k, v]) => h('div', {class: 'fidelity-extra'}, h('span', {class: 'mono', text: k}), `: ${JSON.stringify(v)}`)));
}

/** The op families (time_share_by_op keys) each measured table prices, to mute the tables this run did not use. */
const PRICES = {moe: ['moe'], custom_allreduce: ['all_reduce'], nccl: ['all_reduce', 'all_to_all'],
  p2p: ['pipeline_p2p'], deepep_ll: ['all_to_all'], deepep_normal: ['all_to_all']};
const MOE_ROUTING = {
  other_routing_slowest_rank_model: 'routing the tables did not measure: balanced curve x slowest-rank model',
  power_law_measured_exponent_own_curve: 'power-law routing at a measured exponent: its own curve, held out'};

function opsTable(ops, edge, shareByOp) {
  edge = edge && typeof edge === 'object' ? edge : {};
  const withEdge = Object.keys(edge).length > 0;
  const idle = (fam) => shareByOp && PRICES[fam] && !PRICES[fam].some((op) => shareByOp[op] > 0);
  return part('ops', 'Held-out grid lines of the tables, absolute % error ' +
    '(python3 scripts/validate_ops.py; goal p50 <= 3%, p95 <= 10%)',
    h('thead', {}, h('tr', {}, h('th', {text: 'op table'}), ['cells', 'p50', 'p95', withEdge ? 'past the edge p50 / p95' : null]
      .filter(Boolean).map((c) => h('th', {class: 'num', text: c})))),
    h('tbody', {}, Object.entries(ops).map(([fam, e]) => h('tr', {dataset: {family: fam}, class: idle(fam) ? 'idle' : null,
      title: idle(fam) ? 'took no time in this run' : null},
      h('th', {class: 'mono', text: fam}), h('td', {class: 'num', text: count(e?.n)}),
      h('td', {class: 'num', dataset: {key: 'p50'}, text: pct(e?.p50)}),
      h('td', {class: 'num', dataset: {key: 'p95'}, text: pct(e?.p95)}),
      withEdge ? h('td', {class: 'num', text: edge[fam] ? `${pct(edge[fam]?.p50)} / ${pct(edge[fam]?.p95)}` : ''}) : null))));
}

/** [name, figures] rows of `groups`: an entry that `isRow` accepts is a row; other objects of objects are groups
 *  (the datasheet summary's figures per transfer rule), flattened with their name in front; anything else is a row,
 *  shown with dashes. */
function flatten(groups, isRow) {
  const rows = [];
  const walk = (obj, prefix) => {
    for (const [k, v] of Object.entries(obj)) {
      const key = prefix ? `${prefix}, ${k}` : k;
      if (isObject(v) && !isRow(v) && Object.values(v).some(isObject)) walk(v, key);
      else rows.push([key, v]);
    }
  };
  walk(groups, '');
  return rows;
}

/** Rows of {n, p50, p95} figures. */
function familyTable(name, caption, groups, label = (k) => k) {
  const rows = flatten(groups, (v) => 'p50' in v || 'p95' in v);
  return part(name, caption,
    h('thead', {}, h('tr', {}, h('th', {text: ''}), ['cells', 'p50', 'p95'].map((c) => h('th', {class: 'num', text: c})))),
    h('tbody', {}, rows.map(([k, e]) => h('tr', {dataset: {family: k}},
      h('th', {class: label(k) === k ? 'mono' : null, text: label(k)}), h('td', {class: 'num', text: count(e?.n)}),
      h('td', {class: 'num', dataset: {key: 'p50'}, text: pct(e?.p50)}),
      h('td', {class: 'num', dataset: {key: 'p95'}, text: pct(e?.p95)})))));
}

/** Datasheet efficiency curves: each family's error on each GPU with tables, fitted on the others. */
function leaveOneOut(fams) {
  const gpus = [...new Set(Object.values(fams).flatMap((g) => Object.keys(g ?? {})))];
  return part('leave-one-gpu-out',
    'Datasheet efficiency curves, each GPU with tables left out of the fit, absolute % error p50 / p95',
    h('thead', {}, h('tr', {}, h('th', {text: ''}), gpus.map((g) => h('th', {class: 'num', text: g})))),
    h('tbody', {}, Object.entries(fams).map(([fam, byGpu]) => h('tr', {dataset: {family: fam}},
      h('th', {class: 'mono', text: fam}),
      gpus.map((g) => h('td', {class: 'num', text: byGpu?.[g] ? `${pct(byGpu[g].p50)} / ${pct(byGpu[g].p95)}` : ''}))))));
}

/** End-to-end replays of silicon_h100.csv: one row per backend and mode (the profile's {rows, ttft, tpot}, the
 *  datasheet summary's {n, ttft_median_abs_pct, tpot_median_abs_pct}). */
function e2eTable(groups) {
  const rows = flatten(groups, (v) => ['ttft', 'tpot', 'ttft_median_abs_pct', 'tpot_median_abs_pct'].some((k) => k in v))
    .map(([name, v]) => [name, v?.rows ?? v?.n, v?.ttft ?? v?.ttft_median_abs_pct, v?.tpot ?? v?.tpot_median_abs_pct]);
  return part('e2e', 'End to end: measured H100 runs replayed (python3 scripts/validate_e2e.py), median absolute % error',
    h('thead', {}, h('tr', {}, h('th', {text: ''}), ['rows', 'TTFT', 'TPOT'].map((c) => h('th', {class: 'num', text: c})))),
    h('tbody', {}, rows.map(([name, n, ttft, tpot]) => h('tr', {dataset: {group: name}},
      h('th', {class: 'mono', text: name}), h('td', {class: 'num', text: count(n)}),
      h('td', {class: 'num', dataset: {key: 'ttft'}, text: pct(ttft, 1)}),
      h('td', {class: 'num', dataset: {key: 'tpot'}, text: pct(tpot, 1)})))));
}
