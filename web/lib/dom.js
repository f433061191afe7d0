// Small DOM helpers. Text always goes in through textContent: no HTML string is ever parsed, so data from
// a scenario, a URL or a result can never become markup.

/** h('div', {class: 'x', text: 'hi', onclick: fn, dataset: {k: 'v'}, title: 't'}, child, ...) */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') el.textContent = String(value);
    else if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'style') throw new Error('inline style attributes are blocked by the CSP; use classes');
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces every child of `el`. */
export function setChildren(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function byId(id) {
  return document.getElementById(id);
}

/** Formats a number for display: fixed decimals, thousands separators, '-' when missing. */
export function fmt(value, digits = 2) {
  if (value === null || value === undefined || Number.isNaN(value)) return '-';
  if (typeof value !== 'number') return String(value);
  return value.toLocaleString('en-US', {minimumFractionDigits: digits, maximumFractionDigits: digits});
}

/** Milliseconds as a short human string: 850 ms, 12.4 s, 3.2 min. */
export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return '-';
  const a = Math.abs(ms);
  if (a < 1) return `${ms.toFixed(3)} ms`;
  if (a < 1000) return `${ms.toFixed(a < 10 ? 2 : 1)} ms`;
  if (a < 120000) return `${(ms / 1000).toFixed(a < 10000 ? 2 : 1)} s`;
  return `${(ms / 60000).toFixed(1)} min`;
}

export function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
