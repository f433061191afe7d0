// Every preset through the wasm module gives the native CLI's result JSON byte for byte (same seed), and the
// same "Serving Benchmark Result" block; one preset's Chrome trace is compared as well.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import path from 'node:path';
import {PRESETS, loadWasm, nativeCli, presetFiles, runToEnd} from './support.mjs';

const M = await loadWasm();
const cli = nativeCli();
const tmp = mkdtempSync(path.join(tmpdir(), 'servesim-node-'));
process.on('exit', () => rmSync(tmp, {recursive: true, force: true}));

/** Runs the CLI; returns {result, benchmark, trace}. */
function native(file, {trace = false} = {}) {
  const out = path.join(tmp, 'r.json');
  const tr = path.join(tmp, 't.json');
  const args = ['run', file, '--out', out, '--quiet', ...(trace ? ['--trace', tr] : [])];
  const benchmark = execFileSync(cli, args, {encoding: 'utf8', maxBuffer: 1 << 28});
  return {result: readFileSync(out, 'utf8'), benchmark, trace: trace ? readFileSync(tr, 'utf8') : null};
}

test('the presets directory is not empty', () => assert.ok(presetFiles().length >= 4));

for (const name of presetFiles()) {
  test(`preset ${name}: wasm result JSON is byte-identical to the native CLI's`, () => {
    const file = path.join(PRESETS, name);
    const want = native(file);
    const got = runToEnd(M, readFileSync(file, 'utf8'));
    assert.equal(got.status, 'completed');
    // The CLI ends the file with a newline.
    assert.ok(got.result + '\n' === want.result, `${name}: result JSON differs from the CLI's`);
    assert.equal(got.benchmark, want.benchmark);
  });
}

test('default preset with a trace: result and Chrome trace identical to the CLI --trace run', () => {
  const file = path.join(PRESETS, 'default.json');
  const want = native(file, {trace: true});
  const got = runToEnd(M, readFileSync(file, 'utf8'), {keepTrace: true});
  assert.ok(got.result + '\n' === want.result, 'result JSON differs with keep_trace');
  assert.ok(got.trace === want.trace, 'Chrome trace differs');
  assert.ok(JSON.parse(got.trace).traceEvents.length > 0);
});

test('step size does not change the result', () => {
  const text = readFileSync(path.join(PRESETS, 'default.json'), 'utf8');
  const big = runToEnd(M, text);
  const small = runToEnd(M, text, {stepEvents: 997});
  assert.ok(small.steps > big.steps);
  assert.ok(small.result === big.result);
});
