// Rewrites of deployment.roles for the scenario form: the serving architecture (C, P + D, P + A + F) and the
// way a role states its parallelism (vLLM's tensor/pipeline_parallel_size, or the two-domain
// `parallelism: {pp, tp_attn, dp_attn, tp_ffn, ep_ffn}`). They carry over what the user already chose (GPU,
// replicas, degrees) so a switch gives a scenario the core can validate; the core still judges the result.

export const ARCHITECTURES = [
  ['C', 'C: co-located prefill + decode'],
  ['PD', 'P + D: prefill / decode disaggregation'],
  ['PAF', 'P + A + F: attention / FFN disaggregation'],
];
export const PARALLELISM_FORMS = [
  ['vllm', 'tensor_parallel_size / pipeline_parallel_size'],
  ['two_domain', 'parallelism: pp, tp_attn, dp_attn, tp_ffn, ep_ffn'],
];
// The degrees each role kind may give in the two-domain form (docs/scenario.md): A only the attention domain,
// F only the FFN domain.
export const ROLE_DEGREES = {
  C: ['pp', 'tp_attn', 'dp_attn', 'tp_ffn', 'ep_ffn'], P: ['pp', 'tp_attn', 'dp_attn', 'tp_ffn', 'ep_ffn'],
  D: ['pp', 'tp_attn', 'dp_attn', 'tp_ffn', 'ep_ffn'], A: ['pp', 'tp_attn', 'dp_attn'], F: ['pp', 'tp_ffn', 'ep_ffn'],
};

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const roles = (doc) => (Array.isArray(doc?.deployment?.roles) ? doc.deployment.roles : []);

export function architectureOf(doc) {
  const kinds = roles(doc).map((r) => r?.role ?? 'C');
  if (kinds.includes('A') || kinds.includes('F')) return 'PAF';
  if (kinds.includes('P') || kinds.includes('D')) return 'PD';
  return 'C';
}

export function parallelismForm(role) {
  return isObject(role?.parallelism) ? 'two_domain' : 'vllm';
}

/** The role's degrees whatever form it uses (missing ones are the core's defaults). */
function degrees(role) {
  if (isObject(role?.parallelism)) {
    const p = role.parallelism;
    const tpAttn = p.tp_attn ?? 1, dpAttn = p.dp_attn ?? 1;
    return {pp: p.pp ?? 1, tp_attn: tpAttn, dp_attn: dpAttn, tp_ffn: p.tp_ffn ?? tpAttn * dpAttn, ep_ffn: p.ep_ffn ?? 1};
  }
  const tp = role?.tensor_parallel_size ?? 1, pp = role?.pipeline_parallel_size ?? 1;
  return {pp, tp_attn: role?.role === 'F' ? 1 : tp, dp_attn: 1, tp_ffn: tp, ep_ffn: 1};
}

/** A two-domain parallelism object of `kind` from degrees `g`, leaving out degrees equal to their default. */
function parallelismFor(kind, g) {
  const p = {pp: g.pp};
  if (kind !== 'F') { p.tp_attn = g.tp_attn; if (g.dp_attn > 1) p.dp_attn = g.dp_attn; }
  if (kind === 'F') { p.tp_ffn = g.tp_ffn; p.ep_ffn = g.ep_ffn; }
  if (kind !== 'F' && kind !== 'A' && (g.ep_ffn > 1 || g.tp_ffn !== g.tp_attn * g.dp_attn)) { p.tp_ffn = g.tp_ffn; p.ep_ffn = g.ep_ffn; }
  return p;
}

/** A new role of `kind` on `from`'s GPU with its replicas and degrees (a role letter as name is not copied). */
function derive(kind, from, {keepEngine = false} = {}) {
  const role = {role: kind};
  // A custom name stays with a role of the same kind; copies take the default name (the kind), so two roles
  // never share one.
  if (typeof from?.name === 'string' && kind === from.role && !['C', 'P', 'D', 'A', 'F'].includes(from.name)) role.name = from.name;
  role.replicas = from?.replicas ?? 1;
  if (from?.gpu !== undefined) role.gpu = structuredClone(from.gpu);
  if (kind === 'A' || kind === 'F' || parallelismForm(from) === 'two_domain') {
    role.parallelism = parallelismFor(kind, degrees(from));
  } else {
    if (from?.tensor_parallel_size !== undefined) role.tensor_parallel_size = from.tensor_parallel_size;
    if (from?.pipeline_parallel_size !== undefined) role.pipeline_parallel_size = from.pipeline_parallel_size;
  }
  if (keepEngine && from?.engine !== undefined) role.engine = structuredClone(from.engine);
  return role;
}

/** Rewrites doc.deployment for architecture `arch` ('C', 'PD' or 'PAF'); no-op when it already is one. */
export function setArchitecture(doc, arch) {
  if (architectureOf(doc) === arch && roles(doc).length) return;
  const d = isObject(doc.deployment) ? doc.deployment : (doc.deployment = {});
  const rs = roles(doc);
  const find = (k) => rs.find((r) => (r?.role ?? 'C') === k);
  const first = find('C') ?? find('P') ?? rs[0] ?? {role: 'C', replicas: 1};
  const decodeSide = find('D') ?? find('A') ?? first;
  if (arch === 'C') {
    d.roles = [derive('C', first, {keepEngine: true})];
    for (const k of ['afd', 'decode_router', 'kv_transfer', 'sibyl']) delete d[k];
  } else if (arch === 'PD') {
    d.roles = [derive('P', first, {keepEngine: true}), derive('D', decodeSide, {keepEngine: decodeSide !== first})];
    delete d.afd;
  } else {
    const a = derive('A', decodeSide, {keepEngine: decodeSide !== first});
    // A fresh F spans the decode side's FFN domain (tp_ffn x ep_ffn); F pairs with A replica for replica and
    // stage for stage (same replicas and pp; the core checks both).
    const f = derive('F', find('F') ?? decodeSide);
    f.replicas = a.replicas;
    f.parallelism.pp = a.parallelism.pp;
    d.roles = [derive('P', first, {keepEngine: true}), a, f];
  }
}

/** Switches `role` between the vLLM names and the two-domain parallelism object, keeping its degrees. */
export function setParallelismForm(role, form) {
  if (!isObject(role) || parallelismForm(role) === form) return;
  const g = degrees(role);
  if (form === 'two_domain') {
    delete role.tensor_parallel_size;
    delete role.pipeline_parallel_size;
    role.parallelism = parallelismFor(role.role ?? 'C', g);
  } else {
    delete role.parallelism;
    role.tensor_parallel_size = role.role === 'F' ? g.tp_ffn : g.tp_attn;
    role.pipeline_parallel_size = g.pp;
  }
}
