// Latency CDFs (TTFT, TPOT, E2EL) from the result's per-request columns, one small chart each.
import {h} from '../lib/dom.js';
import {requestLatencies, cdfPoints} from '../lib/result_data.js';
import {chartCard, axis, SERIES_COLORS} from './chart.js';

export function renderCdfCharts(result) {
  const lat = requestLatencies(result.requests);
  const s = result.summary ?? {};
  const cards = [
    ['TTFT', lat.ttft, s.p99_ttft_ms],
    ['TPOT (excl. first token)', lat.tpot, s.p99_tpot_ms],
    ['E2EL', lat.e2el, s.p99_e2el_ms],
  ].map(([name, values, p99], k) => {
    const [xs, ys] = cdfPoints(values);
    const opts = {
      legend: {show: false},
      cursor: {drag: {x: true, y: false}},
      scales: {x: {time: false}, y: {range: [0, 1]}},
      axes: [axis('ms'), axis('share of requests', {size: 50})],
      series: [{label: 'ms'}, {label: name, stroke: SERIES_COLORS[k], width: 2}],
    };
    const note = values.length ? `${values.length.toLocaleString('en-US')} requests · p99 ${p99?.toFixed(1) ?? '-'} ms` : 'no completed requests';
    return chartCard(`${name} CDF`, opts, [xs, ys], {height: 200, note}).el;
  });
  return h('div', {class: 'chart-row'}, cards);
}
