// Downloads of a finished run: the result JSON, one CSV row per request, and the Chrome/Perfetto trace
// (present when the run kept it).
import {h} from '../lib/dom.js';
import {downloadText, safeFileStem} from '../lib/download.js';
import {requestsCsv} from '../lib/result_data.js';

export function renderExports(outcome, result) {
  const stem = safeFileStem(result.scenario?.name, 'result');
  const hasRequests = Boolean(result.requests);
  return h('div', {class: 'exports'},
    h('span', {class: 'muted', text: 'Export:'}),
    h('button', {type: 'button', class: 'button small', id: 'export-json', text: 'Result JSON',
      onclick: () => downloadText(`${stem}.result.json`, outcome.result)}),
    h('button', {type: 'button', class: 'button small', id: 'export-csv', text: 'Requests CSV', disabled: !hasRequests,
      onclick: () => downloadText(`${stem}.requests.csv`, requestsCsv(result.requests), 'text/csv')}),
    h('button', {type: 'button', class: 'button small', id: 'export-trace', text: 'Perfetto trace', disabled: !outcome.trace,
      title: outcome.trace ? 'Open it in ui.perfetto.dev' : 'Tick "keep Perfetto trace" and run again to export a trace',
      onclick: () => downloadText(`${stem}.trace.json`, outcome.trace)}));
}
