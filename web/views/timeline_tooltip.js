// The hover card of the request timeline: a definition list filled with textContent only.
import {h, setChildren} from '../lib/dom.js';
import {describeRequest} from '../lib/timeline_data.js';

export class TimelineTooltip {
  constructor() {
    this.el = h('div', {class: 'tooltip', role: 'tooltip', hidden: true});
    this.shown = -1;
  }

  show(d, i, x, y, container) {
    if (this.shown !== i) {
      const rows = describeRequest(d, i).map(([k, v]) => [h('dt', {text: k}), h('dd', {text: v})]);
      setChildren(this.el, h('dl', {}, rows));
      this.shown = i;
    }
    this.el.hidden = false;
    const cw = container.clientWidth, ch = container.clientHeight;
    const w = this.el.offsetWidth, hh = this.el.offsetHeight;
    this.el.style.left = `${x + 14 + w > cw ? Math.max(0, x - 14 - w) : x + 14}px`;
    this.el.style.top = `${y + 12 + hh > ch ? Math.max(0, ch - hh) : y + 12}px`;
  }

  hide() {
    this.el.hidden = true;
    this.shown = -1;
  }
}
