// The scenario form: one control per field descriptor (editor_fields.js). Edits go out as mutations of the
// scenario document; update(doc) puts a document's values back into the controls; showErrors() puts each
// core validation error beside the field whose pointer is the closest ancestor of the error's path.
import {h, setChildren} from '../lib/dom.js';
import {getAt, setAt, deleteAt, isPrefix} from '../lib/json_pointer.js';
import {lengthsMode, LENGTH_DEFAULTS} from './editor_fields.js';
import {architectureOf, parallelismForm, setArchitecture, setParallelismForm} from '../lib/deployment_edit.js';

const INLINE = '__inline__';
const LENGTH_LABELS = {none: "trace's own lengths", trace_pairs: 'trace prompt/output pairs',
  distributions: 'input/output distributions', cdf_total: 'total-length CDF, split'};

export class EditorForm {
  /** onEdit(mutate) is called with a function that changes the document in place. */
  constructor(groups, {onEdit, onUploadModel}) {
    this.onEdit = onEdit;
    this.fields = [];
    this.groups = [];
    this.el = h('form', {class: 'scenario-form', novalidate: true, onsubmit: (e) => e.preventDefault()},
      groups.map((g) => this.#group(g, onUploadModel)));
  }

  // A group may depend on the document: `when(doc)` shows it, `title(doc)` names it (the roles' groups).
  #group(g, onUploadModel) {
    const err = h('div', {class: 'field-error group-error', hidden: true});
    const legend = h('legend', {text: typeof g.title === 'function' ? '' : g.title});
    const group = {g, path: g.path, err, legend, box: null};
    this.current = group;
    const box = h('fieldset', {class: 'group', dataset: {path: g.path ?? ''}}, legend, err,
      h('div', {class: 'fields'}, g.fields.map((f) => this.#field(f, onUploadModel))));
    group.box = box;
    this.groups.push(group);
    return box;
  }

  #field(f, onUploadModel) {
    const id = `f-${f.path.replace(/[^a-z0-9]+/gi, '-')}`;
    const control = this.#control(f, id);
    const err = h('div', {class: 'field-error', hidden: true, id: `${id}-err`});
    const extra = f.kind === 'model' ? h('label', {class: 'button small upload', title: 'Define the model from a Hugging Face config.json'},
      'upload config.json', h('input', {type: 'file', accept: '.json,application/json', class: 'visually-hidden',
        onchange: (e) => { const file = e.target.files[0]; e.target.value = ''; if (file) onUploadModel(file); }})) : null;
    const row = h('div', {class: `field${f.wide ? ' wide' : ''}${f.span ? ' span2' : ''}`, dataset: {path: f.path}},
      h('label', {for: id, class: 'mono', text: f.label}), h('div', {class: 'control-line'}, control, extra),
      f.hint ? h('div', {class: 'hint', text: f.hint}) : null, err);
    this.fields.push({f, control, row, err, group: this.current});
    return row;
  }

  #control(f, id) {
    const emit = () => this.#emit(f, control);
    let control;
    if (['select', 'bool', 'model', 'lengths', 'architecture', 'parform'].includes(f.kind)) {
      const opts = f.kind === 'lengths' ? Object.entries(LENGTH_LABELS)
        : f.kind === 'architecture' || f.kind === 'parform' ? f.options : (f.options ?? []).map((o) => [o, o]);
      control = h('select', {id, onchange: emit},
        f.optional ? h('option', {value: '', text: '(default)'}) : null,
        opts.map(([v, label]) => h('option', {value: v, text: label})));
    } else {
      control = h('input', {id, type: 'text', spellcheck: 'false', autocomplete: 'off', placeholder: f.placeholder,
        inputmode: f.kind === 'number' ? 'decimal' : undefined, oninput: emit});
    }
    return control;
  }

  #emit(f, control) {
    const raw = control.value;
    this.onEdit((doc) => {
      if (f.kind === 'lengths') {
        const w = doc.workload ?? (doc.workload = {});
        delete w.lengths; delete w.input_len; delete w.output_len;
        Object.assign(w, structuredClone(LENGTH_DEFAULTS[raw]));
        return;
      }
      if (f.kind === 'architecture') return setArchitecture(doc, raw);
      if (f.kind === 'parform') return setParallelismForm(getAt(doc, `/deployment/roles/${f.role}`), raw);
      if (f.kind === 'model' && raw === INLINE) return;
      const value = parseValue(f, raw);
      if (value === undefined) {
        deleteAt(doc, f.path);
        // Clearing the last degree keeps `parallelism: {}`, so the role stays in the two-domain form.
        const parent = f.path.slice(0, f.path.lastIndexOf('/'));
        if (f.keepParent && getAt(doc, parent.slice(0, parent.lastIndexOf('/'))) !== undefined && getAt(doc, parent) === undefined) {
          setAt(doc, parent, {});
        }
      } else {
        setAt(doc, f.path, value);
      }
    });
  }

  /** Shows `doc`'s values; fields whose condition does not hold are hidden. */
  update(doc) {
    for (const x of this.groups) {
      x.box.hidden = x.g.when ? !x.g.when(doc) : false;
      if (typeof x.g.title === 'function') x.legend.textContent = x.g.title(doc);
    }
    for (const {f, control, row, group} of this.fields) {
      row.hidden = group?.box.hidden || (f.when ? !f.when(doc) : false);
      if (document.activeElement === control && control.tagName === 'INPUT') continue; // keep what is typed
      if (f.kind === 'lengths') {
        control.value = lengthsMode(doc);
      } else if (f.kind === 'architecture') {
        control.value = architectureOf(doc);
      } else if (f.kind === 'parform') {
        control.value = parallelismForm(getAt(doc, `/deployment/roles/${f.role}`));
      } else if (f.kind === 'model') {
        this.#modelOptions(control, f, getAt(doc, '/model'));
      } else {
        const v = getAt(doc, f.path);
        const text = v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
        if (control.tagName === 'SELECT' && text && ![...control.options].some((o) => o.value === text)) {
          control.append(h('option', {value: text, text}));
        }
        control.value = text;
      }
    }
  }

  #modelOptions(control, f, model) {
    const stale = control.querySelector(`option[value="${INLINE}"]`);
    if (stale) stale.remove();
    if (model && typeof model === 'object') {
      control.append(h('option', {value: INLINE, text: `inline: ${String(model.name ?? 'custom').slice(0, 60)}`}));
      control.value = INLINE;
    } else {
      if (typeof model === 'string' && ![...control.options].some((o) => o.value === model)) {
        control.append(h('option', {value: model, text: model}));
      }
      control.value = model ?? '';
    }
  }

