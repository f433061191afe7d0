"""How well two campaigns agree where the GPUs should not differ: prefill attention on the H100 and the H200.

The H200 has the H100's SMs, clocks and tensor peaks (only HBM differs), so a compute-bound kernel run with the same
software should take the same time on both. AIConfigurator measured both GPUs with the same backend versions. For each
compute-bound grid (context attention, its sliding-window variant, the MLA context module) this compares the cells
both GPUs measured: the median H200 / H100 time, and the scatter of each cell's ratio around that median. The same
figure for servesim's own uniform prefill cells (profiles/measured/*/attention_mixed, one kernel timed the same way on
both GPUs) says what two careful campaigns give. A grid scattering well beyond that carries noise of its own, and
its held-out error (the table above) cannot fall below it. Standard library only; used by scripts/validate_ops.py.
"""

import csv
import itertools
import json
import math
import os
import statistics

import gen_tables
import measured_attention

GPUS = ("H100-SXM", "H200-SXM")
FAMILIES = (("attention_prefill", "context_attention.json"),
            ("attention_prefill_window", "context_attention_window.json"),
            ("mla_prefill", "mla_context.json"))


def cells(path):
    """{(key, axis point): us} of a table file."""
    out = {}
    with open(path) as f:
        for tab in json.load(f)["tables"]:
            key = json.dumps(tab["key"])
            for point, v in zip(itertools.product(*tab["axes"]), tab["values"]):
                if v:
                    out[(key, point)] = v
    return out


def agreement(a, b):
    """Median b / a over the common cells of two {cell: us}, and the p50 / p95 of |ratio / median - 1| in percent."""
    logs = [math.log(b[c] / a[c]) for c in a if c in b]
    if not logs:
        return None
    mid = statistics.median(logs)
    dev = [(math.exp(abs(x - mid)) - 1) * 100 for x in logs]
    return {"n": len(logs), "median_ratio": round(math.exp(mid), 3), "p50": round(gen_tables.pct(dev, 0.5), 2),
            "p95": round(gen_tables.pct(dev, 0.95), 2)}


def measured_prefill():
    """servesim's own uniform prefill cells per GPU, {(set, config, batch, length): us} (measured_attention)."""
    return [{k: v for k, v in measured_attention.uniform_means(gpu).items() if k[0] == "uniform_prefill"}
            for gpu in GPUS]


def section(profiles, results):
    """Lines of docs/validation.md; `results` are servesim_opcheck's reports (their held-out p50 / p95 beside)."""
    held = {(r["gpu"], r["backend"], f): v["all"] for r in results for f, v in r["families"].items() if "all" in v}
    lines = ["", "Two GPUs where they should agree (scripts/cross_gpu_floor.py): the H200 has the H100's SMs, clocks "
                 "and tensor peaks, so compute-bound prefill grids measured with the same software should match. "
                 "`scatter` is the p50 / p95 of each common cell's H200 / H100 ratio around the median ratio; "
                 "`held out` the table above, H100 then H200 (`-`: no row there). servesim's own FlashAttention-2 "
                 "cells, timed the same way on both GPUs, give the scatter of two careful campaigns.", "",
             "| source | family | n | median H200 / H100 | scatter p50 / p95 | held out p50 / p95 (H100; H200) |",
             "|---|---|---|---|---|---|"]
    summary = {}
    for backend in ("vllm", "trtllm"):
        for family, name in FAMILIES:
            paths = [os.path.join(profiles, g, backend, name) for g in GPUS]
            if not all(os.path.exists(p) for p in paths):
                continue
            s = agreement(*(cells(p) for p in paths))
            if s is None:
                continue
            summary["%s %s" % (backend, family)] = s
            hs = [held.get((g, backend, family)) for g in GPUS]
            lines.append("| AIConfigurator %s | %s | %d | %.3f | %.2f%% / %.2f%% | %s |" % (
                backend, family, s["n"], s["median_ratio"], s["p50"], s["p95"],
                "; ".join("%.2f%% / %.2f%%" % (h["p50"], h["p95"]) if h else "-" for h in hs)))
    s = agreement(*measured_prefill())
    summary["servesim attention_prefill"] = s
    lines.append("| servesim (FlashAttention-2 varlen) | attention_prefill | %d | %.3f | %.2f%% / %.2f%% | - |" % (
        s["n"], s["median_ratio"], s["p50"], s["p95"]))
    return lines, summary


def cell_errors(path):
    """{family: {(table, held-out axis, point): signed error %}} from a servesim_opcheck --cells file."""
    out = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            out.setdefault(r["family"], {})[(r["table"], r["held_out"], r["at"])] = (
                float(r["predicted_us"]) / float(r["measured_us"]) - 1) * 100
    return out


def repeat_stats(a, b):
    """Two {cell: signed error %} of the same held-out cells on two GPUs: how alike the misses are. n, the Pearson
    correlation of the errors, and of the first GPU's cells over 10% the share over 10% with the same sign on the
    second."""
    both = [c for c in a if c in b]
    if len(both) < 3:
        return None
    x, y = [a[c] for c in both], [b[c] for c in both]
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxy = sum((u - mx) * (v - my) for u, v in zip(x, y))
    sxx, syy = sum((u - mx) ** 2 for u in x), sum((v - my) ** 2 for v in y)
    over = [c for c in both if abs(a[c]) > 10]
    again = sum(1 for c in over if abs(b[c]) > 10 and (a[c] > 0) == (b[c] > 0))
    return {"n": len(both), "corr": round(sxy / math.sqrt(sxx * syy), 2) if sxx > 0 and syy > 0 else 0.0,
            "over_10pct": len(over), "repeat_pct": round(100.0 * again / len(over), 1) if over else 0.0}


def repeat_section(errors):
    """Lines of docs/validation.md from {(gpu, backend): cell_errors(...)}: per backend and family, how the H100's
    held-out misses repeat on the H200."""
    lines = ["", "The same held-out cells missed on both GPUs (scripts/cross_gpu_floor.py, from servesim_opcheck "
                 "--cells): where the H200's grid repeats the H100's shapes, the correlation of the two GPUs' signed "
                 "errors, and of the H100's cells over 10% the share over 10% with the same sign on the H200. Misses "
                 "that repeat are the kernel's behaviour between measured lines, which a better model could follow; "
                 "misses that do not are each campaign's own. (The cells file rounds its times, so a count over 10% "
                 "may differ by one from the table above.)", "",
             "| backend | family | n | correlation | H100 cells over 10% | repeated on H200 |",
             "|---|---|---|---|---|---|"]
    for backend in ("vllm", "trtllm"):
        a, b = errors.get((GPUS[0], backend)), errors.get((GPUS[1], backend))
        if not a or not b:
            continue
        for family in a:
            s = repeat_stats(a[family], b.get(family, {}))
            if s:
                lines.append("| %s | %s | %d | %.2f | %d | %.1f%% |" % (backend, family, s["n"], s["corr"],
                                                                    s["over_10pct"], s["repeat_pct"]))
    return lines


if __name__ == "__main__":
    print("\n".join(section(os.path.join(measured_attention.ROOT, "profiles"), [])[0]))
