// Profiles on demand (web/lib/profiles.js): the module ships no profiles; the worker fetches exactly the files
// a scenario asks for, gives the CLI's bytes, keeps what it fetched, and names a file it could not fetch.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import path from 'node:path';
import {readText} from '../../web/lib/profiles.js';
import {loadModule, serve} from '../../web/worker.js';
import {Msg, request} from '../../web/protocol.js';
import {ASSETS, PRESETS, nativeCli} from './support.mjs';

const preset = (name) => readFileSync(path.join(PRESETS, name), 'utf8');

/** A module whose reads are counted; `fail` makes reads of matching paths reject like an HTTP 404. */
async function countingModule(fail = null) {
  const reads = [];
  const read = (url) => {
    const rel = url.pathname.split('/web/assets/')[1];
    reads.push(rel);
    return fail && fail.test(rel) ? Promise.reject(new Error('HTTP 404 Not Found')) : readText(url);
  };
  return {M: await loadModule(ASSETS, {read}), reads};
}

/** Runs `text` as the worker does (create through profiles.run, step to the end); returns the result JSON. */
async function run(M, text) {
  const {session, created} = await M.profiles.run(() => {
    const s = new M.Session();
    return {session: s, created: JSON.parse(s.create(text, false))};
  }, (a) => a.session.delete());
  try {
    assert.equal(created.ok, true, JSON.stringify(created.errors));
    while (!JSON.parse(session.step(200000)).finished);
    return session.resultJson();
  } finally {
    session.delete();
  }
}

test('the default preset fetches only its GPU\'s tables, model and trace, and gives the CLI\'s bytes', async () => {
  const {M, reads} = await countingModule();
  assert.deepEqual(reads, ['profiles_files.json'], 'only the manifest is loaded up front');
  const text = preset('default.json');
  const result = await run(M, text);
  const tmp = mkdtempSync(path.join(tmpdir(), 'servesim-profiles-'));
  try {
    const out = path.join(tmp, 'r.json');
    execFileSync(nativeCli(), ['run', path.join(PRESETS, 'default.json'), '--out', out, '--quiet'], {stdio: 'pipe'});
    assert.ok(`${result}\n` === readFileSync(out, 'utf8'), 'result JSON differs from the CLI\'s');
  } finally {
    rmSync(tmp, {recursive: true, force: true});
  }
  const fetched = reads.slice(1).sort();
  assert.ok(fetched.includes('profiles/H100-SXM/vllm/gemm.json'));
  assert.ok(fetched.includes('profiles/traces/sharegpt_llama2.csv'));
  assert.ok(fetched.includes('profiles/models/Llama-3.1-8B.json'));
  assert.ok(!fetched.some((p) => /H200|A100|azure|mooncake|trtllm|moe\.json/.test(p)), fetched.join(', '));
  assert.equal(new Set(fetched).size, fetched.length, 'no file is fetched twice');
  // A second run fetches nothing.
  const before = reads.length;
  assert.equal(await run(M, text), result);
  assert.equal(reads.length, before);
});

test('a GPU without tables fetches the nearest GPU\'s tables (H20: H100\'s) and the datasheets it chose among', async () => {
  const {M, reads} = await countingModule();
  const doc = JSON.parse(preset('default.json'));
  doc.hardware.gpu = 'H20';
  const result = JSON.parse(await run(M, JSON.stringify(doc)));
  const fid = result.deployment.roles[0].fidelity;
  assert.equal(fid.kind, 'datasheet-derived');
  assert.equal(fid.profile, 'H100-SXM/vllm');
  assert.equal(fid.transferred_to, 'H20');
  const fetched = reads.slice(1);
  assert.ok(fetched.includes('profiles/H100-SXM/vllm/gemm.json'));
  for (const g of ['A100-80G', 'H100-SXM', 'H200-SXM']) assert.ok(fetched.includes(`profiles/gpus/${g}.json`), g);
  assert.ok(!fetched.some((p) => /H200-SXM\/|A100-80G\/|trtllm/.test(p)), fetched.join(', '));
  assert.equal(new Set(fetched).size, fetched.length, 'no file is fetched twice');
});

