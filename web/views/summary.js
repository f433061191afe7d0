// The summary of a result in vllm bench serve's metric names, the deployment's roles table (GPUs, parallelism,
// KV budget, the A <-> F path), and where the pricing came from (deployment.roles[].fidelity, views/fidelity.js).
import {h, fmt} from '../lib/dom.js';
import {renderFidelity} from './fidelity.js';

const HEADLINES = [
  ['request_throughput', 'req/s', 2], ['output_throughput', 'output tok/s', 0],
  ['median_ttft_ms', 'median TTFT (ms)', 1], ['median_tpot_ms', 'median TPOT (ms)', 2],
  ['p99_e2el_ms', 'p99 E2EL (ms)', 0], ['request_goodput', 'goodput req/s', 2], ['usd_per_mtok_output', '$ / Mtok out', 3],
];
const THROUGHPUT = ['completed', 'failed', 'duration_s', 'total_input_tokens', 'total_output_tokens', 'request_throughput',
  'request_goodput', 'output_throughput', 'total_token_throughput', 'preemptions', 'num_gpus', 'usd_per_hour',
  'usd_per_mtok_output', 'output_throughput_per_gpu'];
const STATS = ['mean', 'median', 'std', 'p90', 'p95', 'p99'];
const LATENCIES = ['ttft', 'tpot', 'itl', 'e2el', 'queue'];

export function renderSummary(result, benchmarkText, scenario) {
  const s = result.summary ?? {};
  const priced = s.usd_per_hour > 0; // a GPU without a price gives 0 $/h: no cost figure
  const headline = h('div', {class: 'headline'}, HEADLINES.filter(([k]) => s[k] !== undefined && (priced || !k.startsWith('usd'))).map(([k, label, d]) =>
    h('div', {class: 'stat', title: k, dataset: {key: k}}, h('div', {class: 'stat-value', text: fmt(s[k], d)}), h('div', {class: 'stat-label', text: label}))));
  const kv = h('table', {class: 'kv'}, h('tbody', {}, THROUGHPUT.filter((k) => s[k] !== undefined).map((k) =>
    h('tr', {}, h('th', {class: 'mono', text: k}), h('td', {class: 'num', dataset: {key: k}, text: fmtAuto(s[k])})))));
  const grid = h('table', {class: 'latency'},
    h('thead', {}, h('tr', {}, h('th', {text: 'metric (ms)'}), STATS.map((st) => h('th', {class: 'mono', text: st})))),
    h('tbody', {}, LATENCIES.map((m) => h('tr', {}, h('th', {class: 'mono', text: m}),
      STATS.map((st) => {
        const key = `${st}_${m}_ms`;
        return h('td', {class: 'num', title: key, dataset: {key}, text: fmt(s[key], 2)});
      })))));
  return h('div', {class: 'summary'},
    statusLine(result), headline,
    h('div', {class: 'summary-grid'},
      h('div', {}, h('h3', {text: 'Throughput and totals'}), kv),
      h('div', {}, h('h3', {text: 'Latency (vllm bench serve keys: <stat>_<metric>_ms)'}), grid, ttftNote(s))),
    deployment(result, scenario),
    failures(result),
    benchmarkText ? h('details', {class: 'bench-block'}, h('summary', {text: 'Serving Benchmark Result (as the CLI prints it)'}),
      h('pre', {text: benchmarkText})) : null);
}

/** When clients time the first text (workload.ttft_from), which output token TTFT ends at. */
function ttftNote(s) {
  if (s.ttft_from !== 'first_text') return null;
  return h('p', {class: 'muted', dataset: {key: 'ttft_token'}, text: `TTFT ends at output token ${s.ttft_token}, the first ` +
    'that carries text (as AIPerf and genai-perf time it); TPOT and ITL count the intervals after it.'});
}

