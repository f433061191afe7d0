// The banner under the top bar: errors about links and files, and offers (run a shared scenario,
// download a scenario too large for a link). Text only.
import {h, setChildren, byId} from '../lib/dom.js';

export function showNotice(text, {kind = 'error', actions = []} = {}) {
  const el = byId('notice');
  el.className = `notice ${kind}`;
  el.hidden = false;
  el.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  setChildren(el, h('span', {class: 'notice-text', text}),
    actions.map(([label, fn, primary]) => h('button', {type: 'button', class: `button small${primary ? ' primary' : ''}`, text: label, onclick: fn})),
    h('button', {type: 'button', class: 'close', 'aria-label': 'Dismiss', text: '×', onclick: hideNotice}));
}

export function hideNotice() {
  byId('notice').hidden = true;
}
