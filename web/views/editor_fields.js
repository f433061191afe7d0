// What the scenario form edits: each field names the JSON pointer it writes, so validation errors from the
// core (which name pointers too) land beside it. Engine options carry their SGLang spelling as a hint.
// An empty field deletes its key, so the core's default applies.
import {getAt} from '../lib/json_pointer.js';
import {ARCHITECTURES, PARALLELISM_FORMS, ROLE_DEGREES, architectureOf, parallelismForm} from '../lib/deployment_edit.js';

const arrivalIs = (...p) => (doc) => p.includes(getAt(doc, '/workload/arrival/process'));
const lenMode = (doc) => lengthsMode(doc);

export function lengthsMode(doc) {
  const lengths = getAt(doc, '/workload/lengths');
  if (lengths && typeof lengths === 'object') return lengths.source === 'cdf_total' ? 'cdf_total' : 'trace_pairs';
  if (getAt(doc, '/workload/input_len') || getAt(doc, '/workload/output_len')) return 'distributions';
  return 'none';
}

/** Length distribution fields for input_len or output_len. */
function distFields(which, label, catalog) {
  const base = `/workload/${which}`;
  const dist = (...d) => (doc) => lenMode(doc) === 'distributions' && d.includes(getAt(doc, `${base}/dist`));
  return [
    {path: `${base}/dist`, label: `${label} distribution`, kind: 'select', options: ['fixed', 'uniform', 'lognormal', 'cdf'],
      when: (doc) => lenMode(doc) === 'distributions'},
    {path: `${base}/value`, label: `${label} tokens`, kind: 'number', when: dist('fixed')},
    {path: `${base}/median`, label: `${label} median`, kind: 'number', when: dist('lognormal')},
    {path: `${base}/sigma`, label: `${label} sigma`, kind: 'number', when: dist('lognormal')},
    {path: `${base}/min`, label: `${label} min`, kind: 'number', when: dist('uniform', 'lognormal')},
    {path: `${base}/max`, label: `${label} max`, kind: 'number', when: dist('uniform', 'lognormal')},
    {path: `${base}/cdf`, label: `${label} CDF`, kind: 'select', options: catalog.workloads, when: dist('cdf')},
    {path: `${base}/scale`, label: `${label} scale`, kind: 'number', when: dist('cdf')},
  ];
}

const disaggregated = (doc) => architectureOf(doc) !== 'C';
const ROLE_NAMES = {C: 'co-located', P: 'prefill', D: 'decode', A: 'attention, holds the KV cache', F: 'FFN / MoE, no KV cache'};

/** Role i of deployment.roles: kind, GPU, replicas and its parallelism in the form the role uses. A holds only
 * the attention degrees (pp, tp_attn, dp_attn), F only the FFN degrees (pp, tp_ffn, ep_ffn). */
function roleGroup(i, catalog) {
  const base = `/deployment/roles/${i}`;
  const role = (doc) => getAt(doc, base);
  const kind = (doc) => role(doc)?.role ?? 'C';
  const form = (f) => (doc) => parallelismForm(role(doc)) === f;
  const degree = (k) => ({path: `${base}/parallelism/${k}`, label: k, kind: 'number', placeholder: k === 'pp' ? '1' : '',
    keepParent: true, when: (doc) => form('two_domain')(doc) && (ROLE_DEGREES[kind(doc)] ?? []).includes(k)});
  return {
    path: base,
    title: (doc) => `Role ${i + 1}: ${kind(doc)} (${ROLE_NAMES[kind(doc)] ?? '?'})`,
    when: (doc) => role(doc) !== undefined,
    fields: [
      {path: `${base}/role`, label: 'role', kind: 'select', options: ['C', 'P', 'D', 'A', 'F']},
      {path: `${base}/name`, label: 'name', kind: 'text', placeholder: 'the role letter'},
      {path: `${base}/gpu`, label: 'GPU', kind: 'select', options: catalog.gpus, optional: true, hint: 'default: hardware.gpu'},
      {path: `${base}/replicas`, label: 'replicas', kind: 'number', placeholder: '1'},
      {path: `#parform-${i}`, label: 'parallelism given as', kind: 'parform', role: i, options: PARALLELISM_FORMS, span: 2},
      {path: `${base}/tensor_parallel_size`, label: 'tensor_parallel_size', kind: 'number', placeholder: '1', when: form('vllm')},
      {path: `${base}/pipeline_parallel_size`, label: 'pipeline_parallel_size', kind: 'number', placeholder: '1', when: form('vllm')},
      ...['pp', 'tp_attn', 'dp_attn', 'tp_ffn', 'ep_ffn'].map(degree),
    ],
  };
}

