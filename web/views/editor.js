// The scenario editor: the form and the raw JSON side by side, kept in sync, validated by the core as you type.
// A form edit rewrites the JSON text; a JSON edit that parses updates the form. Errors appear at their field
// and in the full list below.
import {h, setChildren} from '../lib/dom.js';
import {readFileText} from '../lib/download.js';
import {EditorForm} from './editor_form.js';
import {fieldGroups} from './editor_fields.js';

const MAX_MODEL_CONFIG_BYTES = 2 * 1024 * 1024;
const MODEL_KEYS = ['hidden_size', 'num_hidden_layers', 'num_attention_heads'];

export class ScenarioEditor {
  constructor({catalog, validate, onChange}) {
    this.validateFn = validate;
    this.onChange = onChange ?? (() => {});
    this.doc = null;
    this.seq = 0;
    this.errors = [];
    this.form = new EditorForm(fieldGroups(catalog), {
      onEdit: (mutate) => this.#formEdit(mutate),
      onUploadModel: (file) => this.uploadModel(file),
    });
    this.textarea = h('textarea', {class: 'json-text mono', spellcheck: 'false', 'aria-label': 'Scenario JSON',
      oninput: () => this.#textEdit()});
    this.errorList = h('div', {class: 'error-list', role: 'status', 'aria-live': 'polite'});
    this.message = h('div', {class: 'editor-message', hidden: true});
    this.el = h('div', {class: 'editor'},
      h('div', {class: 'editor-cols'},
        h('div', {class: 'editor-form'}, this.form.el),
        h('div', {class: 'editor-json'}, h('div', {class: 'json-head'}, h('span', {text: 'Scenario JSON'}),
          h('span', {class: 'muted', text: 'the format: docs/scenario.md'})), this.textarea)),
      this.message, this.errorList);
  }

  text() {
    return this.textarea.value;
  }

  setDoc(doc) {
    this.doc = doc;
    this.textarea.value = JSON.stringify(doc, null, 2);
    this.form.update(doc);
    this.form.el.classList.remove('stale');
    this.#changed('load');
  }

  #formEdit(mutate) {
    if (!this.doc) return;
    mutate(this.doc);
    this.textarea.value = JSON.stringify(this.doc, null, 2);
    this.form.update(this.doc);
    this.#changed('edit');
  }

  #textEdit() {
    clearTimeout(this.textTimer);
    this.textTimer = setTimeout(() => {
      try {
        const doc = JSON.parse(this.textarea.value);
        if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('the scenario must be a JSON object');
        this.doc = doc;
        this.form.update(doc);
        this.form.el.classList.remove('stale');
      } catch (e) {
        this.form.el.classList.add('stale');
      }
      this.#changed('edit');
    }, 200);
  }

  #changed(source) {
    if (source === 'edit' || !this.message.classList.contains('info')) this.showMessage('');
    this.onChange(source);
    clearTimeout(this.validateTimer);
    this.validateTimer = setTimeout(() => this.validate(), 250);
  }

  /** Asks the core to validate the current text; shows and returns the errors. */
  async validate() {
    const seq = ++this.seq;
    const text = this.textarea.value;
    const answer = this.#ask(text);
    this.latest = answer;
    const errors = await answer;
    // A newer validation (a later edit, or the one a run asked for) supersedes this one: its answer counts, not
    // whatever was shown before (which may belong to another text).
    if (seq !== this.seq) return this.latest;
    this.showErrors(errors);
    return errors;
  }

  /** The core's errors for `text`. A request lost because the worker was restarted (a hard cancel) is asked
   * again once on the fresh worker rather than reported as a problem of the scenario. */
  async #ask(text) {
    for (let attempt = 0; ; ++attempt) {
      try {
        return (await this.validateFn(text)).errors ?? [];
      } catch (e) {
        const lost = /worker was restarted/.test(e?.message ?? '');
        if (!lost || attempt > 0) return [{path: '', message: `validation failed: ${e.message ?? e}`}];
      }
    }
  }

  showErrors(errors) {
    this.errors = errors;
    this.form.showErrors(errors);
    if (!errors.length) {
      setChildren(this.errorList, h('div', {class: 'ok', text: 'Scenario is valid.'}));
      return;
    }
    setChildren(this.errorList,
      h('div', {class: 'error-head', text: `${errors.length} problem${errors.length > 1 ? 's' : ''} found by the simulator:`}),
      h('ul', {}, errors.map((e) => h('li', {},
        h('button', {type: 'button', class: 'link mono', text: e.path || '(document)', onclick: () => this.form.focusPath(e.path ?? '')}),
        h('span', {text: `: ${e.message}`})))));
  }

  showMessage(text, kind = 'error') {
    this.message.hidden = !text;
    this.message.className = `editor-message ${kind}`;
    this.message.textContent = text;
  }

  /** Defines an inline model from a Hugging Face config.json. */
  async uploadModel(file) {
    try {
      const config = JSON.parse(await readFileText(file, MAX_MODEL_CONFIG_BYTES));
      if (!config || typeof config !== 'object' || Array.isArray(config)) throw new Error('it is not a JSON object');
      const found = MODEL_KEYS.filter((k) => k in config);
      if (found.length === 0) throw new Error(`it has none of ${MODEL_KEYS.join(', ')}`);
      const stem = file.name.replace(/\.json$/i, '');
      const name = typeof config._name_or_path === 'string' && config._name_or_path ? config._name_or_path : stem;
      this.#formEdit((doc) => { doc.model = {name: name.slice(0, 120), config}; });
      this.showMessage(`Model defined from ${file.name}; the simulator checks its fields below.`, 'info');
    } catch (e) {
      this.showMessage(`Could not use ${file.name} as a model: ${e.message}`);
    }
  }
}
