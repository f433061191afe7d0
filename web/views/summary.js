// The summary of a result in vllm bench serve's metric names, the deployment's KV budget, and where the
// pricing came from (deployment.roles[].fidelity, with a measured error when the result carries one).
import {h, fmt} from '../lib/dom.js';

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

export function renderSummary(result, benchmarkText) {
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
      h('div', {}, h('h3', {text: 'Latency (vllm bench serve keys: <stat>_<metric>_ms)'}), grid, deployment(result))),
    failures(result),
    benchmarkText ? h('details', {class: 'bench-block'}, h('summary', {text: 'Serving Benchmark Result (as the CLI prints it)'}),
      h('pre', {text: benchmarkText})) : null);
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

function deployment(result) {
  const roles = result.deployment?.roles ?? [];
  return h('div', {class: 'deployment'}, h('h3', {text: 'Deployment and where the pricing came from'}),
    roles.map((r) => {
      const p = r.parallelism ?? {};
      const kv = r.kv_cache;
      // An F role (attention/FFN disaggregation) hosts only the FFN domain and holds no KV cache.
      const par = r.role === 'F' ? `tp_ffn ${p.tp_ffn ?? 1}, ep_ffn ${p.ep_ffn ?? 1}`
        : `tp ${p.tp_attn ?? 1}${(p.dp_attn ?? 1) > 1 ? `, dp_attn ${p.dp_attn}` : ''}`;
      return h('div', {class: 'role'},
        h('div', {class: 'role-head', text: `${r.name} (${r.role}): ${r.replicas} x ${r.gpu}, ${par}, pp ${p.pp ?? 1} · ${r.gpus} GPU${r.gpus === 1 ? '' : 's'}`}),
        kv ? h('div', {class: 'muted', text: `KV cache ${fmt(kv.kv_cache_gib, 1)} GiB per GPU, ${fmtAuto(kv.num_gpu_blocks)} blocks of ${kv.block_size}, ${fmtAuto(kv.kv_cache_tokens)} tokens · weights ${fmt(kv.weights_gib, 1)} GiB`})
          : h('div', {class: 'muted', text: 'No KV cache: runs the FFN of its A replica\'s micro-batches'}),
        fidelity(r.fidelity));
    }));
}

function fidelity(f) {
  if (!f) return null;
  const bySource = new Map();
  for (const [op, src] of Object.entries(f.sources ?? {})) {
    if (!bySource.has(src)) bySource.set(src, []);
    bySource.get(src).push(op);
  }
  const extra = Object.entries(f).filter(([k]) => k !== 'model' && k !== 'sources');
  return h('div', {class: 'fidelity'},
    h('div', {}, h('span', {class: 'badge', text: 'pricing'}), ` ${f.model ?? ''}`),
    h('ul', {}, [...bySource].map(([src, ops]) => h('li', {}, h('span', {class: 'mono', text: src}), `: ${ops.join(', ')}`))),
    extra.length ? h('div', {class: 'fidelity-error'}, extra.map(([k, v]) =>
      h('div', {}, h('span', {class: 'mono', text: k}), `: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)))
      : h('div', {class: 'muted', text: 'No measured error figure for this profile yet.'}));
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
