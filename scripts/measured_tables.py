"""The GEMM grid servesim measured itself (profiles/measured/H100-SXM/gemm_bf16/, scripts/measure/gemm_bf16.py):
its held-out error through the simulator's own predictor, its repeatability, how it compares with the
AIConfigurator table that prices H100 roles, and what the weights' contents do to the latency. The helpers take the
GPU, for the H200 grid measured the same way (scripts/measured_gemm_h200.py).

Used by scripts/validate_ops.py (the section "GEMM grid measured here" of docs/validation.md). The grid prices no
role: it was taken on another software stack (torch 2.11, cuBLAS 13.1) than the vLLM tables, and it stops at
n, k = 16384 where models need the vocabulary and wide MLP lines. Standard library only.
"""

import math
import os
import statistics
import subprocess
import tempfile

import gen_tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H100 = "H100-SXM"


def gemm_dir(gpu):
    """Where the GEMM grid servesim measured on `gpu` lives (profiles/measured/<gpu>/gemm_bf16/)."""
    return os.path.join(ROOT, "profiles", "measured", gpu, "gemm_bf16")


DIR = gemm_dir(H100)
VALIDATION = os.path.join(DIR, "validation.json")  # the recorded held-out figures `check` compares against
# Latency buckets (us) for the comparisons: launch-bound, memory-bound, compute-bound.
BUCKETS = [(0, 5), (5, 10), (10, 30), (30, 100), (100, 1000), (1000, float("inf"))]


# A cell whose slowest timed block took more than this times its fastest was disturbed while it was timed (10 of
# sweep d's cells read 3-7x their neighbours so); it is left out as unmeasured.
MAX_SPREAD = 1.5


def load(name, gpu=H100):
    """({(m, n, k): latency in us}, how many disturbed cells were left out) of one committed CSV of `gpu`."""
    rows, _ = gen_tables.read_csv(os.path.join(gemm_dir(gpu), name + ".csv.gz"))
    cells = {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["latency"]) * 1000.0 for r in rows
             if float(r["spread"]) <= MAX_SPREAD}
    return cells, len(rows) - len(cells)


def read(name, gpu=H100):
    return load(name, gpu)[0]


def diff_stats(a, b, cells):
    """Signed median and |diff| p50 / p95 of a / b - 1 over `cells`, in percent."""
    d = [(a[c] / b[c] - 1.0) * 100.0 for c in cells]
    ad = [abs(x) for x in d]
    return {"n": len(d), "signed": statistics.median(d) if d else 0.0, "p50": gen_tables.pct(ad, 0.5), "p95": gen_tables.pct(ad, 0.95),
            "p99": gen_tables.pct(ad, 0.99)}


def bucketed(a, b, ref):
    """diff_stats of a against b over the cells both have, overall and per latency bucket of `ref`."""
    cells = [c for c in a if c in b]
    out = [("all", diff_stats(a, b, cells))]
    for lo, hi in BUCKETS:
        sub = [c for c in cells if lo <= ref[c] < hi]
        if sub:
            out.append(("%g-%g us" % (lo, hi) if hi != float("inf") else "> %g us" % lo, diff_stats(a, b, sub)))
    return out


def geomean(*tables):
    """Per cell, the geometric mean of the tables that have it."""
    cells = set().union(*tables)
    return {c: math.exp(statistics.fmean(math.log(t[c]) for t in tables if c in t)) for c in sorted(cells)}


def aic_bf16(gpu=H100):
    """AIConfigurator's vLLM bf16 GEMM cells of `gpu`, in us, from the committed table."""
    path = os.path.join(ROOT, "profiles", gpu, "vllm", "gemm.json")
    doc = gen_tables.json.load(open(path))
    for t in doc["tables"]:
        if t["key"] == ["bfloat16"]:
            n_ax, k_ax, m_ax = t["axes"]
            out, i = {}, 0
            for n in n_ax:
                for k in k_ax:
                    for m in m_ax:
                        if t["values"][i] is not None:
                            out[(m, n, k)] = t["values"][i]
                        i += 1
            return out
    raise SystemExit("%s has no bfloat16 table" % path)


def table_file_text(op, grid, doc=None, gpu=H100):
    """An op table file (profiles/<gpu>/<backend>/<op>.json's format) of measurements taken here, for the
    simulator's predictors to read from a temporary profile (backend `measured`)."""
    head = {"format": gen_tables.FORMAT, "gpu": gpu, "backend": "measured", "backend_version": "torch",
            "op": op, "unit": "us", "key_fields": grid.key_fields, "axis_fields": grid.axis_fields}
    head.update(doc or {})
    return gen_tables.table_text(head, grid.tables())


