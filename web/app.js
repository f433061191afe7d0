// servesim's page: wires the views to the simulator worker and handles the address (?preset=, #share link,
// ?embed). Everything the page shows comes from the core's result document; no simulation happens here.
import {SimClient} from './sim_client.js';
import {byId, h} from './lib/dom.js';
import {loadCatalog, loadPreset, loadSweepCatalog, loadSweepText} from './lib/catalog.js';
import {Runner, runnableText} from './lib/runner.js';
import {decodeShare} from './lib/share_codec.js';
import {renderGallery} from './views/gallery.js';
import {ScenarioEditor} from './views/editor.js';
import {RunPanel} from './views/run_panel.js';
import {SharePanel} from './views/share_panel.js';
import {ResultsView} from './views/results.js';
import {showNotice, hideNotice} from './views/notice.js';
import {startEmbed} from './views/embed.js';
import {SweepView} from './views/sweep_view.js';

const app = byId('app');
const setState = (s) => (app.dataset.state = s);

async function main() {
  setState('loading');
  const params = new URLSearchParams(location.search);
  const client = new SimClient(new URL('./worker.js', import.meta.url));
  if (params.has('embed')) return startEmbed({app, client, params});
  // The gallery and editor are usable while the wasm module is still loading; Run waits for it.
  const catalog = await loadCatalog();
  catalog.sweeps = await loadSweepCatalog();
  const info = {version: ''};
  const ready = client.init().then((i) => Object.assign(info, i));
  const page = buildPage(client, catalog, info, ready);
  app.dataset.interactive = String(Math.round(performance.now()));
  await ready;
  page.ready();
  setState('ready');
  await route(page, catalog, params, info);
  // A share link pasted into the address bar of an open page changes only the fragment.
  window.addEventListener('hashchange', () => { if (location.hash.length > 1) loadShared(page, info); });
}

function buildPage(client, catalog, info, ready) {
  const runner = new Runner(client);
  const results = new ResultsView(byId('results'));
  const editor = new ScenarioEditor({
    catalog: catalog.profiles,
    validate: (text) => client.validate(text),
    onChange: (source) => { if (source === 'edit') share.stale(); editorTitle.textContent = scenarioName(editor); },
  });
  const share = new SharePanel({getText: () => editor.text(), setDoc: (doc) => editor.setDoc(doc), getVersion: () => info.version});
  const runPanel = new RunPanel({onRun: () => run(), onCancel: () => { runPanel.cancelling(); runner.cancel(); }});
  const editorTitle = h('span', {class: 'editor-title'});
  const details = h('details', {class: 'editor-details', id: 'editor-details'},
    h('summary', {}, h('span', {class: 'h2', text: 'Scenario editor'}), editorTitle), editor.el);
  byId('editor').append(details);
  byId('runbar').append(runPanel.el);
  runPanel.setExtra(share.el);

  let busy = false;
  async function run() {
    if (busy) return;
    busy = true;
    try {
      await ready;
      await runChecked();
    } finally {
      busy = false;
    }
  }

  async function runChecked() {
    const errors = await editor.validate();
    if (errors.length) {
      details.open = true;
      runPanel.finished(`Not run: ${errors.length} problem${errors.length > 1 ? 's' : ''} in the scenario (see the editor).`);
      return;
    }
    app.dataset.runCount = String(Number(app.dataset.runCount) + 1);
    setState('running');
    runPanel.started();
    const t0 = performance.now();
    try {
      const text = runnableText(editor.text());
      const outcome = await runner.start(text,
        {keepTrace: runPanel.keepTrace.checked, onProgress: (p) => runPanel.progress(p)});
      const secs = ((performance.now() - t0) / 1000).toFixed(2);
      if (outcome.result) results.show(outcome, JSON.parse(text));
      runPanel.finished(`${outcome.status} in ${secs} s${outcome.hard ? ' (the worker was restarted)' : ''}`);
      setState(outcome.status);
    } catch (e) {
      runPanel.finished(`Run failed: ${e.message ?? e}`);
      if (Array.isArray(e.errors) && e.errors.length) { details.open = true; editor.showErrors(e.errors); }
      setState('error');
    }
  }

  const openPreset = async (id, {andRun = false, openEditor = false, keepNotice = false} = {}) => {
    try {
      editor.setDoc(await loadPreset(catalog, id));
      if (!keepNotice) hideNotice();
      if (openEditor) details.open = true;
      if (andRun) await run();
    } catch (e) {
      showNotice(`Could not load the preset: ${e.message}`);
    }
  };
  renderGallery(byId('gallery'), catalog.presets, {
    onRun: (id) => openPreset(id, {andRun: true}),
    onOpen: (id) => openPreset(id, {openEditor: true}),
  });
  const sweep = new SweepView({
    // ?sweep_workers=N sets the pool size (1 to 8; default navigator.hardwareConcurrency), for benchmarks.
    pool: client.sweepPool({size: Number(new URLSearchParams(location.search).get('sweep_workers')) || undefined}),
    sweeps: catalog.sweeps,
    loadText: (id) => loadSweepText(catalog.sweeps, id),
    onOpenPoint: (scenarioText, record) => {
      editor.setDoc(JSON.parse(scenarioText));
      details.open = true;
      const what = Object.entries(record.assignment).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ');
      showNotice(`Opened sweep point ${record.id} (${what}) in the editor.`,
        {kind: 'info', actions: [['Run it', () => { hideNotice(); run(); }, true]]});
      byId('editor').scrollIntoView({block: 'start'});
    },
  });
  byId('sweep').append(sweep.el);
  if (catalog.sweeps.length) sweep.loadPreset(catalog.sweeps[0].id);
  return {
    editor, run, openPreset, details, sweep,
    ready() {
      byId('version').textContent = `servesim ${info.version} · WebAssembly core in a Web Worker`;
      runPanel.ready('Ready.');
    },
  };
}

function scenarioName(editor) {
  try { return ` · ${JSON.parse(editor.text()).name ?? ''}`; } catch { return ' · (JSON does not parse)'; }
}

/** What the address asks for: a share link (loaded, run on request), a preset, or the default preset. */
async function route(page, catalog, params, info) {
  const fallback = catalog.presets[0]?.id ?? 'default';
  if (location.hash.length > 1) {
    if (!(await loadShared(page, info))) await page.openPreset(fallback, {keepNotice: true}); // loaded, not run
    return;
  }
  if (params.has('preset')) return await page.openPreset(params.get('preset'), {andRun: true});
  await page.openPreset(fallback, {andRun: true});
}

/** Loads the scenario of the share link in the address into the editor; it runs when the user asks. */
async function loadShared(page, info) {
  let shared;
  try {
    shared = await decodeShare(location.hash);
  } catch (e) {
    showNotice(e.message);
    return false;
  }
  page.editor.setDoc(shared.scenario);
  const other = shared.servesim && shared.servesim !== info.version;
  showNotice(`Loaded a shared scenario (seed ${shared.seed}, made with servesim ${shared.servesim || 'unknown'}` +
    `${other ? `; this page runs ${info.version}, so numbers may differ` : ''}).`,
  {kind: 'info', actions: [['Run it', () => { hideNotice(); page.run(); }, true], ['Open the editor', () => (page.details.open = true)]]});
  return true;
}

main().catch((e) => {
  setState('error');
  showNotice(`servesim could not start: ${e.message ?? e}`);
});
