// Drawing of the request timeline on a 2D canvas context in device pixels: rows as rectangles when they are
// tall enough, otherwise the density raster; then the time axis and row labels.
import {PHASE_COLORS, css} from '../lib/timeline_colors.js';

export const MIN_ROW_PX_FOR_RECTS = 3;
export const MARGIN = {left: 64, top: 22, right: 8, bottom: 6}; // CSS pixels around the plot

/** One rectangle per phase for every visible row (only used when rows are >= MIN_ROW_PX_FOR_RECTS tall). */
export function drawRows(ctx, d, view, box) {
  const sx = box.w / (view.t1 - view.t0);
  const pxPerRow = box.h / view.rows;
  const gap = pxPerRow >= 6 ? Math.max(1, Math.round(pxPerRow * 0.15)) : 0;
  const X = (t) => box.x + (t - view.t0) * sx;
  const i0 = Math.max(0, Math.floor(view.r0)), i1 = Math.min(d.n, Math.ceil(view.r0 + view.rows));
  const rect = (from, to, y, hh) => {
    let a = X(from), b = X(to);
    if (b < box.x || a > box.x + box.w) return;
    a = Math.max(a, box.x);
    b = Math.min(b, box.x + box.w);
    ctx.fillRect(a, y, Math.max(b - a, 1), hh);
  };
  ctx.save();
  ctx.beginPath();
  ctx.rect(box.x, box.y, box.w, box.h);
  ctx.clip();
  for (let i = i0; i < i1; i++) {
    const y = box.y + (i - view.r0) * pxPerRow;
    const hh = Math.max(1, pxPerRow - gap);
    const arrival = d.arrival[i], sched = d.scheduled[i], first = d.firstToken[i], fin = d.finished[i];
    const end = fin >= 0 ? fin : d.tMax;
    ctx.fillStyle = css(PHASE_COLORS.queued);
    rect(arrival, sched >= 0 ? sched : end, y, hh);
    if (first >= 0) {
      ctx.fillStyle = css(d.failed[i] ? PHASE_COLORS.failed : PHASE_COLORS.decode);
      rect(first, end, y, hh);
    }
    for (let k = d.segOffsets[i]; k < d.segOffsets[i + 1]; k++) {
      const name = d.kindNames[d.segKind[k]];
      if (name === 'preempted') continue;
      ctx.fillStyle = css(name === 'prefill' ? PHASE_COLORS.prefill : PHASE_COLORS.other);
      rect(d.segStart[k], d.segEnd[k], y, hh);
      if (name === 'prefill' && pxPerRow >= 10) {
        const a = X(d.segStart[k]);
        if (a > box.x && a < box.x + box.w) { // chunk boundary
          ctx.fillStyle = 'rgba(255,255,255,0.7)';
          ctx.fillRect(a, y, 1, hh);
        }
      }
    }
    for (let k = d.segOffsets[i]; k < d.segOffsets[i + 1]; k++) {
      if (d.kindNames[d.segKind[k]] !== 'preempted') continue;
      const a = X(d.segStart[k]);
      ctx.fillStyle = css(PHASE_COLORS.preempted);
      ctx.fillRect(a - 1, y - 1, 3, hh + 2);
    }
  }
  ctx.restore();
}

/** Time ticks along the top and request indices down the left. `dpr` scales fonts and strokes. */
export function drawAxes(ctx, view, box, dpr) {
  ctx.save();
  ctx.font = `${11 * dpr}px system-ui, sans-serif`;
  ctx.fillStyle = '#55606e';
  ctx.strokeStyle = 'rgba(30,40,60,0.10)';
  ctx.lineWidth = dpr;
  ctx.textBaseline = 'bottom';
  ctx.textAlign = 'center';
  const span = view.t1 - view.t0;
  const step = niceStep(span / Math.max(2, box.w / (90 * dpr)));
  for (let t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
    const x = Math.round(box.x + ((t - view.t0) / span) * box.w) + 0.5;
    ctx.beginPath();
    ctx.moveTo(x, box.y);
    ctx.lineTo(x, box.y + box.h);
    ctx.stroke();
    ctx.fillText(timeLabel(t, step), x, box.y - 4 * dpr);
  }
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  const rowStep = niceStep(view.rows / Math.max(2, box.h / (40 * dpr)), true);
  for (let r = Math.ceil(view.r0 / rowStep) * rowStep; r < view.r0 + view.rows; r += rowStep) {
    const y = box.y + ((r + 0.5 - view.r0) / view.rows) * box.h;
    ctx.fillText(`#${r}`, box.x - 6 * dpr, y);
  }
  ctx.strokeStyle = 'rgba(30,40,60,0.35)';
  ctx.strokeRect(box.x - 0.5, box.y - 0.5, box.w + 1, box.h + 1);
  ctx.restore();
}

function niceStep(raw, integer = false) {
  if (!(raw > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const m = raw / p;
  const step = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  return integer ? Math.max(1, Math.round(step)) : step;
}

function timeLabel(t, step) {
  if (Math.abs(t) >= 1000 || step >= 1000) {
    return `${(t / 1000).toFixed(Math.max(0, Math.ceil(-Math.log10(step / 1000) - 1e-9)))} s`;
  }
  return `${t.toFixed(Math.max(0, Math.ceil(-Math.log10(step) - 1e-9)))} ms`;
}
