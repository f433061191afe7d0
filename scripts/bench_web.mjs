#!/usr/bin/env node
// A benchmark of the web app (not a test): asset sizes raw and gzipped, time to interactive, and the request
// timeline's frame time with 100k requests, in headless Debian Chromium. Needs web/assets built
// (scripts/build_wasm, scripts/build_web). Also the bytes the local server sent until the default preset's
// first result (profiles are fetched on demand: web/lib/profiles.js).
// Usage: node scripts/bench_web.mjs [--requests N] [--first-result-only]
import {readFileSync, readdirSync, statSync, existsSync} from 'node:fs';
import {gzipSync} from 'node:zlib';
import {join, relative} from 'node:path';
import os from 'node:os';
import {startBrowser, waitState, runAndWait, ROOT} from '../tests/web/browser_harness.mjs';

const argN = process.argv.indexOf('--requests');
const REQUESTS = argN > 0 ? Number(process.argv[argN + 1]) : 100000;
const WEB = join(ROOT, 'web');

function files(dir) {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

function sizes() {
  const all = files(process.env.SERVESIM_WEB_ROOT ?? WEB).filter((p) => !p.includes(`${join('assets', 'presets')}`) && !p.endsWith('.md'));
  const groups = {wasm: [], 'wasm glue (servesim.js)': [], 'profiles (servesim.data)': [], 'profiles (on demand: manifest + files)': [],
    'uPlot': [], 'page (html, css, js)': []};
  for (const p of all) {
    const name = relative(process.env.SERVESIM_WEB_ROOT ?? WEB, p);
    const key = name.endsWith('.wasm') ? 'wasm' : name === 'assets/servesim.js' ? 'wasm glue (servesim.js)'
      : name.endsWith('.data') ? 'profiles (servesim.data)'
      : name.startsWith('assets/profiles/') || name === 'assets/profiles_files.json' ? 'profiles (on demand: manifest + files)' : /uplot/i.test(name) ? 'uPlot' : /\.(html|css|js|mjs)$/.test(name) ? 'page (html, css, js)' : null;
    if (key) groups[key].push(p);
  }
  console.log('\nAsset sizes (raw / gzip -9):');
  for (const [key, list] of Object.entries(groups)) {
    let raw = 0, gz = 0;
    for (const p of list) { const b = readFileSync(p); raw += b.length; gz += gzipSync(b, {level: 9}).length; }
    console.log(`  ${key.padEnd(28)} ${kb(raw).padStart(10)} / ${kb(gz).padStart(10)}   (${list.length} file${list.length === 1 ? '' : 's'})`);
  }
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const pct = (a, q) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * q))];

async function timeToInteractive(browser) {
  const interactive = [], ready = [], first = [], bytes = [];
  let files = [];
  for (let i = 0; i < 3; i++) {
    browser.served.length = 0;
    const page = await browser.open(null);
    const t0 = Date.now();
    await page.goto(browser.url);
    await page.waitForFunction(() => document.getElementById('app').dataset.interactive);
    interactive.push(Date.now() - t0);
    await waitState(page, ['ready', 'running', 'completed']);
    ready.push(Date.now() - t0);
    await waitState(page, ['completed']);
    await page.waitForFunction(() => document.querySelector('.timeline-canvas')?.dataset.frameMs);
    first.push(Date.now() - t0);
    bytes.push(browser.served.reduce((a, [, n]) => a + n, 0));
    files = browser.served.filter(([p]) => /servesim\.data|assets\/profiles/.test(p));
    await page.close();
  }
  console.log(`\nTime to interactive, median of 3 loads from 127.0.0.1 (no cache):`);
  const line = (label, ms) => console.log(`  ${label.padEnd(56)} ${String(ms).padStart(6)} ms`);
  line('page usable (presets, editor)', median(interactive));
  line('simulator ready (wasm + profiles loaded, Run enabled)', median(ready));
  line('first result drawn (default preset, 1,000 requests)', median(first));
  if (browser.served.length || bytes[0]) {
    console.log(`  bytes sent by the server until the first result: ${kb(median(bytes))} (all files, median of 3)`);
    console.log(`  profile data among them: ${files.map(([p, n]) => `${p} ${kb(n)}`).join(', ')}`);
  }
}

