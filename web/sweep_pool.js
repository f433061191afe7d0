// A pool of simulator workers for sweeps (protocol: web/protocol.js, 'sweep_*'). Each worker evaluates one
// point at a time, by index, with the core's evaluate_point; the pool hands out indices in expansion order,
// reports every record as it arrives, and merges them with the core's merge (byte for byte the sweep.json of
// `servesim sweep`). Cancel terminates every worker; the next call starts fresh ones.
import {Msg, request} from './protocol.js';

const newModuleWorker = (url) => new Worker(url, {type: 'module'});

/** navigator.hardwareConcurrency workers, at least 1, at most 8. */
export function defaultPoolSize() {
  const n = Number(globalThis.navigator?.hardwareConcurrency) || 1;
  return Math.max(1, Math.min(8, Math.floor(n)));
}

/** One worker with promise-returning requests. */
class Lane {
  constructor(url, createWorker) {
    this.worker = createWorker(url);
    this.nextId = 1;
    this.pending = new Map();
    this.failed = null;
    this.worker.onmessage = (event) => {
      const msg = event.data;
      const p = msg && this.pending.get(msg.id);
      if (!p || msg.type === Msg.PROGRESS) return;
      this.pending.delete(msg.id);
      if (msg.type === Msg.ERROR) {
        const e = new Error(msg.message);
        if (msg.errors) e.errors = msg.errors;
        p.reject(e);
      } else p.resolve(msg.result);
    };
    this.worker.onerror = (event) => {
      event?.preventDefault?.();
      this.fail(new Error(`a sweep worker failed: ${(event && event.message) || 'it could not be started'}`));
    };
  }

  send(type, args) {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    const promise = new Promise((resolve, reject) => this.pending.set(id, {resolve, reject}));
    this.worker.postMessage(request(type, id, args));
    return promise;
  }

  fail(e) {
    this.failed = e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.worker.terminate();
  }
}

export class SweepPool {
  /**
   * @param {URL|string} workerUrl web/worker.js
   * @param {{size?: number, createWorker?: (url) => Worker}} options size defaults to defaultPoolSize()
   */
  constructor(workerUrl, {size, createWorker = newModuleWorker} = {}) {
    size ??= defaultPoolSize();
    this.size = Math.max(1, Math.min(8, Math.floor(size) || 1));
    this._url = workerUrl;
    this._createWorker = createWorker;
    this._lanes = [];
    this._run = null;
  }

  /** Resolves the expansion {ok, errors, sweep, group_by, percentile, sla, total_gpus, axes, points}; rejects
   * with `errors` ([{path, message}]) when the sweep is invalid. */
  expand(text) {
    return this._lane(0).send(Msg.SWEEP_EXPAND, {sweep: String(text)});
  }

  /** Resolves {merged, csv}: a merged sweep judged under view {percentile, sla: {ttft_ms, tpot_ms}} (no point
   * runs again); rejects with `errors` for a bad view. */
  reframe(merged, view) {
    return this._lane(0).send(Msg.SWEEP_REFRAME, {merged: String(merged), view});
  }

  /** Resolves the resolved scenario JSON text of point `index`. */
  async scenario(text, index) {
    return (await this._lane(0).send(Msg.SWEEP_SCENARIO, {sweep: String(text), index})).scenario;
  }

  /**
   * Runs every point. onExpanded(expansion) once, onRecord(record, done, total) per point as it arrives.
   * `promise` resolves {status: 'completed', expansion, records, merged, csv, wallMs} (merged: the sweep.json
   * text) or {status: 'cancelled', expansion, records}, or rejects (invalid sweep, a worker failed).
   */
  run(text, {onExpanded, onRecord} = {}) {
    if (this._run) this.cancel();
    const run = {cancelled: false, resolveCancel: null};
    this._run = run;
    const sweep = String(text);
    const records = [];
    let expansion = null;
    const cancelled = new Promise((resolve) => (run.resolveCancel = resolve));
    const work = (async () => {
      const t0 = performance.now();
      // Every worker loads its module and profiles manifest while lane 0 expands the sweep.
      for (let i = 1; i < this.size; i++) this._lane(i).send(Msg.INIT, {}).catch(() => {});
      expansion = await this.expand(sweep);
      if (run.cancelled) return null;
      onExpanded?.(expansion);
      const total = expansion.points.length;
      const texts = new Array(total);
      let next = 0;
      let done = 0;
      const lanes = Array.from({length: Math.min(this.size, Math.max(1, total))}, (_, i) => this._lane(i));
      await Promise.all(lanes.map(async (lane) => {
        while (!run.cancelled && next < total) {
          const index = next++;
          const {record} = await lane.send(Msg.SWEEP_POINT, {sweep, index});
          if (run.cancelled) return;
          texts[index] = record;
          const parsed = JSON.parse(record);
          records.push(parsed);
          onRecord?.(parsed, ++done, total);
        }
      }));
      if (run.cancelled) return null;
      const merged = await this._lane(0).send(Msg.SWEEP_MERGE, {sweep, records: texts});
      if (!merged.ok) throw new Error(`merging the sweep failed: ${merged.error}`);
      return {status: 'completed', expansion, records, merged: merged.merged, csv: merged.csv,
        wallMs: performance.now() - t0};
    })();
    const promise = Promise.race([work, cancelled]).finally(() => {
      if (this._run === run) this._run = null;
    });
    work.catch(() => {}); // after a cancel its rejection (terminated workers) is not reported
    run.finish = () => run.resolveCancel({status: 'cancelled', expansion, records});
    return {promise, cancel: () => this.cancel()};
  }

  /** Stops the current run: terminates every worker (they are started again when needed). */
  cancel() {
    const run = this._run;
    this._terminate(new Error('the sweep was cancelled'));
    if (run) {
      run.cancelled = true;
      run.finish();
      this._run = null;
    }
  }

  /** Terminates every worker. */
  close() {
    this.cancel();
  }

  _lane(i) {
    if (!this._lanes[i] || this._lanes[i].failed) this._lanes[i] = new Lane(this._url, this._createWorker);
    return this._lanes[i];
  }

  _terminate(reason) {
    for (const lane of this._lanes) if (lane && !lane.failed) lane.fail(reason);
    this._lanes = [];
  }
}
