#!/usr/bin/env python3
"""Per-op validation of the fidelity plane on held-out shapes.

Usage (from the repository root, after building):

    python3 scripts/validate_ops.py [--build DIR]
    python3 scripts/validate_ops.py --check-transfer   # re-run the table-transfer check only and fail if a family's
                                                       # pooled p50 / p95 grew past the recorded figures (ctest)
    python3 scripts/validate_ops.py --check-ops        # the same for each table's figures, every family but MoE:
                                                       # held-out lines and shapes past the grid's edge (ctest)
    python3 scripts/validate_ops.py --check-moe        # the same for MoE (minutes; a ctest of its own)
    python3 scripts/validate_ops.py --check-measured   # the same for what servesim measured itself
                                                       # (profiles/measured/: the H100 and H200 GEMM grids'
                                                       # held-out error and the transfer between them, and the
                                                       # attention predictor on mixed-length batches, ctest)

For every GPU/backend with tables it runs DIR/cli/servesim_opcheck (the simulator's own C++ predictors: whole
grid lines are held out, the predictor is rebuilt from the rest, the held-out measurements are predicted) and
writes p50/p95/max absolute percentage error per op family into profiles/<gpu>/<backend>/validation.json ("ops",
and the compact "summary" the result JSON quotes) and the "ops" section of docs/validation.md. It also validates
the datasheet-derived path (GPUs without tables) on the GPUs that have them: every table of one GPU moved to
another's datasheet by the simulator's table transfer (`servesim_opcheck --transfer`, every ordered pair; the
same-architecture rule between H100 and H200, the other-architecture rule between A100 and either) against the
other GPU's measurements, and the efficiency curves of scripts/gen_tables.py (used only for families a reference
GPU lacks) leave-one-GPU-out: refitted on two of H100/H200/A100, predicting the third's measurements.

Standard library only.
"""

import argparse
import concurrent.futures
import datetime
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import gen_tables  # noqa: E402
import cross_gpu_floor  # noqa: E402
import heldout_floor  # noqa: E402
import measured_attention  # noqa: E402
import measured_l2  # noqa: E402
import measured_tables  # noqa: E402
import measured_gemm_h200  # noqa: E402

PROFILES = os.path.join(ROOT, "profiles")
DOC = os.path.join(ROOT, "docs", "validation.md")
FAMILY_ORDER = ["gemm", "attention_prefill", "attention_decode", "mla_prefill", "mla_decode", "moe",
                "custom_allreduce", "nccl", "p2p", "deepep_ll", "deepep_normal"]


def load_json(path, default=None):
    return json.load(open(path)) if os.path.exists(path) else default


