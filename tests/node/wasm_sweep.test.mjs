// Sweeps in wasm equal the native CLI: the merged document of `servesim sweep` and the one the page's
// SweepPool makes (workers running web/worker.js in worker_threads, records merged by the core's merge) are
// byte-identical for the same sweep file. Also the sweep messages' errors.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import path from 'node:path';
import {Worker as ThreadWorker} from 'node:worker_threads';
import {SweepPool} from '../../web/sweep_pool.js';
import {judge} from '../../web/lib/sweep_pareto.js';
import {PRESETS, loadWasm, nativeCli} from './support.mjs';

const WORKER_URL = new URL('../../web/worker.js', import.meta.url);
const TINY = path.join(PRESETS, 'sweeps', 'tiny.json');

const BOOTSTRAP = `
const {parentPort, workerData} = require('node:worker_threads');
import(workerData.workerUrl).then(({serve}) => {
  serve({postMessage: (m) => parentPort.postMessage(m), set onmessage(f) { parentPort.on('message', (data) => f({data})); }});
});`;

/** A browser-Worker-shaped wrapper around a worker_threads thread running web/worker.js. */
class ThreadAdapter {
  constructor(url) {
    this.thread = new ThreadWorker(BOOTSTRAP, {eval: true, workerData: {workerUrl: String(url)}});
    this.thread.on('message', (data) => this.onmessage?.({data}));
    this.thread.on('error', (e) => this.onerror?.({message: e.message}));
  }
  postMessage(m) { this.thread.postMessage(m); }
  terminate() { this.thread.terminate(); }
}

function nativeSweep(file, jobs = 2) {
  const out = mkdtempSync(path.join(tmpdir(), 'servesim-sweep-'));
  execFileSync(nativeCli(), ['sweep', file, '--out', out, '--jobs', String(jobs)], {stdio: 'pipe'});
  return {merged: readFileSync(path.join(out, 'sweep.json'), 'utf8'), csv: readFileSync(path.join(out, 'frontier.csv'), 'utf8')};
}

test('the module\'s Sweep evaluates and merges tiny.json byte for byte like servesim sweep', async () => {
  const text = readFileSync(TINY, 'utf8');
  const M = await loadWasm();
  const s = new M.Sweep();
  try {
    const x = JSON.parse(s.load(text));
    assert.equal(x.ok, true);
    assert.equal(x.points.length, 6);
    assert.equal(x.points[0].scenario, undefined, 'scenarios are not shipped with the expansion');
    const records = x.points.map((p) => s.evaluate(p.index)).reverse();
    const merged = JSON.parse(s.merge(`[${records.join(',')}]`));
    assert.equal(merged.ok, true, merged.error);
    const native = nativeSweep(TINY);
    assert.equal(`${merged.merged}\n`, native.merged);
    assert.equal(merged.csv, native.csv);
    assert.equal(s.evaluate(6), '');
    assert.equal(s.evaluate(-1), '');
    assert.equal(s.evaluate(NaN), '');
    assert.equal(JSON.parse(s.scenario(0)).name, 'tiny sweep point');
    assert.equal(JSON.parse(s.load('{"version": 1')).ok, false);
  } finally {
    s.delete();
  }
});

test('the SweepPool (2 workers) gives the native merged document for tiny.json, with progress', async () => {
  const text = readFileSync(TINY, 'utf8');
  const pool = new SweepPool(WORKER_URL, {size: 2, createWorker: (url) => new ThreadAdapter(url)});
  const seen = [];
  let expanded = null;
  try {
    const out = await pool.run(text, {onExpanded: (x) => (expanded = x), onRecord: (r, done, total) => seen.push([r.index, done, total])}).promise;
    assert.equal(out.status, 'completed');
    assert.equal(expanded.points.length, 6);
    assert.deepEqual(seen.map((s) => s[1]), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(seen.map((s) => s[0]).sort(), [0, 1, 2, 3, 4, 5]);
    assert.equal(`${out.merged}\n`, nativeSweep(TINY).merged);
    assert.equal(JSON.parse(await pool.scenario(text, 3)).deployment.roles[0].role, 'P');
  } finally {
    pool.close();
  }
});

test('an invalid sweep is refused with paths; cancel resolves with the records so far', async () => {
  const pool = new SweepPool(WORKER_URL, {size: 2, createWorker: (url) => new ThreadAdapter(url)});
  try {
    await assert.rejects(pool.run('{"version": 1, "axes": []}').promise, (e) => e.errors.some((x) => x.path === '/base'));
    const laptop = readFileSync(path.join(PRESETS, 'sweeps', 'laptop_whatif.json'), 'utf8');
    const {promise, cancel} = pool.run(laptop, {onRecord: (r, done) => { if (done === 1) cancel(); }});
    const out = await promise;
    assert.equal(out.status, 'cancelled');
    assert.equal(out.records.length, 1);
  } finally {
    pool.close();
  }
});

test('the page\'s judgement while a sweep runs equals the core\'s reframe of the merged sweep', async () => {
  const text = readFileSync(TINY, 'utf8');
  const M = await loadWasm();
  const s = new M.Sweep();
  try {
    const x = JSON.parse(s.load(text));
    const records = x.points.map((p) => s.evaluate(p.index));
    const merged = JSON.parse(s.merge(`[${records.join(',')}]`)).merged;
    const parsed = records.map((r) => JSON.parse(r));
    const ok = parsed.filter((r) => r.status === 'ok');
    let moved = 0;
    for (const percentile of ['p50', 'p90', 'p95', 'p99']) {
      const tpots = ok.map((r) => r.metrics[`${percentile}_tpot_ms`]).sort((a, b) => a - b);
      const ttfts = ok.map((r) => r.metrics[`${percentile}_ttft_ms`]).sort((a, b) => a - b);
      for (const sla of [{ttft_ms: 0, tpot_ms: 0}, {ttft_ms: ttfts[2], tpot_ms: 0}, {ttft_ms: 0, tpot_ms: tpots[1]},
        {ttft_ms: ttfts[3], tpot_ms: tpots[3]}, {ttft_ms: 1, tpot_ms: 1}]) {
        const view = {percentile, sla};
        const core = JSON.parse(M.sweepReframe(merged, JSON.stringify(view)));
        assert.equal(core.ok, true, JSON.stringify(core.errors));
        const doc = JSON.parse(core.merged);
        const page = judge(parsed, view);
        const what = JSON.stringify(view);
        assert.equal(page.best, doc.best, what);
        assert.deepEqual(page.frontiers, doc.frontiers, what);
        assert.deepEqual(page.points.map((p) => [p.x, p.meets_sla]), doc.points.map((p) => [p.x, p.meets_sla]), what);
        if (doc.best !== JSON.parse(merged).best) ++moved;
      }
    }
    assert.ok(moved > 0, 'some views move the best point');
    const bad = JSON.parse(M.sweepReframe(merged, '{"percentile": "p75"}'));
    assert.equal(bad.ok, false);
    assert.equal(bad.errors[0].path, '/percentile');
  } finally {
    s.delete();
  }
});
