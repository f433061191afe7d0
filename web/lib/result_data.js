// Display values derived from a result document only (no simulation here): per-request latencies for the
// CDFs, and CDF sampling. Times in the result are milliseconds; -1 marks a time that never happened.

/** Per-request TTFT, TPOT (excluding the first token, as vLLM; from the first text token when the client times
 *  that: the first_text_token column) and E2EL of completed requests. */
export function requestLatencies(requests) {
  const n = requests?.arrival_ms?.length ?? 0;
  const ttft = [], tpot = [], e2el = [];
  for (let i = 0; i < n; i++) {
    if (requests.failed[i]) continue;
    const arrival = requests.arrival_ms[i], first = requests.first_token_ms[i], fin = requests.finished_ms[i];
    if (first < 0 || fin < 0) continue;
    ttft.push(first - arrival);
    e2el.push(fin - arrival);
    const out = requests.output_tokens[i], from = requests.first_text_token?.[i] ?? 1;
    if (out > from) tpot.push((fin - first) / (out - from));
  }
  return {ttft: Float64Array.from(ttft), tpot: Float64Array.from(tpot), e2el: Float64Array.from(e2el)};
}

/** Empirical CDF as [xs, ys], down-sampled to at most `maxPoints` points (the extremes always kept). */
export function cdfPoints(values, maxPoints = 800) {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  if (n === 0) return [[], []];
  const step = Math.max(1, Math.ceil(n / maxPoints));
  const xs = [], ys = [];
  for (let i = 0; i < n; i += step) {
    xs.push(sorted[i]);
    ys.push((i + 1) / n);
  }
  if (xs[xs.length - 1] !== sorted[n - 1] || ys[ys.length - 1] !== 1) {
    xs.push(sorted[n - 1]);
    ys.push(1);
  }
  return [xs, ys];
}

/** Columns of result.requests as CSV text, one row per request, with its index first. */
export function requestsCsv(requests) {
  const names = Object.keys(requests ?? {});
  if (names.length === 0) return '';
  const n = requests[names[0]].length;
  const lines = ['request,' + names.join(',')];
  for (let i = 0; i < n; i++) {
    let line = String(i);
    for (const name of names) line += ',' + csvCell(requests[name][i]);
    lines.push(line);
  }
  return lines.join('\n') + '\n';
}

function csvCell(v) {
  if (typeof v === 'number') return String(v);
  const s = String(v ?? '');
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
