"""The bf16 GEMM grid servesim measured on an H200 (profiles/measured/H200-SXM/gemm_bf16/,
scripts/measure/gemm_bf16.py), the H100 grid's counterpart on the same software: its held-out error through the
simulator's predictor, its repeatability, how it compares with AIConfigurator's H200 vLLM bf16 table and with the
H100 grid, and the datasheet transfer between the two GPUs (core/fidelity/table_transfer.h, `servesim_opcheck
--transfer`) checked on these two clean grids against the same check on AIConfigurator's two bf16 tables.

Used by scripts/validate_ops.py (the section "GEMM grid measured here, H200" of docs/validation.md, and
`--check-measured`). Run alone it prints the section. Standard library only.
"""

import json
import os

import measured_tables as mt

GPU = "H200-SXM"
DIR = mt.gemm_dir(GPU)
VALIDATION = os.path.join(DIR, "validation.json")


def table():
    """The grid as validated: the geometric mean of sweeps a and b (taken one after the other)."""
    return mt.geomean(mt.read("sweep_a", GPU), mt.read("sweep_b", GPU))


def retest():
    """({(m, n, k): us} of sweep a, the same cells timed again right after it), from the script's retest file."""
    rows, _ = mt.gen_tables.read_csv(os.path.join(DIR, "sweep_a_retest.csv.gz"))
    first = {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["latency"]) * 1000.0 for r in rows}
    again = {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["retest"]) * 1000.0 for r in rows}
    return first, again


def transfer(tool, h100_cells, h200_cells):
    """servesim_opcheck --transfer's bf16 GEMM figures between two grids ({(m, n, k): us}) standing for the H100's
    and the H200's tables: {"H100-SXM -> H200-SXM": {"transfer": ..., "unscaled": ...}, the reverse: ...}."""
    def write(profiles):
        mt.write_gemm_table(profiles, mt.H100, h100_cells)
        mt.write_gemm_table(profiles, GPU, h200_cells)
    return {d: fams["gemm"] for d, fams in mt.transfer_pairs(tool, GPU, write).items()}


def section(tool):
    """Markdown lines for docs/validation.md, and the summary recorded in VALIDATION."""
    (a, a_out), (b, b_out) = mt.load("sweep_a", GPU), mt.load("sweep_b", GPU)
    grid = mt.geomean(a, b)
    h_grid, h_a = mt.heldout(tool, grid, GPU), mt.heldout(tool, a, GPU)
    h100 = mt.table_b_c()
    aic, aic100 = mt.aic_bf16(GPU), mt.aic_bf16(mt.H100)
    nk = sorted({c[1] for c in grid})
    ms = sorted({c[0] for c in grid})
    lines = ["", "### GEMM grid measured here, H200 (H200-SXM, bf16, torch.nn.functional.linear)", "",
             "Measured by servesim on an H200 with the H100 grid's script, grid and software (data in "
             "profiles/measured/H200-SXM/gemm_bf16/README.md): %d n/k lines from %d to %d x %d token counts, two "
             "sweeps back to back (b stopped by its deadline before the last %d cells). The grid is their geometric "
             "mean; cells whose timed blocks spread more than %.1fx are left out as disturbed (%d in a, %d in b). "
             "It prices no role." % (len(nk), nk[0], nk[-1], len(ms), len(a) + a_out - len(b) - b_out, mt.MAX_SPREAD,
                                     a_out, b_out),
             ""] + mt.CHECK_HEAD + [
             mt.heldout_row("held-out (the simulator's predictor, the hold-out of the per-op table), sweeps a+b",
                            h_grid),
             mt.heldout_row("held-out, sweep a alone", h_a),
             mt.retest_row("test-retest, sweep b vs a", mt.diff_stats(b, a, [c for c in a if c in b]))]
    first, again = retest()
    lines.append(mt.retest_row("test-retest, %d random cells of sweep a timed again right after it, in random order"
                               % len(first), mt.diff_stats(again, first, list(first))))
    lines += mt.bucket_table("Against AIConfigurator's H200 vLLM bf16 table (the one that prices H200 roles) on the "
                             "cells both measured (this grid / AIConfigurator - 1), by AIConfigurator's latency:",
                             grid, aic)
    lines += mt.bucket_table("Against the H100 grid measured the same way (H200 / H100 - 1), by the H100's latency: "
                             "the H200 has the H100's SMs and clocks and 1.43x its HBM bandwidth by the datasheets "
                             "(4.8 / 3.35 TB/s).", grid, h100)
    clean = transfer(tool, h100, grid)
    both = set(aic) & set(aic100)
    aic_t = transfer(tool, {c: aic100[c] for c in both}, {c: aic[c] for c in both})
    lines += ["", "The datasheet transfer between the two GPUs (the same-architecture rule t' = t - roof + roof', "
                  "see \"Datasheet transfer\" above) on these two grids, against the same check on AIConfigurator's "
                  "two vLLM bf16 tables (their common cells): p50 / p95 / max of |transferred / measured - 1|; "
                  "`as measured` leaves the other GPU's time unchanged.", "",
              "| direction | grids | n | transfer | as measured |", "|---|---|---|---|---|"]
    for direction in clean:
        for label, fig in (("measured here", clean[direction]), ("AIConfigurator vLLM", aic_t[direction])):
            t, u = fig["transfer"], fig["unscaled"]
            lines.append("| %s | %s | %d | %.2f%% / %.2f%% / %.1f%% | %.2f%% / %.2f%% / %.1f%% |" % (
                direction, label, t["n"], t["p50"], t["p95"], t["max"], u["p50"], u["p95"], u["max"]))
    return lines, {"heldout_ape_pct": h_grid, "table": "geometric mean of sweep_a and sweep_b",
                   "holdout": "every other interior n value, then every other interior k value (all m)",
                   "transfer_ape_pct": {d: clean[d]["transfer"] for d in clean}}


def check(tool, margin_p50, margin_p95):
    """Exits non-zero if the grid's held-out error, or the datasheet transfer between it and the H100 grid, grew
    past the figures recorded in VALIDATION (ctest)."""
    mt.check(tool, margin_p50, margin_p95, VALIDATION, table, GPU)
    rec = json.load(open(VALIDATION))["transfer_ape_pct"]
    got = transfer(tool, mt.table_b_c(), table())
    for direction, want in sorted(rec.items()):
        mt.require_within("datasheet transfer between the measured GEMM grids, %s" % direction,
                          got[direction]["transfer"], want, margin_p50, margin_p95)
    print("datasheet transfer between the measured GEMM grids within the recorded figures")


if __name__ == "__main__":
    print("\n".join(section(os.path.join(mt.ROOT, "build", "native", "cli", "servesim_opcheck"))[0]))
