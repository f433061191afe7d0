// The request timeline: one row per request (queued, prefill chunks, decode, preemption marks) on a plain
// canvas, with its view state {t0, t1 (ms), r0 (first row), rows}. Zoomed out, several requests share a
// pixel row and are drawn aggregated (DensityRaster); the last frame's drawing time is shown and kept in
// canvas.dataset.frameMs. Mouse and keyboard handling: timeline_input.js.
import {h} from '../lib/dom.js';
import {DensityRaster} from '../lib/timeline_raster.js';
import {PHASE_COLORS, css} from '../lib/timeline_colors.js';
import {drawRows, drawAxes, MIN_ROW_PX_FOR_RECTS, MARGIN} from './timeline_draw.js';
import {TimelineTooltip} from './timeline_tooltip.js';
import {bindTimelineInput} from './timeline_input.js';

export class TimelineView {
  constructor({height = 420, compact = false} = {}) {
    this.canvas = h('canvas', {class: 'timeline-canvas', tabindex: '0', 'aria-label': 'Request timeline'});
    this.stats = h('span', {class: 'timeline-stats'});
    this.tooltip = new TimelineTooltip();
    this.wrap = h('div', {class: 'timeline-wrap'}, this.canvas, this.tooltip.el);
    this.wrap.style.height = `${height}px`;
    this.el = h('div', {class: 'timeline'},
      h('div', {class: 'timeline-bar'}, legend(),
        compact ? null : h('span', {class: 'hint', text: 'wheel: zoom, shift/alt+wheel: time/rows only, drag: pan, double-click: reset'}),
        this.stats),
      this.wrap);
    this.raster = new DensityRaster();
    this.data = null;
    this.view = {t0: 0, t1: 1, r0: 0, rows: 1};
    this.frameMs = [];
    bindTimelineInput(this);
    new ResizeObserver(() => this.schedule()).observe(this.wrap);
  }

  setData(d) {
    this.data = d;
    this.reset();
  }

  reset() {
    const d = this.data;
    if (!d) return;
    const pad = (d.tMax - d.tMin) * 0.01 || 1;
    this.view = {t0: d.tMin - pad, t1: d.tMax + pad, r0: 0, rows: Math.max(1, d.n)};
    this.schedule();
  }

  /** Zooms by `factor` around the plot fraction (fx, fy); axes: 'both', 'time' or 'rows'. */
  zoom(factor, fx, fy, axes = 'both') {
    const v = this.view, d = this.data;
    if (!d) return;
    if (axes !== 'rows') {
      const span = Math.min(Math.max((v.t1 - v.t0) * factor, 0.01), (d.tMax - d.tMin) * 4 + 10);
      const t = v.t0 + fx * (v.t1 - v.t0);
      v.t0 = t - fx * span;
      v.t1 = v.t0 + span;
    }
    if (axes !== 'time') {
      const rows = Math.min(Math.max(v.rows * factor, 4), Math.max(d.n, 4));
      const r = v.r0 + fy * v.rows;
      v.r0 = r - fy * rows;
      v.rows = rows;
    }
    this.clampRows();
    this.schedule();
  }

  /** Moves the view by fractions of its width and height. */
  panBy(fx, fy) {
    const v = this.view, dt = fx * (v.t1 - v.t0);
    v.t0 += dt;
    v.t1 += dt;
    v.r0 += fy * v.rows;
    this.clampRows();
    this.schedule();
  }

  clampRows() {
    const v = this.view, n = this.data?.n ?? 0;
    v.r0 = Math.min(Math.max(v.r0, 0), Math.max(0, n - v.rows));
  }

  /** The plot area in CSS pixels relative to the canvas. */
  plotSize() {
    const r = this.canvas.getBoundingClientRect();
    return {w: r.width - MARGIN.left - MARGIN.right, h: r.height - MARGIN.top - MARGIN.bottom, rect: r};
  }

  /** Draws now and returns the frame time in ms. */
  drawNow() {
    const t = performance.now();
    this.#draw();
    const ms = performance.now() - t;
    this.frameMs.push(ms);
    if (this.frameMs.length > 30) this.frameMs.shift();
    this.canvas.dataset.frameMs = ms.toFixed(2);
    return ms;
  }

  schedule() {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => {
      this.pending = 0;
      this.drawNow();
      this.#showStats();
    });
  }

  #draw() {
    const dpr = window.devicePixelRatio || 1;
    const cssW = this.wrap.clientWidth, cssH = this.wrap.clientHeight;
    if (cssW === 0 || cssH === 0) return;
    if (this.canvas.width !== Math.round(cssW * dpr) || this.canvas.height !== Math.round(cssH * dpr)) {
      this.canvas.width = Math.round(cssW * dpr);
      this.canvas.height = Math.round(cssH * dpr);
    }
    const ctx = this.canvas.getContext('2d');
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    const d = this.data;
    if (!d || d.n === 0) return;
    const x = Math.round(MARGIN.left * dpr), y = Math.round(MARGIN.top * dpr);
    const box = {x, y, w: Math.max(1, this.canvas.width - x - Math.round(MARGIN.right * dpr)),
      h: Math.max(1, this.canvas.height - y - Math.round(MARGIN.bottom * dpr))};
    this.perPixelRow = this.view.rows / box.h;
    this.mode = box.h / this.view.rows >= MIN_ROW_PX_FOR_RECTS * dpr ? 'rows' : 'aggregated';
    if (this.mode === 'rows') drawRows(ctx, d, this.view, box);
    else ctx.putImageData(this.raster.render(d, this.view, box.w, box.h), box.x, box.y);
    drawAxes(ctx, this.view, box, dpr);
  }

  #showStats() {
    if (!this.data) return;
    const avg = this.frameMs.reduce((a, b) => a + b, 0) / Math.max(1, this.frameMs.length);
    const perRow = Math.max(1, Math.round(this.perPixelRow ?? 1));
    const lod = this.mode === 'rows' ? 'one row per request' : `aggregated, ~${perRow} request${perRow > 1 ? 's' : ''} per pixel row`;
    this.stats.textContent = `${this.data.n.toLocaleString('en-US')} requests · ${lod} · frame ${avg.toFixed(1)} ms`;
  }
}

function legend() {
  const item = (name, color) => h('span', {class: 'legend-item'}, swatch(color), name);
  return h('span', {class: 'legend'},
    item('queued', PHASE_COLORS.queued), item('prefill chunk', PHASE_COLORS.prefill),
    item('decode', PHASE_COLORS.decode), item('preemption', PHASE_COLORS.preempted),
    item('KV transfer / KV wait / other', PHASE_COLORS.other));
}

function swatch(color) {
  const s = h('span', {class: 'swatch'});
  s.style.background = css(color);
  return s;
}
