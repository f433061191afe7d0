// The scenario form's architecture and parallelism-form switches (web/lib/deployment_edit.js), judged by the
// core itself through the wasm module: every preset switched to C, P + D and P + A + F (and back) validates,
// keeps its GPU and degrees, and a role's parallelism converts between the vLLM names and the two-domain form.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {readFileSync} from 'node:fs';
import path from 'node:path';
import {PRESETS, loadWasm, presetFiles} from './support.mjs';
import {architectureOf, setArchitecture, setParallelismForm, parallelismForm} from '../../web/lib/deployment_edit.js';

const M = await loadWasm();
const validate = (doc) => JSON.parse(M.validate(JSON.stringify(doc)));
const load = (name) => JSON.parse(readFileSync(path.join(PRESETS, name), 'utf8'));

for (const name of presetFiles()) {
  for (const arch of ['C', 'PD', 'PAF']) {
    test(`${name} switched to ${arch} validates in the core`, () => {
      const doc = load(name);
      assert.deepEqual(validate(doc).errors, [], 'the preset itself validates');
      setArchitecture(doc, arch);
      assert.equal(architectureOf(doc), arch);
      assert.deepEqual(validate(doc).errors, [], JSON.stringify(doc.deployment));
      const kinds = doc.deployment.roles.map((r) => r.role);
      assert.deepEqual(kinds, {C: ['C'], PD: ['P', 'D'], PAF: ['P', 'A', 'F']}[arch]);
      if (arch !== 'PAF') assert.equal(doc.deployment.afd, undefined, 'afd is dropped outside P + A + F');
    });
  }
}

test('C -> P + A + F carries the GPU, replicas and TP into A and F', () => {
  const doc = load('default.json');
  const c = doc.deployment.roles[0];
  setArchitecture(doc, 'PAF');
  const [, a, f] = doc.deployment.roles;
  const tp = c.tensor_parallel_size ?? 1;
  assert.deepEqual(a.parallelism, {pp: c.pipeline_parallel_size ?? 1, tp_attn: tp});
  assert.deepEqual(f.parallelism, {pp: c.pipeline_parallel_size ?? 1, tp_ffn: tp, ep_ffn: 1});
  assert.equal(a.replicas, c.replicas ?? 1);
  assert.equal(f.replicas, a.replicas);
});

test('P + A + F -> P + D -> P + A + F keeps the decode side degrees (dp_attn) and the P role as it was', () => {
  const doc = load('frontier_t3_qwen3_235b_afd.json');
  const p = structuredClone(doc.deployment.roles[0]);
  setArchitecture(doc, 'PD');
  assert.deepEqual(doc.deployment.roles[0], p);
  assert.deepEqual(doc.deployment.roles[1].parallelism, {pp: 8, tp_attn: 8, dp_attn: 4});
  assert.equal(doc.deployment.roles[1].gpu, 'H20');
  setArchitecture(doc, 'PAF');
  assert.deepEqual(doc.deployment.roles[1].parallelism, {pp: 8, tp_attn: 8, dp_attn: 4});
  assert.deepEqual(doc.deployment.roles[2].parallelism, {pp: 8, tp_ffn: 32, ep_ffn: 1});
  assert.deepEqual(validate(doc).errors, []);
});

test('a role converts between tensor/pipeline_parallel_size and the two-domain object, and the core agrees', () => {
  const doc = load('default.json');
  const role = doc.deployment.roles[0];
  role.tensor_parallel_size = 2;
  role.pipeline_parallel_size = 2;
  setParallelismForm(role, 'two_domain');
  assert.equal(parallelismForm(role), 'two_domain');
  assert.deepEqual(role.parallelism, {pp: 2, tp_attn: 2});
  assert.equal(role.tensor_parallel_size, undefined);
  assert.deepEqual(validate(doc).errors, []);
  setParallelismForm(role, 'vllm');
  assert.deepEqual([role.tensor_parallel_size, role.pipeline_parallel_size, role.parallelism], [2, 2, undefined]);
  assert.deepEqual(validate(doc).errors, []);
});

test('an F role given an attention degree is named at that field by the core', () => {
  const doc = load('frontier_t3_qwen3_235b_afd.json');
  doc.deployment.roles[2].parallelism.dp_attn = 2;
  const errors = validate(doc).errors.map((e) => e.path);
  assert.ok(errors.includes('/deployment/roles/2/parallelism/dp_attn'), errors.join(', '));
});
