// The new roles in the page (issues 5 and 6): the P + A + F preset runs and its roles table lists P, A and F
// with the GPU counts the native CLI reports for the same scenario, F without a KV cache, the A <-> F path and
// the new op families named; its Perfetto trace names the A/F pair; the scenario form switches a deployment to
// P + A + F (with deployment.afd and each role's degrees) and the core validates it at the fields; the
// Frontier 6.1 sweep draws an A/F series with the CLI's points. Expectations come from the CLI, not constants.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {startBrowser, waitState, runAndWait, canvasInk, screenshot, assertClean, ROOT} from './browser_harness.mjs';

const CLI = join(ROOT, 'build/native/servesim');
const AFD = 'frontier_t3_qwen3_235b_afd';
const tmp = mkdtempSync(join(tmpdir(), 'servesim-web-afd-'));
process.on('exit', () => rmSync(tmp, {recursive: true, force: true}));

/** The CLI's result (and trace) for a scenario document, run as the page runs it (requests and phases on). */
function cliRun(doc) {
  const file = join(tmp, 'scenario.json');
  writeFileSync(file, JSON.stringify({...doc, output: {...doc.output, requests: true, phases: true}}));
  execFileSync(CLI, ['run', file, '--out', join(tmp, 'r.json'), '--trace', join(tmp, 't.json'), '--quiet'], {stdio: 'pipe'});
  return {text: readFileSync(join(tmp, 'r.json'), 'utf8'), trace: JSON.parse(readFileSync(join(tmp, 't.json'), 'utf8'))};
}

const fmtInt = (v) => v.toLocaleString('en-US');
const preset = (name) => JSON.parse(readFileSync(join(ROOT, 'presets', `${name}.json`), 'utf8'));

let browser, page;
before(async () => { browser = await startBrowser(); });
after(async () => { await browser?.close(); });

