// The result's time_share_by_op: the share of GPU-busy time per op family over every iteration of every
// replica, as one SVG bar per family (attributes only, no inline style), largest first, with its name and %.
// With two or more roles reporting their own shares (deployment.roles[].time_share_by_op), a selector shows one
// role's instead of the whole run's (a P role's prefill apart from its D role's decode).
import {h, setChildren} from '../lib/dom.js';
import {opShares} from '../lib/op_families.js';

const NS = 'http://www.w3.org/2000/svg';
const ROW = 22, LABEL_W = 250, BAR_W = 360, PCT_W = 70;

function el(tag, attrs = {}, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = String(text);
  return e;
}

export function renderOpShare(result) {
  const views = [{label: 'whole run', shares: result.time_share_by_op}];
  for (const r of result.deployment?.roles ?? []) {
    const name = r.name === r.role ? r.role : `${r.name} (${r.role})`;
    if (r.time_share_by_op) views.push({label: `${name} role`, shares: r.time_share_by_op});
  }
  const chart = h('div', {class: 'op-share-chart'}, bars(views[0].shares));
  const show = (e) => setChildren(chart, bars(views[Number(e.target.value)].shares));
  const picker = views.length > 2
    ? h('label', {class: 'op-share-view'}, 'Show ', h('select', {'aria-label': 'Whose time share', onchange: show},
      views.map((v, i) => h('option', {value: i, text: v.label}))))
    : null;
  return h('div', {class: 'op-share-wrap'}, picker, chart,
    h('p', {class: 'muted', text: 'Share of GPU-busy time per op family, summed over every iteration of every replica ' +
      '(time_share_by_op; a role\'s: deployment.roles[].time_share_by_op). With A/F disaggregation each family is its ' +
      'busy time scaled so the shares add up to the iteration, and the F role\'s time is in its A role\'s.'}));
}

function bars(shares) {
  const rows = opShares(shares).sort((a, b) => b.share - a.share);
  if (!rows.length) return h('p', {class: 'muted', text: 'This result has no time share by op family.'});
  const max = rows[0].share;
  const svg = el('svg', {class: 'op-share', viewBox: `0 0 ${LABEL_W + BAR_W + PCT_W} ${rows.length * ROW + 4}`,
    width: LABEL_W + BAR_W + PCT_W, height: rows.length * ROW + 4, role: 'img',
    'aria-label': 'Share of GPU-busy time per op family'});
  rows.forEach((r, i) => {
    const y = i * ROW + 2;
    const g = el('g', {class: 'op-row', 'data-family': r.key, 'data-share': r.share});
    g.append(el('title', {}, `${r.key}: ${(r.share * 100).toFixed(2)} % of GPU-busy time`),
      el('text', {x: LABEL_W - 8, y: y + 15, 'text-anchor': 'end', 'font-size': 12, fill: '#1c2430'}, r.label),
      el('rect', {x: LABEL_W, y: y + 3, width: Math.max(1, (r.share / max) * BAR_W).toFixed(1), height: ROW - 6, fill: r.color, rx: 2}),
      el('text', {x: LABEL_W + BAR_W + 6, y: y + 15, 'font-size': 12, fill: '#3d4857'}, `${(r.share * 100).toFixed(1)} %`));
    svg.append(g);
  });
  return svg;
}
