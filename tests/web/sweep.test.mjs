// The Sweep view end to end on the real wasm core and the worker pool: a sweep preset runs with progress, the
// frontiers and the starred best point are drawn, hovering shows a point's configuration, the exports hold the
// core's CSV and a stand-alone SVG, and clicking a point opens its scenario in the editor, where it runs.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {readFileSync} from 'node:fs';
import {startBrowser, waitState, runAndWait, canvasInk, screenshot, assertClean} from './browser_harness.mjs';

let browser, page;
before(async () => {
  browser = await startBrowser();
  page = await browser.open('');
  await waitState(page, ['completed', 'error', 'stopped']); // the default preset runs on load
});
after(async () => { await browser?.close(); });

async function runSweep(id, timeout = 120000) {
  await page.selectOption('#sweep-preset', id);
  await page.click('#sweep-load');
  await page.waitForFunction((n) => document.getElementById('sweep-status').textContent === `Loaded ${n}.`, id);
  await page.click('#sweep-run');
  await page.waitForFunction(() => ['completed', 'error', 'cancelled'].includes(document.querySelector('.sweep').dataset.state),
    null, {timeout});
  return await page.evaluate(() => document.querySelector('.sweep').dataset.state);
}

test('the tiny sweep runs; frontiers and the starred best point are drawn; hover shows a point', async () => {
  assert.equal(await runSweep('tiny'), 'completed', await page.textContent('#sweep-status'));
  assert.match(await page.textContent('#sweep-status'), /^6 points in [\d.]+ s/);
  assert.equal(await page.locator('#sweep-chart polyline.frontier').count(), 3, 'one frontier per architecture');
  assert.equal(await page.locator('#sweep-chart .pt[data-index]').count(), 5 + 1, 'five points that ran, plus the star');
  assert.equal(await page.locator('#sweep-best').count(), 1);
  assert.match(await page.textContent('#sweep-summary'), /6 points, 5 ran, filtered \(unbuildable: 1\)\. Best under the SLA: arch=/);
  await page.locator('#sweep-chart circle.pt').first().hover();
  await page.waitForSelector('#sweep .sweep-tooltip:not([hidden])');
  assert.match(await page.textContent('#sweep .sweep-tooltip'), /tokens\/s per user.*output tok\/s per GPU/s);
  await screenshot(page, 'sweep_tiny', '#sweep');

  const download = async (id) => {
    const [d] = await Promise.all([page.waitForEvent('download'), page.click(id)]);
    return readFileSync(await d.path(), 'utf8');
  };
  assert.match(await download('#sweep-export-csv'), /^id,group,arch,tp,tokens_per_s_per_user,/);
  const svg = await download('#sweep-export-svg');
  assert.match(svg, /^<\?xml[^]*<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svg, /Output tokens\/s per GPU[^]*Tokens\/s per user|Tokens\/s per user[^]*Output tokens\/s per GPU/);
  assert.match(svg, /best under the SLA/);
  assert.ok(!/<script|\son\w+=/i.test(svg), 'no script in the figure');
  assertClean(assert, page);
});

test('clicking the best point opens its scenario in the editor, and it runs', async () => {
  const bestId = await page.getAttribute('#sweep-best', 'data-id');
  await page.click('#sweep-best');
  await page.waitForFunction((id) => document.getElementById('notice').textContent.includes(`Opened sweep point ${id}`), bestId);
  const text = await page.inputValue('textarea[aria-label="Scenario JSON"]');
  const doc = JSON.parse(text);
  assert.equal(doc.name, 'tiny sweep point');
  assert.ok(!JSON.stringify(doc).includes('gpu_share'), 'GPU shares are resolved to replica counts');
  assert.equal(await runAndWait(page, () => page.click('#notice button.primary')), 'completed');
  assert.ok(await canvasInk(page) > 0.005, 'its timeline is drawn');
  assertClean(assert, page);
});

test('the laptop what-if sweep runs in the page with partial results, and cancel stops it', async () => {
  await page.selectOption('#sweep-preset', 'laptop_whatif');
  await page.click('#sweep-load');
  await page.waitForFunction(() => document.getElementById('sweep-status').textContent === 'Loaded laptop_whatif.');
  await page.click('#sweep-run');
  await page.waitForFunction(() => document.querySelectorAll('#sweep-chart .pt').length >= 2, null, {timeout: 60000});
  assert.equal(await page.evaluate(() => document.querySelector('.sweep').dataset.state), 'running');
  assert.match(await page.textContent('#sweep-chart svg'), /running/);
  await page.click('#sweep-cancel');
  await page.waitForFunction(() => document.querySelector('.sweep').dataset.state === 'cancelled');
  assert.match(await page.textContent('#sweep-status'), /^Cancelled after \d+ points\.$/);
  assert.equal(await runSweep('laptop_whatif', 240000), 'completed');
  assert.ok(await page.locator('#sweep-chart polyline.frontier').count() >= 1);
  assert.equal(await page.locator('#sweep-best').count(), 1);
  await screenshot(page, 'sweep_laptop', '#sweep');
  assertClean(assert, page);
});
