// The page end to end on the real wasm core: the default preset runs on load, the summary and the request
// timeline are drawn, the editor shows core validation errors at their field, an HF config.json defines a
// model, exports download, and nothing logs an error.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {readFileSync, writeFileSync, existsSync} from 'node:fs';
import {execFileSync} from 'node:child_process';
import {join} from 'node:path';
import {tmpdir} from 'node:os';
import {startBrowser, waitState, runAndWait, summaryCells, canvasInk, screenshot, assertClean, ROOT} from './browser_harness.mjs';

let browser, page;
before(async () => { browser = await startBrowser(); page = await browser.open(''); });
after(async () => { await browser?.close(); });

test('the default preset runs on load; summary, charts and timeline are drawn', async () => {
  assert.equal(await waitState(page, ['completed', 'error', 'stopped']), 'completed');
  const cells = await summaryCells(page);
  assert.equal(cells.completed, '1,000');
  assert.match(cells['median_ttft_ms'], /^\d+\.\d\d$/);
  assert.ok(await canvasInk(page) > 0.02, 'the timeline canvas has drawn requests');
  assert.ok(await page.locator('.uplot').count() >= 6, 'three CDFs and three time series');
  assert.match(await page.locator('.fidelity').textContent(), /roofline/);
  // Llama-3.1-8B's lm_head (n = 128,256) lies past the GEMM grid's edge: said in words, with that read's error.
  assert.match(await page.locator('.past-edge').first().textContent(),
    /lm_head: [\d,]+ of [\d,]+ lookups past the measured tables \(read past the edge; held out there: p50 \d+\.\d\d%, p95 \d+\.\d\d%\)/);
  // The profile's measured error as tables, its figures those of profiles/H100-SXM/vllm/validation.json; the MoE
  // and collective tables of a dense model on one GPU are muted, its MoE routing figures left out.
  const err = JSON.parse(readFileSync(join(ROOT, 'profiles/H100-SXM/vllm/validation.json'), 'utf8')).summary;
  const cell = (part, row, key) => page.locator(`.error-part[data-part="${part}"] tr[data-${row}] td[data-key="${key}"]`).first().textContent();
  assert.equal(await cell('ops', 'family="gemm"', 'p95'), `${err.ops_heldout_ape_pct.gemm.p95.toFixed(2)}%`);
  assert.equal(await cell('ops', 'family="attention_decode"', 'p50'), `${err.ops_heldout_ape_pct.attention_decode.p50.toFixed(2)}%`);
  assert.equal(await cell('e2e', 'group="vllm agg"', 'ttft'), `${err.e2e_median_abs_pct['vllm agg'].ttft.toFixed(1)}%`);
  assert.equal(await cell('e2e', 'group="vllm agg"', 'tpot'), `${err.e2e_median_abs_pct['vllm agg'].tpot.toFixed(1)}%`);
  assert.deepEqual(await page.$$eval('.error-part[data-part="ops"] tr.idle', (rows) => rows.map((r) => r.dataset.family)),
    ['custom_allreduce', 'moe', 'nccl', 'p2p']);
  assert.equal(await page.locator('.error-part[data-part="moe-routing"]').count(), 0);
  assert.match(await page.locator('.unused-ops').first().textContent(), /^took no time in this run: moe, all_reduce, /);
  assert.doesNotMatch(await page.locator('.fidelity ul.sources').first().textContent(), /\bmoe\b/);
  assert.equal(await page.locator('.fidelity-extra').count(), 0, 'every part of the measured error has its table');
  await page.locator('.timeline-card').scrollIntoViewIfNeeded();
  await screenshot(page, 'page_default');
});

