// The page's pure modules: JSON pointers, display values from a result, the runnable text, the timeline data
// and its level-of-detail raster.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {getAt, setAt, deleteAt, isPrefix} from '../../web/lib/json_pointer.js';
import {requestLatencies, cdfPoints, requestsCsv} from '../../web/lib/result_data.js';
import {runnableText} from '../../web/lib/runner.js';
import {buildTimelineData} from '../../web/lib/timeline_data.js';
import {DensityRaster} from '../../web/lib/timeline_raster.js';

globalThis.ImageData ??= class {
  constructor(w, h) { this.width = w; this.height = h; this.data = new Uint8ClampedArray(w * h * 4); }
};

test('json pointers get, set and delete (pruning emptied objects)', () => {
  const doc = {engine: {block_size: 16}, a: {'b/c': 1}};
  assert.equal(getAt(doc, '/engine/block_size'), 16);
  assert.equal(getAt(doc, '/a/b~1c'), 1);
  setAt(doc, '/deployment/roles/0/replicas', 2);
  assert.deepEqual(doc.deployment, {roles: [{replicas: 2}]});
  deleteAt(doc, '/engine/block_size');
  assert.equal(doc.engine, undefined);
  assert.ok(isPrefix('/engine', '/engine/x') && !isPrefix('/eng', '/engine'));
});

function fakeResult() {
  return {
    requests: {
      replica: [0, 1, 0], arrival_ms: [0, 10, 20], first_scheduled_ms: [1, 12, -1], first_token_ms: [5, 30, -1],
      finished_ms: [105, 80, 25], prompt_tokens: [100, 200, 5000], output_tokens: [11, 6, 0], preemptions: [0, 1, 0], failed: [0, 0, 1],
    },
    phases: {request: [1, 0, 1, 1], kind: ['prefill', 'prefill', 'preempted', 'prefill'], start_ms: [12, 1, 40, 45], end_ms: [20, 5, 40, 50], tokens: [100, 100, 0, 100]},
  };
}

test('latencies come from the columns, failed requests left out, TPOT excludes the first token', () => {
  const lat = requestLatencies(fakeResult().requests);
  assert.deepEqual([...lat.ttft], [5, 20]);
  assert.deepEqual([...lat.e2el], [105, 70]);
  assert.deepEqual([...lat.tpot], [10, 10]);
  const [xs, ys] = cdfPoints([3, 1, 2], 800);
  assert.deepEqual(xs, [1, 2, 3]);
  assert.equal(ys.at(-1), 1);
  const [xs2] = cdfPoints(Array.from({length: 10000}, (_, i) => i), 100);
  assert.ok(xs2.length <= 102 && xs2.at(-1) === 9999);
});

test('with a first_text_token column TPOT counts from the first text token', () => {
  const req = {...fakeResult().requests, first_text_token: [4, 4, 4]};
  const lat = requestLatencies(req);
  assert.deepEqual([...lat.ttft], [5, 20]);
  assert.deepEqual([...lat.tpot], [100 / 7, 50 / 2]);
});

test('requests CSV has a header and one line per request', () => {
  const csv = requestsCsv(fakeResult().requests).trim().split('\n');
  assert.equal(csv.length, 4);
  assert.match(csv[0], /^request,replica,arrival_ms/);
  assert.equal(csv[1].split(',')[0], '0');
});

test('the page always runs with per-request columns and phases on', () => {
  const out = JSON.parse(runnableText('{"version":1,"output":{"timeseries_points":64}}'));
  assert.deepEqual(out.output, {timeseries_points: 64, requests: true, phases: true});
  assert.equal(runnableText('{broken'), '{broken');
});

test('timeline data groups phases per request', () => {
  const d = buildTimelineData(fakeResult());
  assert.equal(d.n, 3);
  assert.deepEqual([...d.segOffsets], [0, 1, 4, 4]);
  assert.equal(d.kindNames[d.segKind[1]], 'prefill');
  assert.equal(d.tMin, 0);
  assert.equal(d.tMax, 105);
});

