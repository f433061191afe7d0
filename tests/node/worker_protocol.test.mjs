// web/worker.js and web/sim_client.js under Node: the worker's serve() runs in a worker_threads thread behind
// an adapter with the browser Worker's shape, so the protocol, progress rate, cancel, hard cancel and the
// watchdog are exercised against the real wasm module.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {readFileSync} from 'node:fs';
import path from 'node:path';
import {Worker as ThreadWorker} from 'node:worker_threads';
import {Msg, PROGRESS_INTERVAL_MS, request} from '../../web/protocol.js';
import {SimClient} from '../../web/sim_client.js';
import {PRESETS, loadWasm, longScenario, runToEnd} from './support.mjs';

const preset = (name) => readFileSync(path.join(PRESETS, name), 'utf8');
const WORKER_URL = new URL('../../web/worker.js', import.meta.url);

// Runs serve() from web/worker.js in a thread. `stall` swaps in a module whose step() never returns.
const BOOTSTRAP = `
const {parentPort, workerData} = require('node:worker_threads');
import(workerData.workerUrl).then(({serve, loadModule}) => {
  const stalled = async () => {
    const M = await loadModule();
    return {...M, version: M.version, validate: M.validate, Session: class {
      create() { return '{"ok":true,"errors":[]}'; }
      progress() { return '{"sim_time_s":0,"requests_done":0,"requests_total":1,"events":0,"finished":false,"status":"running"}'; }
      step() { for (;;) {} }
      delete() {}
    }};
  };
  const port = {postMessage: (m) => parentPort.postMessage(m), set onmessage(f) { parentPort.on('message', (data) => f({data})); }};
  serve(port, {...workerData.options, ...(workerData.stall ? {load: stalled} : {})});
});`;

/** A browser-Worker-shaped wrapper around a worker_threads thread running web/worker.js. */
class ThreadAdapter {
  constructor(url, {stall = false, options = {}} = {}) {
    this.onmessage = null;
    this.onerror = null;
    this.thread = new ThreadWorker(BOOTSTRAP, {eval: true, workerData: {workerUrl: String(url), stall, options}});
    this.thread.on('message', (data) => this.onmessage?.({data}));
    this.thread.on('error', (e) => this.onerror?.({message: e.message}));
  }
  postMessage(m) {
    this.thread.postMessage(m);
  }
  terminate() {
    this.thread.terminate();
  }
}

/** Raw protocol access: send() returns every message of that id until its reply or error. */
function rawWorker(options) {
  const w = new ThreadAdapter(WORKER_URL, {options});
  const listeners = new Map();
  w.onmessage = ({data}) => listeners.get(data.id)?.(data);
  let next = 1;
  const send = (type, args) => {
    const id = next++;
    const messages = [];
    const done = new Promise((resolve) => listeners.set(id, (m) => {
      messages.push({...m, at: performance.now()});
      if (m.type !== Msg.PROGRESS) resolve(messages);
    }));
    w.postMessage(request(type, id, args));
    return {id, done};
  };
  return {send, close: () => w.terminate()};
}

test('protocol: init, validate, unknown types, invalid runs', async () => {
  const w = rawWorker();
  try {
    const [init] = await w.send(Msg.INIT, {}).done;
    assert.equal(init.type, Msg.INIT);
    const M = await loadWasm();
    assert.equal(init.result.version, M.version());
    const [ok] = await w.send(Msg.VALIDATE, {scenario: preset('default.json')}).done;
    assert.deepEqual(ok.result, {ok: true, errors: []});
    const [bad] = await w.send(Msg.VALIDATE, {scenario: '{"version": 1, "engine": {"block_size": 24}}'}).done;
    assert.equal(bad.result.ok, false);
    assert.ok(bad.result.errors.some((e) => e.path === '/engine/block_size'));
    const [unknown] = await w.send('explode', {}).done;
    assert.equal(unknown.type, Msg.ERROR);
    assert.match(unknown.message, /unknown request type/);
    const [invalid] = await w.send(Msg.RUN, {scenario: '{"version": 1, "engine": {"block_size": 24}}'}).done;
    assert.equal(invalid.type, Msg.ERROR);
    assert.match(invalid.message, /^invalid scenario: .*\/engine\/block_size/);
    assert.ok(invalid.errors.some((e) => e.path === '/engine/block_size'));
    const [garbage] = await w.send(Msg.RUN, {scenario: '\uDC00{'}).done;
    assert.equal(garbage.type, Msg.ERROR);
  } finally {
    w.close();
  }
});