  /** Places each error at the closest field (or group); returns the errors that found no place. */
  showErrors(errors) {
    for (const x of [...this.fields, ...this.groups]) {
      setChildren(x.err);
      x.err.hidden = true;
      x.row?.classList.remove('invalid');
    }
    const unplaced = [];
    for (const e of errors) {
      const path = e.path ?? '';
      let best = null;
      for (const x of this.fields) {
        if (x.row.hidden || !x.f.path.startsWith('/')) continue;
        if (isPrefix(x.f.path, path) && (!best || x.f.path.length > best.f.path.length)) best = x;
      }
      if (!best) {
        for (const g of this.groups) {
          if (g.box.hidden || !g.path || !isPrefix(g.path, path)) continue;
          if (!best || g.path.length > best.path.length) best = g; // the innermost group: a role's, not /deployment
        }
      }
      if (!best) { unplaced.push(e); continue; }
      best.err.append(h('div', {text: e.message}));
      best.err.hidden = false;
      best.row?.classList.add('invalid');
    }
    return unplaced;
  }

  /** Focuses the control that shows errors for `path`, if any. */
  focusPath(path) {
    const x = this.fields.filter((x) => !x.row.hidden && x.f.path.startsWith('/') && isPrefix(x.f.path, path))
      .sort((a, b) => b.f.path.length - a.f.path.length)[0];
    if (x) { x.control.focus(); x.row.scrollIntoView({block: 'nearest'}); }
    return Boolean(x);
  }
}

function parseValue(f, raw) {
  const text = raw.trim();
  if (text === '') return undefined;
  if (f.kind === 'bool') return text === 'true';
  if (f.kind === 'number' && /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return Number(text);
  return f.kind === 'number' || f.kind === 'text' ? text : raw; // a non-number stays text: the core says why
}
