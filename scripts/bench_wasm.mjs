#!/usr/bin/env node
// A benchmark of the wasm build (not a test): module sizes raw and gzipped, module start-up time under Node,
// and wasm/native wall-time and CPU-time ratios on presets/multi_replica.json and scripts/bench's scenarios,
// best of N runs each; the result JSONs are compared too.
// Needs web/assets (scripts/build_wasm) and build/native (scripts/bench builds it).
// Usage: node scripts/bench_wasm.mjs [--reps N] [--full]   (--full adds 1M requests x 256 replicas)
import {spawnSync} from 'node:child_process';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir, cpus, platform, arch} from 'node:os';
import path from 'node:path';
import {gzipSync} from 'node:zlib';
// longScenario is scripts/bench.py's scenario: Llama-3.1-8B on H100 replicas, lognormal lengths, ~6 req/s each.
import {ASSETS, CLI, ROOT, loadWasm, longScenario as bench} from '../tests/node/support.mjs';

const argReps = process.argv.indexOf('--reps');
const REPS = argReps > 0 ? Number(process.argv[argReps + 1]) : 3;

const cases = [
  ['presets/multi_replica.json', readFileSync(path.join(ROOT, 'presets/multi_replica.json'), 'utf8')],
  ['10k req x 1 replica', bench(10_000, 1)],
  ['100k req x 64 replicas', bench(100_000, 64)],
  ...(process.argv.includes('--full') ? [['1M req x 256 replicas', bench(1_000_000, 256)]] : []),
];

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
console.log(`machine: ${arch()}, ${cpus().length} cores, ${platform()}, Node ${process.version}; best of ${REPS}`);
for (const f of ['servesim.js', 'servesim.wasm', 'profiles_files.json']) {
  const b = readFileSync(new URL(f, ASSETS));
  console.log(`  ${f.padEnd(14)} ${kb(b.length).padStart(11)} raw ${kb(gzipSync(b, {level: 9}).length).padStart(10)} gzip -9`);
}
const starts = [];
for (let i = 0; i < 2; ++i) {
  const t0 = performance.now();
  await loadWasm();
  starts.push(performance.now() - t0);
}
console.log(`  module start-up (import, compile, instantiate, read every profile from disk): first ${starts[0].toFixed(0)} ms, ` +
  `again ${starts[1].toFixed(0)} ms`);

const M = await loadWasm();
const tmp = mkdtempSync(path.join(tmpdir(), 'servesim-bench-'));
// Wall time is the CLI's own (create plus steps); CPU time (user + sys, less sensitive to other load on the
// machine) is the whole CLI process against create, steps and the result JSON in wasm.
const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
console.log(`\n${'case'.padEnd(26)} ${'native wall'.padStart(11)} ${'wasm wall'.padStart(10)} ${'ratio'.padStart(6)}` +
  ` ${'native cpu'.padStart(11)} ${'wasm cpu'.padStart(9)} ${'ratio'.padStart(6)}  result`);
for (const [label, text] of cases) {
  const file = path.join(tmp, 's.json');
  const out = path.join(tmp, 'r.json');
  writeFileSync(file, text);
  const best = {nativeWall: Infinity, wasmWall: Infinity, nativeCpu: Infinity, wasmCpu: Infinity};
  let same = true;
  for (let i = 0; i < REPS; ++i) {
    const p = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', CLI, 'run', file, '--out', out], {encoding: 'utf8'});
    best.nativeWall = Math.min(best.nativeWall, Number(/\(([\d.]+) s wall/.exec(p.stderr)[1]));
    const [, user, sys] = /cpu ([\d.]+) ([\d.]+)/.exec(p.stderr);
    best.nativeCpu = Math.min(best.nativeCpu, Number(user) + Number(sys));
    const s = new M.Session();
    const c0 = cpuSeconds();
    const t0 = performance.now();
    s.create(text, false);
    while (!JSON.parse(s.step(200000)).finished);
    best.wasmWall = Math.min(best.wasmWall, (performance.now() - t0) / 1000);
    const result = s.resultJson();
    best.wasmCpu = Math.min(best.wasmCpu, cpuSeconds() - c0);
    same &&= result + '\n' === readFileSync(out, 'utf8');
    s.delete();
  }
  const f = (x) => x.toFixed(3);
  console.log(`${label.padEnd(26)} ${f(best.nativeWall).padStart(11)} ${f(best.wasmWall).padStart(10)} ` +
    `${(best.wasmWall / best.nativeWall).toFixed(2).padStart(6)} ${f(best.nativeCpu).padStart(11)} ` +
    `${f(best.wasmCpu).padStart(9)} ${(best.wasmCpu / best.nativeCpu).toFixed(2).padStart(6)}  ${same ? 'identical' : 'DIFFERENT'}`);
}
rmSync(tmp, {recursive: true, force: true});
