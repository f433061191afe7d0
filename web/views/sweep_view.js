// The Sweep view: pick a sweep preset or paste / upload a sweep JSON, run it on the worker pool with progress
// and cancel, watch points arrive on the Pareto chart, hover a point for its configuration, click it to open
// its scenario in the editor, export the CSV (core's sweep_csv), the merged sweep.json and the figure as SVG.
// The percentile and the TTFT / TPOT SLA can be changed at any time: while the sweep runs the page judges the
// records itself (lib/sweep_pareto.js, the core's rules); once it is merged the core re-judges the merged
// document (sweep_reframe) and the chart, the summary and the exports follow. No point is run again.
import {h, setChildren} from '../lib/dom.js';
import {downloadText, readFileText, safeFileStem} from '../lib/download.js';
import {figureData, pointRows} from '../lib/sweep_figure.js';
import {PERCENTILES, judge} from '../lib/sweep_pareto.js';
import {sweepSvg, svgText} from './sweep_chart.js';

const viewKey = (v) => JSON.stringify(v ? [v.percentile, v.sla.ttft_ms, v.sla.tpot_ms] : null);
const REFRAME_DELAY_MS = 150;

const MAX_SWEEP_BYTES = 4 * 1024 * 1024;

export class SweepView {
  /**
   * @param {{pool, sweeps: [{id, name}], loadText: (id) => Promise<string>, onOpenPoint: (scenarioText, record) => void}} o
   */
  constructor({pool, sweeps, loadText, onOpenPoint}) {
    Object.assign(this, {pool, loadText, onOpenPoint});
    this.state = null; // {text, expansion, records, merged}
    this.select = h('select', {id: 'sweep-preset', 'aria-label': 'Sweep preset'},
      sweeps.map((s) => h('option', {value: s.id, text: `${s.id}: ${s.name}`})));
    this.textarea = h('textarea', {id: 'sweep-text', class: 'sweep-json-text mono', spellcheck: 'false', 'aria-label': 'Sweep JSON'});
    this.runBtn = h('button', {type: 'button', id: 'sweep-run', class: 'button primary small', text: 'Run sweep', onclick: () => this.run()});
    this.cancelBtn = h('button', {type: 'button', id: 'sweep-cancel', class: 'button small', text: 'Cancel', disabled: true, onclick: () => this.pool.cancel()});
    this.bar = h('progress', {id: 'sweep-progress', max: 1, value: 0});
    this.status = h('span', {id: 'sweep-status', class: 'run-status', role: 'status', text: `${pool.size} worker${pool.size > 1 ? 's' : ''}`});
    const upload = h('input', {type: 'file', accept: '.json,application/json', class: 'visually-hidden', id: 'sweep-upload',
      onchange: async () => {
        try { this.setText(await readFileText(upload.files[0], MAX_SWEEP_BYTES)); } catch (e) { this.say(e.message); }
        upload.value = '';
      }});
    this.view = null; // {percentile, sla: {ttft_ms, tpot_ms}} the chart is judged under
    this.percentile = h('select', {id: 'sweep-percentile', 'aria-label': 'Latency percentile', onchange: () => this.#viewChanged()},
      PERCENTILES.map((p) => h('option', {value: p, text: p})));
    const slaInput = (id, label) => h('input', {type: 'number', id, min: 0, step: 'any', class: 'sla-input', 'aria-label': label,
      placeholder: 'none', oninput: () => this.#viewChanged()});
    this.ttft = slaInput('sweep-sla-ttft', 'TTFT SLA in ms (empty or 0: none)');
    this.tpot = slaInput('sweep-sla-tpot', 'TPOT SLA in ms (empty or 0: none)');
    this.chart = h('div', {class: 'sweep-chart', id: 'sweep-chart'});
    this.tooltip = h('div', {class: 'sweep-tooltip', role: 'tooltip', hidden: true});
    this.summary = h('div', {class: 'sweep-summary muted', id: 'sweep-summary'});
    this.exports = h('div', {class: 'exports'}, h('span', {class: 'muted', text: 'Export:'}),
      this.#exportBtn('sweep-export-csv', 'Frontier CSV', () => [`${this.#stem()}.frontier.csv`, this.state.csv, 'text/csv']),
      this.#exportBtn('sweep-export-svg', 'Figure SVG', () => [`${this.#stem()}.pareto.svg`, svgText(this.#svg()), 'image/svg+xml']),
      this.#exportBtn('sweep-export-json', 'sweep.json', () => [`${this.#stem()}.sweep.json`, `${this.state.merged}\n`]));
    this.#setView({percentile: 'p95', sla: {ttft_ms: 0, tpot_ms: 0}});
    this.el = h('div', {class: 'sweep'},
      h('div', {class: 'panel-head'}, h('h2', {text: 'Sweep'}),
        h('span', {class: 'muted', text: 'Design-space sweep: SLA-filtered Pareto frontiers per architecture (docs/sweep.md).'})),
      h('div', {class: 'sweep-controls'}, this.select,
        h('button', {type: 'button', class: 'button small', id: 'sweep-load', text: 'Load', onclick: () => this.loadPreset(this.select.value)}),
        h('label', {class: 'button small', for: 'sweep-upload', text: 'Upload sweep JSON'}), upload,
        this.runBtn, this.cancelBtn, this.bar, this.status),
      h('details', {class: 'sweep-json'}, h('summary', {text: 'Sweep JSON (edit or paste)'}), this.textarea),
      h('div', {class: 'sweep-controls sweep-view-controls'},
        h('label', {for: 'sweep-percentile', text: 'Percentile'}), this.percentile,
        h('label', {for: 'sweep-sla-ttft', text: 'TTFT ≤'}), this.ttft, h('span', {class: 'muted', text: 'ms'}),
        h('label', {for: 'sweep-sla-tpot', text: 'TPOT ≤'}), this.tpot, h('span', {class: 'muted', text: 'ms'}),
        h('span', {class: 'muted', text: '(empty: no bound; changes re-judge the points, nothing runs again)'})),
      h('div', {class: 'sweep-chart-wrap'}, this.chart, this.tooltip), this.summary, this.exports);
    this.chart.addEventListener('mousemove', (e) => this.#hover(e));
    this.chart.addEventListener('mouseleave', () => (this.tooltip.hidden = true));
    this.chart.addEventListener('click', (e) => this.#click(e));
    this.#setExports(false);
  }

  setText(text) {
    this.textarea.value = text;
  }

  async loadPreset(id) {
    try { this.setText(await this.loadText(id)); this.say(`Loaded ${id}.`); } catch (e) { this.say(`Could not load the sweep: ${e.message}`); }
  }

  say(text) {
    this.status.textContent = text;
  }

  async run() {
    const text = this.textarea.value;
    // base: the merged text under the sweep's own view; merged/doc/csv: the core's judgement under docView.
    this.state = {text, expansion: null, records: [], base: null, merged: null, doc: null, csv: '', docView: null};
    this.#setExports(false);
    this.runBtn.disabled = true;
    this.cancelBtn.disabled = false;
    this.bar.value = 0;
    this.el.dataset.state = 'running';
    // The previous sweep's chart goes at once: points drawn under "running" are this sweep's.
    setChildren(this.chart);
    setChildren(this.summary);
    this.say('Expanding…');
    const t0 = performance.now();
    try {
      const {promise} = this.pool.run(text, {
        onExpanded: (x) => {
          this.state.expansion = x;
          this.#setView({percentile: x.percentile, sla: {ttft_ms: x.sla.ttft_ms, tpot_ms: x.sla.tpot_ms}});
          this.say(`0 / ${x.points.length} points`);
          this.#draw();
        },
        onRecord: (r, done, total) => {
          this.state.records.push(r);
          this.bar.value = done / total;
          this.say(`${done} / ${total} points · ${this.pool.size} workers`);
          this.#scheduleDraw();
        },
      });
      const out = await promise;
      const secs = (performance.now() - t0) / 1000;
      if (out.status === 'completed') {
        const x = this.state.expansion;
        Object.assign(this.state, {base: out.merged, merged: out.merged, csv: out.csv, doc: JSON.parse(out.merged),
          docView: viewKey({percentile: x.percentile, sla: x.sla})});
        const n = out.records.length;
        this.say(`${n} points in ${secs.toFixed(2)} s (${(n / secs).toFixed(1)} points/s, ${this.pool.size} workers)`);
        if (this.state.docView !== viewKey(this.view)) this.#reframe(); // the view changed while it ran
        this.#setExports(this.state.docView === viewKey(this.view));
      } else this.say(`Cancelled after ${out.records.length} points.`);
      this.el.dataset.state = out.status;
    } catch (e) {
      const detail = Array.isArray(e.errors) ? ` (${e.errors.slice(0, 3).map((x) => `${x.path || '/'}: ${x.message}`).join('; ')})` : '';
      this.say(`Sweep failed: ${e.message}${e.errors ? '' : detail}`);
      this.el.dataset.state = 'error';
    } finally {
      this.runBtn.disabled = false;
      this.cancelBtn.disabled = true;
      this.#draw();
    }
  }

  #stem() {
    return safeFileStem(this.state?.expansion?.sweep, 'sweep');
  }

  #exportBtn(id, label, make) {
    return h('button', {type: 'button', class: 'button small', id, text: label, onclick: () => downloadText(...make())});
  }

  #setExports(on) {
    for (const b of this.exports.querySelectorAll('button')) b.disabled = !on;
  }

  #scheduleDraw() {
    if (this.drawPending) return;
    this.drawPending = true;
    requestAnimationFrame(() => { this.drawPending = false; this.#draw(); });
  }

  /** Reads the controls; null (and a message naming the field) when a bound is not a number >= 0. */
  #readView() {
    const bound = (input, name) => {
      const t = input.value.trim();
      const v = t === '' ? 0 : Number(t);
      if (!Number.isFinite(v) || v < 0) {
        this.say(`SLA ${name} (/sla/${name.toLowerCase()}_ms): must be a number ≥ 0 in ms, or empty for no bound`);
        return null;
      }
      return v;
    };
    const ttft = bound(this.ttft, 'TTFT'), tpot = bound(this.tpot, 'TPOT');
    if (ttft === null || tpot === null) return null;
    return {percentile: this.percentile.value, sla: {ttft_ms: ttft, tpot_ms: tpot}};
  }

  #setView(view) {
    this.view = view;
    this.percentile.value = view.percentile;
    this.ttft.value = view.sla.ttft_ms > 0 ? String(view.sla.ttft_ms) : '';
    this.tpot.value = view.sla.tpot_ms > 0 ? String(view.sla.tpot_ms) : '';
  }

  #viewChanged() {
    const view = this.#readView();
    if (!view || !this.state?.expansion) return;
    this.view = view;
    this.#setExports(false);
    this.#scheduleDraw(); // the page's judgement at once
    if (!this.state.base) return;
    clearTimeout(this.reframeTimer);
    this.reframeTimer = setTimeout(() => this.#reframe(), REFRAME_DELAY_MS);
  }

  /** Asks the core to judge the merged sweep under the current view; the latest request wins. */
  async #reframe() {
    const view = this.view, state = this.state, seq = (this.reframeSeq = (this.reframeSeq ?? 0) + 1);
    try {
      const out = await this.pool.reframe(state.base, view);
      if (seq !== this.reframeSeq || state !== this.state) return;
      Object.assign(state, {merged: out.merged, csv: out.csv, doc: JSON.parse(out.merged), docView: viewKey(view)});
      this.#setExports(viewKey(view) === viewKey(this.view));
      this.#draw();
    } catch (e) {
      if (seq === this.reframeSeq) this.say(`Could not re-judge the sweep: ${e.message}`);
    }
  }

  /** The current judgement: the core's when it matches the view, else the page's from the records. */
  #judged() {
    const s = this.state;
    if (s.doc && s.docView === viewKey(this.view)) return {by: 'core', points: s.doc.points, frontiers: s.doc.frontiers, best: s.doc.best};
    return {by: 'page', ...judge(s.records, this.view)};
  }

