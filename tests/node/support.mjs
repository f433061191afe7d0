// Shared by the Node tests: paths, the wasm module from web/assets/ (as the page loads it), the native CLI.
import {execFileSync} from 'node:child_process';
import {existsSync, readdirSync} from 'node:fs';
import {fileURLToPath} from 'node:url';
import path from 'node:path';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const ASSETS = new URL('../../web/assets/', import.meta.url);
export const PRESETS = path.join(ROOT, 'presets');
export const CLI = path.join(ROOT, 'build/native/servesim');

/** Every preset file, sorted. */
export const presetFiles = () => readdirSync(PRESETS).filter((f) => f.endsWith('.json')).sort();

/** A fresh instance of the module the page uses (web/assets/servesim.js) with every profile handed over. */
export async function loadWasm() {
  if (!existsSync(fileURLToPath(new URL('servesim.js', ASSETS)))) {
    throw new Error('web/assets/servesim.js is missing: run scripts/build_wasm');
  }
  const {loadModule} = await import('../../web/worker.js');
  return loadModule(ASSETS, {allProfiles: true});
}

/** The native CLI, built with the native-release preset when it is missing. */
export function nativeCli() {
  if (!existsSync(CLI)) {
    const opts = {cwd: ROOT, stdio: 'inherit'};
    execFileSync('cmake', ['--preset', 'native-release'], opts);
    execFileSync('cmake', ['--build', '--preset', 'native-release', '-j', '2'], opts);
  }
  return CLI;
}

/** scripts/bench's 100k-request scenario: seconds of work, so a cancel always arrives mid-run. */
export const longScenario = (requests = 100_000, replicas = 64) => JSON.stringify({
  version: 1, name: `bench ${requests} x ${replicas}`, seed: 1, model: 'Llama-3.1-8B', hardware: {gpu: 'H100-SXM'},
  deployment: {router: 'least_outstanding_tokens', roles: [{role: 'C', replicas}]},
  workload: {
    num_requests: requests, arrival: {process: 'poisson', request_rate: 6 * replicas},
    input_len: {dist: 'lognormal', median: 512, sigma: 0.8, min: 8, max: 8192},
    output_len: {dist: 'lognormal', median: 128, sigma: 0.8, min: 2, max: 2048},
  },
});

/** Runs a Session to the end; returns {status, result, benchmark, trace, events, steps}. */
export function runToEnd(M, text, {keepTrace = false, stepEvents = 200000} = {}) {
  const s = new M.Session();
  try {
    const created = JSON.parse(s.create(text, keepTrace));
    if (!created.ok) throw new Error(`invalid scenario: ${JSON.stringify(created.errors)}`);
    let p;
    let steps = 0;
    do {
      p = JSON.parse(s.step(stepEvents));
      ++steps;
    } while (!p.finished);
    return {
      status: p.status, events: p.events, steps, result: s.resultJson(), benchmark: s.benchmarkBlock(),
      trace: keepTrace ? s.chromeTraceJson() : null,
    };
  } finally {
    s.delete();
  }
}