test('the density raster draws requests that share pixel rows', () => {
  const n = 20000;
  const cols = {replica: [], arrival_ms: [], first_scheduled_ms: [], first_token_ms: [], finished_ms: [], prompt_tokens: [], output_tokens: [], preemptions: [], failed: []};
  for (let i = 0; i < n; i++) {
    cols.replica.push(0); cols.arrival_ms.push(i); cols.first_scheduled_ms.push(i + 5); cols.first_token_ms.push(i + 10);
    cols.finished_ms.push(i + 500); cols.prompt_tokens.push(10); cols.output_tokens.push(10); cols.preemptions.push(0); cols.failed.push(0);
  }
  const d = buildTimelineData({requests: cols, phases: {request: [], kind: [], start_ms: [], end_ms: [], tokens: []}});
  const raster = new DensityRaster();
  const img = raster.render(d, {t0: 0, t1: n + 500, r0: 0, rows: n}, 300, 100);
  const px = new Uint32Array(img.data.buffer);
  const white = px[99 * 300 + 0];
  // Each pixel row holds 200 requests, each living 500 ms: a diagonal band about 10 pixels wide.
  for (let y = 0; y < 100; y++) {
    let colored = 0;
    for (let x = 0; x < 300; x++) if (px[y * 300 + x] !== white) colored++;
    assert.ok(colored >= 5 && colored <= 20, `row ${y}: ${colored} coloured pixels`);
  }
});

test('cancel asks the worker first, then hard-cancels one that does not answer', async () => {
  const calls = [];
  const stuck = {
    run: () => ({promise: new Promise(() => {}), cancel: () => calls.push('soft')}),
    hardCancel: () => calls.push('hard'),
  };
  const {Runner, HARD_CANCEL_AFTER_MS} = await import('../../web/lib/runner.js');
  const runner = new Runner(stuck);
  const outcome = runner.start('{}');
  runner.cancel();
  const t0 = Date.now();
  const r = await outcome;
  assert.deepEqual(calls, ['soft', 'hard']);
  assert.equal(r.status, 'cancelled');
  assert.ok(r.hard && Date.now() - t0 >= HARD_CANCEL_AFTER_MS - 50);
  assert.equal(runner.running, false);

  const polite = {run: () => { let done; return {promise: new Promise((r) => (done = r)), cancel: () => done({status: 'cancelled', result: '{}'})}; }, hardCancel: () => calls.push('hard2')};
  const r2 = new Runner(polite);
  const o2 = r2.start('{}');
  r2.cancel();
  assert.equal((await o2).status, 'cancelled');
  await new Promise((r) => setTimeout(r, HARD_CANCEL_AFTER_MS + 100));
  assert.ok(!calls.includes('hard2'), 'no hard cancel after a soft cancel that worked');
});

test('op shares keep every family with time, name the new ones, and keep an unknown family under its key', async () => {
  const {opShares} = await import('../../web/lib/op_families.js');
  const rows = opShares({gemm: 0.5, moe: 0, all_to_all: 0.1, af_transfer: 0.3, future_op: 0.1});
  assert.deepEqual(rows.map((r) => r.key), ['gemm', 'all_to_all', 'af_transfer', 'future_op']);
  assert.match(rows.find((r) => r.key === 'af_transfer').label, /A <-> F/);
  assert.match(rows.find((r) => r.key === 'all_to_all').label, /all-to-all/);
  assert.equal(new Set(rows.map((r) => r.color)).size, rows.length, 'distinct colours');
  assert.deepEqual(opShares(undefined), []);
});

test('timeline replica names skip a role without replicas of its own (F)', async () => {
  const {describeRequest} = await import('../../web/lib/timeline_data.js');
  const result = {
    deployment: {roles: [{name: 'P', replicas: 2, kv_cache: {}}, {name: 'A', replicas: 2, kv_cache: {}}, {name: 'F', replicas: 2, kv_cache: null}]},
    requests: {arrival_ms: [0], first_scheduled_ms: [1], first_token_ms: [5], finished_ms: [9], replica: [3], prompt_tokens: [4],
      output_tokens: [2], preemptions: [0], failed: [0]},
    phases: {request: [0, 0], kind: ['prefill', 'kv_transfer'], start_ms: [1, 3], end_ms: [3, 5], tokens: [4, 0]},
  };
  const rows = Object.fromEntries(describeRequest(buildTimelineData(result), 0));
  assert.equal(rows.replica, 'A[1] (#3)');
  assert.equal(rows.kv_transfer, '1');
});
