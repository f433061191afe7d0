// Run / Cancel, a progress bar fed by the worker's progress messages, and the run's final state.
import {h, setChildren} from '../lib/dom.js';

export class RunPanel {
  constructor({onRun, onCancel}) {
    this.runButton = h('button', {type: 'button', class: 'button primary', id: 'run', text: 'Run simulation', onclick: onRun, disabled: true});
    this.cancelButton = h('button', {type: 'button', class: 'button', id: 'cancel', text: 'Cancel', onclick: onCancel, hidden: true});
    this.keepTrace = h('input', {type: 'checkbox', id: 'keep-trace'});
    this.bar = h('progress', {id: 'progress', max: '1', value: '0', hidden: true});
    this.status = h('span', {class: 'run-status', id: 'run-status', role: 'status', 'aria-live': 'polite', text: 'Loading the simulator...'});
    this.extra = h('div', {class: 'runbar-extra'});
    this.el = h('div', {class: 'runbar-inner'},
      this.runButton, this.cancelButton,
      h('label', {class: 'check', title: 'Keep the events for a Chrome/Perfetto trace export (uses more memory)'}, this.keepTrace, 'keep Perfetto trace'),
      h('div', {class: 'progress-box'}, this.bar, this.status), this.extra);
  }

  ready(versionText) {
    this.runButton.disabled = false;
    this.status.textContent = versionText;
  }

  started() {
    this.runButton.disabled = true;
    this.cancelButton.hidden = false;
    this.cancelButton.disabled = false;
    this.bar.hidden = false;
    this.bar.removeAttribute('value');
    this.status.textContent = 'Starting...';
  }

  progress(p) {
    const total = p.requests_total ?? 0, done = p.requests_done ?? 0;
    const frac = p.fraction ?? (total > 0 ? done / total : null);
    if (frac !== null && Number.isFinite(frac)) this.bar.value = Math.min(1, Math.max(0, frac));
    const parts = [];
    if (total) parts.push(`${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} requests`);
    if (Number.isFinite(p.sim_time_s)) parts.push(`simulated ${p.sim_time_s.toFixed(1)} s`);
    if (Number.isFinite(p.events)) parts.push(`${p.events.toLocaleString('en-US')} events`);
    this.status.textContent = parts.join(' · ') || 'Running...';
  }

  cancelling() {
    this.cancelButton.disabled = true;
    this.status.textContent = 'Cancelling...';
  }

  finished(text) {
    this.runButton.disabled = false;
    this.cancelButton.hidden = true;
    this.bar.hidden = true;
    this.status.textContent = text;
  }

  setExtra(...children) {
    setChildren(this.extra, ...children);
  }
}