test('grids the nearest GPU lacks are fetched from the next one (FP8 on L40S: H100\'s GEMMs), as the CLI prices them', async () => {
  const {M, reads} = await countingModule();
  const doc = JSON.parse(preset('default.json'));
  doc.hardware.gpu = 'L40S';
  doc.engine = {...doc.engine, dtype: 'fp8'};
  const text = JSON.stringify(doc);
  const result = await run(M, text);
  const fid = JSON.parse(result).deployment.roles[0].fidelity;
  assert.equal(fid.profile, 'A100-80G/vllm');
  assert.deepEqual(fid.supplements, [{from: 'H100-SXM', tables: ['gemm'], transfer: 'other architecture'}]);
  const fetched = reads.slice(1);
  assert.ok(fetched.includes('profiles/A100-80G/vllm/gemm.json'));
  assert.ok(fetched.includes('profiles/H100-SXM/vllm/gemm.json'));
  assert.ok(!fetched.some((p) => /H200-SXM\/|trtllm/.test(p)), fetched.join(', '));
  assert.equal(new Set(fetched).size, fetched.length, 'no file is fetched twice');
  const tmp = mkdtempSync(path.join(tmpdir(), 'servesim-profiles-'));
  try {
    const sc = path.join(tmp, 's.json'), out = path.join(tmp, 'r.json');
    writeFileSync(sc, text);
    execFileSync(nativeCli(), ['run', sc, '--out', out, '--quiet'], {stdio: 'pipe'});
    assert.ok(`${result}\n` === readFileSync(out, 'utf8'), 'result JSON differs from the CLI\'s');
  } finally {
    rmSync(tmp, {recursive: true, force: true});
  }
});

test('a file that cannot be fetched reaches the caller as an error naming it', async () => {
  const {M} = await countingModule(/H100-SXM\/vllm\/gemm\.json$/);
  await assert.rejects(run(M, preset('default.json')), /could not fetch profiles\/H100-SXM\/vllm\/gemm\.json: HTTP 404 Not Found/);
  // Through the worker protocol as the page sees it.
  const port = {sent: [], postMessage(m) { this.sent.push(m); }};
  serve(port, {load: async () => (await countingModule(/traces\/sharegpt_llama2\.csv$/)).M});
  await port.onmessage({data: request(Msg.RUN, 7, {scenario: preset('default.json')})});
  const last = port.sent.at(-1);
  assert.equal(last.type, Msg.ERROR);
  assert.match(last.message, /could not fetch profiles\/traces\/sharegpt_llama2\.csv/);
});

test('a missing manifest is a clear error', async () => {
  const read = (url) => (url.pathname.endsWith('profiles_files.json') ? Promise.reject(new Error('HTTP 404')) : readText(url));
  await assert.rejects(loadModule(ASSETS, {read}), /could not load the profiles manifest profiles_files\.json: HTTP 404/);
});

test('calls served at once fetch nothing a lone call would not, whichever file arrives last', async () => {
  // The page's worker runs the editor's validate beside a run. Hold back one file the first call asked for, start
  // two more calls meanwhile: none may choose among GPUs from part of a round (H200's tables for FP8 on L40S).
  const doc = JSON.parse(preset('default.json'));
  doc.hardware.gpu = 'L40S';
  doc.engine = {...doc.engine, dtype: 'fp8'};
  const text = JSON.stringify(doc);
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  for (const late of [/gpus\/H100-SXM\.json$/, /H100-SXM\/vllm\/gemm\.json$/]) {
    const reads = [];
    let release;
    const gate = new Promise((r) => { release = r; });
    const read = async (url) => {
      const rel = url.pathname.split('/web/assets/')[1];
      reads.push(rel);
      if (late.test(rel)) await gate;
      return readText(url);
    };
    const M = await loadModule(ASSETS, {read});
    const first = run(M, text);
    await sleep(100);
    const check = M.profiles.run(() => M.validate(text));
    await sleep(100);
    const second = run(M, text);
    await sleep(100);
    assert.ok(reads.some((p) => late.test(p)), `${late} asked for before the others start`);
    release();
    const [a, , b] = await Promise.all([first, check, second]);
    assert.equal(a, b);
    assert.ok(!reads.some((p) => /H200-SXM\//.test(p)), `${late} last: ${reads.join(', ')}`);
    assert.equal(new Set(reads).size, reads.length, 'no file is fetched twice');
  }
});
