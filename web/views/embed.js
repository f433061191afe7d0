// Embed mode for paper artifact pages: ?embed&preset=NAME or ?embed#<share fragment>. Runs the scenario and
// shows its request timeline (the headline chart), four headline numbers and a link to the full page.
import {h, setChildren, fmt} from '../lib/dom.js';
import {loadCatalog, loadPreset} from '../lib/catalog.js';
import {Runner, runnableText} from '../lib/runner.js';
import {decodeShare} from '../lib/share_codec.js';
import {buildTimelineData} from '../lib/timeline_data.js';
import {TimelineView} from './timeline.js';

export async function startEmbed({app, client, params}) {
  document.body.classList.add('embed');
  const status = h('div', {class: 'embed-status', role: 'status', text: 'Loading the simulator...'});
  const body = h('div', {class: 'embed-body'});
  const link = h('a', {class: 'embed-open', target: '_blank', rel: 'noopener', text: 'open in servesim ↗'});
  setChildren(app, h('div', {class: 'embed-head'}, h('span', {class: 'logo', text: 'servesim'}), status, link), body);
  const full = new URL('./', location.href);
  let scenario;
  try {
    if (location.hash.length > 1) {
      scenario = (await decodeShare(location.hash)).scenario;
      full.hash = location.hash;
    } else {
      const id = params.get('preset') || 'default';
      scenario = await loadPreset(await loadCatalog(), id);
      full.searchParams.set('preset', id);
    }
  } catch (e) {
    link.href = full.href;
    app.dataset.state = 'error';
    status.textContent = e.message;
    status.classList.add('error');
    return;
  }
  link.href = full.href;
  let info, outcome;
  try {
    info = await client.init();
    app.dataset.runCount = '1';
    app.dataset.state = 'running';
    status.textContent = `${String(scenario.name ?? 'scenario')} · running...`;
    outcome = await new Runner(client).start(runnableText(JSON.stringify(scenario)), {
      onProgress: (p) => { if (p.requests_total) status.textContent = `${String(scenario.name ?? '')} · ${p.requests_done} / ${p.requests_total} requests`; },
    });
  } catch (e) {
    app.dataset.state = 'error';
    status.textContent = `The run failed: ${e.message ?? e}`;
    status.classList.add('error');
    return;
  }
  if (!outcome.result) {
    status.textContent = `Run ${outcome.status}.`;
    app.dataset.state = outcome.status;
    return;
  }
  const result = JSON.parse(outcome.result);
  const s = result.summary ?? {};
  status.textContent = `${String(result.scenario?.name ?? '')} · servesim ${info.version}`;
  const stat = (v, label, d) => h('div', {class: 'stat'}, h('div', {class: 'stat-value', text: fmt(v, d)}), h('div', {class: 'stat-label', text: label}));
  const timeline = new TimelineView({height: 300, compact: true});
  setChildren(body,
    h('div', {class: 'headline compact'}, stat(s.request_throughput, 'req/s', 2), stat(s.median_ttft_ms, 'median TTFT ms', 1),
      stat(s.median_tpot_ms, 'median TPOT ms', 2), stat(s.p99_e2el_ms, 'p99 E2EL ms', 0)),
    timeline.el);
  const data = buildTimelineData(result);
  if (data) timeline.setData(data);
  app.dataset.state = outcome.status;
}
