// The simulator worker: implements web/protocol.js with the wasm module (web/assets/servesim.js). It only
// forwards to the core's Session; the run loop steps it in slices, reports progress at most ~10 times a
// second and yields to the event loop between slices so that 'cancel' messages are seen.
import {Msg, PROGRESS_INTERVAL_MS, PROTOCOL_VERSION, STEP_EVENTS, error, progress, reply} from './protocol.js';

const ASSETS = new URL('./assets/', import.meta.url);

/** Loads a fresh instance of the module; its files (.wasm, .data) are found next to servesim.js. */
export async function loadModule(assets = ASSETS) {
  const {default: createServesim} = await import(new URL('servesim.js', assets).href);
  // Under Node the module reads its files with fs, which wants paths rather than file: URLs.
  const locate = (name) => {
    const u = new URL(name, assets);
    return u.protocol === 'file:' ? decodeURIComponent(u.pathname) : u.href;
  };
  return createServesim({locateFile: locate});
}

/** Resolves on a later turn of the event loop, after messages already queued (no 4 ms timer clamp). */
function makeYield() {
  if (typeof MessageChannel !== 'function') return () => new Promise((r) => setTimeout(r, 0));
  const ch = new MessageChannel();
  const waiting = [];
  ch.port1.onmessage = () => waiting.shift()();
  ch.port1.unref?.(); // Node: an idle channel must not keep the process alive
  ch.port2.unref?.();
  return () => new Promise((r) => {
    waiting.push(r);
    ch.port2.postMessage(0);
  });
}

const errorMessage = (e) => (e && e.message) || String(e);

/** Serves the protocol on `port` (the worker's global scope, or any {postMessage, onmessage} object). */
export function serve(port, {load = loadModule, stepEvents = STEP_EVENTS, progressIntervalMs = PROGRESS_INTERVAL_MS} = {}) {
  let modulePromise = null;
  const runs = new Map(); // run id -> {cancel: bool}
  const nextTurn = makeYield();
  const post = (m) => port.postMessage(m);

  const module = () =>
    (modulePromise ??= load().catch((e) => {
      modulePromise = null; // let a later request try again
      throw new Error(`could not load the simulator module: ${errorMessage(e)}`);
    }));
  // A trap or abort inside the core leaves the instance unusable: the next request loads a fresh one.
  const discard = () => (modulePromise = null);

  async function onInit(id) {
    const M = await module();
    post(reply(Msg.INIT, id, {version: M.version(), protocol: PROTOCOL_VERSION}));
  }

  async function onValidate(id, {scenario}) {
    const M = await module();
    post(reply(Msg.VALIDATE, id, JSON.parse(M.validate(String(scenario ?? '')))));
  }

  async function onRun(id, {scenario, keepTrace = false}) {
    if (runs.size > 0) throw new Error('a run is already in progress in this worker');
    const state = {cancel: false};
    runs.set(id, state);
    let session = null;
    try {
      const M = await module();
      session = new M.Session();
      const created = JSON.parse(session.create(String(scenario ?? ''), !!keepTrace));
      if (!created.ok) {
        const lines = created.errors.map((e) => `${e.path || '/'}: ${e.message}`);
        post(error(id, `invalid scenario: ${lines.join('; ')}`, created.errors));
        return;
      }
      const report = (p) => {
        const {sim_time_s, requests_done, requests_total, events, status} = p;
        post(progress(id, {sim_time_s, requests_done, requests_total, events, status}));
      };
      let p = JSON.parse(session.progress());
      report(p);
      let last = performance.now();
      while (!p.finished) {
        await nextTurn();
        if (state.cancel) session.cancel();
        p = JSON.parse(session.step(stepEvents));
        const now = performance.now();
        if (p.finished || now - last >= progressIntervalMs) {
          report(p);
          last = now;
        }
      }
      post(reply(Msg.RUN, id, {
        status: p.status,
        result: session.resultJson(),
        benchmark: session.benchmarkBlock(),
        trace: keepTrace ? session.chromeTraceJson() : null,
      }));
    } finally {
      runs.delete(id);
      try {
        session?.delete();
      } catch {
        // the instance already trapped; it is discarded below
      }
    }
  }

  function onCancel(id, {runId}) {
    const state = runs.get(runId);
    if (state) state.cancel = true;
    post(reply(Msg.CANCEL, id, {found: !!state}));
  }

  const handlers = {[Msg.INIT]: onInit, [Msg.VALIDATE]: onValidate, [Msg.RUN]: onRun, [Msg.CANCEL]: onCancel};

  port.onmessage = async (event) => {
    const msg = event.data;
    const id = msg && msg.id;
    const handler = msg && typeof msg.type === 'string' && Object.hasOwn(handlers, msg.type) ? handlers[msg.type] : null;
    if (!handler) {
      post(error(id ?? null, `unknown request type ${JSON.stringify(msg && msg.type)}`));
      return;
    }
    try {
      await handler(id, (msg.args && typeof msg.args === 'object') ? msg.args : {});
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError || typeof e === 'number') discard();
      const what = e instanceof WebAssembly.RuntimeError || typeof e === 'number' ? 'the simulator core failed: ' : '';
      post(error(id, what + errorMessage(e)));
    }
  };
}

// Started as a worker (not imported by a test): serve the page.
if (typeof WorkerGlobalScope !== 'undefined' && globalThis instanceof WorkerGlobalScope) serve(globalThis);
