// The Sweep view: pick a sweep preset or paste / upload a sweep JSON, run it on the worker pool with progress
// and cancel, watch points arrive on the Pareto chart, hover a point for its configuration, click it to open
// its scenario in the editor, export the CSV (core's sweep_csv), the merged sweep.json and the figure as SVG.
import {h, setChildren} from '../lib/dom.js';
import {downloadText, readFileText, safeFileStem} from '../lib/download.js';
import {figureData, pointRows} from '../lib/sweep_figure.js';
import {sweepSvg, svgText} from './sweep_chart.js';

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
    this.chart = h('div', {class: 'sweep-chart', id: 'sweep-chart'});
    this.tooltip = h('div', {class: 'sweep-tooltip', role: 'tooltip', hidden: true});
    this.summary = h('div', {class: 'sweep-summary muted', id: 'sweep-summary'});
    this.exports = h('div', {class: 'exports'}, h('span', {class: 'muted', text: 'Export:'}),
      this.#exportBtn('sweep-export-csv', 'Frontier CSV', () => [`${this.#stem()}.frontier.csv`, this.state.csv, 'text/csv']),
      this.#exportBtn('sweep-export-svg', 'Figure SVG', () => [`${this.#stem()}.pareto.svg`, svgText(this.#svg()), 'image/svg+xml']),
      this.#exportBtn('sweep-export-json', 'sweep.json', () => [`${this.#stem()}.sweep.json`, `${this.state.merged}\n`]));
    this.el = h('div', {class: 'sweep'},
      h('div', {class: 'panel-head'}, h('h2', {text: 'Sweep'}),
        h('span', {class: 'muted', text: 'Design-space sweep: SLA-filtered Pareto frontiers per architecture (docs/sweep.md).'})),
      h('div', {class: 'sweep-controls'}, this.select,
        h('button', {type: 'button', class: 'button small', id: 'sweep-load', text: 'Load', onclick: () => this.loadPreset(this.select.value)}),
        h('label', {class: 'button small', for: 'sweep-upload', text: 'Upload sweep JSON'}), upload,
        this.runBtn, this.cancelBtn, this.bar, this.status),
      h('details', {class: 'sweep-json'}, h('summary', {text: 'Sweep JSON (edit or paste)'}), this.textarea),
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
    this.state = {text, expansion: null, records: [], merged: null, csv: ''};
    this.#setExports(false);
    this.runBtn.disabled = true;
    this.cancelBtn.disabled = false;
    this.bar.value = 0;
    this.el.dataset.state = 'running';
    this.say('Expanding…');
    const t0 = performance.now();
    try {
      const {promise} = this.pool.run(text, {
        onExpanded: (x) => { this.state.expansion = x; this.say(`0 / ${x.points.length} points`); this.#draw(); },
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
        Object.assign(this.state, {merged: out.merged, csv: out.csv, doc: JSON.parse(out.merged)});
        const n = out.records.length;
        this.say(`${n} points in ${secs.toFixed(2)} s (${(n / secs).toFixed(1)} points/s, ${this.pool.size} workers)`);
        this.#setExports(true);
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

  #fig() {
    return figureData(this.state.expansion, this.state.records, this.state.doc);
  }

  #svg() {
    const x = this.state.expansion ?? {};
    return sweepSvg(this.#fig(), {percentile: x.percentile, sla: x.sla, title: ''});
  }

  #draw() {
    if (!this.state?.expansion) return;
    setChildren(this.chart, this.#svg());
    const doc = this.state.doc;
    if (!doc) return setChildren(this.summary, `${this.state.records.length} of ${this.state.expansion.points.length} points evaluated`);
    const reasons = Object.entries(doc.filtered_by_reason).map(([k, v]) => `${k}: ${v}`).join(', ');
    const best = doc.points.find((p) => p.id === doc.best);
    setChildren(this.summary, `${doc.total_points} points, ${doc.ran} ran${reasons ? `, filtered (${reasons})` : ''}. `,
      best ? `Best under the SLA: ${Object.entries(best.assignment).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ')}` +
        ` (${best.y.toFixed(1)} output tok/s per GPU at ${best.x.toFixed(1)} tok/s per user). Click a point to open it in the editor.` :
        'No point meets the SLA.');
  }

  #recordAt(target) {
    const node = target.closest?.('[data-index]');
    if (!node) return null;
    const index = Number(node.getAttribute('data-index'));
    return this.state?.records.find((r) => r.index === index) ?? null;
  }

  #hover(e) {
    const r = this.#recordAt(e.target);
    if (!r) { this.tooltip.hidden = true; return; }
    const rows = pointRows(r, this.state.expansion?.percentile).map(([k, v]) => [h('dt', {text: k}), h('dd', {text: v})]);
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