  #figure() {
    this.judgement = this.#judged();
    return figureData(this.state.expansion, this.judgement.points, this.judgement, Boolean(this.state.base));
  }

  #svg(fig = this.#figure()) {
    return sweepSvg(fig, {percentile: this.view.percentile, sla: this.view.sla, title: ''});
  }

  #draw() {
    if (!this.state?.expansion) return;
    const fig = this.#figure();
    setChildren(this.chart, this.#svg(fig));
    Object.assign(this.el.dataset, {judgedBy: this.judgement.by, best: fig.best?.id ?? '', view: viewKey(this.view)});
    const doc = this.state.doc;
    if (!this.state.base) return setChildren(this.summary, `${this.state.records.length} of ${this.state.expansion.points.length} points evaluated`);
    const reasons = Object.entries(doc.filtered_by_reason).map(([k, v]) => `${k}: ${v}`).join(', ');
    const best = fig.best?.record;
    setChildren(this.summary, `${doc.total_points} points, ${doc.ran} ran${reasons ? `, filtered (${reasons})` : ''}. `,
      best ? `Best under the SLA: ${Object.entries(best.assignment).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ')}` +
        ` (${best.y.toFixed(1)} output tok/s per GPU at ${best.x.toFixed(1)} tok/s per user). Click a point to open it in the editor.` :
        'No point meets the SLA.');
  }

  #recordAt(target) {
    const node = target.closest?.('[data-index]');
    if (!node) return null;
    const index = Number(node.getAttribute('data-index'));
    return this.judgement?.points.find((r) => r.index === index) ?? null;
  }

  #hover(e) {
    const r = this.#recordAt(e.target);
    if (!r) { this.tooltip.hidden = true; return; }
    const rows = pointRows(r, this.view?.percentile).map(([k, v]) => [h('dt', {text: k}), h('dd', {text: v})]);
    setChildren(this.tooltip, h('dl', {}, rows));
    this.tooltip.hidden = false;
    const box = this.chart.getBoundingClientRect();
    const x = e.clientX - box.left, y = e.clientY - box.top;
    const w = this.tooltip.offsetWidth;
    this.tooltip.style.left = `${x + 14 + w > box.width ? Math.max(0, x - 14 - w) : x + 14}px`;
    this.tooltip.style.top = `${y + 12}px`;
  }

  async #click(e) {
    const r = this.#recordAt(e.target);
    if (!r) return;
    try {
      this.onOpenPoint(await this.pool.scenario(this.state.text, r.index), r);
    } catch (err) {
      this.say(`Could not open the point: ${err.message}`);
    }
  }
}
