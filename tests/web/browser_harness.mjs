// Shared by the browser tests: serves web/ under /servesim/ on 127.0.0.1 (or uses SERVESIM_WEB_URL), drives
// Debian's Chromium through playwright-core (no browser download), records console errors, page errors and
// dialogs, and saves screenshots to out/screenshots/.
import {chromium} from 'playwright-core';
import {mkdtempSync, mkdirSync, rmSync, existsSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join, resolve, dirname} from 'node:path';
import {fileURLToPath} from 'node:url';
import {startStaticServer} from '../../scripts/lib/static_server.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SCREENSHOTS = join(ROOT, 'out', 'screenshots');
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Starts the server and the browser; returns {url, open(path), close()}. */
export async function startBrowser() {
  for (const f of ['servesim.js', 'servesim.wasm', 'sim_client.js', 'worker.js', 'app.js']) {
    const p = join(process.env.SERVESIM_WEB_ROOT ?? join(ROOT, 'web'), f.startsWith('servesim') ? `assets/${f}` : f);
    if (!process.env.SERVESIM_WEB_URL && !existsSync(p)) throw new Error(`${p} is missing: run scripts/build_wasm and scripts/build_web`);
  }
  // SERVESIM_WEB_ROOT serves another copy of web/ (scripts/bench_web.mjs compares an older build).
  const server = process.env.SERVESIM_WEB_URL ? null : await startStaticServer({root: process.env.SERVESIM_WEB_ROOT ?? join(ROOT, 'web')});
  const url = process.env.SERVESIM_WEB_URL ?? server.url;
  const profile = mkdtempSync(join(tmpdir(), 'servesim-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true, args: FLAGS,
    viewport: {width: 1400, height: 900}, acceptDownloads: true,
  });
  mkdirSync(SCREENSHOTS, {recursive: true});
  return {
    url,
    context,
    /** [path, bytes] of every file the local server sent (empty with SERVESIM_WEB_URL). */
    served: server?.served ?? [],
    /** Opens `path` (relative to the app URL) in a new tab that records problems. */
    async open(path = '') {
      const page = await context.newPage();
      const problems = {console: [], pageErrors: [], dialogs: []};
      page.on('console', (m) => { if (m.type() === 'error') problems.console.push(m.text()); });
      page.on('pageerror', (e) => problems.pageErrors.push(e.message));
      page.on('dialog', (d) => { problems.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
      page.problems = problems;
      if (path !== null) await page.goto(new URL(path, url).href);
      return page;
    },
    async close() {
      await context.close();
      await server?.close();
      rmSync(profile, {recursive: true, force: true});
    },
  };
}

/** Waits until the app's data-state is one of `states` (the page sets it: ready, running, completed, ...). */
export async function waitState(page, states, timeout = 60000) {
  await page.waitForFunction((s) => s.includes(document.getElementById('app')?.dataset.state), states, {timeout});
  return await page.evaluate(() => document.getElementById('app').dataset.state);
}

/** Does `action` (which starts a run) and waits for that run to end; returns the final state. */
export async function runAndWait(page, action, timeout = 60000) {
  const before = await runCount(page);
  await action();
  await page.waitForFunction((n) => Number(document.getElementById('app').dataset.runCount) > n, before, {timeout: 30000});
  return await waitState(page, ['completed', 'cancelled', 'stopped', 'error'], timeout);
}

export async function runCount(page) {
  return Number(await page.evaluate(() => document.getElementById('app').dataset.runCount));
}

/** The summary cells the page shows, keyed by vLLM metric name. */
export async function summaryCells(page) {
  return await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('.summary [data-key]')]
    .map((e) => [e.dataset.key + (e.classList.contains('stat') ? ':headline' : ''), e.textContent])));
}

/** Share of the timeline canvas's pixels that are neither white nor transparent. */
export async function canvasInk(page, selector = '.timeline-canvas') {
  return await page.$eval(selector, (c) => {
    const {data} = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let ink = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i + 3] > 0 && (data[i] < 245 || data[i + 1] < 245 || data[i + 2] < 245)) ink++;
    return ink / (c.width * c.height);
  });
}

export async function screenshot(page, name, locator) {
  const path = join(SCREENSHOTS, `${name}.png`);
  if (locator) await page.locator(locator).screenshot({path});
  else {
    await page.evaluate(() => window.scrollTo(0, 0)); // the sticky run bar stays at the top
    await page.screenshot({path, fullPage: true});
  }
  return path;
}

/** Fails with everything the page complained about. */
export function assertClean(assert, page) {
  const p = page.problems;
  assert.deepEqual(p.pageErrors, [], 'uncaught page errors');
  assert.deepEqual(p.console, [], 'console errors');
  assert.deepEqual(p.dialogs, [], 'dialogs opened');
}
