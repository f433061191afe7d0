// The Embind surface of wasm/bindings.cc: validation errors as JSON with paths, hostile input never throws
// across the boundary, cancel mid-run, and calls before a successful create().
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {readFileSync} from 'node:fs';
import path from 'node:path';
import {PRESETS, loadWasm, nativeCli} from './support.mjs';

const M = await loadWasm();
const preset = (name) => readFileSync(path.join(PRESETS, name), 'utf8');

test('version() is the CLI\'s version', () => {
  const cli = execFileSync(nativeCli(), ['version'], {encoding: 'utf8'}).trim();
  assert.equal(cli, `servesim ${M.version()}`);
});

test('validate() accepts every preset', () => {
  for (const name of ['default.json', 'multi_replica.json']) assert.deepEqual(JSON.parse(M.validate(preset(name))), {ok: true, errors: []});
});

test('validation errors come back as JSON with their paths', () => {
  const doc = JSON.parse(preset('default.json'));
  doc.engine.block_size = 24;
  doc.workload.output_len = {dist: 'fixed', value: 0};
  delete doc.deployment;
  const r = JSON.parse(M.validate(JSON.stringify(doc)));
  assert.equal(r.ok, false);
  const paths = r.errors.map((e) => e.path);
  assert.ok(paths.includes('/engine/block_size'), paths.join(', '));
  assert.ok(paths.includes('/deployment'), paths.join(', '));
  for (const e of r.errors) assert.ok(typeof e.message === 'string' && e.message.length > 0);
  // Session.create reports the same errors.
  const s = new M.Session();
  const c = JSON.parse(s.create(JSON.stringify(doc), false));
  s.delete();
  assert.deepEqual(c, r);
});

const hostile = {
  'empty text': '',
  'not JSON': '}{',
  'a JSON array': '[1, 2, 3]',
  'null': 'null',
  'truncated': preset('default.json').slice(0, 200),
  'lone low surrogate in a token': '{"model": \uDC00}',
  'lone high surrogate in a key': '{"x\uD800": 1}',
  'name cut mid-character': '{"version": 1, "model": "a' + '\u00e9'.repeat(60) + '"}',
  'NUL in a string': '{"version": 1, "model": "a\u0000b"}',
  'deep nesting': '['.repeat(100000),
  'deep nesting, closed': '['.repeat(20000) + ']'.repeat(20000),
  'huge number': '{"version": 1e400}',
  'script in a name': '{"version": 1, "name": "<script>alert(1)</script>", "model": "<img src=x onerror=alert(1)>"}',
  'wrong types everywhere': '{"version": "1", "model": 7, "hardware": [], "engine": "x", "deployment": {"roles": 3}, "workload": null}',
  '10 MB payload': '{"version": 1, "name": "' + 'x'.repeat(10 << 20) + '"}',
  'negative and absurd sizes': '{"version": 1, "model": "Llama-3.1-8B", "hardware": {"gpu": "H100-SXM"}, "deployment": {"roles": [{"role": "C", "replicas": -1, "tensor_parallel_size": 1e9}]}, "workload": {"num_requests": -5}}',
};

for (const [what, text] of Object.entries(hostile)) {
  test(`malformed scenario (${what}) gives errors, never an exception`, () => {
    const v = JSON.parse(M.validate(text));
    assert.equal(v.ok, false);
    assert.ok(v.errors.length >= 1);
    for (const e of v.errors) assert.equal(typeof e.path, 'string');
    const s = new M.Session();
    try {
      const c = JSON.parse(s.create(text, true));
      assert.equal(c.ok, false);
      // A session that failed to build answers without crashing.
      assert.equal(JSON.parse(s.step(1000)).status, 'none');
      assert.equal(s.resultJson(), '');
    } finally {
      s.delete();
    }
  });
}

test('the module still works after the hostile inputs', () => {
  assert.equal(JSON.parse(M.validate(preset('default.json'))).ok, true);
});

test('cancel mid-run: status cancelled, unfinished requests failed, no more work', () => {
  const s = new M.Session();
  try {
    assert.equal(JSON.parse(s.create(preset('default.json'), false)).ok, true);
    const p = JSON.parse(s.step(2000));
    assert.equal(p.finished, false);
    assert.equal(p.status, 'running');
    assert.ok(p.requests_done < p.requests_total);
    s.cancel();
    const q = JSON.parse(s.step(2000));
    assert.equal(q.finished, true);
    assert.equal(q.status, 'cancelled');
    assert.equal(q.events, p.events);
    const r = JSON.parse(s.resultJson());
    assert.equal(r.status, 'cancelled');
    assert.ok(r.failures.some((f) => /cancelled/.test(f.reason)));
    assert.match(s.benchmarkBlock(), /Serving Benchmark Result/);
  } finally {
    s.delete();
  }
});

test('step() honours its event budget and reports monotonic progress', () => {
  const s = new M.Session();
  try {
    assert.equal(JSON.parse(s.create(preset('default.json'), false)).ok, true);
    let last = JSON.parse(s.progress());
    assert.equal(last.events, 0);
    for (let i = 0; i < 5; ++i) {
      const p = JSON.parse(s.step(1000));
      assert.ok(p.events - last.events <= 1000);
      assert.ok(p.sim_time_s >= last.sim_time_s && p.requests_done >= last.requests_done);
      last = p;
    }
  } finally {
    s.delete();
  }
});