test('the A/F preset runs; the roles table lists P, A, F with the CLI\'s GPU counts; F has no KV cache', async () => {
  page = await browser.open(`?preset=${AFD}`);
  assert.equal(await waitState(page, ['completed', 'error', 'stopped'], 120000), 'completed');
  const scenario = preset(AFD);
  const cli = JSON.parse(cliRun(scenario).text);
  const roles = cli.deployment.roles;
  assert.deepEqual(roles.map((r) => r.role), ['P', 'A', 'F'], 'the CLI reports the three roles');
  const rows = await page.$$eval('table.roles tbody tr', (trs) => trs.map((tr) => ({
    role: tr.dataset.role,
    ...Object.fromEntries([...tr.querySelectorAll('[data-key]')].map((td) => [td.dataset.key, td.textContent])),
  })));
  assert.deepEqual(rows.map((r) => r.role), roles.map((r) => r.role));
  roles.forEach((r, i) => {
    for (const k of ['replicas', 'gpus', 'world_size', 'gpus_per_stage', 'max_batches_in_flight']) {
      assert.equal(rows[i][k], fmtInt(r[k]), `${r.role} ${k}`);
    }
    if (r.kv_cache === null) assert.match(rows[i].kv_cache, /^none/, `${r.role} shows no KV cache`);
    else assert.match(rows[i].kv_cache, /GiB\/GPU/);
  });
  assert.equal(roles.find((r) => r.role === 'F').kv_cache, null);
  assert.equal(await page.textContent('table.roles tfoot [data-key="total_gpus"]'), fmtInt(cli.deployment.total_gpus));
  // H800 and H20 have no tables of their own: each role says whose tables priced it and by which rule.
  const priced = await page.$$eval('.role-fidelity > summary', (ss) => ss.map((s) => s.textContent));
  assert.match(priced[0], /P \(P\) priced by datasheet-derived \(H100-SXM\/vllm tables moved to H800, same architecture\)/);
  assert.match(priced[1], /A \(A\) priced by datasheet-derived \(H100-SXM\/vllm tables moved to H20, same architecture\)/);
  // Each role's families that took no time are its own: P never decodes, A never prefills, F (no iterations of its
  // own) falls back to the run's.
  const idle = await page.$$eval('.role-fidelity', (ds) => ds.map((d) => d.querySelector('.unused-ops')?.textContent ?? ''));
  assert.match(idle[0], /\battention_decode\b/);
  assert.match(idle[0], /\baf_transfer\b/);
  assert.match(idle[1], /\battention_prefill\b/);
  assert.doesNotMatch(idle[1], /\battention_decode\b|\baf_transfer\b/);
  assert.doesNotMatch(idle[2], /\battention_decode\b/);
  // The A <-> F path as the scenario gives it.
  const afd = await page.$eval('.afd-line', (e) => ({...e.dataset, text: e.textContent}));
  assert.equal(afd.microBatches, String(scenario.deployment.afd.micro_batches));
  assert.equal(afd.link, scenario.deployment.afd.link);
  // The op families the core reports with a share, including the new ones, are drawn with their names.
  const shares = await page.$$eval('.op-row', (gs) => Object.fromEntries(gs.map((g) => [g.dataset.family, Number(g.dataset.share)])));
  const want = Object.fromEntries(Object.entries(cli.time_share_by_op).filter(([, v]) => v > 0));
  assert.deepEqual(shares, want);
  assert.ok(want.af_transfer > 0 && want.all_to_all > 0, 'the preset exercises af_transfer and all_to_all');
  assert.match(await page.textContent('.op-share-card'), /A <-> F activation transfer[^]*EP all-to-all|EP all-to-all[^]*A <-> F activation transfer/);
  // One role's shares instead of the whole run's: P and A report their own (F's time is in A's), and back.
  assert.deepEqual(await page.$$eval('.op-share-view option', (os) => os.map((o) => o.textContent)), ['whole run', 'P role', 'A role']);
  const rowsNow = () => page.$$eval('.op-row', (gs) => Object.fromEntries(gs.map((g) => [g.dataset.family, Number(g.dataset.share)])));
  const nonzero = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v > 0));
  await page.selectOption('.op-share-view select', '1');
  assert.deepEqual(await rowsNow(), nonzero(roles[0].time_share_by_op));
  assert.ok(!('attention_decode' in await rowsNow()), 'P does not decode');
  await page.selectOption('.op-share-view select', '2');
  assert.deepEqual(await rowsNow(), nonzero(roles[1].time_share_by_op));
  await page.selectOption('.op-share-view select', '0');
  assert.deepEqual(await rowsNow(), want);
  assert.ok(await canvasInk(page) > 0.005, 'the timeline is drawn');
  await screenshot(page, 'afd_summary', '.summary-card');
  await screenshot(page, 'afd_op_share', '.op-share-card');
  assertClean(assert, page);
});

test('the A/F result JSON equals the CLI\'s; each request goes P prefill -> KV transfer -> A decode', async () => {
  const [json] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  const cli = cliRun(preset(AFD));
  // The CLI's file ends with a newline; otherwise byte-identical (compared without printing 300 KB on failure).
  const mine = readFileSync(await json.path(), 'utf8');
  assert.ok(mine === cli.text.replace(/\n$/, ''), `the page's result JSON (${mine.length} B) differs from the CLI's (${cli.text.length} B)`);
  const result = JSON.parse(cli.text);
  const kinds = new Set(result.phases.kind);
  assert.ok(kinds.has('prefill') && kinds.has('kv_transfer'), [...kinds].join(', '));
  // The first request's phases in time order: prefill chunk(s), then the transfer, then its first token.
  const segs = result.phases.request.map((r, k) => [r, k]).filter(([r]) => r === 0).map(([, k]) => k);
  const transfer = segs.find((k) => result.phases.kind[k] === 'kv_transfer');
  const lastPrefill = Math.max(...segs.filter((k) => result.phases.kind[k] === 'prefill').map((k) => result.phases.end_ms[k]));
  assert.ok(lastPrefill <= result.phases.start_ms[transfer], 'the transfer starts after prefill');
  assert.ok(result.phases.end_ms[transfer] <= result.requests.first_token_ms[0], 'the first token reaches the client after the transfer');
});

