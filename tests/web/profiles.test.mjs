// Profiles on demand in the browser: the page fetches only the default preset's files, a GPU without tables
// fetches the GPUs that price it and names them, and a profile file the server cannot deliver reaches the page as a
// message naming it (no crash, no silent fallback).
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {readFileSync} from 'node:fs';
import {join} from 'node:path';
import {encodeShare} from '../../web/lib/share_codec.js';
import {startBrowser, waitState, runAndWait, ROOT} from './browser_harness.mjs';

let browser;
before(async () => { browser = await startBrowser(); });
after(async () => { await browser?.close(); });

test('the default preset fetches its own GPU\'s profiles only', async () => {
  browser.served.length = 0;
  const page = await browser.open('');
  assert.equal(await waitState(page, ['completed', 'error', 'stopped']), 'completed');
  const profiles = browser.served.map(([p]) => p).filter((p) => p.startsWith('assets/profiles/'));
  assert.ok(profiles.includes('assets/profiles/H100-SXM/vllm/gemm.json'), profiles.join(', '));
  assert.ok(!profiles.some((p) => /H200|A100|trtllm|mooncake/.test(p)), profiles.join(', '));
  // The host time the role ran with is named with its source, as the result's fidelity.host carries it.
  const host = await page.$eval('.role-fidelity .host-line', (x) => x.textContent);
  assert.match(host, /^host: \d+(\.\d)? us per step \+ \d+(\.\d)? us per request \(calibrated \(vllm\)\); /);
  await page.close();
});

test('an FP8 model on L40S names A100\'s tables and the FP8 GEMM grids taken from H100', async () => {
  const doc = JSON.parse(readFileSync(join(ROOT, 'presets', 'default.json'), 'utf8'));
  doc.hardware.gpu = 'L40S';
  doc.engine = {...doc.engine, dtype: 'fp8'};
  browser.served.length = 0;
  const page = await browser.open('#' + await encodeShare(doc, '0.1.0'));
  try {
    // A shared scenario runs when the reader asks for it.
    assert.equal(await runAndWait(page, () => page.click('.notice button.primary'), 120000), 'completed');
    const priced = await page.$$eval('.role-fidelity > summary', (ss) => ss.map((x) => x.textContent));
    assert.match(priced[0], /priced by datasheet-derived \(A100-80G\/vllm tables moved to L40S, other architecture; gemm grids A100-80G lacks from H100-SXM\)/);
    // The error of moving tables to another architecture's datasheet, as profiles/datasheet/validation.json has it.
    const moved = JSON.parse(readFileSync(join(ROOT, 'profiles/datasheet/validation.json'), 'utf8')).summary.transfer_ape_pct['other architecture'];
    const transfer = page.locator('.error-part[data-part="transfer"]').first();
    assert.match(await transfer.locator('.error-caption').textContent(), /\(other architecture\)/);
    assert.equal(await transfer.locator('tr[data-family="gemm"] td[data-key="p95"]').textContent(), `${moved.gemm.p95.toFixed(2)}%`);
    const profiles = browser.served.map(([p]) => p).filter((p) => p.startsWith('assets/profiles/'));
    assert.ok(profiles.includes('assets/profiles/H100-SXM/vllm/gemm.json'), profiles.join(', '));
    assert.ok(!profiles.some((p) => /H200-SXM\//.test(p)), profiles.join(', '));
  } finally {
    await page.close();
  }
});

test('a profile file that cannot be fetched is named on the page', async () => {
  const page = await browser.open(null);
  await browser.context.route('**/assets/profiles/H100-SXM/vllm/gemm.json', (route) => route.fulfill({status: 404, body: 'not found'}));
  try {
    await page.goto(browser.url);
    await page.waitForFunction(() => /could not fetch profiles\/H100-SXM\/vllm\/gemm\.json: HTTP 404/.test(document.body.textContent),
      null, {timeout: 60000});
    assert.notEqual(await page.evaluate(() => document.getElementById('app').dataset.state), 'completed');
    assert.deepEqual(page.problems.pageErrors, []);
  } finally {
    await browser.context.unroute('**/assets/profiles/H100-SXM/vllm/gemm.json');
    await page.close();
  }
});