test('a measured error of unexpected shape is shown as it is, never dropped, never a crash', async () => {
  const text = await page.evaluate(async () => {
    const {renderFidelity} = await import('./views/fidelity.js');
    return renderFidelity({sources: {gemm: 'table', moe: 'table'}, measured_error: {
      report: 'docs/validation.md', ops_heldout_ape_pct: {gemm: null, nccl: {n: 'x'}}, beyond_edge_ape_pct: null,
      e2e_median_abs_pct: 5, leave_one_gpu_out_ape_pct: {gemm: null}, future_figure: [1, 2],
      transfer_ape_pct: {'same architecture': {gemm: {n: 7, p50: 1.5, p95: 9}}}}}, {gemm: 1}).textContent;
  });
  assert.match(text, /same architecture, gemm71\.50%9\.00%/);  // nested groups flattened
  assert.match(text, /took no time in this run: moe/);
  assert.match(text, /gemm-+-/);  // a family without figures: dashes in its cells
  assert.match(text, /e2e_median_abs_pct: 5/);
  assert.match(text, /future_figure: \[1,2\]/);
});

test('the summary matches the native CLI for the same scenario', {skip: !existsSync(join(ROOT, 'build/native/servesim'))}, async () => {
  const scenario = JSON.parse(readFileSync(join(ROOT, 'presets/default.json'), 'utf8'));
  scenario.output = {requests: true, phases: true};
  const file = join(tmpdir(), `servesim-web-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(scenario));
  execFileSync(join(ROOT, 'build/native/servesim'), ['run', file, '--out', `${file}.result.json`]);
  const native = JSON.parse(readFileSync(`${file}.result.json`, 'utf8')).summary;
  const cells = await summaryCells(page);
  for (const key of ['mean_ttft_ms', 'p99_tpot_ms', 'median_e2el_ms', 'mean_itl_ms']) {
    assert.equal(cells[key], native[key].toLocaleString('en-US', {minimumFractionDigits: 2, maximumFractionDigits: 2}), key);
  }
});

test('hovering and zooming the timeline', async () => {
  const canvas = page.locator('.timeline-canvas');
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  // Arrivals are steady, so request i is alive around time i/n of the run: zoom in on the diagonal band.
  const spot = async (fx, fy) => page.mouse.move(box.x + 64 + (box.width - 72) * fx, box.y + 22 + (box.height - 28) * fy);
  await spot(0.33, 0.3);
  for (let i = 0; i < 6; i++) { await page.mouse.wheel(0, -400); await page.waitForTimeout(30); }
  await page.waitForTimeout(150);
  const shown = async () => (await page.locator('.tooltip:not([hidden])').count()) > 0;
  // Zoomed in, rows are ~15 px apart and many are empty at this time window: scan the height finely at a few
  // times rather than a few heights across all times.
  scan: for (const fx of [0.1, 0.3, 0.5, 0.7, 0.9, 0.2, 0.4, 0.6, 0.8]) {
    for (let k = 0; k <= 100; k++) { await spot(fx, k / 100); if (await shown()) break scan; }
  }
  await page.waitForSelector('.tooltip:not([hidden])', {timeout: 10000});
  assert.match(await page.locator('.tooltip').textContent(), /request#\d+/);
  assert.match(await page.locator('.timeline-stats').textContent(), /one row per request|aggregated/);
  assert.ok(await canvasInk(page) > 0.01);
  await screenshot(page, 'timeline_zoomed', '.timeline-card');
  await canvas.dblclick();
});

test('a core validation error appears at its field and in the list, and blocks the run', async () => {
  await page.click('#editor-details summary');
  await page.fill('#f--engine-block-size', '24');
  const fieldError = page.locator('.field[data-path="/engine/block_size"] .field-error');
  await fieldError.waitFor({state: 'visible', timeout: 15000});
  assert.match(await fieldError.textContent(), /power of two/);
  assert.match(await page.locator('.error-list').textContent(), /\/engine\/block_size/);
  assert.match(await page.locator('.json-text').inputValue(), /"block_size": 24/);
  await screenshot(page, 'editor_error', '#editor');
  await page.click('#run');
  await page.waitForFunction(() => /Not run/.test(document.getElementById('run-status').textContent));
  await page.fill('#f--engine-block-size', '16');
  await fieldError.waitFor({state: 'hidden', timeout: 15000});
});

test('the raw JSON and the form stay in sync', async () => {
  const text = await page.locator('.json-text').inputValue();
  await page.locator('.json-text').fill(text.replace('"max_num_seqs": 256', '"max_num_seqs": 64'));
  await page.waitForFunction(() => document.getElementById('f--engine-max-num-seqs').value === '64');
});

test('a client timing the first text: the form offers ttft_from and the summary says where TTFT ends', async () => {
  const doc = JSON.parse(await page.locator('.json-text').inputValue());
  doc.workload.ttft_from = 'first_text';
  await page.locator('.json-text').fill(JSON.stringify(doc, null, 2));
  await page.waitForFunction(() => document.getElementById('f--workload-ttft-from')?.value === 'first_text');
  await page.waitForSelector('.error-list .ok', {timeout: 15000});
  assert.equal(await runAndWait(page, () => page.click('#run')), 'completed');
  assert.match(await page.locator('.summary [data-key=ttft_token]').textContent(), /output token 1, the first that carries text/);
});

test('a serving front-end set in the JSON runs, and the deployment names its costs and rate limit', async () => {
  const doc = JSON.parse(await page.locator('.json-text').inputValue());
  doc.engine.frontend = {token_us: 250};
  await page.locator('.json-text').fill(JSON.stringify(doc, null, 2));
  await page.waitForSelector('.error-list .ok', {timeout: 15000});
  assert.equal(await runAndWait(page, () => page.click('#run')), 'completed');
  assert.match(await page.locator('.frontend-line').textContent(),
    /serving front-end: C: 250(\.0)? us per output token \(at most 4,?000 tokens\/s a replica\)/);
  delete doc.engine.frontend;
  await page.locator('.json-text').fill(JSON.stringify(doc, null, 2));
  await page.waitForSelector('.error-list .ok', {timeout: 15000});
  assert.equal(await runAndWait(page, () => page.click('#run')), 'completed');
  assert.equal(await page.locator('.frontend-line').count(), 0);
});

test('the GPU field says which GPUs have measured tables and how the others are priced', async () => {
  const hint = await page.locator('.field[data-path="/hardware/gpu"] .hint').textContent();
  assert.match(hint, /measured tables: A100-80G, H100-SXM, H200-SXM; other GPUs: the nearest one's/);
});

test('an uploaded Hugging Face config.json defines an inline model that runs', async () => {
  const model = JSON.parse(readFileSync(join(ROOT, 'profiles/models/Qwen2-7B.json'), 'utf8'));
  await page.locator('.field[data-path="/model"] input[type=file]').setInputFiles({
    name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(model.config)),
  });
  await page.waitForFunction(() => /"config":/.test(document.querySelector('.json-text').value));
  assert.match(await page.locator('#f--model').inputValue(), /__inline__/);
  await page.waitForSelector('.error-list .ok', {timeout: 15000});
  assert.equal(await runAndWait(page, () => page.click('#run')), 'completed');
});

test('exports download the result JSON and the per-request CSV', async () => {
  const [json] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  const result = JSON.parse(readFileSync(await json.path(), 'utf8'));
  assert.equal(result.status, 'completed');
  const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
  const lines = readFileSync(await csv.path(), 'utf8').trim().split('\n');
  assert.match(lines[0], /^request,replica,arrival_ms,/);
  assert.equal(lines.length, result.summary.completed + result.summary.failed + 1);
  assert.equal(await page.locator('#export-trace').isDisabled(), true);
});

test('a run with "keep Perfetto trace" exports a Chrome trace', async () => {
  await page.check('#keep-trace');
  assert.equal(await runAndWait(page, () => page.click('.card[data-preset="default"] button.primary')), 'completed');
  const [trace] = await Promise.all([page.waitForEvent('download'), page.click('#export-trace')]);
  const doc = JSON.parse(readFileSync(await trace.path(), 'utf8'));
  assert.ok(Array.isArray(doc.traceEvents ?? doc) && (doc.traceEvents ?? doc).length > 1000);
  await page.uncheck('#keep-trace');
});

test('no console errors, page errors or dialogs', () => assertClean(assert, page));