def write_gemm_table(profiles, gpu, cells):
    """Writes <profiles>/<gpu>/measured/gemm.json, a bf16 GEMM table built from `cells` ({(m, n, k): us})."""

    class Src:  # the builder's view of a source file
        rows = [{"gemm_dtype": "bfloat16", "m": m, "n": n, "k": k, "latency": v / 1000.0,
                 "kernel_source": "torch.nn.functional.linear"} for (m, n, k), v in sorted(cells.items())]
        kept = 0

    grid, doc = gen_tables.build_gemm(Src)
    os.makedirs(os.path.join(profiles, gpu, "measured"), exist_ok=True)
    with open(os.path.join(profiles, gpu, "measured", "gemm.json"), "w") as f:
        f.write(table_file_text("gemm", grid, doc, gpu))


def heldout(tool, cells, gpu=H100):
    """servesim_opcheck's held-out GEMM error on a table built from `cells` ({(m, n, k): us})."""
    with tempfile.TemporaryDirectory() as tmp:
        write_gemm_table(tmp, gpu, cells)
        p = subprocess.run([tool, tmp, gpu, "measured"], capture_output=True, text=True, check=True)
    return gen_tables.json.loads(p.stdout)["families"]["gemm"]["all"]


def table_b_c():
    """The grid as validated: the geometric mean of sweeps b and c (the same method, taken one after the other)."""
    return geomean(read("sweep_b"), read("sweep_c"))


def check(tool, margin_p50, margin_p95, validation=VALIDATION, table=table_b_c, gpu=H100):
    """Exits non-zero if the held-out error of a measured grid (`table()`, on `gpu`) grew past the figures recorded
    in `validation` (ctest)."""
    rec = gen_tables.json.load(open(validation))["heldout_ape_pct"]
    got = heldout(tool, table(), gpu)
    require_within("%s measured-grid GEMM held-out error" % gpu, got, rec, margin_p50, margin_p95)
    print("%s measured-grid GEMM held-out error within the recorded figures: p50 / p95 %.2f / %.2f%%"
          % (gpu, got["p50"], got["p95"]))


CHECK_HEAD = ["| check | n | p50 | p95 | max |", "|---|---|---|---|---|"]


def heldout_row(label, h):
    """A row of a "check" table: a held-out figure (servesim_opcheck's n / p50 / p95 / max)."""
    return "| %s | %d | %.2f%% | %.2f%% | %.1f%% |" % (label, h["n"], h["p50"], h["p95"], h["max"])


def retest_row(label, s):
    """A row of a "check" table: two timings of the same cells (diff_stats), p99 in the max column."""
    return "| %s | %d | %.2f%% | %.2f%% | p99 %.1f%% |" % (label, s["n"], s["p50"], s["p95"], s["p99"])


def diff_row(label, s):
    return "| %s | %d | %+.2f%% | %.2f%% | %.2f%% |" % (label, s["n"], s["signed"], s["p50"], s["p95"])


def bucket_table(intro, a, b):
    """Markdown lines: `intro`, then a against b (a / b - 1) overall and per latency bucket of b (bucketed)."""
    return (["", intro, "", "| cells | n | signed median | abs p50 | abs p95 |", "|---|---|---|---|---|"] +
            [diff_row(label, st) for label, st in bucketed(a, b, b)])


def require_within(what, got, want, margin_p50, margin_p95):
    """Exits non-zero (ctest) when `got` (n / p50 / p95) holds another n than the recorded `want`, or a p50 / p95
    above it by more than the margins."""
    if got["n"] != want["n"] or got["p50"] > want["p50"] + margin_p50 or got["p95"] > want["p95"] + margin_p95:
        raise SystemExit("%s regressed: n %d, p50 / p95 %.2f / %.2f%% against recorded n %d, %.2f / %.2f%%" % (
            what, got["n"], got["p50"], got["p95"], want["n"], want["p50"], want["p95"]))


