// The op families of the result's time_share_by_op (core/fidelity/cost_model.cc op_family_name), each with a
// plain name and a colour, so the chart and its legend name every family the core reports. A family the page
// does not know yet is still drawn (grey, under its own key) rather than dropped.
export const OP_FAMILIES = [
  ['gemm', 'GEMM (dense projections)', '#3568d6'],
  ['moe', 'MoE experts', '#2aa076'],
  ['attention_prefill', 'attention, prefill', '#8e5bd0'],
  ['attention_decode', 'attention, decode', '#c27ce0'],
  ['norm', 'norms', '#9aa5b1'],
  ['embedding', 'embedding', '#6b7785'],
  ['lm_head', 'LM head', '#405063'],
  ['all_reduce', 'TP all-reduce', '#f0b03e'],
  ['pipeline_p2p', 'pipeline p2p (PP hops)', '#d6733a'],
  ['all_to_all', 'EP all-to-all (dispatch + combine)', '#d63031'],
  ['af_transfer', 'A <-> F activation transfer', '#1aa3b8'],
  ['cpu_overhead', 'host / CPU overhead', '#b8a27a'],
];
export const UNKNOWN_FAMILY_COLOR = '#777777';

/** [{key, label, color, share}] for the families with a share > 0, in the order above, unknown keys last. */
export function opShares(timeShare) {
  if (!timeShare || typeof timeShare !== 'object') return [];
  const known = new Set(OP_FAMILIES.map(([k]) => k));
  const rows = OP_FAMILIES.map(([key, label, color]) => ({key, label, color, share: Number(timeShare[key] ?? 0)}));
  for (const [key, v] of Object.entries(timeShare)) {
    if (!known.has(key)) rows.push({key, label: key, color: UNKNOWN_FAMILY_COLOR, share: Number(v)});
  }
  return rows.filter((r) => Number.isFinite(r.share) && r.share > 0);
}
