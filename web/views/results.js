// The results of one run: summary, request timeline, time share by op family, latency CDFs, time series and exports.
import {h, setChildren} from '../lib/dom.js';
import {buildTimelineData} from '../lib/timeline_data.js';
import {renderSummary} from './summary.js';
import {renderCdfCharts} from './cdf_charts.js';
import {renderTimeseriesCharts} from './timeseries_charts.js';
import {renderExports} from './exports.js';
import {renderOpShare} from './op_share.js';
import {TimelineView} from './timeline.js';
import {disposeCharts} from './chart.js';

export class ResultsView {
  constructor(el) {
    this.el = el;
    this.timeline = new TimelineView({height: 440});
  }

  /** Shows outcome {status, result (JSON text), benchmark, trace} of `scenario` (the document that ran, for what
   * the result does not echo, such as deployment.afd); returns the parsed result. */
  show(outcome, scenario = null) {
    const result = JSON.parse(outcome.result);
    disposeCharts();
    const data = buildTimelineData(result);
    setChildren(this.el,
      card('Summary', renderSummary(result, outcome.benchmark, scenario), renderExports(outcome, result), 'summary-card'),
      card('Request timeline', data ? this.timeline.el : h('p', {class: 'muted', text: 'This result has no per-request columns.'}), null, 'timeline-card'),
      card('Time share by op family', renderOpShare(result), null, 'op-share-card'),
      card('Latency CDFs', result.requests ? renderCdfCharts(result) : h('p', {class: 'muted', text: 'No per-request columns.'})),
      card('Over time', renderTimeseriesCharts(result)));
    this.el.hidden = false;
    if (data) this.timeline.setData(data);
    return result;
  }

  clear() {
    disposeCharts();
    setChildren(this.el);
    this.el.hidden = true;
  }
}

function card(title, body, tools, cls = '') {
  return h('section', {class: `panel ${cls}`},
    h('div', {class: 'panel-head'}, h('h2', {text: title}), tools), body);
}
