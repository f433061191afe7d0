// The page's handle on the simulator worker (protocol: web/protocol.js). Promises in, messages out; the main
// thread never waits on the simulation. A run that stops reporting progress is hard-cancelled by a watchdog:
// the worker is terminated and a fresh one started.
import {Msg, request} from './protocol.js';
import {SweepPool} from './sweep_pool.js';

/** A run with no progress message for this long is stopped and its promise rejected. */
export const WATCHDOG_MS = 30000;

const newModuleWorker = (url) => new Worker(url, {type: 'module'});

/** What a run's promise resolves to after hardCancel(). */
const HARD_CANCELLED = Object.freeze({status: 'cancelled', hard: true, result: null, benchmark: '', trace: null});

export class SimClient {
  /**
   * @param {URL|string} workerUrl web/worker.js, e.g. new URL('./worker.js', import.meta.url)
   * @param {{watchdogMs?: number, createWorker?: (url) => Worker}} options createWorker is for tests
   */
  constructor(workerUrl, {watchdogMs = WATCHDOG_MS, createWorker = newModuleWorker} = {}) {
    this.watchdogMs = watchdogMs;
    this._url = workerUrl;
    this._createWorker = createWorker;
    this._nextId = 1;
    this._pending = new Map(); // id -> {resolve, reject, onProgress, isRun, timer}
    this._start();
  }

  /** Resolves {version, protocol} once the worker has loaded the module. */
  init() {
    return this._ready;
  }

  /** Resolves {ok, errors: [{path, message}]}. */
  validate(text) {
    return this._send(Msg.VALIDATE, {scenario: String(text)}).promise;
  }

  /**
   * Starts a run. `promise` resolves {status, result, benchmark, trace} ('completed', 'cancelled' or
   * 'stopped'; after hardCancel() {status: 'cancelled', hard: true, result: null, ...}) or rejects with an
   * Error (`errors` holds [{path, message}] for an invalid scenario). onProgress gets
   * {sim_time_s, requests_done, requests_total, events, status}. cancel() asks the worker to stop between steps.
   */
  run(text, {keepTrace = false, onProgress} = {}) {
    const worker = this._worker;
    const {id, promise} = this._send(Msg.RUN, {scenario: String(text), keepTrace: !!keepTrace}, {onProgress, isRun: true});
    // The watchdog starts once the module is loaded: a slow download is not a stuck run.
    this._ready.then(() => this._arm(id), () => {});
    const cancel = () => {
      if (this._worker === worker && this._pending.has(id)) this._send(Msg.CANCEL, {runId: id}).promise.catch(() => {});
    };
    return {promise, cancel};
  }

  /** A pool of workers for sweeps (web/sweep_pool.js) on the same worker script; `size` defaults to
   * navigator.hardwareConcurrency (1 to 8). */
  sweepPool({size} = {}) {
    return new SweepPool(this._url, {size, createWorker: this._createWorker});
  }

  /** Terminates the worker and starts a fresh one: runs resolve as hard-cancelled, other requests reject. */
  hardCancel() {
    this._restart(null);
  }

  /** Terminates the worker for good. */
  close() {
    this._settleAll(null, new Error('the simulator was closed'));
    this._worker.terminate();
  }

  _start() {
    this._failed = null;
    const worker = this._createWorker(this._url);
    this._worker = worker;
    worker.onmessage = (event) => {
      if (this._worker === worker) this._onMessage(event.data);
    };
    worker.onerror = (event) => {
      event?.preventDefault?.();
      if (this._worker !== worker) return;
      // The worker script or the module failed to load: every request fails with this until hardCancel().
      const why = (event && event.message) || 'it could not be started (check that web/assets/ holds the wasm build)';
      this._failed = new Error(`the simulator worker failed: ${why}`);
      this._settleAll(this._failed, this._failed);
      worker.terminate();
    };
    worker.onmessageerror = worker.onerror;
    this._ready = this._send(Msg.INIT, {}).promise;
    this._ready.catch(() => {}); // reported to whoever awaits init(), run() or validate()
  }

  _restart(runError) {
    this._settleAll(runError, new Error('the simulator worker was restarted'));
    this._worker.terminate();
    this._start();
  }

  /** Settles every pending request: runs with `runError` (null: resolve as hard-cancelled), others with `error`. */
  _settleAll(runError, error) {
    const pending = [...this._pending.values()];
    this._pending.clear();
    for (const p of pending) {
      clearTimeout(p.timer);
      if (!p.isRun) p.reject(error);
      else if (runError) p.reject(runError);
      else p.resolve(HARD_CANCELLED);
    }
  }

  _send(type, args, {onProgress = null, isRun = false} = {}) {
    const id = this._nextId++;
    if (this._failed) return {id, promise: Promise.reject(this._failed)};
    const promise = new Promise((resolve, reject) => this._pending.set(id, {resolve, reject, onProgress, isRun, timer: null}));
    this._worker.postMessage(request(type, id, args));
    return {id, promise};
  }

  _arm(id) {
    const p = this._pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    p.timer = setTimeout(() => {
      if (this._pending.get(id) !== p) return;
      const secs = Math.round(this.watchdogMs / 100) / 10;
      this._restart(new Error(`the simulation made no progress for ${secs} s; it was stopped and the worker restarted`));
    }, this.watchdogMs);
  }

  _onMessage(msg) {
    const p = msg && this._pending.get(msg.id);
    if (!p) return;
    if (msg.type === Msg.PROGRESS) {
      if (p.timer !== null) this._arm(msg.id);
      if (p.onProgress) p.onProgress(msg.result);
      return;
    }
    this._pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.type === Msg.ERROR) {
      const e = new Error(msg.message);
      if (msg.errors) e.errors = msg.errors;
      p.reject(e);
    } else {
      p.resolve(msg.result);
    }
  }
}