/** Which GPUs have measured tables (index "tables" entries "<gpu>/<backend>/gemm"), and what the others get. */
function gpuHint(catalog) {
  const measured = [...new Set((catalog.tables ?? []).filter((t) => t.endsWith('/gemm')).map((t) => t.split('/')[0]))];
  return measured.length ? `measured tables: ${measured.join(', ')}; other GPUs: the nearest one's, moved to their datasheet` : '';
}

/** The form's groups for a profile catalog {models, gpus, traces, workloads} (profiles/index.json). */
export function fieldGroups(catalog) {
  const tri = ['true', 'false'];
  return [
    {title: 'Scenario', fields: [
      {path: '/name', label: 'name', kind: 'text', wide: true},
      {path: '/seed', label: 'seed', kind: 'number', hint: 'same seed, same numbers'},
    ]},
    {title: 'Model and hardware', fields: [
      {path: '/model', label: 'model', kind: 'model', options: catalog.models, span: 2},
      {path: '/hardware/gpu', label: 'GPU', kind: 'select', options: catalog.gpus, optional: true, hint: gpuHint(catalog)},
    ]},
    {title: 'Deployment', path: '/deployment', fields: [
      {path: '#architecture', label: 'architecture', kind: 'architecture', options: ARCHITECTURES, span: 2,
        hint: 'rewrites deployment.roles, keeping GPU, replicas and degrees where it can'},
      {path: '/deployment/router', label: 'router', kind: 'select', options: ['round_robin', 'least_outstanding_tokens'], optional: true},
      {path: '/deployment/decode_router', label: 'decode_router', kind: 'select', options: ['round_robin', 'least_load', 'sibyl'],
        optional: true, when: disaggregated},
      {path: '/deployment/kv_transfer/link', label: 'KV transfer link', kind: 'select', options: ['inter_node', 'nvlink'],
        optional: true, when: disaggregated},
    ]},
    ...[0, 1, 2].map((i) => roleGroup(i, catalog)),
    {title: 'A <-> F activations (deployment.afd)', path: '/deployment/afd', when: (d) => architectureOf(d) === 'PAF', fields: [
      {path: '/deployment/afd/micro_batches', label: 'micro_batches', kind: 'number', placeholder: '2',
        hint: '1 to 8 per decode iteration, ping-ponging between A and F'},
      {path: '/deployment/afd/link', label: 'link', kind: 'select', options: ['inter_node', 'nvlink'], optional: true,
        hint: 'default inter_node (the NIC)'},
      {path: '/deployment/afd/bandwidth_gb_s', label: 'bandwidth_gb_s', kind: 'number', placeholder: 'catalog', hint: 'per GPU'},
      {path: '/deployment/afd/efficiency', label: 'efficiency', kind: 'number', placeholder: '0.8', hint: 'assumed, (0, 1]'},
      {path: '/deployment/afd/latency_us', label: 'latency_us', kind: 'number', placeholder: '10', hint: 'assumed, per transfer'},
    ]},
    {title: 'Engine (vLLM names, SGLang in brackets)', path: '/engine', fields: [
      {path: '/engine/max_num_seqs', label: 'max_num_seqs', kind: 'number', hint: '--max-running-requests', placeholder: '256'},
      {path: '/engine/max_num_batched_tokens', label: 'max_num_batched_tokens', kind: 'number', hint: '--chunked-prefill-size', placeholder: '8192'},
      {path: '/engine/max_prefill_tokens', label: 'max_prefill_tokens', kind: 'number', hint: '--max-prefill-tokens; scheduler sglang only', placeholder: '16384', when: (d) => (d.engine || {}).scheduler === 'sglang'},
      {path: '/engine/enable_chunked_prefill', label: 'enable_chunked_prefill', kind: 'bool', options: tri, optional: true, hint: 'default on; trtllm off (longer prompts refused)'},
      {path: '/engine/block_size', label: 'block_size', kind: 'number', hint: '--page-size; trtllm default 32', placeholder: '16'},
      {path: '/engine/gpu_memory_utilization', label: 'gpu_memory_utilization', kind: 'number', hint: 'vLLM --gpu-memory-utilization, SGLang --mem-fraction-static; unset: 0.9, SGLang its own formula', placeholder: 'engine default'},
      {path: '/engine/max_model_len', label: 'max_model_len', kind: 'number', placeholder: 'model'},
      {path: '/engine/dtype', label: 'dtype', kind: 'select', options: ['bfloat16', 'float16', 'fp8'], optional: true},
      {path: '/engine/kv_cache_dtype', label: 'kv_cache_dtype', kind: 'select', options: ['auto', 'bfloat16', 'float16', 'fp8', 'fp8_e4m3', 'fp8_e5m2'], optional: true},
      {path: '/engine/enforce_eager', label: 'enforce_eager', kind: 'bool', options: tri, optional: true},
      {path: '/engine/max_cudagraph_capture_size', label: 'max_cudagraph_capture_size', kind: 'number', placeholder: 'engine default', hint: 'vLLM 512, SGLang --cuda-graph-max-bs (by GPU memory, TP), TRT-LLM 128'},
      {path: '/engine/cuda_graph_padding', label: 'cuda_graph_padding', kind: 'bool', options: tri, optional: true, hint: 'sglang/trtllm; default on, trtllm off (uncaptured decode batches run eagerly)'},
      {path: '/engine/async_scheduling', label: 'async_scheduling', kind: 'bool', options: tri, optional: true, hint: 'vLLM async scheduling, TRT-LLM/SGLang overlap scheduler; default on unless pp > 1'},
      {path: '/engine/hybrid_kv_cache_manager', label: 'hybrid_kv_cache_manager', kind: 'bool', options: tri, optional: true, hint: 'sliding-window models; default on, off on P/D roles under vllm (KV connector); always off under sglang for gpt-oss'},
    ]},
    {title: 'Workload', path: '/workload', fields: [
      {path: '/workload/num_requests', label: 'num_requests', kind: 'number'},
      {path: '/workload/arrival/process', label: 'arrival', kind: 'select', options: ['poisson', 'closed_loop', 'trace']},
      {path: '/workload/arrival/request_rate', label: 'request_rate (req/s or inf)', kind: 'number', when: arrivalIs('poisson', 'trace')},
      {path: '/workload/arrival/burstiness', label: 'burstiness', kind: 'number', hint: '1 = Poisson, < 1 burstier', when: arrivalIs('poisson'), placeholder: '1'},
      {path: '/workload/arrival/max_concurrency', label: 'max_concurrency', kind: 'number', when: arrivalIs('poisson', 'closed_loop')},
      {path: '/workload/arrival/think_time_ms', label: 'think_time_ms', kind: 'number', when: arrivalIs('closed_loop')},
      {path: '/workload/arrival/trace', label: 'arrival trace', kind: 'select', options: catalog.traces, when: arrivalIs('trace')},
      {path: '/workload/arrival/time_scale', label: 'time_scale', kind: 'number', when: arrivalIs('trace')},
      {path: '#lengths', label: 'lengths', kind: 'lengths'},
      {path: '/workload/lengths/trace', label: 'length trace', kind: 'select', options: catalog.traces, when: (d) => lenMode(d) === 'trace_pairs'},
      {path: '/workload/lengths/order', label: 'order', kind: 'select', options: ['shuffle', 'sequential'], optional: true, when: (d) => lenMode(d) === 'trace_pairs'},
      {path: '/workload/lengths/cdf', label: 'total-length CDF', kind: 'select', options: catalog.workloads, when: (d) => lenMode(d) === 'cdf_total'},
      {path: '/workload/lengths/output_fraction', label: 'output_fraction', kind: 'number', when: (d) => lenMode(d) === 'cdf_total'},
      ...distFields('input_len', 'input', catalog),
      ...distFields('output_len', 'output', catalog),
      {path: '/workload/ttft_from', label: 'ttft_from', kind: 'select', options: ['first_token', 'first_text'], optional: true,
        hint: 'first_text: as AIPerf / genai-perf, after the model\'s response preamble (gpt-oss: 3 tokens)'},
    ]},
    {title: 'SLA (goodput counts requests meeting every one given)', path: '/sla', fields: [
      {path: '/sla/ttft_ms', label: 'ttft_ms', kind: 'number'},
      {path: '/sla/tpot_ms', label: 'tpot_ms', kind: 'number'},
      {path: '/sla/e2el_ms', label: 'e2el_ms', kind: 'number'},
    ]},
  ];
}

/** Default structures when the lengths mode changes (the user then edits the values). */
export const LENGTH_DEFAULTS = {
  trace_pairs: {lengths: {source: 'trace', trace: 'sharegpt_llama2', order: 'shuffle'}},
  cdf_total: {lengths: {source: 'cdf_total', cdf: 'azure', output_fraction: 0.25}},
  distributions: {
    input_len: {dist: 'lognormal', median: 512, sigma: 0.8, min: 8, max: 8192},
    output_len: {dist: 'fixed', value: 256},
  },
  none: {},
};
