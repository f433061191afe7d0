// Batch size, KV-cache usage and queue length over time from result.timeseries (down-sampled by the core),
// with cursors kept in sync across the three charts.
import uPlot from '../assets/uplot.mjs';
import {h} from '../lib/dom.js';
import {chartCard, axis, SERIES_COLORS} from './chart.js';

export function renderTimeseriesCharts(result) {
  const ts = result.timeseries;
  if (!ts?.t_s?.length) return h('p', {class: 'muted', text: 'No time series in this result.'});
  const sync = uPlot.sync(`ts-${Math.random()}`);
  const cursor = {sync: {key: sync.key}, drag: {x: true, y: false}};
  const mk = (title, label, series, data, extra = {}) => {
    const keep = data.map((a) => Array.isArray(a) && a.length === ts.t_s.length);
    return chartCard(title, {
      cursor,
      legend: {live: false},
      scales: {x: {time: false}, ...extra.scales},
      axes: [axis('time (s)'), axis(label, {size: 56})],
      series: [{label: 't (s)', value: (u, v) => v?.toFixed(2)}, ...series.filter((_, k) => keep[k])],
    }, [ts.t_s, ...data.filter((_, k) => keep[k])], {height: 180}).el;
  };
  const line = (label, k, dash) => ({label, stroke: SERIES_COLORS[k], width: dash ? 1 : 2, dash, value: (u, v) => v?.toFixed(2)});
  const pct = (a) => a?.map((v) => v * 100);
  return h('div', {class: 'chart-row'},
    mk('Batch size', 'requests', [line('mean', 0), line('max', 0, [4, 3])], [ts.batch_size?.mean, ts.batch_size?.max]),
    mk('KV-cache usage', '% of blocks', [line('mean', 1), line('max', 1, [4, 3])], [pct(ts.kv_usage?.mean), pct(ts.kv_usage?.max)],
      {scales: {y: {range: [0, 100]}}}),
    mk('Queue length', 'waiting requests', [line('mean', 2), line('max', 2, [4, 3])], [ts.queue_length?.mean, ts.queue_length?.max]));
}
