// The simulator worker: implements web/protocol.js with the wasm module (web/assets/servesim.js). It only
// forwards to the core's Session; the run loop steps it in slices, reports progress at most ~10 times a
// second and yields to the event loop between slices so that 'cancel' messages are seen. Every core call that
// reads profiles goes through M.profiles.run() (lib/profiles.js), which fetches the files the call asks for.
import {Msg, PROGRESS_INTERVAL_MS, PROTOCOL_VERSION, STEP_EVENTS, error, progress, reply} from './protocol.js';
import {Profiles} from './lib/profiles.js';

const ASSETS = new URL('./assets/', import.meta.url);

/**
 * Loads a fresh instance of the module (servesim.wasm is found next to servesim.js) and its profiles
 * manifest as M.profiles. allProfiles hands over every profile at once (Node callers that use the module
 * directly); otherwise files are fetched when a call needs them.
 */
export async function loadModule(assets = ASSETS, {allProfiles = false, read} = {}) {
  const {default: createServesim} = await import(new URL('servesim.js', assets).href);
  // Under Node the module reads its files with fs, which wants paths rather than file: URLs.
  const locate = (name) => {
    const u = new URL(name, assets);
    return u.protocol === 'file:' ? decodeURIComponent(u.pathname) : u.href;
  };
  const M = await createServesim({locateFile: locate});
  M.profiles = await new Profiles(M, assets, read).init();
  if (allProfiles) await M.profiles.fetchAll();
  return M;
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
    const text = String(scenario ?? '');
    post(reply(Msg.VALIDATE, id, JSON.parse(await M.profiles.run(() => M.validate(text)))));
  }

  async function onRun(id, {scenario, keepTrace = false}) {
    if (runs.size > 0) throw new Error('a run is already in progress in this worker');
    const state = {cancel: false};
    runs.set(id, state);
    let session = null;
    try {
      const M = await module();
      const text = String(scenario ?? '');
      let created;
      ({session, created} = await M.profiles.run(() => {
        const s = new M.Session();
        return {session: s, created: JSON.parse(s.create(text, !!keepTrace))};
      }, (attempt) => attempt.session.delete()));
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
      const late = JSON.parse(M.takeMissing());
      if (late.length) throw new Error(`the run asked for profiles after it started: ${late.join(', ')}`);
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

  // The last sweep loaded in this worker: {text, sweep (the module's Sweep), expansion}.
  let sweep = null;
  async function loadSweep(id, text) {
    const M = await module();
    text = String(text ?? '');
    if (sweep && sweep.M === M && sweep.text === text) return sweep;
    try {
      sweep?.handle.delete();
    } catch {
      // the old instance trapped; nothing to free
    }
    sweep = null;
    const handle = new M.Sweep();
    const expansion = JSON.parse(handle.load(text));
    if (!expansion.ok) {
      handle.delete();
      const lines = expansion.errors.map((e) => `${e.path || '/'}: ${e.message}`);
      const e = new Error(`invalid sweep: ${lines.join('; ')}`);
      e.errors = expansion.errors;
      throw e;
    }
    sweep = {M, text, handle, expansion};
    return sweep;
  }
  const pointIndex = (index) => (Number.isSafeInteger(index) && index >= 0 ? index : -1);

  async function onSweepExpand(id, {sweep: text}) {
    try {
      post(reply(Msg.SWEEP_EXPAND, id, (await loadSweep(id, text)).expansion));
    } catch (e) {
      if (!e.errors) throw e;
      post(error(id, e.message, e.errors));
    }
  }

  async function onSweepPoint(id, {sweep: text, index}) {
    const s = await loadSweep(id, text);
    const record = await s.M.profiles.run(() => s.handle.evaluate(pointIndex(index)));
    if (!record) throw new Error(`the sweep has no point ${JSON.stringify(index)}`);
    post(reply(Msg.SWEEP_POINT, id, {record}));
  }

  async function onSweepScenario(id, {sweep: text, index}) {
    const scenario = (await loadSweep(id, text)).handle.scenario(pointIndex(index));
    if (!scenario) throw new Error(`the sweep has no point ${JSON.stringify(index)}`);
    post(reply(Msg.SWEEP_SCENARIO, id, {scenario}));
  }

  async function onSweepMerge(id, {sweep: text, records}) {
    const s = await loadSweep(id, text);
    const list = Array.isArray(records) ? records.map(String) : [];
    post(reply(Msg.SWEEP_MERGE, id, JSON.parse(s.handle.merge(`[${list.join(',')}]`))));
  }

  async function onSweepReframe(id, {merged, view}) {
    const M = await module();
    const out = JSON.parse(M.sweepReframe(String(merged ?? ''), JSON.stringify(view ?? null)));
    if (!out.ok) {
      const lines = out.errors.map((e) => `${e.path || '/'}: ${e.message}`);
      post(error(id, `could not re-judge the sweep: ${lines.join('; ')}`, out.errors));
      return;
    }
    post(reply(Msg.SWEEP_REFRAME, id, {merged: out.merged, csv: out.csv}));
  }

  function onCancel(id, {runId}) {
    const state = runs.get(runId);
    if (state) state.cancel = true;
    post(reply(Msg.CANCEL, id, {found: !!state}));
  }

  const handlers = {
    [Msg.INIT]: onInit, [Msg.VALIDATE]: onValidate, [Msg.RUN]: onRun, [Msg.CANCEL]: onCancel,
    [Msg.SWEEP_EXPAND]: onSweepExpand, [Msg.SWEEP_POINT]: onSweepPoint, [Msg.SWEEP_SCENARIO]: onSweepScenario,
    [Msg.SWEEP_MERGE]: onSweepMerge, [Msg.SWEEP_REFRAME]: onSweepReframe,
  };

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
      if (e instanceof WebAssembly.RuntimeError || typeof e === 'number') {
        discard();
        sweep = null;
      }
      const what = e instanceof WebAssembly.RuntimeError || typeof e === 'number' ? 'the simulator core failed: ' : '';
      post(error(id, what + errorMessage(e)));
    }
  };
}

// Started as a worker (not imported by a test): serve the page.
if (typeof WorkerGlobalScope !== 'undefined' && globalThis instanceof WorkerGlobalScope) serve(globalThis);
