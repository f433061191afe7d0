// Mouse and keyboard on the request timeline: wheel zooms around the cursor (shift: time only, alt: rows
// only), drag pans, double-click or 0 resets, arrows pan, +/- zoom, hover shows the request under the pointer.
import {MARGIN} from './timeline_draw.js';

export function bindTimelineInput(tl) {
  const c = tl.canvas;
  let drag = null;
  const at = (ev) => {
    const {w, h, rect} = tl.plotSize();
    const px = ev.clientX - rect.left - MARGIN.left, py = ev.clientY - rect.top - MARGIN.top;
    const v = tl.view;
    return {fx: px / w, fy: py / h, px, py, t: v.t0 + (px / w) * (v.t1 - v.t0), row: v.r0 + (py / h) * v.rows,
      perPx: v.rows / Math.max(1, h), tol: (3 * (v.t1 - v.t0)) / Math.max(1, w), inside: px >= 0 && py >= 0 && px <= w && py <= h};
  };
  c.addEventListener('wheel', (ev) => {
    const p = at(ev);
    if (!p.inside || !tl.data) return;
    ev.preventDefault();
    tl.tooltip.hide(); // what is under the pointer changes
    tl.zoom(Math.pow(1.0015, ev.deltaY), p.fx, p.fy, ev.shiftKey ? 'time' : ev.altKey ? 'rows' : 'both');
  }, {passive: false});
  c.addEventListener('pointerdown', (ev) => {
    if (!tl.data) return;
    drag = {x: ev.clientX, y: ev.clientY};
    c.setPointerCapture?.(ev.pointerId);
    tl.tooltip.hide();
  });
  c.addEventListener('pointermove', (ev) => {
    if (!drag) return hover(ev);
    const {w, h} = tl.plotSize();
    tl.panBy(-(ev.clientX - drag.x) / w, -(ev.clientY - drag.y) / h);
    drag = {x: ev.clientX, y: ev.clientY};
  });
  const end = () => (drag = null);
  c.addEventListener('pointerup', end);
  c.addEventListener('pointercancel', end);
  c.addEventListener('pointerleave', () => tl.tooltip.hide());
  c.addEventListener('dblclick', () => tl.reset());
  c.addEventListener('keydown', (ev) => {
    const actions = {
      '+': () => tl.zoom(0.8, 0.5, 0.5), '=': () => tl.zoom(0.8, 0.5, 0.5), '-': () => tl.zoom(1.25, 0.5, 0.5),
      ArrowLeft: () => tl.panBy(-0.1, 0), ArrowRight: () => tl.panBy(0.1, 0),
      ArrowUp: () => tl.panBy(0, -0.1), ArrowDown: () => tl.panBy(0, 0.1), 0: () => tl.reset(),
    };
    if (!actions[ev.key]) return;
    ev.preventDefault();
    actions[ev.key]();
  });

  function hover(ev) {
    const p = at(ev);
    const i = p.inside && tl.data ? hit(tl.data, p) : -1;
    if (i < 0) return tl.tooltip.hide();
    tl.tooltip.show(tl.data, i, p.px + MARGIN.left, p.py + MARGIN.top, tl.wrap);
  }
}

/** The request under the pointer (within 3 pixels of its span); in a shared pixel row, the first one active. */
function hit(d, p) {
  const first = Math.max(0, Math.floor(p.row)), last = Math.min(d.n, Math.floor(p.row + Math.max(1, p.perPx)));
  for (let i = first; i < last && i < first + 5000; i++) {
    const end = d.finished[i] >= 0 ? d.finished[i] : d.tMax;
    if (p.t >= d.arrival[i] - p.tol && p.t <= end + p.tol) return i;
  }
  return -1;
}
