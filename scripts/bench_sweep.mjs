#!/usr/bin/env node
// A benchmark of sweeps (not a test): points per second natively (`servesim sweep --jobs 1` and `--jobs N`,
// N = the machine's cores) and in headless Chromium with N page workers (the Sweep view's SweepPool).
// Needs the native CLI (build/native) and web/assets (scripts/build_wasm, scripts/build_web).
// Usage: node scripts/bench_sweep.mjs [--sweep laptop_whatif] [--workers N]
import {spawnSync} from 'node:child_process';
import {mkdtempSync} from 'node:fs';
import {join} from 'node:path';
import os from 'node:os';
import {startBrowser, waitState, ROOT} from '../tests/web/browser_harness.mjs';

const arg = (name, fallback) => (process.argv.indexOf(name) > 0 ? process.argv[process.argv.indexOf(name) + 1] : fallback);
const SWEEP = arg('--sweep', 'laptop_whatif');
const N = Number(arg('--workers', os.availableParallelism?.() ?? os.cpus().length));
const file = join(ROOT, 'presets', 'sweeps', `${SWEEP}.json`);

console.log(`sweep ${SWEEP}; ${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, Node ${process.version}`);
for (const jobs of [...new Set([1, N])]) {
  const out = mkdtempSync(join(os.tmpdir(), 'servesim-bench-sweep-'));
  const t0 = performance.now();
  const log = spawnSync(join(ROOT, 'build/native/servesim'), ['sweep', file, '--out', out, '--jobs', String(jobs)],
    {encoding: 'utf8'}).stderr;
  const wall = (performance.now() - t0) / 1000;
  const pps = /\(([\d.]+) points\/s\)/.exec(log)?.[1];
  console.log(`native  --jobs ${jobs}: ${pps} points/s (process wall ${wall.toFixed(2)} s)`);
}

const browser = await startBrowser();
try {
  const page = await browser.open(`?sweep_workers=${N}`);
  await waitState(page, ['completed', 'error', 'stopped'], 120000);
  await page.selectOption('#sweep-preset', SWEEP);
  await page.click('#sweep-load');
  await page.waitForFunction((n) => document.getElementById('sweep-status').textContent === `Loaded ${n}.`, SWEEP);
  await page.click('#sweep-run');
  await page.waitForFunction(() => ['completed', 'error', 'cancelled'].includes(document.querySelector('.sweep').dataset.state),
    null, {timeout: 600000});
  console.log(`browser ${N} workers: ${await page.textContent('#sweep-status')}`);
} finally {
  await browser.close();
}