function statusLine(result) {
  const sc = result.scenario ?? {};
  const warn = (result.warnings ?? []).length;
  return h('div', {class: `status-line status-${result.status}`},
    h('strong', {class: 'result-name', text: sc.name || 'scenario'}),
    h('span', {text: ` · status ${result.status} · seed ${sc.seed ?? 0} · servesim ${result.servesim_version ?? '?'}`}),
    result.message ? h('span', {class: 'warn', text: ` · ${result.message}`}) : null,
    warn ? h('span', {class: 'muted', title: result.warnings.join('\n'), text: ` · ${warn} warning${warn > 1 ? 's' : ''}`}) : null);
}

function deployment(result, scenario) {
  const roles = result.deployment?.roles ?? [];
  const cols = ['role', 'GPU', 'replicas', 'parallelism (per replica)', 'GPUs / stage', 'world size', 'GPUs', 'batches in flight', 'KV cache'];
  const table = h('table', {class: 'roles'},
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', {text: c})))),
    h('tbody', {}, roles.map((r) => h('tr', {dataset: {role: r.role, name: r.name}},
      h('th', {text: r.name === r.role ? r.role : `${r.name} (${r.role})`, title: ROLE_MEANING[r.role] ?? ''}),
      h('td', {text: r.gpu}),
      h('td', {class: 'num', dataset: {key: 'replicas'}, text: fmtAuto(r.replicas)}),
      h('td', {class: 'mono', text: parallelismText(r)}),
      h('td', {class: 'num', dataset: {key: 'gpus_per_stage'}, text: fmtAuto(r.gpus_per_stage)}),
      h('td', {class: 'num', dataset: {key: 'world_size'}, text: fmtAuto(r.world_size)}),
      h('td', {class: 'num', dataset: {key: 'gpus'}, text: fmtAuto(r.gpus)}),
      h('td', {class: 'num', dataset: {key: 'max_batches_in_flight'}, text: fmtAuto(r.max_batches_in_flight)}),
      h('td', {dataset: {key: 'kv_cache'}, text: kvText(r)})))),
    h('tfoot', {}, h('tr', {}, h('th', {text: 'total'}), h('td', {colspan: 5}),
      h('td', {class: 'num', dataset: {key: 'total_gpus'}, text: fmtAuto(result.deployment?.total_gpus)}), h('td', {colspan: 2}))));
  return h('div', {class: 'deployment'}, h('h3', {text: 'Deployment'}), table,
    afdLine(roles, scenario), transferLine(result), frontendLine(roles),
    h('h3', {text: 'Where the pricing came from'}),
    roles.map((r) => h('details', {class: 'role-fidelity'},
      h('summary', {}, h('strong', {text: `${r.name} (${r.role})`}), ` priced by ${pricedBy(r.fidelity)}`),
      renderFidelity(r.fidelity, r.time_share_by_op ?? result.time_share_by_op))));
}

/** "table (H100-SXM/vllm)", "datasheet-derived (H100-SXM/vllm tables moved to H800, same architecture)",
 *  "... (A100-80G/vllm tables moved to L40S, other architecture; gemm grids A100 lacks from H100-SXM)", "roofline". */
function pricedBy(f) {
  if (!f) return '?';
  if (!f.profile || f.profile === 'datasheet') return f.kind;
  const owner = f.profile.split('/')[0];
  const extra = (f.supplements ?? []).map((s) => `; ${s.tables.join(', ')} grids ${owner} lacks from ${s.from}`).join('');
  return `${f.kind} (${f.profile}${f.transferred_to ? ` tables moved to ${f.transferred_to}, ${f.transfer}` : ''}${extra})`;
}

const ROLE_MEANING = {C: 'co-located prefill and decode', P: 'prefill', D: 'decode (holds the KV cache)',
  A: 'attention: decodes and holds the KV cache', F: 'FFN / MoE of its A replica\'s decode iterations (no KV cache)'};

/** The degrees that exist on the role: A has only the attention domain, F only the FFN domain. */
function parallelismText(r) {
  const p = r.parallelism ?? {};
  const parts = [`pp ${p.pp ?? 1}`];
  if (r.role !== 'F') parts.push(`tp_attn ${p.tp_attn ?? 1}`, `dp_attn ${p.dp_attn ?? 1}`);
  if (r.role === 'F' || (p.tp_ffn ?? 1) !== (p.tp_attn ?? 1) * (p.dp_attn ?? 1) || (p.ep_ffn ?? 1) > 1) {
    parts.push(`tp_ffn ${p.tp_ffn ?? 1}`, `ep_ffn ${p.ep_ffn ?? 1}`);
  }
  return parts.join(' x ');
}

