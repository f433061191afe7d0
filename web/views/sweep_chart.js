// The sweep's Pareto chart as SVG, built element by element (attributes only, no markup parsed, no CSS
// needed), so the same drawing is shown on the page and exported as a stand-alone figure for a paper:
// x = tokens/s per user, y = output tokens/s per GPU, one colour per series with its frontier line, dominated
// points faint, SLA-missing points as crosses, the best point under the SLA starred, axis labels and a legend.
import {SERIES_COLORS, niceTicks} from '../lib/sweep_figure.js';

const NS = 'http://www.w3.org/2000/svg';
const W = 760, H = 440, M = {l: 72, r: 190, t: 30, b: 56};
const FONT = 'Helvetica, Arial, DejaVu Sans, sans-serif';

function el(tag, attrs = {}, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = String(text);
  return e;
}

const starPoints = (cx, cy, r) => Array.from({length: 10}, (_, i) => {
  const a = -Math.PI / 2 + (i * Math.PI) / 5, rr = i % 2 ? r * 0.45 : r;
  return `${(cx + rr * Math.cos(a)).toFixed(1)},${(cy + rr * Math.sin(a)).toFixed(1)}`;
}).join(' ');

function marker(p, sx, sy, color) {
  const x = sx(p.x), y = sy(p.y);
  const faint = p.onFrontier ? 1 : 0.3;
  const attrs = {class: 'pt', 'data-index': p.index, 'data-id': p.id, 'data-group': p.group, 'data-frontier': p.onFrontier,
    'data-sla': p.meetsSla};
  if (!p.meetsSla) {
    const g = el('g', {...attrs, stroke: color, 'stroke-width': 1.8, opacity: Math.max(faint, 0.5)});
    g.append(el('line', {x1: x - 4, y1: y - 4, x2: x + 4, y2: y + 4}), el('line', {x1: x - 4, y1: y + 4, x2: x + 4, y2: y - 4}),
      el('circle', {cx: x, cy: y, r: 6, fill: '#fff', 'fill-opacity': 0, stroke: 'none'}));
    return g;
  }
  return el('circle', {...attrs, cx: x, cy: y, r: p.onFrontier ? 4.5 : 4, fill: color, 'fill-opacity': faint,
    stroke: p.onFrontier ? '#1c2430' : 'none', 'stroke-width': 0.8});
}

/**
 * Draws `fig` (lib/sweep_figure.js figureData) into a new <svg>. `percentile` and `sla` label the axes and
 * the caption.
 */
