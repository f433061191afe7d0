"""The between-neighbour floor of the per-op held-out validation (scripts/validate_ops.py).

On the same hold-out as servesim_opcheck (GEMM: every other interior n line, then every other interior k line;
attention: every third interior length, then every third interior batch size; MoE: every third interior token
count; collectives: every other interior message size), a held-out measurement whose value lies outside the range
of its two kept neighbours on that axis cannot be reached by any prediction that stays between them (linear,
log-log or any monotone blend of the two). Its distance to that range, as a percentage of the measurement, is a
lower bound of such a predictor's error there; inside the range the bound is zero. The p95 of that bound says how
much of the held-out p95 no interpolation between the neighbours can remove (kernel switches that put a line
outside its neighbours' range), and the rest is where inside the range the measurement sits.

Standard library only.
"""

import json
import os

import gen_tables

FLOOR_FAMILIES = ("gemm", "attention_prefill", "attention_decode", "moe", "custom_allreduce", "nccl")
FILES = {"gemm": "gemm.json", "attention_prefill": "context_attention.json",
         "attention_decode": "generation_attention.json", "moe": "moe.json", "custom_allreduce": "custom_allreduce.json"}


def bound_pct(lo_val, hi_val, truth):
    """Distance of `truth` to [min, max] of the two neighbours, in percent of `truth` (0 inside)."""
    lo, hi = min(lo_val, hi_val), max(lo_val, hi_val)
    if truth < lo:
        return (lo / truth - 1) * 100
    if truth > hi:
        return (1 - hi / truth) * 100
    return 0.0


def interior(n, step):
    return range(1, n - 1, step)


def gemm_bounds(tab):
    n_ax, k_ax, m_ax = tab["axes"]
    v = tab["values"]

    def at(a, b, c):
        return v[(a * len(k_ax) + b) * len(m_ax) + c]
    out = []
    for i in interior(len(n_ax), 2):
        for j in range(len(k_ax)):
            for c in range(len(m_ax)):
                out.append((at(i - 1, j, c), at(i + 1, j, c), at(i, j, c)))
    for i in interior(len(k_ax), 2):
        for j in range(len(n_ax)):
            for c in range(len(m_ax)):
                out.append((at(j, i - 1, c), at(j, i + 1, c), at(j, i, c)))
    return out


def grid2_bounds(tab):
    b_ax, s_ax = tab["axes"]
    v = tab["values"]

    def at(i, j):
        return v[i * len(s_ax) + j]
    out = []
    for j in interior(len(s_ax), 3):
        out += [(at(i, j - 1), at(i, j + 1), at(i, j)) for i in range(len(b_ax))]
    for i in interior(len(b_ax), 3):
        out += [(at(i - 1, j), at(i + 1, j), at(i, j)) for j in range(len(s_ax))]
    return out


def curve_bounds(tab, step):
    v = tab["values"]
    return [(v[i - 1], v[i + 1], v[i]) for i in interior(len(tab["axes"][0]), step)]


def family_bounds(path, family):
    triples = []
    for tab in json.load(open(path))["tables"]:
        dims = len(tab["axes"])
        if family == "gemm" and dims == 3:
            triples += gemm_bounds(tab)
        elif family.startswith("attention") and dims == 2 and len(tab["key"]) == 4:
            triples += grid2_bounds(tab)
        elif family == "moe" and dims == 1:
            triples += curve_bounds(tab, 3)
        elif family in ("custom_allreduce", "nccl") and dims == 1:
            triples += curve_bounds(tab, 2)
    return [bound_pct(a, b, t) for a, b, t in triples if None not in (a, b, t) and t > 0]


def floor_stats(bounds):
    return {"n": len(bounds), "p50": round(gen_tables.pct(bounds, 0.5), 2), "p95": round(gen_tables.pct(bounds, 0.95), 2),
            "outside_pct": round(100.0 * sum(1 for x in bounds if x > 0) / len(bounds), 1) if bounds else 0.0}


def floors(profiles, gpu, backend):
    """{family: stats} for one GPU/backend (NCCL from the GPU's shared table)."""
    out = {}
    for family in FLOOR_FAMILIES:
        path = (os.path.join(profiles, gpu, "nccl.json") if family == "nccl"
                else os.path.join(profiles, gpu, backend, FILES[family]))
        if os.path.exists(path):
            bounds = family_bounds(path, family)
            if bounds:
                out[family] = floor_stats(bounds)
    return out


def section(results):
    """Lines of docs/validation.md: each report's floor (rep["floor"], from floors()) next to the simulator's
    held-out p95."""
    lines = ["", "Between-neighbour floor (scripts/heldout_floor.py; the same held-out lines): a held-out measurement "
                 "outside the range of its two kept neighbours is missed by any prediction between them by at least "
                 "its distance to that range. `outside` is the share of held-out measurements outside it; `floor` "
                 "the p50 / p95 of that distance (0 inside); `simulator p95` the table above.", "",
             "| GPU / backend | family | n | outside | floor p50 / p95 | simulator p95 |", "|---|---|---|---|---|---|"]
    for rep in results:
        for family in FLOOR_FAMILIES:
            s = rep.get("floor", {}).get(family)
            if s is None:
                continue
            lines.append("| %s/%s | %s | %d | %.1f%% | %.2f%% / %.2f%% | %.2f%% |" % (
                rep["gpu"], rep["backend"], family, s["n"], s["outside_pct"], s["p50"], s["p95"],
                rep["families"][family]["all"]["p95"]))
    return lines
