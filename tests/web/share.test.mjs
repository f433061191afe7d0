// Share by URL: a link made on one page reproduces the same summary on a fresh page; a scenario too large
// for a link is refused with a download offer; scenario files download and upload; embed mode.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {readFileSync} from 'node:fs';
import {startBrowser, waitState, runAndWait, runCount, summaryCells, canvasInk, screenshot, assertClean} from './browser_harness.mjs';

let browser;
const pages = [];
before(async () => { browser = await startBrowser(); });
after(async () => { await browser?.close(); });
const open = async (path) => { const p = await browser.open(path); pages.push(p); return p; };

let sharedUrl, sharedCells;

test('a share link reproduces the same summary on a fresh page', async () => {
  const page = await open('?preset=multi_replica');
  assert.equal(await waitState(page, ['completed', 'error']), 'completed');
  // Change the seed in the form so the link carries an edited scenario, and run it.
  await page.click('#editor-details summary');
  await page.fill('#f--seed', '5');
  assert.equal(await runAndWait(page, () => page.click('#run')), 'completed');
  sharedCells = await summaryCells(page);
  await page.click('#share');
  sharedUrl = await page.locator('#share-url').inputValue();
  assert.match(sharedUrl, /\/servesim\/\?preset=multi_replica#s=[A-Za-z0-9_-]+$/);
  assert.ok(sharedUrl.length < 2048, `link is ${sharedUrl.length} characters`);

  const fresh = await open(sharedUrl);
  await fresh.waitForSelector('.notice.info');
  assert.match(await fresh.locator('.notice').textContent(), /shared scenario \(seed 5, made with servesim/);
  assert.equal(await runCount(fresh), 0, 'a shared link runs only when asked');
  assert.equal(await fresh.locator('#f--seed').inputValue(), '5');
  await screenshot(fresh, 'share_loaded');
  assert.equal(await runAndWait(fresh, () => fresh.click('.notice button.primary')), 'completed');
  assert.deepEqual(await summaryCells(fresh), sharedCells);
});

test('editing the scenario drops the stale link from the address', async () => {
  const page = await open(sharedUrl);
  await page.waitForSelector('.notice.info');
  await page.click('#editor-details summary');
  await page.fill('#f--seed', '6');
  await page.waitForFunction(() => location.hash === '');
});

test('a scenario over 8 KB as a link is refused with a download offer', async () => {
  const page = await open('');
  await waitState(page, ['completed']);
  const model = JSON.parse(readFileSync(new URL('../../profiles/models/DeepSeek-V3.json', import.meta.url), 'utf8'));
  const doc = JSON.parse(await page.locator('.json-text').inputValue());
  doc.model = {name: 'big', config: model.config};
  doc.description = Array.from({length: 3000}, (_, i) => ((i * 2654435761) % 1e9).toString(36)).join(' ');
  await page.click('#editor-details summary');
  await page.locator('.json-text').fill(JSON.stringify(doc, null, 2));
  await page.waitForTimeout(400);
  await page.click('#share');
  await page.waitForSelector('.notice.warn');
  assert.match(await page.locator('.notice').textContent(), /over the 8\.0 KB/);
  assert.equal(await page.locator('#share-url').count(), 0);
  await screenshot(page, 'share_too_long', '#notice');
  const [file] = await Promise.all([page.waitForEvent('download'), page.click('.notice button.primary')]);
  assert.equal(JSON.parse(readFileSync(await file.path(), 'utf8')).model.name, 'big');
});

test('scenario download and upload round trip', async () => {
  const page = await open('?preset=closed_loop_h100');
  await waitState(page, ['completed']);
  const [file] = await Promise.all([page.waitForEvent('download'), page.click('text=Download scenario')]);
  const text = readFileSync(await file.path(), 'utf8');
  assert.equal(JSON.parse(text).workload.arrival.process, 'closed_loop');
  const other = await open('');
  await waitState(other, ['completed']);
  await other.locator('#upload-scenario').setInputFiles({name: 's.json', mimeType: 'application/json', buffer: Buffer.from(text)});
  await other.waitForFunction(() => document.getElementById('f--workload-arrival-process').value === 'closed_loop');
  await other.locator('#upload-scenario').setInputFiles({name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from('{oops')});
  await other.waitForSelector('.notice.error');
  assert.match(await other.locator('.notice').textContent(), /Could not load bad\.json/);
});

test('embed mode shows the headline chart and an "open in servesim" link', async () => {
  const page = await open('?embed&preset=default');
  assert.equal(await waitState(page, ['completed', 'error']), 'completed');
  assert.ok(await canvasInk(page) > 0.02);
  assert.match(await page.locator('.embed-open').getAttribute('href'), /\/servesim\/\?preset=default$/);
  assert.equal(await page.locator('#gallery').count(), 0);
  await page.setViewportSize({width: 900, height: 430});
  await screenshot(page, 'embed');
  const shared = await open(sharedUrl.replace('?preset=multi_replica#', '?embed#'));
  assert.equal(await waitState(shared, ['completed', 'error']), 'completed');
  assert.equal(await shared.locator('.headline .stat-value').first().textContent() + 'req/s', sharedCells['request_throughput:headline']);
  assert.match(await shared.locator('.embed-open').getAttribute('href'), /\/servesim\/#s=/);
});

test('no console errors, page errors or dialogs on any page', () => { for (const p of pages) assertClean(assert, p); });