test('protocol: a run reports rate-limited progress, then the same result as a direct run', async () => {
  const w = rawWorker({stepEvents: 500});
  try {
    const t0 = performance.now();
    const messages = await w.send(Msg.RUN, {scenario: preset('multi_replica.json'), keepTrace: false}).done;
    const elapsed = performance.now() - t0;
    const final = messages.at(-1);
    const progress = messages.slice(0, -1);
    assert.equal(final.type, Msg.RUN);
    assert.equal(final.result.status, 'completed');
    assert.equal(final.result.trace, null);
    assert.match(final.result.benchmark, /Serving Benchmark Result/);
    const direct = runToEnd(await loadWasm(), preset('multi_replica.json'));
    assert.ok(final.result.result === direct.result, 'result through the worker differs from a direct run');
    assert.ok(progress.length >= 2, `only ${progress.length} progress messages`);
    for (const p of progress) {
      assert.equal(p.type, Msg.PROGRESS);
      assert.deepEqual(Object.keys(p.result).sort(), ['events', 'requests_done', 'requests_total', 'sim_time_s', 'status']);
    }
    assert.equal(progress.at(-1).result.status, 'completed');
    // At most one per interval, plus the first and the last.
    assert.ok(progress.length <= elapsed / PROGRESS_INTERVAL_MS + 2, `${progress.length} progress messages in ${elapsed} ms`);
  } finally {
    w.close();
  }
});

test('protocol: cancel stops the run between steps with status cancelled', async () => {
  const w = rawWorker({stepEvents: 200});
  try {
    const run = w.send(Msg.RUN, {scenario: longScenario(), keepTrace: true});
    const second = (await w.send(Msg.RUN, {scenario: preset('default.json')}).done).at(-1);
    assert.equal(second.type, Msg.ERROR);
    assert.match(second.message, /already in progress/);
    const [cancelled] = await w.send(Msg.CANCEL, {runId: run.id}).done;
    assert.deepEqual(cancelled.result, {found: true});
    const final = (await run.done).at(-1);
    assert.equal(final.result.status, 'cancelled');
    assert.equal(JSON.parse(final.result.result).status, 'cancelled');
    assert.ok(JSON.parse(final.result.trace).traceEvents.length > 0);
    const [late] = await w.send(Msg.CANCEL, {runId: run.id}).done;
    assert.deepEqual(late.result, {found: false});
  } finally {
    w.close();
  }
});

const client = (opts = {}) =>
  new SimClient(WORKER_URL, {...opts, createWorker: (url) => new ThreadAdapter(url, opts.adapter)});

test('SimClient: init, validate, run with progress, cancel', async () => {
  const c = client({adapter: {options: {stepEvents: 200}}});
  try {
    const info = await c.init();
    assert.equal(typeof info.version, 'string');
    assert.equal((await c.validate('{')).ok, false);
    const seen = [];
    const done = await c.run(preset('default.json'), {onProgress: (p) => seen.push(p)}).promise;
    assert.equal(done.status, 'completed');
    assert.ok(seen.length >= 1 && seen.at(-1).requests_done === seen.at(-1).requests_total);
    const run = c.run(longScenario(), {keepTrace: true, onProgress: () => run.cancel()});
    assert.equal((await run.promise).status, 'cancelled');
    await assert.rejects(c.run('{"version": 1}').promise, (e) => Array.isArray(e.errors) && e.errors.length > 0);
  } finally {
    c.close();
  }
});

test('SimClient: hardCancel resolves the run as hard-cancelled and a fresh worker takes over', async () => {
  const c = client({adapter: {options: {stepEvents: 100}}});
  try {
    await c.init();
    const run = c.run(longScenario(), {onProgress: () => c.hardCancel()});
    const r = await run.promise;
    assert.equal(r.status, 'cancelled');
    assert.equal(r.hard, true);
    assert.equal((await c.run(preset('closed_loop_h100.json')).promise).status, 'completed');
  } finally {
    c.close();
  }
});

test('SimClient: the watchdog stops a run that makes no progress and rejects it clearly', async () => {
  const c = client({watchdogMs: 1500, adapter: {stall: true}});
  try {
    await c.init();
    await assert.rejects(c.run(preset('default.json')).promise, /made no progress for 1.5 s; it was stopped and the worker restarted/);
    assert.equal(typeof (await c.init()).version, 'string');
  } finally {
    c.close();
  }
});
