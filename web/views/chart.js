// A uPlot chart that follows its container's width. uPlot comes from web/assets (copied from the pinned npm
// package by scripts/build_web).
import uPlot from '../assets/uplot.mjs';
import {h} from '../lib/dom.js';

const live = new Set(); // charts on the page: destroyed before a new result is drawn

/** Destroys every chart made so far (their canvases and resize observers). */
export function disposeCharts() {
  for (const dispose of live) dispose();
  live.clear();
}

export const SERIES_COLORS = ['#3568d6', '#2aa076', '#e08a1e', '#8e5bd0', '#d63031'];

/** Creates a titled chart card; returns {el, plot}. `opts` are uPlot options without width. */
export function chartCard(title, opts, data, {height = 220, note} = {}) {
  const host = h('div', {class: 'chart-host'});
  const el = h('figure', {class: 'chart-card'}, h('figcaption', {text: title}), host,
    note ? h('div', {class: 'chart-note', text: note}) : null);
  const plot = new uPlot({...opts, width: 400, height}, data, host);
  const fit = () => {
    const w = Math.max(200, Math.floor(host.clientWidth));
    if (w !== plot.width) plot.setSize({width: w, height});
  };
  const observer = new ResizeObserver(fit);
  observer.observe(host);
  requestAnimationFrame(fit);
  live.add(() => { observer.disconnect(); plot.destroy(); });
  return {el, plot};
}

export function axis(label, extra = {}) {
  return {label, stroke: '#55606e', grid: {stroke: 'rgba(30,40,60,0.08)'}, ticks: {stroke: 'rgba(30,40,60,0.15)'}, ...extra};
}
