// The preset gallery: one card per file of presets/ (title, description clamped to two lines with the full text
// on hover, what it demonstrates).
import {h, setChildren} from '../lib/dom.js';

export function renderGallery(el, presets, {onRun, onOpen}) {
  setChildren(el,
    h('div', {class: 'panel-head'}, h('h2', {text: 'Presets'}),
      h('span', {class: 'muted', text: 'Each runs in a Web Worker on the C++ core compiled to WebAssembly.'})),
    h('div', {class: 'cards'}, presets.map((p) => h('article', {class: 'card', dataset: {preset: p.id}},
      h('h3', {text: p.title || p.name || p.id}),
      h('p', {class: 'desc', title: p.description, text: p.description}),
      p.demonstrates ? h('p', {class: 'demo'}, h('span', {class: 'badge', text: 'shows'}), ` ${p.demonstrates}`) : null,
      h('div', {class: 'card-actions'},
        h('button', {type: 'button', class: 'button primary small', text: 'Run', onclick: () => onRun(p.id)}),
        h('button', {type: 'button', class: 'button small', text: 'Edit', onclick: () => onOpen(p.id)}),
        h('span', {class: 'mono muted', text: `${p.id}.json`}))))));
}