test('the A/F Perfetto trace names the P replica and the A replica with its F half', async () => {
  await page.check('#keep-trace');
  assert.equal(await runAndWait(page, () => page.click('#run'), 120000), 'completed');
  const [d] = await Promise.all([page.waitForEvent('download'), page.click('#export-trace')]);
  const trace = JSON.parse(readFileSync(await d.path(), 'utf8'));
  assert.deepEqual(trace, cliRun(preset(AFD)).trace, 'the same trace as the CLI');
  const names = trace.traceEvents.filter((e) => e.name === 'process_name').map((e) => e.args.name);
  assert.equal(names.length, 2, names.join(' | '));
  assert.match(names[0], /^P\[0\] H800/);
  assert.match(names[1], /^A\[0\] H20 tp8 dp4 pp8 \+ F H800 tp1 ep32$/);
  const onA = new Set(trace.traceEvents.filter((e) => e.cat === 'request' && e.pid === 2).map((e) => e.name));
  assert.ok(onA.has('kv_transfer') && onA.has('decode'), [...onA].join(', '));
  await page.uncheck('#keep-trace');
  assertClean(assert, page);
});

test('the form switches the default preset to P + A + F with afd and role degrees; the core validates at the fields', async () => {
  page = await browser.open('');
  await waitState(page, ['completed', 'error', 'stopped'], 120000);
  await page.click('#editor-details summary');
  await page.selectOption('#f--architecture', 'PAF');
  await page.waitForSelector('.error-list .ok', {timeout: 15000});
  const doc = () => page.inputValue('.json-text').then(JSON.parse);
  assert.deepEqual((await doc()).deployment.roles.map((r) => r.role), ['P', 'A', 'F']);
  assert.match(await page.textContent('fieldset[data-path="/deployment/roles/2"] legend'), /Role 3: F/);
  // F shows only the FFN degrees, A only the attention degrees.
  const visible = async (path) => page.locator(`.field[data-path="${path}"]`).isVisible();
  assert.equal(await visible('/deployment/roles/2/parallelism/ep_ffn'), true);
  assert.equal(await visible('/deployment/roles/2/parallelism/dp_attn'), false);
  assert.equal(await visible('/deployment/roles/1/parallelism/dp_attn'), true);
  assert.equal(await visible('/deployment/roles/1/parallelism/ep_ffn'), false);
  await page.fill('#f--deployment-afd-micro-batches', '3');
  await page.selectOption('#f--deployment-afd-link', 'nvlink');
  await page.fill('#f--deployment-roles-1-parallelism-pp', '2');
  await page.fill('#f--deployment-roles-2-parallelism-pp', '2');
  await page.waitForSelector('.error-list .ok', {timeout: 15000});
  let d = await doc();
  assert.deepEqual(d.deployment.afd, {micro_batches: 3, link: 'nvlink'});
  assert.equal(d.deployment.roles[1].parallelism.pp, 2);
  // Errors from the core land at their field: micro_batches out of range, F's pp unlike A's.
  await page.fill('#f--deployment-afd-micro-batches', '9');
  await page.fill('#f--deployment-roles-2-parallelism-pp', '1');
  const err = (path) => page.locator(`.field[data-path="${path}"] .field-error`);
  await err('/deployment/afd/micro_batches').waitFor({state: 'visible', timeout: 15000});
  await err('/deployment/roles/2/parallelism/pp').waitFor({state: 'visible', timeout: 15000});
  assert.match(await err('/deployment/roles/2/parallelism/pp').textContent(), /A role's pp/);
  await screenshot(page, 'afd_form_errors', '#editor');
  await page.fill('#f--deployment-afd-micro-batches', '2');
  await page.fill('#f--deployment-roles-2-parallelism-pp', '2');
  await page.waitForSelector('.error-list .ok', {timeout: 15000});
  d = await doc();
  assert.equal(await runAndWait(page, () => page.click('#run'), 120000), 'completed');
  const cli = JSON.parse(cliRun(d).text);
  const gpus = await page.$$eval('table.roles tbody tr', (trs) => trs.map((tr) => [tr.dataset.role, tr.querySelector('[data-key="gpus"]').textContent]));
  assert.deepEqual(gpus, cli.deployment.roles.map((r) => [r.role, fmtInt(r.gpus)]));
  assertClean(assert, page);
});

test('pp, dp_attn and ep_ffn can be set on C and P/D roles through the two-domain form', async () => {
  await page.selectOption('#f--architecture', 'PD');
  await page.selectOption('#f--parform-1', 'two_domain');
  await page.fill('#f--deployment-roles-1-parallelism-pp', '2');
  await page.fill('#f--deployment-roles-1-parallelism-dp-attn', '2');
  await page.waitForSelector('.error-list .ok', {timeout: 15000});
  let d = JSON.parse(await page.inputValue('.json-text'));
  assert.deepEqual(d.deployment.roles.map((r) => r.role), ['P', 'D']);
  assert.deepEqual(d.deployment.roles[1].parallelism, {pp: 2, tp_attn: 1, dp_attn: 2});
  assert.equal(d.deployment.afd, undefined);
  // ep_ffn on a dense model is refused by the core, at that field.
  await page.fill('#f--deployment-roles-1-parallelism-ep-ffn', '2');
  await page.locator('.field[data-path="/deployment/roles/1/parallelism/ep_ffn"] .field-error, .field[data-path="/deployment/roles/1/parallelism/tp_ffn"] .field-error')
    .first().waitFor({state: 'visible', timeout: 15000});
  await page.fill('#f--deployment-roles-1-parallelism-ep-ffn', '');
  await page.selectOption('#f--architecture', 'C');
  await page.selectOption('#f--parform-0', 'two_domain');
  await page.fill('#f--deployment-roles-0-parallelism-pp', '2');
  await page.waitForSelector('.error-list .ok', {timeout: 15000});
  d = JSON.parse(await page.inputValue('.json-text'));
  assert.deepEqual(d.deployment.roles.map((r) => r.role), ['C']);
  assert.equal(d.deployment.roles[0].parallelism.pp, 2);
  assertClean(assert, page);
});

test('the Frontier 6.1 sweep draws an A/F series with the CLI\'s points', async () => {
  const id = 'frontier_6_1_scaled';
  const dir = join(tmp, 'sweep');
  execFileSync(CLI, ['sweep', join(ROOT, 'presets', 'sweeps', `${id}.json`), '--out', dir, '--jobs', '2'], {stdio: 'pipe'});
  const merged = JSON.parse(readFileSync(join(dir, 'sweep.json'), 'utf8'));
  const afGroup = [...new Set(merged.points.map((p) => p.group))].find((g) => /A\/F/.test(g));
  assert.ok(afGroup, `the CLI's sweep has an A/F series: ${[...new Set(merged.points.map((p) => p.group))].join(', ')}`);
  const want = merged.points.filter((p) => p.group === afGroup && p.status === 'ok').length;
  assert.ok(want > 0);
  await page.selectOption('#sweep-preset', id);
  await page.click('#sweep-load');
  await page.waitForFunction((n) => document.getElementById('sweep-status').textContent === `Loaded ${n}.`, id);
  await page.click('#sweep-run');
  await page.waitForFunction(() => ['completed', 'error', 'cancelled'].includes(document.querySelector('.sweep').dataset.state),
    null, {timeout: 300000});
  assert.equal(await page.evaluate(() => document.querySelector('.sweep').dataset.state), 'completed');
  const got = await page.$$eval('#sweep-chart .pt[data-group]:not(#sweep-best)', (ps, g) => ps.filter((p) => p.dataset.group === g).length, afGroup);
  assert.equal(got, want, 'one marker per A/F point that ran');
  assert.match(await page.textContent('#sweep-chart svg'), new RegExp(afGroup.replace(/[/.*+?^${}()|[\]\\]/g, '\\$&')));
  assert.equal(await page.locator(`#sweep-chart polyline.frontier[data-group="${afGroup}"]`).count(), 1, 'its frontier line');
  await screenshot(page, 'sweep_6_1_afd', '#sweep');
  assertClean(assert, page);
});
