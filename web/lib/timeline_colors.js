// Colours of the request timeline, shared by the canvas drawing, the density raster and the legend.
export const PHASE_COLORS = {
  queued: [240, 176, 62],
  prefill: [53, 104, 214],
  decode: [42, 160, 118],
  preempted: [214, 48, 49],
  other: [142, 91, 208], // transfer, tool wait and any later phase kind
  failed: [120, 120, 120],
};
export const BACKGROUND = [255, 255, 255];

export function css([r, g, b], alpha = 1) {
  return alpha === 1 ? `rgb(${r},${g},${b})` : `rgba(${r},${g},${b},${alpha})`;
}
