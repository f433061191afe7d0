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