function kvText(r) {
  const kv = r.kv_cache;
  if (!kv) return r.role === 'F' ? 'none (FFN only)' : 'none';
  const g = kv.kv_cache_groups;
  const groups = g ? ` in ${g.full} full + ${g.sliding} sliding-window (${g.sliding_window}) groups` : '';
  return `${fmt(kv.kv_cache_gib, 1)} GiB/GPU, ${fmtAuto(kv.kv_cache_tokens)} tokens (blocks of ${kv.block_size}${groups}); weights ${fmt(kv.weights_gib, 1)} GiB/GPU`;
}

/** The A <-> F path as the page ran it: the scenario's deployment.afd, with the core's defaults named as such. */
function afdLine(roles, scenario) {
  if (!roles.some((r) => r.role === 'F')) return null;
  const afd = scenario?.deployment?.afd ?? {};
  const given = (k, dflt, unit = '') => (afd[k] !== undefined ? `${afd[k]}${unit}` : `${dflt}${unit} (default)`);
  const a = roles.find((r) => r.role === 'A'), f = roles.find((r) => r.role === 'F');
  const links = a && f ? Math.min(a.gpus_per_stage, f.gpus_per_stage) : null;
  return h('div', {class: 'afd-line', dataset: {microBatches: afd.micro_batches ?? 2, link: afd.link ?? 'inter_node'}},
    h('span', {class: 'badge', text: 'A <-> F'}),
    ` micro-batches per decode iteration: ${given('micro_batches', 2)} · link: ${given('link', 'inter_node')}` +
    ` · bandwidth: ${afd.bandwidth_gb_s ? `${afd.bandwidth_gb_s} GB/s per GPU` : 'from the GPU catalog'}` +
    ` · efficiency: ${given('efficiency', 0.8)} · latency: ${given('latency_us', 10, ' us')}` +
    (links ? ` · ${links} per-GPU links per stage in parallel (min of A and F GPUs per stage)` : ''));
}

function transferLine(result) {
  const d = result.disaggregation;
  if (!d) return null;
  return h('div', {class: 'muted transfer-line'},
    `P -> ${result.deployment?.roles?.some((r) => r.role === 'A') ? 'A' : 'D'} KV transfers: ${fmtAuto(d.kv_transfers)} ` +
    `(${fmt((d.kv_bytes_moved ?? 0) / 2 ** 30, 1)} GiB moved) · decode_router ${d.decode_router}`);
}

/** The serving front-end of the roles that set one (deployment.roles[].frontend, engine.frontend): its serial costs
 *  and the token rate a replica's clients can be streamed at most. */
function frontendLine(roles) {
  const set = roles.filter((r) => r.frontend);
  if (!set.length) return null;
  return h('div', {class: 'muted frontend-line'}, 'serving front-end: ' + set.map((r) => {
    const {request_us: req = 0, token_us: tok = 0} = r.frontend;
    const parts = [];
    if (req > 0) parts.push(`${fmt(req, 1)} us per request`);
    if (tok > 0) parts.push(`${fmt(tok, 1)} us per output token (at most ${fmtAuto(Math.floor(1e6 / tok))} tokens/s a replica)`);
    return `${r.name}: ${parts.join(', ')}`;
  }).join(' · '));
}

function failures(result) {
  const f = result.failures ?? [];
  if (!f.length) return null;
  return h('div', {class: 'failures'}, h('h3', {text: 'Failed requests'}),
    h('ul', {}, f.map((x) => h('li', {text: `${x.count ?? ''} x ${x.reason ?? JSON.stringify(x)}`}))));
}

function fmtAuto(v) {
  if (typeof v !== 'number') return v === undefined ? '-' : String(v);
  return Number.isInteger(v) ? v.toLocaleString('en-US') : fmt(v, Math.abs(v) < 10 ? 3 : 2);
}