def transfer_pairs(tool, gpu, write_tables):
    """servesim_opcheck --transfer both ways between the H100 and `gpu`, whose `measured` tables
    `write_tables(profiles_dir)` writes: {"H100-SXM -> <gpu>": {family: {"transfer": ..., "unscaled": ...}}, the
    reverse: ...}."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("gpus", "models"):  # the datasheets and DeepSeek-V3 (which the check loads)
            os.symlink(os.path.join(ROOT, "profiles", name), os.path.join(tmp, name))
        write_tables(tmp)
        p = subprocess.run([tool, "--transfer", tmp, "measured:%s:%s" % (H100, gpu), "measured:%s:%s" % (gpu, H100)],
                           capture_output=True, text=True, check=True)
    return {"%s -> %s" % (pair["from"], pair["to"]): pair["families"]
            for pair in gen_tables.json.loads(p.stdout)["pairs"]}


def gemm_section(tool):
    """Markdown lines for docs/validation.md, and the summary recorded in VALIDATION."""
    a = read("sweep_a")
    (b, b_out), (c, c_out), (d, d_out) = load("sweep_b"), load("sweep_c"), load("sweep_d")
    table = geomean(b, c)
    aic = aic_bf16()
    z1, z2, rn = read("weights_zeros_1"), read("weights_zeros_2"), read("weights_randn")
    h_table, h_b = heldout(tool, table), heldout(tool, b)
    nk = sorted({k[1] for k in table})
    ms = sorted({k[0] for k in table})
    lines = ["", "### GEMM grid measured here (H100-SXM, bf16, torch.nn.functional.linear)", "",
             "Measured by servesim on an H100 80GB HBM3 (`scripts/measure/gemm_bf16.py`; data and method in "
             "profiles/measured/H100-SXM/gemm_bf16/README.md): %d n/k lines from %d to %d (AIConfigurator's lines in "
             "that range and lines between them) x %d token counts, three full sweeps (a, b, c) and sweep d, which "
             "adds 20 n lines up to 8192 between those. It prices no role (another software stack than the vLLM "
             "tables, and no lines past 16384); it shows what the GEMM predictor does on a denser grid with little "
             "noise. The grid is the geometric mean of sweeps b and c; cells whose timed blocks spread more than "
             "%.1fx are left out as disturbed (%d in b, %d in c, %d in d)." %
             (len(nk), nk[0], nk[-1], len(ms), MAX_SPREAD, b_out, c_out, d_out),
             ""] + CHECK_HEAD + [
             heldout_row("held-out (the simulator's predictor, same hold-out as above), sweeps b+c", h_table),
             heldout_row("held-out, sweep b alone", h_b)]
    # Density: sweep d adds 20 n lines up to 8192 between b/c's (another lease of the same machine type).
    union = dict(table)
    union.update(d)
    for label, cells in (
            ("held-out, n <= 8192, sweeps b+c lines", {k: v for k, v in table.items() if k[1] <= 8192}),
            ("held-out, n <= 8192, with sweep d's 20 n lines between them", {k: v for k, v in union.items()
                                                                             if k[1] <= 8192}),
            ("held-out, n <= 8192 and a multiple of 256, sweeps b+c lines",
             {k: v for k, v in table.items() if k[1] <= 8192 and k[1] % 256 == 0}),
            ("held-out, n <= 8192 and a multiple of 256, with sweep d's", {k: v for k, v in union.items()
                                                                           if k[1] <= 8192 and k[1] % 256 == 0}),
            ("held-out, sweep d's n lines alone", d)):
        lines.append(heldout_row("%s (%d n lines)" % (label, len({k[1] for k in cells})), heldout(tool, cells)))
    for label, x, y in (("test-retest, sweep b vs c (same method)", c, b),
                        ("test-retest, sweep a (no clock settling) vs b", a, b)):
        lines.append(retest_row(label, diff_stats(x, y, [k for k in y if k in x])))
    lines += bucket_table("Against AIConfigurator's H100 vLLM bf16 table (the one that prices H100 roles) on the "
                          "cells both measured (this grid / AIConfigurator - 1), by AIConfigurator's latency:",
                          table, aic)
    lines += bucket_table("What the weights hold: %d cells of AIConfigurator's grid (random sample), timed with zero "
                          "weights, random-normal weights, and zero weights again, one after the other (random "
                          "weights / zero weights - 1, by the zero-weight latency; random activations throughout):"
                          % len(rn), rn, z1)
    s = diff_stats(z2, z1, [k for k in z1 if k in z2])
    sz, sr = diff_stats(z1, aic, [k for k in z1 if k in aic]), diff_stats(rn, aic, [k for k in rn if k in aic])
    big = [k for k in z1 if k in aic and aic[k] >= 100]
    bz, br = diff_stats(z1, aic, big), diff_stats(rn, aic, big)
    lines += ["", "Zero weights timed twice: |diff| p50 %.2f%%, p95 %.2f%%. Against AIConfigurator's table: zero "
                  "weights signed %+.1f%% (%+.1f%% on its cells >= 100 us), random weights %+.1f%% (%+.1f%%)." %
              (s["p50"], s["p95"], sz["signed"], bz["signed"], sr["signed"], br["signed"])]
    return lines, {"heldout_ape_pct": h_table, "table": "geometric mean of sweep_b and sweep_c",
                   "holdout": "every other interior n value, then every other interior k value (all m)"}