async function timelineFrames(browser) {
  const page = await browser.open('?preset=closed_loop_h100');
  await waitState(page, ['completed']);
  const scenario = {version: 1, name: `${REQUESTS} requests x 64 replicas`, seed: 1, model: 'Llama-3.1-8B', hardware: {gpu: 'H100-SXM'},
    deployment: {router: 'least_outstanding_tokens', roles: [{role: 'C', replicas: 64}]},
    workload: {num_requests: REQUESTS, arrival: {process: 'poisson', request_rate: 384},
      input_len: {dist: 'lognormal', median: 512, sigma: 0.8, min: 8, max: 8192},
      output_len: {dist: 'lognormal', median: 128, sigma: 0.8, min: 2, max: 2048}}};
  await page.click('#editor-details summary');
  await page.locator('.json-text').fill(JSON.stringify(scenario));
  await page.waitForSelector('.error-list .ok', {timeout: 10000});
  await page.click('#editor-details summary');
  const t0 = Date.now();
  const state = await runAndWait(page, () => page.click('#run'), 600000);
  const runMs = Date.now() - t0;
  if (state !== 'completed') throw new Error(`the ${REQUESTS}-request run ended ${state}`);
  await page.locator('.timeline-canvas').scrollIntoViewIfNeeded();
  const frames = await page.evaluate(async () => {
    const c = document.querySelector('.timeline-canvas');
    const r = c.getBoundingClientRect();
    const frame = () => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
    const wheel = async (dy, fx = 0.4, fy = 0.5, extra = {}) => {
      c.dispatchEvent(new WheelEvent('wheel', {deltaY: dy, clientX: r.left + r.width * fx, clientY: r.top + r.height * fy, bubbles: true, cancelable: true, ...extra}));
      await frame();
      return {ms: Number(c.dataset.frameMs), mode: document.querySelector('.timeline-stats').textContent};
    };
    const out = {aggregated: [], rows: [], pan: []};
    for (let i = 0; i < 20; i++) out.aggregated.push((await wheel(i % 2 ? 40 : -40)).ms); // zoomed out: all rows
    let f;
    for (let i = 0; i < 80; i++) { f = await wheel(-300); if (/one row per request/.test(f.mode)) break; }
    for (let i = 0; i < 20; i++) out.rows.push((await wheel(i % 2 ? 40 : -40)).ms);
    c.dispatchEvent(new MouseEvent('dblclick', {bubbles: true}));
    await frame();
    for (let i = 0; i < 6; i++) await wheel(-300, 0.5, 0.5, {shiftKey: true}); // zoom time only
    for (let i = 0; i < 20; i++) {
      c.dispatchEvent(new PointerEvent('pointerdown', {clientX: r.left + 300, clientY: r.top + 200, pointerId: 1, bubbles: true}));
      c.dispatchEvent(new PointerEvent('pointermove', {clientX: r.left + 300 - 15 * (i + 1), clientY: r.top + 200, pointerId: 1, bubbles: true}));
      c.dispatchEvent(new PointerEvent('pointerup', {pointerId: 1, bubbles: true}));
      await frame();
      out.pan.push(Number(c.dataset.frameMs));
    }
    return {...out, canvas: `${c.width}x${c.height}`};
  });
  console.log(`\nRequest timeline, ${REQUESTS.toLocaleString('en-US')} requests (run in the page: ${(runMs / 1000).toFixed(1)} s incl. result transfer and drawing), canvas ${frames.canvas} px:`);
  for (const [k, v] of Object.entries(frames)) {
    if (Array.isArray(v)) console.log(`  ${k.padEnd(34)} median ${median(v).toFixed(1)} ms, p95 ${pct(v, 0.95).toFixed(1)} ms, max ${Math.max(...v).toFixed(1)} ms (${v.length} frames)`);
  }
}

for (const f of process.env.SERVESIM_WEB_URL || process.env.SERVESIM_WEB_ROOT ? [] : ['assets/servesim.wasm', 'assets/uplot.mjs', 'sim_client.js']) {
  if (!existsSync(join(WEB, f))) { console.error(`web/${f} is missing: run scripts/build_wasm and scripts/build_web`); process.exit(1); }
}
console.log(`machine: ${os.arch()}, ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? ''}; headless Chromium (software rendering)`);
sizes();
const browser = await startBrowser();
try {
  await timeToInteractive(browser);
  if (!process.argv.includes('--first-result-only')) await timelineFrames(browser);
} finally {
  await browser.close();
}