export function sweepSvg(fig, {percentile = 'p95', sla = {}, title = ''} = {}) {
  const svg = el('svg', {xmlns: NS, width: W, height: H, viewBox: `0 0 ${W} ${H}`, 'font-family': FONT, 'font-size': 12,
    role: 'img', 'aria-label': title || 'Sweep Pareto chart'});
  svg.append(el('rect', {x: 0, y: 0, width: W, height: H, fill: '#ffffff'}));
  const pw = W - M.l - M.r, ph = H - M.t - M.b;
  // Axes fit the data (with a margin), so that close configurations stay apart.
  const fit = (vals) => {
    if (!vals.length) return niceTicks(1);
    const lo = Math.min(...vals), hi = Math.max(...vals), pad = Math.max((hi - lo) * 0.06, Math.abs(hi) * 0.02, 1e-9);
    return niceTicks(hi + pad, 5, Math.max(0, lo - pad));
  };
  const xt = fit(fig.points.map((p) => p.x)), yt = fit(fig.points.map((p) => p.y));
  const sx = (v) => M.l + ((v - xt.lo) / (xt.top - xt.lo)) * pw, sy = (v) => M.t + ph - ((v - yt.lo) / (yt.top - yt.lo)) * ph;
  const grid = el('g', {stroke: '#e3e7ed', 'stroke-width': 1});
  const labels = el('g', {fill: '#1c2430'});
  for (const v of xt.ticks) {
    grid.append(el('line', {x1: sx(v), x2: sx(v), y1: M.t, y2: M.t + ph}));
    labels.append(el('text', {x: sx(v), y: M.t + ph + 16, 'text-anchor': 'middle'}, v));
  }
  for (const v of yt.ticks) {
    grid.append(el('line', {x1: M.l, x2: M.l + pw, y1: sy(v), y2: sy(v)}));
    labels.append(el('text', {x: M.l - 6, y: sy(v) + 4, 'text-anchor': 'end'}, v));
  }
  svg.append(grid, el('rect', {x: M.l, y: M.t, width: pw, height: ph, fill: 'none', stroke: '#1c2430', 'stroke-width': 1}), labels);
  svg.append(el('text', {x: M.l + pw / 2, y: H - 14, 'text-anchor': 'middle', 'font-size': 13},
    `Tokens/s per user (1000 / ${percentile} TPOT in ms)`));
  svg.append(el('text', {x: 18, y: M.t + ph / 2, 'text-anchor': 'middle', 'font-size': 13,
    transform: `rotate(-90 18 ${M.t + ph / 2})`}, 'Output tokens/s per GPU'));
  const slaParts = [];
  if (sla.ttft_ms > 0) slaParts.push(`${percentile} TTFT ≤ ${sla.ttft_ms} ms`);
  if (sla.tpot_ms > 0) slaParts.push(`${percentile} TPOT ≤ ${sla.tpot_ms} ms`);
  svg.append(el('text', {x: M.l, y: M.t - 10, fill: '#637083'},
    `${title ? `${title} · ` : ''}SLA: ${slaParts.join(', ') || 'none'}${fig.final ? '' : ' · running…'}`));

  const color = (g) => SERIES_COLORS[Math.max(0, fig.groups.indexOf(g)) % SERIES_COLORS.length];
  const lines = el('g', {fill: 'none', 'stroke-width': 2});
  for (const [g, pts] of Object.entries(fig.frontiers)) {
    if (!pts.length) continue;
    lines.append(el('polyline', {class: 'frontier', 'data-group': g, stroke: color(g),
      points: pts.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ')}));
  }
  const dots = el('g', {class: 'points'});
  // Dominated points first, so frontier points are drawn on top.
  for (const p of [...fig.points].sort((a, b) => a.onFrontier - b.onFrontier)) dots.append(marker(p, sx, sy, color(p.group)));
  svg.append(lines, dots);
  if (fig.best) {
    svg.append(el('polygon', {id: 'sweep-best', class: 'pt', 'data-index': fig.best.index, 'data-id': fig.best.id,
      points: starPoints(sx(fig.best.x), sy(fig.best.y), 11), fill: '#FFD500', stroke: '#1c2430', 'stroke-width': 1.2}));
  }

  // Legend: one row per series, then the marker key.
  const lg = el('g', {transform: `translate(${M.l + pw + 16} ${M.t + 6})`});
  let y = 0;
  for (const g of fig.groups) {
    const c = color(g);
    lg.append(el('line', {x1: 0, x2: 22, y1: y, y2: y, stroke: c, 'stroke-width': 2}),
      el('circle', {cx: 11, cy: y, r: 4, fill: c}), el('text', {x: 30, y: y + 4}, g));
    y += 20;
  }
  y += 6;
  lg.append(el('circle', {cx: 11, cy: y, r: 4, fill: '#637083', 'fill-opacity': 0.3}), el('text', {x: 30, y: y + 4}, 'dominated'));
  y += 20;
  const x0 = 11;
  lg.append(el('g', {stroke: '#637083', 'stroke-width': 1.8}, undefined));
  lg.lastChild.append(el('line', {x1: x0 - 4, y1: y - 4, x2: x0 + 4, y2: y + 4}), el('line', {x1: x0 - 4, y1: y + 4, x2: x0 + 4, y2: y - 4}));
  lg.append(el('text', {x: 30, y: y + 4}, 'misses the SLA'));
  y += 22;
  lg.append(el('polygon', {points: starPoints(11, y, 9), fill: '#FFD500', stroke: '#1c2430'}), el('text', {x: 30, y: y + 4}, 'best under the SLA'));
  svg.append(lg);
  return svg;
}

/** The figure as a stand-alone SVG file. */
export function svgText(svg) {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(svg)}\n`;
}