def write_json(path, doc):
    from validate_e2e import write_atomic  # noqa: E402
    write_atomic(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def pct(v, q):
    return round(gen_tables.pct(v, q), 2)


def stats(errs):
    return {"n": len(errs), "p50": pct(errs, 0.5), "p95": pct(errs, 0.95), "max": pct(errs, 1.0)}


def log_interp(xs, ys, x):
    """LogCurve::eval of core/fidelity/interpolation.cc: log-log between points, clamped at the ends."""
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    i = 0
    while xs[i + 1] < x:
        i += 1
    w = (math.log(x) - math.log(xs[i])) / (math.log(xs[i + 1]) - math.log(xs[i]))
    return math.exp(math.log(ys[i]) + w * (math.log(ys[i + 1]) - math.log(ys[i])))


def datasheet_loo():
    """Leave-one-GPU-out error of roofline x efficiency curve, per family."""
    files = {}
    gpus = [g for g, _ in gen_tables.GPUS]
    for g in gpus:
        for rel in ("vllm/gemm.json", "vllm/context_attention.json", "vllm/generation_attention.json",
                    "vllm/moe.json", "nccl.json"):
            p = os.path.join(PROFILES, g, rel)
            if os.path.exists(p):
                files["%s/%s" % (g, rel)] = open(p).read()
    samples = gen_tables.ratio_samples(files, gpus)
    out = {}
    for held in gpus:
        others = [g for g in gpus if g != held]
        curves = gen_tables.fit_curves(samples, others)
        for fam, pts in samples.items():
            c = curves[fam]
            if not c["x"]:
                continue
            errs = [abs(log_interp(c["x"], c["y"], x) / r - 1) * 100 for g, x, r in pts if g == held]
            if errs:
                out.setdefault(fam, {})[held] = stats(errs)
    # and the raw roofline (no curve) for comparison, all GPUs
    raw = {}
    for fam, pts in samples.items():
        raw[fam] = stats([abs(1 / r - 1) * 100 for g, x, r in pts])
    return out, raw


# Ordered pairs of GPUs with tables for the transfer check (backend:from:to): both directions of every pair that
# shares a backend's tables.
TRANSFER_PAIRS = ["vllm:H100-SXM:H200-SXM", "vllm:H200-SXM:H100-SXM", "trtllm:H100-SXM:H200-SXM",
                  "trtllm:H200-SXM:H100-SXM", "vllm:H100-SXM:A100-80G", "vllm:A100-80G:H100-SXM",
                  "vllm:H200-SXM:A100-80G", "vllm:A100-80G:H200-SXM"]
TRANSFER_FAMILIES = ["gemm", "attention_prefill", "attention_decode", "attention_prefill_window",
                     "attention_decode_window", "mla_prefill", "mla_decode", "moe", "custom_allreduce", "nccl"]


def transfer_lines(rep):
    """The transfer section of docs/validation.md from `servesim_opcheck --transfer`'s report."""
    lines = ["", "### Datasheet-derived path (GPUs without tables): measured tables moved to another datasheet", "",
             "A GPU without tables is priced from the nearest GPU with tables, every cell re-priced by the two "
             "datasheets' rooflines at its shape (core/fidelity/table_transfer.h): for the same compute capability the "
             "roofline part of the measurement is replaced and the rest kept (t - roof + roof'), for another "
             "architecture the whole time scales (t x roof' / roof); collectives scale with the link bandwidth. "
             "Checked here on the GPUs that have tables: each GPU's tables moved to another GPU's datasheet, against "
             "that GPU's own measurements wherever both measured the same shape (`servesim_opcheck --transfer`). "
             "`as measured` uses the other GPU's measurements unchanged. Pooled per rule (p50 / p95 absolute "
             "percentage error):", "",
             "| family | same architecture (H100 <-> H200, vLLM + TRT-LLM): transfer | as measured | "
             "other architecture (A100 <-> H100, H200; vLLM): transfer | as measured |", "|---|---|---|---|---|"]
    pooled = rep["pooled"]
    for fam in TRANSFER_FAMILIES:
        row = [fam]
        for rule in ("same architecture", "other architecture"):
            v = pooled.get(rule, {}).get(fam)
            row += ["%.1f%% / %.1f%% (n %d)" % (v["transfer"]["p50"], v["transfer"]["p95"], v["transfer"]["n"]),
                    "%.1f%% / %.1f%%" % (v["unscaled"]["p50"], v["unscaled"]["p95"])] if v else ["-", "-"]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Per pair (transfer p50 / p95):", ""]
    for pr in rep["pairs"]:
        lines.append("- %s -> %s (%s, %s): " % (pr["from"], pr["to"], pr["backend"], pr["rule"]) + ", ".join(
            "%s %.1f%% / %.1f%%" % (f, pr["families"][f]["transfer"]["p50"], pr["families"][f]["transfer"]["p95"])
            for f in TRANSFER_FAMILIES if f in pr["families"]))
    return lines


def run_transfer(tool):
    """`servesim_opcheck --transfer` over TRANSFER_PAIRS: {"pairs": [...], "pooled": {rule: {family: ...}}}."""
    p = subprocess.run([tool, "--transfer", PROFILES] + TRANSFER_PAIRS, capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


# --check-transfer: how far (percentage points) a pooled p50 / p95 may grow past the recorded one.
CHECK_MARGIN_P50, CHECK_MARGIN_P95 = 0.5, 1.0


def check_transfer(tool):
    got = run_transfer(tool)["pooled"]
    rec = load_json(os.path.join(PROFILES, "datasheet", "validation.json"), {}).get("summary", {}).get(
        "transfer_ape_pct", {})
    if not rec:
        sys.exit("no recorded transfer figures in profiles/datasheet/validation.json (run scripts/validate_ops.py)")
    bad = []
    for rule, fams in rec.items():
        for fam, r in fams.items():
            g = got.get(rule, {}).get(fam, {}).get("transfer")
            if g is None or g["n"] < r["n"]:
                bad.append("%s %s: %s of %d cells compared" % (rule, fam, g["n"] if g else 0, r["n"]))
            elif g["p50"] > r["p50"] + CHECK_MARGIN_P50 or g["p95"] > r["p95"] + CHECK_MARGIN_P95:
                bad.append("%s %s: p50 / p95 %.2f / %.2f%% against recorded %.2f / %.2f%%" % (
                    rule, fam, g["p50"], g["p95"], r["p50"], r["p95"]))
    if bad:
        sys.exit("table transfer error regressed: " + "; ".join(bad))
    print("table transfer within the recorded figures: %d families" % sum(len(f) for f in rec.values()))


# --check-ops: every family whose servesim_opcheck run takes seconds; --check-moe: MoE, whose runs take minutes
# (a separate ctest, so that the two run side by side).
CHECK_OPS_FAMILIES = ("gemm", "attention_prefill", "attention_decode", "mla_prefill", "mla_decode",
                      "custom_allreduce", "nccl", "p2p", "deepep_ll", "deepep_normal")
CHECK_MOE_FAMILIES = ("moe",)


def check_ops(tool, families):
    """--check-ops / --check-moe: every GPU/backend's figures of `families`, on held-out lines and past the grid's
    edge, within the check margins of those recorded in its validation.json. The opcheck runs go side by side, as
    many as the machine has cores; the checks are made in a fixed order."""
    runs = []
    for gpu, _ in gen_tables.GPUS:
        for backend in ("vllm", "trtllm", "sglang"):
            rec_fams = load_json(os.path.join(PROFILES, gpu, backend, "validation.json"), {}).get("ops", {}).get(
                "families", {})
            runs += [(gpu, backend, fam, rec_fams[fam]) for fam in families if fam in rec_fams]

    def opcheck(gpu, backend, fam):
        p = subprocess.run([tool, PROFILES, gpu, backend, "--family", fam], capture_output=True, text=True,
                           check=True)
        return json.loads(p.stdout)["families"][fam]

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        jobs = [pool.submit(opcheck, gpu, backend, fam) for gpu, backend, fam, _ in runs]
        n = 0
        for (gpu, backend, fam, rec), job in zip(runs, jobs):
            got = job.result()
            # The held-out lines' figure is the family's "all"; past the edge, each experiment's own "all".
            for key in (k for k in ("all", "beyond_edge", "beyond_edge_two") if k in rec):
                stats = (lambda d: d["all"]) if key == "all" else (lambda d: d[key]["all"])  # noqa: E731
                measured_tables.require_within("%s/%s %s %s" % (gpu, backend, fam, key), stats(got), stats(rec),
                                               CHECK_MARGIN_P50, CHECK_MARGIN_P95)
                n += 1
    print("%s errors (held-out lines, past the edge) within the recorded figures: %d checks over %d runs" % (
        ", ".join(families), n, len(runs)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "native"))
    ap.add_argument("--check-transfer", action="store_true")
    ap.add_argument("--check-ops", action="store_true",
                    help="fail if the errors recorded in each validation.json (held-out lines, past the edge) grew, "
                         "every family but MoE")
    ap.add_argument("--check-moe", action="store_true", help="the same for MoE (minutes)")
    ap.add_argument("--check-measured", action="store_true",
                    help="fail if the errors recorded for profiles/measured/'s GEMM and attention data grew")
    args = ap.parse_args()
    tool = os.path.join(args.build, "cli", "servesim_opcheck")
    if not os.path.exists(tool):
        sys.exit("not built: %s" % tool)
    if args.check_transfer:
        return check_transfer(tool)
    if args.check_ops or args.check_moe:
        return check_ops(tool, CHECK_OPS_FAMILIES if args.check_ops else CHECK_MOE_FAMILIES)
    if args.check_measured:
        measured_tables.check(tool, CHECK_MARGIN_P50, CHECK_MARGIN_P95)
        measured_gemm_h200.check(tool, CHECK_MARGIN_P50, CHECK_MARGIN_P95)
        for gpu in measured_attention.GPUS:
            measured_attention.check(tool, gpu, CHECK_MARGIN_P50, CHECK_MARGIN_P95)
        return
    today = datetime.date.today().isoformat()
    results = []
    cell_errors = {}  # (gpu, backend) -> per-cell held-out errors, for the two GPUs cross_gpu_floor compares
    runs = [(gpu, backend) for gpu, _ in gen_tables.GPUS for backend in ("vllm", "trtllm", "sglang")
            if os.path.isdir(os.path.join(PROFILES, gpu, backend))]
    # Every GPU/backend's opcheck and the transfer check run at once, as many as the machine has cores; their
    # reports are read back in the order above, so the output does not depend on which finishes first.
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        def opcheck(gpu, backend):
            cells = os.path.join(tmp, "%s_%s.csv" % (gpu, backend))
            keep = gpu in cross_gpu_floor.GPUS  # per-cell errors only where the two GPUs are compared
            p = subprocess.run([tool, PROFILES, gpu, backend] + (["--cells", cells] if keep else []),
                               capture_output=True, text=True, check=True)
            return json.loads(p.stdout), (cross_gpu_floor.cell_errors(cells) if keep else None)
        jobs = [pool.submit(opcheck, gpu, backend) for gpu, backend in runs]
        transfer_job = pool.submit(run_transfer, tool)
        for (gpu, backend), job in zip(runs, jobs):
            print("checking %s/%s ..." % (gpu, backend), file=sys.stderr)
            rep, cells = job.result()
            if cells is not None:
                cell_errors[(gpu, backend)] = cells
            results.append(rep)
            path = os.path.join(PROFILES, gpu, backend, "validation.json")
            doc = load_json(path, {})
            rep["floor"] = {f: v for f, v in heldout_floor.floors(PROFILES, gpu, backend).items()
                            if f in rep["families"]}
            doc["ops"] = {"command": "python3 scripts/validate_ops.py", "date": today, "families": rep["families"],
                          "between_neighbour_floor": rep["floor"]}
            summ = doc.get("summary", {})
            summ["report"] = "docs/validation.md"
            summ["ops_heldout_ape_pct"] = {f: {k: rep["families"][f]["all"][k] for k in ("n", "p50", "p95")}
                                           for f in FAMILY_ORDER if f in rep["families"]}
            # Shapes past a table's edge (a large vocabulary's lm_head at TP 1-2, batches and contexts beyond the
            # grid, MoE steps beyond its token counts): results that read such shapes (flagged extrapolated lookups)
            # quote this error with the families'.
            edges = {f: {k: rep["families"][f]["beyond_edge"]["all"][k] for k in ("n", "p50", "p95")}
                     for f in FAMILY_ORDER if "beyond_edge" in rep["families"].get(f, {})}
            if edges:
                summ["beyond_edge_ape_pct"] = edges
            else:
                summ.pop("beyond_edge_ape_pct", None)
            # MoE routing: a measured power-law exponent prices from its own curve, other routing through the
            # slowest-rank model from the balanced curve; the error of each (results quote it with the family's).
            skew = rep["families"].get("moe", {}).get("skew")
            if skew and skew["slowest_rank_model"]["n"]:
                pick = lambda st: {k: st[k] for k in ("n", "p50", "p95")}
                summ["moe_routing_ape_pct"] = {
                    "power_law_measured_exponent_own_curve": pick(skew["measured_exponent_own_curve"]["stats"]),
                    "other_routing_slowest_rank_model": pick(skew["slowest_rank_model"])}
            else:
                summ.pop("moe_routing_ape_pct", None)
            doc["summary"] = summ
            write_json(path, doc)
        loo, raw = datasheet_loo()
        print("checking the table transfer ...", file=sys.stderr)
        transfer = transfer_job.result()
    # The same file's e2e summary (scripts/validate_e2e.py --datasheet writes it) is kept.
    ds_path = os.path.join(PROFILES, "datasheet", "validation.json")
    ds_summary = load_json(ds_path, {}).get("summary", {})
    ds_summary.update({"report": "docs/validation.md",
                       "leave_one_gpu_out_ape_pct": {f: v for f, v in sorted(loo.items())},
                       "transfer_ape_pct": {rule: {f: {k: v["transfer"][k] for k in ("n", "p50", "p95")}
                                                   for f, v in fams.items()}
                                            for rule, fams in transfer["pooled"].items()}})
    write_json(ds_path, {"summary": ds_summary, "transfer_pairs": transfer["pairs"],
                         "command": "python3 scripts/validate_ops.py", "date": today})

    lines = ["## Per-op held-out validation", "",
             "Command: `python3 scripts/validate_ops.py` (%s). Tool: `servesim_opcheck`, the simulator's own C++ "
             "predictors. Whole grid lines are held out (shapes, not random rows): GEMM every other interior n, then "
             "every other interior k (all m); attention every third interior length, then every third interior "
             "batch size (MLA: the DeepSeek-V3 module tables, predicted as the simulator does: module minus "
             "GEMM-table projections capped by the modules of both phases, through the work model, plus the capped "
             "projections; A100: its per-kernel MLA tables through the work model, validated but not used for pricing, see the A100 MLA note); MoE every third interior "
             "token count; collectives every other message size; SGLang DeepEP (H100-SXM/sglang: the tables SGLang roles with "
             "moe_a2a_backend deepep price their EP dispatch/combine with) every other interior token count per rank. Absolute "
             "percentage error of the held-out measurements; goal p50 <= 3%%, p95 <= 10%%. `over 10%%`: held-out "
             "cells more than 10%% off, against the most the p95 goal allows (n - ceil(0.95 n), nearest rank). Every "
             "held-out cell of a row, measured and predicted: `servesim_opcheck profiles GPU BACKEND --cells FILE` "
             "(CSV; `--family NAME` for one family alone). ctest fails when a row's p50 grows by more than %.1f or "
             "its p95 by more than %.1f points, past the edge too (`validate_ops.py --check-ops`, every family but "
             "MoE; `--check-moe`)." % (today, CHECK_MARGIN_P50, CHECK_MARGIN_P95),
             ""]
    lines += ["| GPU / backend | family | n | p50 | p95 | max | over 10% / allowed |", "|---|---|---|---|---|---|---|"]
    for rep in results:
        for f in FAMILY_ORDER:
            if f in rep["families"]:
                a = rep["families"][f]["all"]
                failed = " (%d failed: no positive time, counted as 100%% off)" % a["failed"] if a.get("failed") else ""
                allowed = a["n"] - math.ceil(0.95 * a["n"])  # as ApeStats ranks the p95
                lines.append("| %s/%s | %s | %d%s | %.2f%% | %.2f%% | %.1f%% | %d / %d |" % (
                    rep["gpu"], rep["backend"], f, a["n"], failed, a["p50"], a["p95"], a["max"], a["over_10pct"],
                    allowed))
    lines += ["", "SGLang DeepEP all-to-all by phase (held-out token counts per rank, the simulator's token "
                  "interpolation: linear where latency rises, log-log where it dips; `log-log` is plain log-log "
                  "interpolation on the same split; `choice split` holds out the complementary token counts, where "
                  "the simulator's interpolation was chosen over log-log), and the hidden-size interpolation (each "
                  "interior hidden size of a (topk, experts) configuration held out whole, predicted linearly in "
                  "hidden from its neighbours at every token count). Normal mode at SGLang's default 20 SMs; "
                  "measured on one 8-GPU node (EP 8).", "",
              "| GPU / backend | family | dispatch p50/p95/max | combine p50/p95/max | log-log p50/p95 | "
              "choice split: simulator / log-log p50/p95 | hidden held out n, p50/p95/max |",
              "|---|---|---|---|---|---|---|"]
    for rep in results:
        for f in ("deepep_ll", "deepep_normal"):
            d = rep["families"].get(f)
            if not d:
                continue
            cell = lambda s: "%.2f%% / %.2f%% / %.1f%%" % (s["p50"], s["p95"], s["max"])  # noqa: E731
            hh = d["hidden_held_out"]["all"]
            ll, cs = d["tokens_log_log"], d["choice_split"]
            lines.append("| %s/%s | %s | %s | %s | %.2f%% / %.2f%% | %.2f%% / %.2f%% vs %.2f%% / %.2f%% | %d, %s |" % (
                rep["gpu"], rep["backend"], f, cell(d["dispatch"]), cell(d["combine"]), ll["p50"], ll["p95"],
                cs["linear_where_rising"]["p50"], cs["linear_where_rising"]["p95"], cs["log_log"]["p50"],
                cs["log_log"]["p95"], hh["n"], cell(hh)))
    lines += ["", "GEMM by dtype (p50 / p95), and pooled over the grids that price roles (all but vLLM's fp8_block "
                  "grid, which is validated but prices nothing: roles on vLLM's tables price block-FP8 GEMMs on its "
                  "per-tensor fp8 grid, bullet \"vLLM's fp8_block GEMM grid is validated but does not price\"):", ""]
    for rep in results:
        if "gemm" not in rep["families"]:
            continue
        g = rep["families"].get("gemm", {}).get("by_dtype", {})
        gp = rep["families"]["gemm"].get("grids_that_price")
        lines.append("- %s/%s: " % (rep["gpu"], rep["backend"]) +
                     ", ".join("%s %.2f%% / %.2f%%" % (k, v["p50"], v["p95"]) for k, v in sorted(g.items())) +
                     ("; the grids that price roles %.2f%% / %.2f%%" % (gp["p50"], gp["p95"]) if gp else ""))
    lines += ["", "GEMM token counts held out (the axis a step's price is read along: every third interior token "
                  "count of every measured (n, k) line, a step pair m, m + 1 with m >= 32 held out whole), read as "
                  "the simulator reads them: each grid in the reading chosen on the counts left (core/fidelity/"
                  "gemm_model.h, TokenReading; `chosen` per dtype; `runtime` the choice on the whole grid, which "
                  "prices roles), all dtypes and by dtype (p50 / p95); then every grid read one way:", ""]
    for rep in results:
        t = rep["families"].get("gemm", {}).get("tokens_held_out")
        if not t:
            continue
        lines.append("- %s/%s: all %.2f%% / %.2f%% (n %d); " % (rep["gpu"], rep["backend"], t["all"]["p50"],
                                                               t["all"]["p95"], t["all"]["n"]) +
                     ", ".join("%s %.2f%% / %.2f%% (chosen %s, runtime %s)" % (
                         k, v["p50"], v["p95"], t["chosen"][k], t["chosen_on_whole_grid"][k])
                               for k, v in sorted(t["by_dtype"].items())) +
                     "; one way: " + ", ".join("%s %.2f%% / %.2f%%" % (k, v["p50"], v["p95"])
                                               for k, v in t["every_grid_read_one_way"].items()))
    lines += ["", "GEMM shapes past the grid's edge (flagged extrapolation, as a large vocabulary's lm_head at TP 1-2 "
                  "reads them): the last n line, the last k line and the largest token count of each grid held out "
                  "one at a time and read from the rest as the simulator reads a shape past the measurements "
                  "(core/fidelity/gemm_model.h, past_edge_us: affine through the edge and the line at most half of "
                  "it, between flat and proportional); then the last two of each (read from the third last: 3-4x past "
                  "the edge in n and k, 2-4x in m). p50 / p95 over all dtypes:", "",
              "| GPU / backend | last line: all | n | k | m | last two lines: all | n | k | m |",
              "|---|---|---|---|---|---|---|---|---|"]
    def edge_cells(e):
        return " | ".join("%.2f%% / %.2f%%" % (e[a]["p50"], e[a]["p95"]) for a in ("all", "n", "k", "m"))
    for rep in results:
        g = rep["families"].get("gemm", {})
        if "beyond_edge" in g:
            lines.append("| %s/%s | %s | %s |" % (rep["gpu"], rep["backend"], edge_cells(g["beyond_edge"]),
                                                  edge_cells(g["beyond_edge_two"])))
    lines += ["", "Attention and MoE past the grid's edge (flagged extrapolation): each grid's largest batch line and "
                  "its longest length line, and each MoE curve's largest token count, held out one at a time and read "
                  "from the rest as the simulator reads a step past the measurements (attention: the edge cell "
                  "carried by the work model; MoE: past_edge_us, as GEMM). p50 / p95:", "",
              "| GPU / backend | prefill: batches | prefill: lengths | decode: batches | decode: lengths | MoE tokens |",
              "|---|---|---|---|---|---|"]
    def edge_cell(fam, f, axis):
        e = fam.get(f, {}).get("beyond_edge")
        return "%.2f%% / %.2f%% (n %d)" % (e[axis]["p50"], e[axis]["p95"], e[axis]["n"]) if e else "-"
    for rep in results:
        fam = rep["families"]
        if "beyond_edge" in fam.get("attention_decode", {}):
            lines.append("| %s/%s | %s |" % (rep["gpu"], rep["backend"], " | ".join(
                edge_cell(fam, f, axis) for f, axis in (("attention_prefill", "batches"), ("attention_prefill", "lengths"),
                                                        ("attention_decode", "batches"), ("attention_decode", "lengths"),
                                                        ("moe", "all")))))
    lines += ["", "### Mixed-batch attention: work model vs the total-tokens proxy", "",
              "Held-out lengths (every third interior isl / kv_len). `simulator` is what the simulator runs: per "
              "head configuration of a decode grid, the uniform-equivalent latency is read as model x residual, raw "
              "interpolation (log-log, or affine in b and s where latency rises) or the geometric mean of model x "
              "residual and log-log raw, whichever predicts the training grid's own held-out lines best (every other "
              "interior line of what is left; `chosen` counts the head configurations per choice); a prefill grid "
              "reads model x residual, the residual along equal tokens (every prefill configuration counts as "
              "product); times the work "
              "model's ratio for the batch's composition. `work_model_x_residual` is the per-request FlashAttention "
              "tile/split model times the interpolated measured/model residual (the fixed choice before); "
              "`work_model_only` is the calibrated model alone; `raw_table_interpolation` interpolates latency "
              "directly; `total_tokens_proxy` predicts from the batch's total tokens only (a 1-D fit on the same "
              "training cells), the Vidur-style proxy Frontier criticises.", "",
              "| GPU / backend | family | simulator p50/p95 | chosen (product/raw/raw affine/blend) | model x residual | "
              "model only | raw interpolation | total-tokens proxy |", "|---|---|---|---|---|---|---|---|"]
    for rep in results:
        for f in ("attention_prefill", "attention_decode"):
            c = rep["families"].get(f, {}).get("compare_lengths_held_out")
            if not c:
                continue
            cell = lambda k: "%.1f%% / %.1f%%" % (c[k]["p50"], c[k]["p95"])  # noqa: E731
            ch = rep["families"][f]["interp_chosen_lengths_held_out"]
            lines.append("| %s/%s | %s | %s | %d / %d / %d / %d | %s | %s | %s | %s |" % (
                rep["gpu"], rep["backend"], f, cell("simulator"), ch["model_x_residual"], ch["raw"],
                ch["raw_affine"], ch["blend"],
                cell("work_model_x_residual"), cell("work_model_only"), cell("raw_table_interpolation"),
                cell("total_tokens_proxy")))
    lines += ["", "### MoE token interpolation: three readings, one chosen per balanced curve", "",
              "Held-out token counts (every third interior count of every measured curve) read one way for every "
              "curve, against the simulator, which picks the reading per balanced curve by cross-validation on the "
              "kept counts (every other interior one held out again; smallest mean squared log error) and reads "
              "power-law curves (each point a mean over draws of AIConfigurator's generator, five in its vLLM "
              "collector; A100 has only these) log-log, except between two measured counts either side of the "
              "generator's switch (tokens x topk = experts), which the simulator and the log-log and model columns "
              "read through the model's draws at the count itself (MoePredictor). `model x residual` is the slowest-rank model of the curve's routing (AIConfigurator's "
              "balanced assignment, or the mean of 32 power-law draws; row blocks of 16-128 rows per expert) times "
              "the interpolated measured / model ratio. `chosen`: balanced curves per reading "
              "(log-log / affine / model).", "",
              "| GPU / backend | simulator p50 / p95 | log-log | affine | model x residual | balanced curves p95: "
              "simulator, log-log / affine / model | chosen |",
              "|---|---|---|---|---|---|---|"]
    for rep in results:
        moe = rep["families"].get("moe")
        if not moe or "readings" not in moe:
            continue
        rd = moe["readings"]
        cell = lambda x: "%.2f%% / %.2f%%" % (x["p50"], x["p95"])  # noqa: E731
        bc, cb = rd["balanced_curves"], rd["chosen_balanced"]
        lines.append("| %s/%s | %s | %s | %s | %s | %s | %d / %d / %d |" % (
            rep["gpu"], rep["backend"], cell(moe["all"]), cell(rd["log_log"]), cell(rd["affine"]),
            cell(rd["model_x_residual"]),
            ("%.2f%%, " % bc["simulator"]["p95"]) + " / ".join("%.2f%%" % bc[k]["p95"]
                                                               for k in ("log_log", "affine", "model_x_residual"))
            if bc["log_log"]["n"] else "-",
            cb["log_log"], cb["affine"], cb["model_x_residual"]))
    lines += ["", "### MoE routing skew: slowest-rank model", "",
              "Power-law measurements (AIConfigurator's generator, alpha 1.01 and 1.2, EP ranks 1-256) predicted "
              "from the balanced curve times the slowest-rank model of sampled power-law assignments (mean of 16 "
              "draws), against using the balanced curve as is: how routing the tables did not measure (uniform, "
              "other exponents) is priced. A scenario's power-law routing with a measured exponent prices from that "
              "exponent's own curve instead; its error is that curve's held-out token counts (last column, the "
              "power-law part of the moe family row).", "",
              "| GPU / backend | n | slowest-rank model p50 / p95 | balanced curve only p50 / p95 | "
              "measured exponent, own curve: n, p50 / p95 |",
              "|---|---|---|---|---|"]
    for rep in results:
        sk = rep["families"].get("moe", {}).get("skew")
        if sk and sk["slowest_rank_model"]["n"]:
            a, b = sk["slowest_rank_model"], sk["balanced_curve_only"]
            c = sk["measured_exponent_own_curve"]["stats"]
            lines.append("| %s/%s | %d | %.1f%% / %.1f%% | %.1f%% / %.1f%% | %d, %.1f%% / %.1f%% |" % (
                rep["gpu"], rep["backend"], a["n"], a["p50"], a["p95"], b["p50"], b["p95"], c["n"], c["p50"],
                c["p95"]))
    lines += transfer_lines(transfer)
    lines += ["", "### Datasheet efficiency curves, leave one GPU out", "",
              "Used only for what the reference GPU's tables lack (A100 as reference: MLA, sliding-window grids), and "
              "for every family when no GPU has tables. Roofline x efficiency curve refitted on the two other GPUs, "
              "predicting every measurement of the "
              "held-out GPU (vLLM tables; GEMM shapes with n, k >= 1024; attention bf16 head_dim 128). "
              "`roofline only` is the uncorrected datasheet roofline on all three GPUs.", "",
              "| family | held-out A100-80G p50/p95 | held-out H100-SXM | held-out H200-SXM | roofline only |",
              "|---|---|---|---|---|"]
    for fam in sorted(loo):
        row = [fam]
        for g in ("A100-80G", "H100-SXM", "H200-SXM"):
            s = loo[fam].get(g)
            row.append("%.1f%% / %.1f%%" % (s["p50"], s["p95"]) if s else "-")
        row.append("%.1f%% / %.1f%%" % (raw[fam]["p50"], raw[fam]["p95"]))
        lines.append("| " + " | ".join(row) + " |")
    # noise floor of the measurements themselves: neighbouring m <= 16 GEMMs (flat in m)
    lines += ["", "Measurement noise floor (GEMM, m <= 16 where latency is flat in m: each point against the mean "
                  "of its two neighbours):", ""]
    for gpu, _ in gen_tables.GPUS:
        t = load_json(os.path.join(PROFILES, gpu, "vllm", "gemm.json"))
        for tab in t["tables"]:
            N, K, M = tab["axes"]
            e = []
            for a in range(len(N)):
                for b in range(len(K)):
                    row = tab["values"][(a * len(K) + b) * len(M):(a * len(K) + b + 1) * len(M)]
                    for j in range(1, len(M) - 1):
                        if M[j + 1] > 17 or None in (row[j - 1], row[j], row[j + 1]):
                            continue
                        e.append(abs(row[j] / ((row[j - 1] + row[j + 1]) / 2) - 1) * 100)
            s = stats(e)
            lines.append("- %s %s: p50 %.2f%%, p95 %.2f%% (n %d)" % (gpu, tab["key"][0], s["p50"], s["p95"], s["n"]))
    lines += heldout_floor.section(results)
    lines += cross_gpu_floor.section(PROFILES, results)[0]
    lines += cross_gpu_floor.repeat_section(cell_errors)
    mlines, msummary = measured_tables.gemm_section(tool)
    lines += mlines
    write_json(measured_tables.VALIDATION, dict(msummary, command="python3 scripts/validate_ops.py", date=today))
    hlines, hsummary = measured_gemm_h200.section(tool)
    lines += hlines
    write_json(measured_gemm_h200.VALIDATION, dict(hsummary, command="python3 scripts/validate_ops.py", date=today))
    for gpu in measured_attention.GPUS:
        alines, asummary = measured_attention.section(tool, gpu)
        lines += alines
        write_json(measured_attention.validation_path(gpu),
                   dict(asummary, command="python3 scripts/validate_ops.py", date=today))
    lines += measured_l2.section()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from validate_e2e import replace_section  # noqa: E402
    replace_section(DOC, "ops", "\n".join(lines))
    import fidelity_summary  # noqa: E402
    fidelity_summary.write()  # README.md and the report quote the figures just recorded
    print("\n".join(lines))


if __name__ == "__main__":
    main()
