// Hostile #fragments: markup, broken base64, oversized and decompression-bomb payloads. Each shows a clear
// error and nothing runs: no run starts, no dialog opens, no injected script executes, no console error.
// A well-formed link whose scenario name holds markup loads, and the name is shown as plain text.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startBrowser, waitState, runCount, runAndWait, screenshot, assertClean} from './browser_harness.mjs';

let browser;
before(async () => { browser = await startBrowser(); });
after(async () => { await browser?.close(); });

const XSS = '<img src=x onerror="window.__pwned=1;alert(1)"><script>window.__pwned=2</script>';

async function deflateBase64Url(text) {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return Buffer.from(await new Response(stream).arrayBuffer()).toString('base64url');
}

async function expectRefused(path, pattern, shot) {
  const page = await browser.open(path);
  await page.waitForSelector('.notice.error, .embed-status.error', {timeout: 15000});
  const text = await page.locator('.notice.error, .embed-status.error').first().textContent();
  assert.match(text, pattern);
  await page.waitForTimeout(300);
  assert.equal(await runCount(page), 0, 'no run started');
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'no injected script ran');
  assert.equal(await page.locator('#app img, #app script').count(), 0, 'no injected elements');
  if (shot) await screenshot(page, shot);
  assertClean(assert, page);
  await page.close();
}

test('markup as the fragment', () => expectRefused(`#${encodeURIComponent(XSS)}`, /not a servesim share link/, 'hostile_markup'));
test('broken base64', () => expectRefused('#s=@@not~base64!!', /not valid base64url/));
test('base64 that is not deflate data', () => expectRefused(`#s=${Buffer.from('hello, not deflated').toString('base64url')}`, /does not decompress/));
test('a 1.5 MB fragment is refused before decoding', () => expectRefused(`#s=${'A'.repeat(1536 * 1024)}`, /more than the 64 KB/));
test('a payload that inflates to 10 MB is refused while inflating', async () => {
  const bomb = JSON.stringify({share: 1, scenario: {version: 1, name: 'x'.repeat(10 * 1024 * 1024)}});
  await expectRefused(`#s=${await deflateBase64Url(bomb)}`, /expands to more than 1024 KB/, 'hostile_bomb');
});
test('JSON that is not a share payload', async () => expectRefused(`#s=${await deflateBase64Url('["not", "a", "payload"]')}`, /does not hold a servesim scenario/));
test('embed mode refuses a broken fragment too', () => expectRefused('?embed#s=%%%', /not valid base64url/));

test('a well-formed link with markup in the name: loaded as text, runs only when asked, no script', async () => {
  const scenario = {version: 1, name: XSS, seed: 1, model: 'Llama-3.1-8B', hardware: {gpu: 'H100-SXM'},
    deployment: {roles: [{role: 'C', replicas: 1}]},
    workload: {num_requests: 50, arrival: {process: 'poisson', request_rate: 5}, input_len: {dist: 'fixed', value: 128}, output_len: {dist: 'fixed', value: 16}}};
  const page = await browser.open(`#s=${await deflateBase64Url(JSON.stringify({share: 1, version: 1, seed: 1, servesim: '<b>9</b>', scenario}))}`);
  await page.waitForSelector('.notice.info');
  assert.equal(await runCount(page), 0);
  assert.match(await page.locator('.notice').textContent(), /made with servesim <b>9<\/b>/);
  assert.equal(await runAndWait(page, () => page.click('.notice button.primary')), 'completed');
  assert.equal(await page.locator('.result-name').textContent(), XSS);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator('#app img, #app script').count(), 0);
  await screenshot(page, 'hostile_name_as_text', '.summary-card');
  assertClean(assert, page);
});

test('a 10 MB fragment: Chromium will not navigate to it; set on an open page, the decoder refuses it at once', async () => {
  const page = await browser.open('?preset=closed_loop_h100');
  await waitState(page, ['completed']);
  const before = await runCount(page);
  const out = await page.evaluate(async () => {
    const {decodeShare} = await import('./lib/share_codec.js');
    const t = performance.now();
    try { await decodeShare('#s=' + 'A'.repeat(10 * 1024 * 1024)); return 'accepted'; } catch (e) { return `${e.message} (${(performance.now() - t).toFixed(1)} ms)`; }
  });
  assert.match(out, /more than the 64 KB/);
  await page.evaluate(() => { location.hash = 's=' + 'B'.repeat(1536 * 1024); });
  await page.waitForSelector('.notice.error');
  assert.match(await page.locator('.notice').textContent(), /more than the 64 KB/);
  assert.equal(await runCount(page), before);
  assertClean(assert, page);
});
