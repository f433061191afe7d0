// The Sweep view end to end on the real wasm core and the worker pool: a sweep preset runs with progress, the
// frontiers and the starred best point are drawn, hovering shows a point's configuration, the exports hold the
// core's CSV and a stand-alone SVG, and clicking a point opens its scenario in the editor, where it runs.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {judge} from '../../web/lib/sweep_pareto.js';
import {startBrowser, waitState, runAndWait, canvasInk, screenshot, assertClean, ROOT} from './browser_harness.mjs';

/** `servesim sweep` on `doc` (the CLI's own Pareto code): {merged (parsed sweep.json), csv}. */
function cliSweep(doc) {
  const dir = mkdtempSync(join(tmpdir(), 'servesim-web-sweep-'));
  try {
    writeFileSync(join(dir, 'sweep_in.json'), JSON.stringify(doc));
    execFileSync(join(ROOT, 'build/native/servesim'), ['sweep', join(dir, 'sweep_in.json'), '--out', join(dir, 'out'), '--jobs', '2'], {stdio: 'pipe'});
    return {merged: JSON.parse(readFileSync(join(dir, 'out', 'sweep.json'), 'utf8')), csv: readFileSync(join(dir, 'out', 'frontier.csv'), 'utf8')};
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
}

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

test('changing the percentile and the SLA moves the star to the CLI\'s best point for that SLA, and the CSV follows', async () => {
  // The tiny sweep at 24 requests/s, loaded enough that latency and throughput per GPU trade off, pasted in.
  const tiny = JSON.parse(readFileSync(join(ROOT, 'presets', 'sweeps', 'tiny.json'), 'utf8'));
  tiny.base.workload.arrival.request_rate = 24;
  await page.click('.sweep-json summary');
  await page.fill('#sweep-text', JSON.stringify(tiny, null, 1));
  await page.click('.sweep-json summary');
  await page.click('#sweep-run');
  await page.waitForFunction(() => document.querySelector('.sweep').dataset.state === 'completed', null, {timeout: 120000});
  const before = await page.getAttribute('#sweep-best', 'data-id');
  const own = cliSweep(tiny);
  assert.equal(before, own.merged.best, 'the page\'s star is the CLI\'s best under the sweep\'s own SLA');
  // A view that moves the star to another point: scan percentiles and bounds taken from the points' own
  // latencies (picked with the page's judge), then take the expectation from the CLI's Pareto code.
  const ok = own.merged.points.filter((p) => p.status === 'ok');
  let view = null;
  for (const pc of ['p50', 'p90', 'p99']) {
    for (const p of ok) {
      for (const sla of [{ttft_ms: tiny.sla.ttft_ms, tpot_ms: p.metrics[`${pc}_tpot_ms`]}, {ttft_ms: p.metrics[`${pc}_ttft_ms`], tpot_ms: 0}]) {
        const b = judge(own.merged.points, {percentile: pc, sla}).best;
        if (!view && b && b !== before) view = {percentile: pc, sla};
      }
    }
  }
  assert.ok(view, 'some view moves the best point');
  const {percentile, sla} = view;
  // A TPOT bound of 0 is "none" on the page; a sweep document says so by leaving tpot_ms out (it must be > 0).
  const want = cliSweep({...tiny, percentile, sla: sla.tpot_ms ? sla : {ttft_ms: sla.ttft_ms}});
  assert.notEqual(want.merged.best, before, 'the chosen SLA changes the best point');
  await page.selectOption('#sweep-percentile', percentile);
  await page.fill('#sweep-sla-ttft', String(sla.ttft_ms));
  await page.fill('#sweep-sla-tpot', sla.tpot_ms ? String(sla.tpot_ms) : '');
  const key = JSON.stringify([percentile, sla.ttft_ms, sla.tpot_ms]);
  await page.waitForFunction((k) => {
    const d = document.querySelector('.sweep').dataset;
    return d.view === k && d.judgedBy === 'core';
  }, key);
  assert.equal(await page.getAttribute('#sweep-best', 'data-id'), want.merged.best);
  assert.match(await page.textContent('#sweep-chart svg'), new RegExp(`${percentile} TTFT ≤ ${sla.ttft_ms} ms`));
  const [d] = await Promise.all([page.waitForEvent('download'), page.click('#sweep-export-csv')]);
  assert.equal(readFileSync(await d.path(), 'utf8'), want.csv, 'the CSV is the CLI\'s for that SLA');
  // A bad bound is named and changes nothing; restoring the sweep's SLA restores its best point.
  await page.fill('#sweep-sla-tpot', '-3');
  assert.match(await page.textContent('#sweep-status'), /SLA TPOT \(\/sla\/tpot_ms\): must be a number ≥ 0/);
  assert.equal(await page.getAttribute('#sweep-best', 'data-id'), want.merged.best);
  await page.selectOption('#sweep-percentile', tiny.percentile);
  await page.fill('#sweep-sla-ttft', String(tiny.sla.ttft_ms));
  await page.fill('#sweep-sla-tpot', String(tiny.sla.tpot_ms));
  await page.waitForFunction((k) => document.querySelector('.sweep').dataset.view === k && document.querySelector('.sweep').dataset.judgedBy === 'core',
    JSON.stringify([tiny.percentile, tiny.sla.ttft_ms, tiny.sla.tpot_ms]));
  assert.equal(await page.getAttribute('#sweep-best', 'data-id'), before);
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
  // Frontier lines are drawn while it runs: one per series that has a point meeting the SLA.
  const live = await page.evaluate(() => ({
    judgedBy: document.querySelector('.sweep').dataset.judgedBy,
    groups: [...new Set([...document.querySelectorAll('#sweep-chart .pt[data-sla="true"][data-group]')].map((e) => e.dataset.group))].sort(),
    lines: [...document.querySelectorAll('#sweep-chart polyline.frontier')].map((e) => e.dataset.group).sort(),
  }));
  assert.equal(live.judgedBy, 'page');
  assert.deepEqual(live.lines, live.groups);
  await page.click('#sweep-cancel');
  await page.waitForFunction(() => document.querySelector('.sweep').dataset.state === 'cancelled');
  assert.match(await page.textContent('#sweep-status'), /^Cancelled after \d+ points\.$/);
  assert.equal(await runSweep('laptop_whatif', 240000), 'completed');
  assert.ok(await page.locator('#sweep-chart polyline.frontier').count() >= 1);
  assert.equal(await page.locator('#sweep-best').count(), 1);
  await screenshot(page, 'sweep_laptop', '#sweep');
  assertClean(assert, page);
});
