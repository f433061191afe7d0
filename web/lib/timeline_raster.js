// Level of detail for the request timeline when several requests share one pixel row: every request adds its
// queued / prefill / decode / other spans to per-pixel-row difference arrays (O(requests + segments)), then a
// prefix sum along x gives how many of the row's requests are in each state at each pixel, drawn as a
// colour mix whose opacity grows with the share of the row's requests that are active. Cost per frame:
// O(visible requests + their segments + plot pixels), independent of zoom.
import {PHASE_COLORS, BACKGROUND} from './timeline_colors.js';

const ALPHA_STEPS = 256;

export class DensityRaster {
  constructor() {
    this.W = 0;
    this.H = 0;
    // Opacity for a share s of active requests (quantised): faint when few are active, never invisible.
    this.alphaLut = Float32Array.from({length: ALPHA_STEPS + 1}, (_, i) => 0.2 + 0.8 * Math.sqrt(i / ALPHA_STEPS));
  }

  #ensure(W, H) {
    if (W === this.W && H === this.H) return;
    this.W = W;
    this.H = H;
    this.acc = [0, 1, 2, 3].map(() => new Float32Array((W + 1) * H)); // queued, prefill, decode, other
    this.marks = new Uint8Array(W * H);
    this.image = new ImageData(Math.max(1, W), Math.max(1, H));
    this.pixels = new Uint32Array(this.image.data.buffer);
  }

  /** Draws the rows of view {t0, t1, r0, rows} into this.image (W x H device pixels) and returns it. */
  render(d, view, W, H) {
    this.#ensure(W, H);
    for (const a of this.acc) a.fill(0);
    this.marks.fill(0);
    this.#accumulate(d, view, W, H);
    this.#compose(W, H, Math.max(1, view.rows / H));
    return this.image;
  }

  #accumulate(d, view, W, H) {
    const sx = W / (view.t1 - view.t0), t0 = view.t0, tMax = d.tMax;
    const pxPerRow = H / view.rows, stride = W + 1;
    const i0 = Math.max(0, Math.floor(view.r0)), i1 = Math.min(d.n, Math.ceil(view.r0 + view.rows));
    const [accQ, accP, accD, accO] = this.acc;
    const {arrival, scheduled, firstToken, finished, segOffsets, segStart, segEnd, segClass} = d;
    const marks = this.marks;
    // Adds one span [from, to] to row `base` of `a`; a sub-pixel span adds its pixel fraction.
    const span = (a, base, from, to) => {
      let x0 = (from - t0) * sx, x1 = (to - t0) * sx;
      if (x1 < 0 || x0 >= W || to < from) return;
      if (x0 < 0) x0 = 0;
      if (x1 > W) x1 = W;
      const ix0 = x0 | 0, ix1 = x1 | 0;
      if (ix0 === ix1) {
        const f = x1 - x0 > 0.02 ? x1 - x0 : 0.02;
        a[base + ix0] += f;
        a[base + ix0 + 1] -= f;
      } else {
        a[base + ix0] += 1;
        a[base + ix1] -= 1;
      }
    };
    for (let i = i0; i < i1; i++) {
      const py = ((i - view.r0) * pxPerRow) | 0;
      if (py < 0 || py >= H) continue;
      const base = py * stride;
      const fin = finished[i] >= 0 ? finished[i] : tMax;
      span(accQ, base, arrival[i], scheduled[i] >= 0 ? scheduled[i] : fin);
      if (firstToken[i] >= 0) span(accD, base, firstToken[i], fin);
      for (let k = segOffsets[i], end = segOffsets[i + 1]; k < end; k++) {
        const c = segClass[k];
        if (c === 1) span(accP, base, segStart[k], segEnd[k]);
        else if (c === 3) span(accO, base, segStart[k], segEnd[k]);
        else {
          const x = ((segStart[k] - t0) * sx) | 0; // a preemption: 3 pixels wide so it stays visible
          for (let m = Math.max(0, x - 1); m <= x + 1 && m < W; m++) marks[py * W + m] = 1;
        }
      }
    }
  }

  #compose(W, H, perPixelRow) {
    const stride = W + 1;
    const [bgR, bgG, bgB] = BACKGROUND;
    const [qR, qG, qB] = PHASE_COLORS.queued, [pR, pG, pB] = PHASE_COLORS.prefill;
    const [dR, dG, dB] = PHASE_COLORS.decode, [oR, oG, oB] = PHASE_COLORS.other;
    const [mR, mG, mB] = PHASE_COLORS.preempted;
    const red = ((255 << 24) | (mB << 16) | (mG << 8) | mR) >>> 0;
    const white = ((255 << 24) | (bgB << 16) | (bgG << 8) | bgR) >>> 0;
    const [accQ, accP, accD, accO] = this.acc;
    const {marks, pixels, alphaLut} = this;
    const shareScale = ALPHA_STEPS / perPixelRow;
    for (let y = 0; y < H; y++) {
      let q = 0, p = 0, d = 0, o = 0, color = white;
      const base = y * stride, row = y * W;
      for (let x = 0; x < W; x++) {
        const aq = accQ[base + x], ap = accP[base + x], ad = accD[base + x], ao = accO[base + x];
        if (aq !== 0 || ap !== 0 || ad !== 0 || ao !== 0) { // the mix changes only where a span starts or ends
          q += aq;
          p += ap;
          d += ad;
          o += ao;
          // Prefill and other phases are short: they weigh double in the colour so they stay visible.
          const cq = q > 1e-4 ? q : 0, cp = p > 1e-4 ? 2 * p : 0, cd = d > 1e-4 ? d : 0, co = o > 1e-4 ? 2 * o : 0;
          const total = cq + cp + cd + co;
          if (total === 0) {
            color = white;
          } else {
            const step = (cq + cd + 0.5 * (cp + co)) * shareScale;
            const alpha = alphaLut[step < ALPHA_STEPS ? step | 0 : ALPHA_STEPS] / total;
            const r = bgR + (qR * cq + pR * cp + dR * cd + oR * co - bgR * total) * alpha;
            const g = bgG + (qG * cq + pG * cp + dG * cd + oG * co - bgG * total) * alpha;
            const b = bgB + (qB * cq + pB * cp + dB * cd + oB * co - bgB * total) * alpha;
            color = (0xff000000 | (b << 16) | (g << 8) | r) >>> 0;
          }
        }
        pixels[row + x] = marks[row + x] !== 0 ? red : color;
      }
    }
  }
}
