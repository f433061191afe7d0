// Scenario files and share links: download/upload the scenario JSON, and a link whose #fragment carries the
// whole scenario. A link over LINK_CEILING_CHARS is refused with an offer to download the file instead.
import {h, setChildren, fmtBytes} from '../lib/dom.js';
import {encodeShare, LINK_CEILING_CHARS} from '../lib/share_codec.js';
import {downloadText, readFileText, safeFileStem} from '../lib/download.js';
import {showNotice, hideNotice} from './notice.js';

const MAX_SCENARIO_FILE_BYTES = 4 * 1024 * 1024;

export class SharePanel {
  constructor({getText, setDoc, getVersion}) {
    this.getText = getText;
    this.setDoc = setDoc;
    this.getVersion = getVersion;
    this.linkBox = h('div', {class: 'share-link', hidden: true});
    this.el = h('div', {class: 'share'},
      h('button', {type: 'button', class: 'button', id: 'share', text: 'Share link', onclick: () => this.share()}),
      h('button', {type: 'button', class: 'button', text: 'Download scenario', onclick: () => this.download()}),
      h('label', {class: 'button'}, 'Upload scenario',
        h('input', {type: 'file', accept: '.json,application/json', class: 'visually-hidden', id: 'upload-scenario',
          onchange: (e) => { const f = e.target.files[0]; e.target.value = ''; if (f) this.upload(f); }})),
      this.linkBox);
  }

  #doc() {
    const doc = JSON.parse(this.getText());
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('the scenario is not a JSON object');
    return doc;
  }

  async share() {
    let doc;
    try {
      doc = this.#doc();
    } catch (e) {
      return showNotice(`Cannot share: the scenario JSON does not parse (${e.message}).`);
    }
    const fragment = await encodeShare(doc, this.getVersion());
    if (fragment.length + 1 > LINK_CEILING_CHARS) {
      this.linkBox.hidden = true;
      return showNotice(`This scenario needs a ${fmtBytes(fragment.length)} link, over the ${fmtBytes(LINK_CEILING_CHARS)} ` +
        'that links are kept to. Share the scenario file instead.', {kind: 'warn', actions: [['Download scenario file', () => this.download(), true]]});
    }
    hideNotice();
    history.replaceState(null, '', `${location.pathname}${location.search}#${fragment}`);
    const url = location.href;
    const input = h('input', {type: 'text', readonly: true, class: 'mono', id: 'share-url', value: url, onfocus: (e) => e.target.select()});
    const copy = h('button', {type: 'button', class: 'button small', text: 'Copy', onclick: async () => {
      try { await navigator.clipboard.writeText(url); copy.textContent = 'Copied'; } catch { input.select(); copy.textContent = 'Press Ctrl+C'; }
    }});
    setChildren(this.linkBox, input, copy, h('span', {class: 'muted', text: `${url.length.toLocaleString('en-US')} characters`}));
    this.linkBox.hidden = false;
  }

  /** The scenario changed: a link made before no longer describes it. */
  stale() {
    this.linkBox.hidden = true;
    if (location.hash) history.replaceState(null, '', `${location.pathname}${location.search}`);
  }

  download() {
    let name = 'scenario';
    try { name = this.#doc().name; } catch { /* keep the default name */ }
    downloadText(`${safeFileStem(name)}.json`, this.getText());
  }

  async upload(file) {
    try {
      const doc = JSON.parse(await readFileText(file, MAX_SCENARIO_FILE_BYTES));
      if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('it is not a JSON object');
      hideNotice();
      this.setDoc(doc);
    } catch (e) {
      showNotice(`Could not load ${file.name}: ${e.message}`);
    }
  }
}
