#!/usr/bin/env python3
"""End-to-end validation: replay the measured runs of silicon_h100.csv through the simulator.

Usage (from the repository root, after building):

    python3 scripts/validate_e2e.py                 # replay, write docs/validation.md (e2e section) and
                                                    # profiles/H100-SXM/<backend>/validation.json ("e2e")
    python3 scripts/validate_e2e.py --calibrate     # also fit the host constants with a held-out split by model
    python3 scripts/validate_e2e.py --datasheet     # the vLLM/SGLang agg rows priced through the datasheet path
                                                    # (another GPU's tables moved to H100's datasheet)
    python3 scripts/validate_e2e.py --check         # replay every expressible row and fail if a group's medians
                                                    # moved above its recorded figures by more than the margin
                                                    # (used by ctest)
Options: --cli PATH (default build/native/servesim), --data DIR (default ../shared/data), --jobs N (2),
--backend vllm|trtllm|sglang|all (default all; one backend updates its validation.json groups but not
docs/validation.md, which holds all of them), --limit N (first N rows per group, quick look; writes nothing), --model SUBSTR
(only rows whose model_path contains SUBSTR, case-insensitive; prints per-model errors and the worst rows and writes
neither docs/validation.md nor validation.json).

Exploring the protocol (each prints like --model and writes nothing):
    --rows                          print every replayed row (layout, clients, measured -> simulated TTFT/TPOT)
                                    instead of the worst ones
    --outputs exact|token|desync    replay every row with that output-length protocol instead of its own
    --set PATH=JSON                 override one scenario field in every replayed row, e.g.
                                    --set engine.max_num_batched_tokens=4096 --set 'engine.moe_routing="power_law"'
                                    (repeatable; PATH is dot-separated, the value is JSON)

The replay protocol (how a row becomes a scenario, and which rows cannot) is e2e_protocol.py's docstring.

Standard library only; deterministic (the simulator is).
"""

import argparse
import csv
import datetime
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import fidelity_summary
from e2e_protocol import (DEFAULT_DATA, DRIFTS, ROOT, SILICON, TRTLLM_HARNESS_STREAM_US, classify, decode_kv_bound,
                          duplicate_rows, num, kv_exceeds_layout, layout_unknown, one_waiting_runs, run_set, scenario)

# Host constants fitted by --calibrate (names are engine.host keys). Kept few and physical.
PARAMS = ["iteration_us", "per_request_us"]
# Gate for --check: the recorded medians, of each gated group and of each model in it, may not grow by more than
# this (percentage points).
CHECK_MARGIN_PP = 1.0
# Groups --check replays and gates against their recorded figures.
CHECK_GROUPS = ("vllm agg", "vllm disagg", "trtllm agg", "trtllm disagg", "sglang agg", "sglang disagg")
# Held-out splits for backends whose agg rows cover one model only (a split by model is impossible): a physical
# axis the host constants should not depend on. (column, held-out values)
SPLITS = {"sglang": [("tp_size", ("8",)), ("isl", ("4096",))]}

DOC = os.path.join(ROOT, "docs", "validation.md")


def parse_set(text):
    """--set PATH=JSON -> (path list, value); exits with the field named when malformed."""
    path, eq, value = text.partition("=")
    if not eq or not path or any(not p for p in path.split(".")):
        sys.exit("--set %r: expected PATH=JSON, e.g. engine.max_num_batched_tokens=4096" % text)
    try:
        return path.split("."), json.loads(value)
    except ValueError as e:
        sys.exit("--set %s: the value is not JSON (%s); quote strings, e.g. '%s=\"power_law\"'" % (path, e, path))


def apply_sets(sc, sets):
    for path, value in sets:
        node = sc
        for key in path[:-1]:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        node[path[-1]] = value


def simulate(cli, rows, host_by_backend, jobs, tmp, gpu="H100-SXM", profiles=None, drift=None, sets=()):
    """(mean TTFT ms, mean TPOT ms, supplemented, decode KV bound, host) per row id; None where the run failed.
    `supplemented`: the GPUs a role took grids from besides its tables' own (fidelity.supplements), "" if none;
    `decode KV bound`: decode_kv_bound, None for agg rows; `host`: the first role's host constants as the result
    reports them (fidelity.host), None if it reports none. `gpu`: the hardware (a name or an inline object);
    `profiles`: another profiles directory for the CLI; `drift`, `sets`: --outputs and --set."""
    def one(item):
        r, parts = item
        sc = scenario(r, parts, host_by_backend.get(r["backend"]), gpu, drift)
        apply_sets(sc, sets)
        base = os.path.join(tmp, r["id"].replace("/", "_"))
        with open(base + ".json", "w") as f:
            json.dump(sc, f)
        p = subprocess.run([cli, "run", base + ".json", "--out", base + ".result.json", "--quiet"] +
                           (["--profiles", profiles] if profiles else []), capture_output=True, text=True)
        if p.returncode != 0:
            return r["id"], None, p.stderr.strip().splitlines()[-1:] or ["failed"]
        res = json.load(open(base + ".result.json"))
        s = res["summary"]
        if s["completed"] == 0:
            return r["id"], None, ["no request completed"]
        # The GPUs a role took grids its tables' GPU lacks from (fidelity.supplements), "" if none.
        supplemented = ", ".join(sorted({x["from"] for role in res["deployment"]["roles"]
                                         for x in role.get("fidelity", {}).get("supplements", [])}))
        host = res["deployment"]["roles"][0].get("fidelity", {}).get("host")
        return r["id"], (s["mean_ttft_ms"], s["mean_tpot_ms"], supplemented, decode_kv_bound(res), host), None
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        out = {}
        for rid, val, err in ex.map(one, rows):
            out[rid] = val if val else None
            if err:
                print("  %s: %s" % (rid, err[0]), file=sys.stderr)
        return out


def errors(rows, sims):
    """Per row: (row, ttft_err, tpot_err) as signed relative errors."""
    out = []
    for r, _ in rows:
        v = sims.get(r["id"])
        if not v:
            continue
        out.append((r, v[0] / float(r["silicon_ttft_ms"]) - 1.0, v[1] / float(r["silicon_tpot_ms"]) - 1.0))
    return out


def summary(errs):
    if not errs:
        return {"n": 0}
    at = sorted(abs(e[1]) * 100 for e in errs)
    ap = sorted(abs(e[2]) * 100 for e in errs)

    def p(v, q):
        i = max(0, min(len(v) - 1, int(math.ceil(q * len(v))) - 1))
        return round(v[i], 1)
    return {"n": len(errs),
            "ttft_median_abs_pct": round(statistics.median(at), 1), "ttft_p90_abs_pct": p(at, 0.9),
            "ttft_median_signed_pct": round(statistics.median(e[1] for e in errs) * 100, 1),
            "tpot_median_abs_pct": round(statistics.median(ap), 1), "tpot_p90_abs_pct": p(ap, 0.9),
            "tpot_median_signed_pct": round(statistics.median(e[2] for e in errs) * 100, 1),
            # TTFT the simulation lacks, in the row's measured TPOTs: a whole number of output tokens at every load
            # says the gap is tokens the client does not count, not prefill work (docs/validation.md)
            "ttft_gap_tpots_median": round(statistics.median(
                -e[1] * float(e[0]["silicon_ttft_ms"]) / float(e[0]["silicon_tpot_ms"]) for e in errs), 1)}


def fit(cli, rows, start, jobs, tmp, backend):
    """Gauss-Newton on the log errors of TPOT with finite-difference Jacobians; parameters kept >= 0."""
    theta = dict(start)
    steps = {"iteration_us": 200.0, "per_request_us": 5.0}

    def residuals(th):
        sims = simulate(cli, rows, {backend: th}, jobs, tmp)
        res = {}
        for r, et, ep in errors(rows, sims):
            # TPOT only: the host constants set the steady-state step time; TTFT is dominated by how the
            # clients' phases are spread (docs/validation.md), which no host constant represents.
            res[r["id"]] = (0.0, math.log(1 + ep))
        return res
    for it in range(4):
        base = residuals(theta)
        ids = sorted(base)
        jac = {}
        for k in PARAMS:
            th = dict(theta)
            th[k] = theta[k] + steps[k]
            rk = residuals(th)
            jac[k] = [((rk[i][0] - base[i][0]) / steps[k], (rk[i][1] - base[i][1]) / steps[k]) for i in ids
                      if i in rk]
        # Normal equations J^T J d = -J^T r (small, solved by Gaussian elimination)
        n = len(PARAMS)
        a = [[0.0] * (n + 1) for _ in range(n)]
        for row_i, i in enumerate(ids):
            for comp in (0, 1):
                g = [jac[k][row_i][comp] for k in PARAMS]
                for x in range(n):
                    a[x][n] -= g[x] * base[i][comp]
                    for y in range(n):
                        a[x][y] += g[x] * g[y]
        for x in range(n):
            a[x][x] += 1e-12 + 1e-3 * a[x][x]  # Levenberg damping
        for c in range(n):
            piv = max(range(c, n), key=lambda q: abs(a[q][c]))
            a[c], a[piv] = a[piv], a[c]
            for q in range(n):
                if q != c and a[c][c] != 0:
                    f = a[q][c] / a[c][c]
                    for w in range(c, n + 1):
                        a[q][w] -= f * a[c][w]
        d = {k: (a[x][n] / a[x][x] if a[x][x] else 0.0) for x, k in enumerate(PARAMS)}
        new = {k: max(0.0, theta[k] + d[k]) for k in PARAMS}
        old_loss = sum(v[0] ** 2 + v[1] ** 2 for v in base.values()) / max(1, len(base))
        print("  iteration %d: loss %.4f, step %s" % (it, old_loss, {k: round(v, 2) for k, v in d.items()}),
              file=sys.stderr)
        if all(abs(new[k] - theta[k]) < 0.02 * steps[k] for k in PARAMS):
            theta = new
            break
        theta = new
    return {k: round(v, 1) for k, v in theta.items()}


def md_table(title, rows_by_group):
    lines = ["| %s | rows | TTFT median abs err | TTFT p90 | TTFT median signed | TPOT median abs err | TPOT p90 | "
             "TPOT median signed | TTFT gap in TPOTs |" % title, "|---|---|---|---|---|---|---|---|---|"]
    for name, s in rows_by_group:
        if s.get("n", 0) == 0:
            continue
        lines.append("| %s | %d | %.1f%% | %.1f%% | %+.1f%% | %.1f%% | %.1f%% | %+.1f%% | %+.1f |" % (
            name, s["n"], s["ttft_median_abs_pct"], s["ttft_p90_abs_pct"], s["ttft_median_signed_pct"],
            s["tpot_median_abs_pct"], s["tpot_p90_abs_pct"], s["tpot_median_signed_pct"], s["ttft_gap_tpots_median"]))
    return lines


def replace_section(path, tag, body):
    text = open(path).read() if os.path.exists(path) else "# Validation\n"
    begin, end = "<!-- BEGIN %s -->" % tag, "<!-- END %s -->" % tag
    block = begin + "\n" + body.rstrip() + "\n" + end
    if begin in text and end in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    write_atomic(path, text)


def write_atomic(path, text):
    """Writes through a temporary file and a rename, so an interrupted run leaves the old report whole."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def update_validation_json(table_backend, group, full):
    """profiles/H100-SXM/<table backend>/validation.json: "e2e" (full) and the compact "summary"."""
    path = os.path.join(ROOT, "profiles", "H100-SXM", table_backend, "validation.json")
    doc = json.load(open(path)) if os.path.exists(path) else {}
    doc.setdefault("e2e", {})[group] = full
    summ = doc.setdefault("summary", {})
    summ["report"] = "docs/validation.md"
    s = full["summary"]
    summ.setdefault("e2e_median_abs_pct", {})[group] = {"rows": s["n"], "ttft": s["ttft_median_abs_pct"],
                                                        "tpot": s["tpot_median_abs_pct"]}
    write_atomic(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


# The datasheet path end to end (--datasheet): the rows priced as if H100 had no tables of its own, from another
# GPU's tables moved to H100's datasheet (hardware.gpu.tables_from), one source GPU per transfer rule.
DATASHEET_SOURCES = (("H200-SXM", "same architecture"), ("A100-80G", "other architecture"))
DATASHEET_GROUPS = ("vllm agg", "sglang agg")  # the groups priced from vLLM's tables, which all three GPUs have


def datasheet_e2e(args, expressible, tmp):
    """Replays DATASHEET_GROUPS with H100's own tables and with each DATASHEET_SOURCES GPU's tables moved to H100;
    writes the e2e_datasheet section of docs/validation.md and profiles/datasheet/validation.json."""
    rows = [x for x in expressible if "%s %s" % (x[0]["backend"], x[0]["mode"]) in DATASHEET_GROUPS]
    h100 = json.load(open(os.path.join(ROOT, "profiles", "gpus", "H100-SXM.json")))

    def profiles_listing(name, keep):
        """A copy of the bundled profiles whose index lists only the tables `keep` accepts."""
        path = os.path.join(tmp, name)
        shutil.copytree(os.path.join(ROOT, "profiles"), path)
        index = json.load(open(os.path.join(path, "index.json")))
        index["tables"] = [t for t in index["tables"] if keep(t)]
        json.dump(index, open(os.path.join(path, "index.json"), "w"))
        return path
    # The transfers see no H100 tables, so that grids the source GPU lacks (MiniMax's FP8, gpt-oss's MXFP4 experts and
    # 64-wide heads on A100) come from the other GPU, as for a GPU without tables, never from H100's own.
    without_h100 = profiles_listing("profiles_without_h100", lambda t: not t.startswith("H100-SXM/"))
    runs = [("H100-SXM (own tables)", None, "H100-SXM", None)]
    for src, rule in DATASHEET_SOURCES:
        g = dict(h100, name="H100-SXM from %s" % src, tables_from=src)
        runs.append(("H100-SXM from %s tables (%s)" % (src, rule), rule, g, without_h100))
    # The efficiency curves that price a GPU when no GPU has tables: the bundled profiles with an index listing none
    # (so nothing can be transferred) and an H100 under another name (so its own tables are not found).
    bare = profiles_listing("profiles_without_tables", lambda t: False)
    runs.append(("H100-SXM by the efficiency curves (fitted on A100, H100 and H200)", None,
                 dict(h100, name="H100-SXM by the curves"), bare))
    table = []
    by_rule = {}
    for label, rule, gpu, profiles in runs:
        print("replaying %d rows: %s" % (len(rows), label), file=sys.stderr)
        sims = simulate(args.cli, rows, {}, args.jobs, tmp, gpu, profiles)
        for group in DATASHEET_GROUPS:
            in_group = [x for x in rows if "%s %s" % (x[0]["backend"], x[0]["mode"]) == group]
            s = summary(errors(in_group, sims))
            table.append((label, group, s))
            # Rows where grids the source GPU lacks came from a further GPU (supplement_role_tables): shown apart, and
            # the rule's own figure (quoted by results as its measured error) counts only the rows priced by it alone.
            ran = [x for x in in_group if sims.get(x[0]["id"])]
            alone = [x for x in ran if not sims[x[0]["id"]][2]]
            sup = [x for x in ran if sims[x[0]["id"]][2]]
            if sup:
                extra = sorted({sims[x[0]["id"]][2] for x in sup})
                models = sorted({x[1]["model"] for x in sup})
                table.append(("... of which priced by the rule alone", group, summary(errors(alone, sims))))
                table.append(("... of which with grids the source lacks from %s (%s)" % (", ".join(extra),
                                                                                        ", ".join(models)),
                              group, summary(errors(sup, sims))))
            s_rule = summary(errors(alone, sims))
            if rule and s_rule.get("n"):
                by_rule.setdefault(rule, {})[group] = {k: s_rule[k] for k in ("n", "ttft_median_abs_pct",
                                                                              "tpot_median_abs_pct")}
    lines = ["## End-to-end through the datasheet path", "",
             "Command: `python3 scripts/validate_e2e.py --datasheet` (%s). The vLLM and SGLang agg rows of "
             "silicon_h100.csv replayed as above, once with H100's own tables and once per transfer rule with another "
             "GPU's tables moved to H100's datasheet (an inline H100 with `tables_from`, H100's own tables hidden), as "
             "a GPU without tables is priced: grids the source GPU lacks (a weight format, a head size) come from the "
             "next nearest GPU with tables, moved by that pair's rule, and those rows are also shown apart; and once by "
             "the datasheet efficiency curves alone (what prices a GPU when no GPU has tables; in-sample, as H100 is "
             "one of the GPUs they are fitted on). The host constants are the same in every run."
             % datetime.date.today().isoformat(), "",
             "| pricing | group | rows | TTFT median abs err | TTFT p90 | TTFT median signed | TPOT median abs err | "
             "TPOT p90 | TPOT median signed |", "|---|---|---|---|---|---|---|---|---|"]
    for label, group, s in table:
        if s.get("n"):
            lines.append("| %s | %s | %d | %.1f%% | %.1f%% | %+.1f%% | %.1f%% | %.1f%% | %+.1f%% |" % (
                label, group, s["n"], s["ttft_median_abs_pct"], s["ttft_p90_abs_pct"], s["ttft_median_signed_pct"],
                s["tpot_median_abs_pct"], s["tpot_p90_abs_pct"], s["tpot_median_signed_pct"]))
    replace_section(DOC, "e2e_datasheet", "\n".join(lines))
    path = os.path.join(ROOT, "profiles", "datasheet", "validation.json")
    doc = json.load(open(path)) if os.path.exists(path) else {}
    doc.setdefault("summary", {})["e2e_median_abs_pct"] = by_rule
    write_atomic(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "native", "servesim"))
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--backend", default="all",
                    help="replay one backend's rows; without an exploring option (--model, --rows, --outputs, --set) "
                         "its figures are recorded in validation.json and the summary blocks (the e2e section of "
                         "docs/validation.md is written by a run of every backend only)")
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--model", default="", help="only rows whose model_path contains this (case-insensitive)")
    ap.add_argument("--datasheet", action="store_true",
                    help="replay the vLLM/SGLang agg rows through the datasheet path (DATASHEET_SOURCES)")
    ap.add_argument("--rows", action="store_true", help="print every replayed row (writes nothing)")
    ap.add_argument("--outputs", choices=DRIFTS, help="replay every row with this output-length protocol")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=JSON",
                    help="override a scenario field in every replayed row (repeatable)")
    args = ap.parse_args()
    sets = [parse_set(t) for t in args.set]
    explore = bool(args.model or args.rows or args.outputs or sets)
    if explore and (args.check or args.calibrate or args.datasheet):
        sys.exit("--model, --rows, --outputs and --set explore and write nothing; they do not combine with "
                 "--check, --calibrate or --datasheet")
    if not os.path.exists(args.cli):
        sys.exit("simulator not built: %s" % args.cli)
    all_rows = list(csv.DictReader(open(os.path.join(args.data, SILICON))))
    backends = ["vllm", "trtllm", "sglang"] if args.backend == "all" else [args.backend]
    expressible, skipped = [], {}
    unknown_layout = layout_unknown(all_rows)
    repeats = duplicate_rows(all_rows)
    waiting_runs = one_waiting_runs(all_rows)
    for r in all_rows:
        if r["backend"] not in backends:
            continue
        if args.model and args.model.lower() not in r["model_path"].lower():
            continue
        # --check replays the gated groups only (CHECK_GROUPS)
        if args.check and "%s %s" % (r["backend"], r["mode"]) not in CHECK_GROUPS:
            continue
        parts, why = classify(r)
        if r["id"] in repeats:
            parts, why = None, repeats[r["id"]]
        elif parts is not None and r["id"] in unknown_layout:
            parts, why = None, unknown_layout[r["id"]]
        if parts is not None and run_set(r) in waiting_runs:
            parts["one_waiting"] = True
        if parts is None:
            skipped.setdefault((r["backend"], r["mode"], why), []).append(r["id"])
        else:
            expressible.append((r, parts))
    if args.limit:
        seen = {}
        lim = []
        for r, p in expressible:
            k = (r["backend"], p["model"])
            seen[k] = seen.get(k, 0) + 1
            if seen[k] <= args.limit:
                lim.append((r, p))
        expressible = lim

    if args.datasheet:
        with tempfile.TemporaryDirectory() as tmp:
            datasheet_e2e(args, expressible, tmp)
        fidelity_summary.write()
        return
    with tempfile.TemporaryDirectory() as tmp:
        calib = {}
        if args.calibrate:
            for b in backends:
                rows_b = [x for x in expressible if x[0]["backend"] == b and x[0]["mode"] == "agg"]
                models = sorted({p["model"] for _, p in rows_b})
                start = {"iteration_us": 800.0, "per_request_us": 20.0}
                folds = []
                if len(models) < 2 and b in SPLITS and rows_b:
                    # One model: hold out by a physical axis instead (SPLITS), then fit on all rows.
                    for col, held in SPLITS[b]:
                        train = [x for x in rows_b if x[0][col] not in held]
                        test = [x for x in rows_b if x[0][col] in held]
                        print("calibrating %s without %s %s (%d train rows)" % (b, col, "/".join(held), len(train)),
                              file=sys.stderr)
                        th = fit(args.cli, train, start, args.jobs, tmp, b)
                        sims = simulate(args.cli, rows_b, {b: th}, args.jobs, tmp)
                        folds.append({"held_out_model": "%s %s" % (col, "/".join(held)), "constants": th,
                                      "train": summary(errors(train, sims)), "test": summary(errors(test, sims))})
                    print("calibrating %s on all its rows" % b, file=sys.stderr)
                    th = fit(args.cli, rows_b, start, args.jobs, tmp, b)
                    calib[b] = {"constants_all_models": th, "fitted_on": "all %d rows" % len(rows_b), "folds": folds,
                                "date": datetime.date.today().isoformat()}
                    continue
                if len(models) < 2:
                    continue
                if len(models) > 2:
                    # Leave-one-model-out is too slow here: fit on the first model only, test on the others, and
                    # keep those constants (every other model stays held out).
                    train = [x for x in rows_b if x[1]["model"] == models[0]]
                    test = [x for x in rows_b if x[1]["model"] != models[0]]
                    print("calibrating %s on %s only (%d rows)" % (b, models[0], len(train)), file=sys.stderr)
                    th = fit(args.cli, train, start, args.jobs, tmp, b)
                    sims = simulate(args.cli, rows_b, {b: th}, args.jobs, tmp)
                    folds.append({"held_out_model": ", ".join(models[1:]), "constants": th,
                                  "train": summary(errors(train, sims)), "test": summary(errors(test, sims))})
                    calib[b] = {"constants_all_models": th, "fitted_on": models[0], "folds": folds,
                                "date": datetime.date.today().isoformat()}
                    continue
                for held in models:
                    train = [x for x in rows_b if x[1]["model"] != held]
                    test = [x for x in rows_b if x[1]["model"] == held]
                    print("calibrating %s without %s (%d train rows)" % (b, held, len(train)), file=sys.stderr)
                    th = fit(args.cli, train, start, args.jobs, tmp, b)
                    sims = simulate(args.cli, train + test, {b: th}, args.jobs, tmp)
                    folds.append({"held_out_model": held, "constants": th,
                                  "train": summary(errors(train, sims)), "test": summary(errors(test, sims))})
                print("calibrating %s on all models" % b, file=sys.stderr)
                th = fit(args.cli, rows_b, start, args.jobs, tmp, b)
                calib[b] = {"constants_all_models": th, "folds": folds,
                            "date": datetime.date.today().isoformat()}
            print(json.dumps(calib, indent=1))
        sims = simulate(args.cli, expressible, {}, args.jobs, tmp, drift=args.outputs, sets=sets)
    # The host constants each backend's agg rows ran with (the simulator's own, fidelity.host of a result).
    in_use = {}
    for r, _ in expressible:
        v = sims.get(r["id"])
        if v and v[4] and r["mode"] == "agg":
            in_use.setdefault(r["backend"], v[4])

    kept = []
    for r, parts in expressible:
        why = kv_exceeds_layout(r, sims.get(r["id"]))
        if why:
            skipped.setdefault((r["backend"], r["mode"], why), []).append(r["id"])
        else:
            kept.append((r, parts))
    expressible = kept
    errs = errors(expressible, sims)
    # Calibrations not redone in this run are kept from the recorded validation.json.
    for b in backends:
        if b in calib or args.check:
            continue
        path = os.path.join(ROOT, "profiles", "H100-SXM", "trtllm" if b == "trtllm" else "vllm", "validation.json")
        rec = (json.load(open(path)) if os.path.exists(path) else {}).get("e2e", {}).get("%s agg" % b, {})
        if "calibration" in rec:
            calib[b] = rec["calibration"]
    groups = []
    for b in backends:
        for mode in ("agg", "disagg"):
            e = [x for x in errs if x[0]["backend"] == b and x[0]["mode"] == mode]
            groups.append(("%s %s" % (b, mode), summary(e)))
    per_model = []
    for b in backends:
        for mode in ("agg", "disagg"):
            for m in sorted({p["model"] for r, p in expressible if r["backend"] == b and r["mode"] == mode}):
                ids = {r["id"] for r, p in expressible if r["backend"] == b and r["mode"] == mode and p["model"] == m}
                per_model.append(("%s %s %s" % (b, mode, m), summary([x for x in errs if x[0]["id"] in ids])))

    if explore:
        # A look at some models' rows: per model and mode, then the worst rows (or every row). Writes nothing.
        if args.outputs or sets:
            print("replayed with%s%s" % (" outputs %s" % args.outputs if args.outputs else "",
                                         "".join(" %s=%s" % (".".join(p), json.dumps(v)) for p, v in sets)))
        for name, s in per_model:
            if not s.get("n"):
                continue
            print("%-36s n=%3d  TTFT median |err| %5.1f%% (signed %+5.1f%%)  TPOT median |err| %5.1f%% (signed %+5.1f%%)"
                  % (name, s["n"], s["ttft_median_abs_pct"], s["ttft_median_signed_pct"], s["tpot_median_abs_pct"],
                     s["tpot_median_signed_pct"]))
        clients = {r["id"]: p["concurrency"] for r, p in expressible}

        def row_line(r, et, ep):
            sim = sims[r["id"]]
            return ("  %s %s %s tp%s dp%s ep%s isl %5s osl %5s c %4s  TTFT %8.1f -> %8.1f ms (%+4.0f%%)  "
                    "TPOT %6.2f -> %6.2f ms (%+4.0f%%)" % (
                        r["backend"], r["mode"], r["model_path"].split("/")[-1], r["tp_size"] or "-",
                        r["attention_dp_size"] or 1, r["moe_ep_size"] or 1, r["isl"], r["osl"], clients[r["id"]],
                        float(r["silicon_ttft_ms"]), sim[0], et * 100, float(r["silicon_tpot_ms"]), sim[1], ep * 100))
        if args.rows:
            def order(e):
                r = e[0]
                return (r["backend"], r["mode"], r["model_path"], num(r["tp_size"]), num(r["isl"]), num(r["osl"]),
                        clients[r["id"]], r["id"])
            print("every replayed row (measured -> simulated; c = clients):")
            for r, et, ep in sorted(errs, key=order):
                print(row_line(r, et, ep))
        for label, k in () if args.rows else (("TTFT", 1), ("TPOT", 2)):  # --rows printed them all
            print("worst %s rows (measured -> simulated):" % label)
            for r, et, ep in sorted(errs, key=lambda e: -abs(e[k]))[:8]:
                print("  %s\n%s" % (r["id"], row_line(r, et, ep)))
        for (b, mode, why), ids in sorted(skipped.items()):
            print("not replayed: %s %s: %s (%d rows)" % (b, mode, why, len(ids)))
        return

    if args.check:
        bad, done = [], []
        for name in CHECK_GROUPS:
            b = name.split()[0]
            if b not in backends:
                continue
            got = dict(groups).get(name, {"n": 0})
            path = os.path.join(ROOT, "profiles", "H100-SXM", "trtllm" if b == "trtllm" else "vllm", "validation.json")
            rec = json.load(open(path)).get("e2e", {}).get(name, {}).get("summary")
            if rec is None:
                if got.get("n"):
                    bad.append("%s: no recorded figures in %s" % (name, os.path.relpath(path, ROOT)))
                continue
            for k in ("ttft_median_abs_pct", "tpot_median_abs_pct"):
                if got.get(k, 1e9) > rec[k] + CHECK_MARGIN_PP:
                    bad.append("%s %s %.1f%% > recorded %.1f%% + %.1f" % (name, k, got.get(k, -1), rec[k],
                                                                         CHECK_MARGIN_PP))
            if got.get("n", 0) < rec["n"]:
                bad.append("%s: only %d of %d rows replayed" % (name, got.get("n", 0), rec["n"]))
            # Each model of the group on its own, so that a large group cannot hide one model's regression.
            got_models = dict(per_model)
            by_model = json.load(open(path)).get("e2e", {}).get(name, {}).get("by_model", {})
            for model, mrec in sorted(by_model.items()):
                mgot = got_models.get("%s %s" % (name, model), {"n": 0})
                for k in ("ttft_median_abs_pct", "tpot_median_abs_pct"):
                    if mgot.get(k, 1e9) > mrec[k] + CHECK_MARGIN_PP:
                        bad.append("%s %s %s %.1f%% > recorded %.1f%% + %.1f" % (
                            name, model, k, mgot.get(k, -1), mrec[k], CHECK_MARGIN_PP))
            if got.get("n"):
                done.append("%s: TTFT median |err| %.1f%%, TPOT %.1f%% (recorded %.1f%%, %.1f%%; %d rows)" % (
                    name, got["ttft_median_abs_pct"], got["tpot_median_abs_pct"], rec["ttft_median_abs_pct"],
                    rec["tpot_median_abs_pct"], got["n"]))
        print("\n".join(done))
        if bad:
            sys.exit("end-to-end error regressed: " + "; ".join(bad))
        return

    lines = ["## End-to-end: silicon_h100.csv replayed", "",
             "Command: `python3 scripts/validate_e2e.py` (%s; %d rows replayed, %d not: not expressible, or repeats)." % (
                 datetime.date.today().isoformat(), len(errs), sum(len(v) for v in skipped.values())), "",
             "Protocol: see the script's docstring (closed loop, concurrency = batch_size (x attention DP) for agg rows and the "
             "recorded silicon_concurrency for disagg rows, all clients starting together, fixed isl, outputs of "
             "exactly osl tokens on the agg rows of AIConfigurator's harness, as it asks for them (SGLang's with the "
             "sglang scheduler; database-dump agg rows, whose clients are out of phase after the first wave: osl +- 5%; "
             "disagg rows: osl +- 1 token), 10 x concurrency requests, the row's parallelism/dtype/backend (TRT-LLM and "
             "vLLM agg rows of AIConfigurator's harness: its benchmark rule's token budget = batch size + isl + 1500; "
             "run sets whose TTFT rises with osl by one request per cycle: one slot fewer than clients; TRT-LLM agg rows of "
             "the harness: its front-end streaming one token per {stream_us} us); disagg rows as "
             "P/D scenarios with the row's worker counts and per-role "
             "parallelism; TTFT timed at the first token that carries text, as genai-perf and AIPerf do: after gpt-oss's "
             "3-token harmony header). Errors are (simulated - measured) / "
             "measured of mean TTFT and mean TPOT; goal on vLLM agg rows: median |error| <= 10% TTFT, <= 5% TPOT. "
             "`TTFT gap in TPOTs` is the median of (measured - simulated TTFT) / measured TPOT: the TTFT the "
             "simulation lacks, in output tokens.".replace("{stream_us}", "%g" % TRTLLM_HARNESS_STREAM_US),
             ""]
    lines += md_table("backend, mode", groups) + [""] + md_table("backend, mode, model", per_model) + [""]
    if calib:
        lines += ["### Calibration of the host constants (held-out split by model; by TP size and ISL for SGLang, "
                  "which has one model)", ""]
        lines += ["`in use` is what the simulator ran these rows with, as each result reports it (`fidelity.host`); "
                  "`last fit` is the latest `--calibrate` run, kept in validation.json until the next one. Its folds "
                  "were scored under the protocol of that date, so they can differ from the tables above.", ""]
        for b, c in calib.items():
            fitted = c["constants_all_models"]
            used = in_use.get(b, {})
            same = all(abs(used.get(k, float("nan")) - v) < 0.05 for k, v in fitted.items())
            lines.append("%s: in use %s; last fit (%s, on %s): %s%s" % (
                b, ", ".join("`%s` = %.1f" % (k, used[k]) for k in sorted(fitted) if k in used) or "not reported",
                c.get("date", "date not recorded"), c.get("fitted_on", "all its models"),
                ", ".join("`%s` = %s" % kv for kv in sorted(fitted.items())), "" if same else " (not adopted)"))
            lines += ["", "| held out | constants fitted on the others | train TTFT / TPOT median abs | "
                          "held-out TTFT / TPOT median abs |", "|---|---|---|---|"]
            for f in c["folds"]:
                lines.append("| %s | %s | %.1f%% / %.1f%% | %.1f%% / %.1f%% |" % (
                    f["held_out_model"], ", ".join("%s %s" % kv for kv in sorted(f["constants"].items())),
                    f["train"]["ttft_median_abs_pct"], f["train"]["tpot_median_abs_pct"],
                    f["test"]["ttft_median_abs_pct"], f["test"]["tpot_median_abs_pct"]))
            lines.append("")
    lines += ["### Rows not replayed (not expressible, or a repeat of a replayed row)", "",
              "| backend | mode | reason | rows |", "|---|---|---|---|"]
    for (b, mode, why), ids in sorted(skipped.items()):
        lines.append("| %s | %s | %s | %d |" % (b, mode, why, len(ids)))
    lines.append("")
    lines += ["### Every replayed row", "", "| row | sim TTFT ms | measured | err | sim TPOT ms | measured | err |",
              "|---|---|---|---|---|---|---|"]
    for r, et, ep in errs:
        s = sims[r["id"]]
        lines.append("| %s | %.1f | %.1f | %+.0f%% | %.2f | %.2f | %+.0f%% |" % (
            r["id"], s[0], float(r["silicon_ttft_ms"]), et * 100, s[1], float(r["silicon_tpot_ms"]), ep * 100))
    # The report holds every backend's groups: a run of one backend, or of the first rows only (--limit), would replace
    # it with a part. validation.json takes each replayed backend's groups unless --limit cut them short.
    if args.backend == "all" and not args.limit:
        replace_section(DOC, "e2e", "\n".join(lines))
    else:
        # Said plainly, since a look at one backend is easily mistaken for an exploring run (--model, --rows, --set,
        # --outputs), which writes nothing.
        print("partial run (--backend %s%s): the e2e section of docs/validation.md not written; %s" % (
            args.backend, ", --limit %d" % args.limit if args.limit else "",
            "nothing else written" if args.limit else
            "the replayed backends' validation.json and the summary blocks of README.md and docs/validation.md "
            "updated"), file=sys.stderr)
    for b in backends if not args.limit else ():
        for mode in ("agg", "disagg"):
            g = dict(groups).get("%s %s" % (b, mode))
            if g and g.get("n"):
                entry = {"summary": g, "command": "python3 scripts/validate_e2e.py",
                         "date": datetime.date.today().isoformat()}
                if b in calib and mode == "agg":
                    # The fit as made, beside what the simulator runs with (they differ where a fit was not adopted).
                    entry["calibration"] = dict(calib[b], constants_in_use={k: in_use.get(b, {}).get(k) for k in PARAMS})
                prefix = "%s %s " % (b, mode)
                entry["by_model"] = {n[len(prefix):]: ms for n, ms in per_model if n.startswith(prefix) and ms.get("n")}
                update_validation_json("trtllm" if b == "trtllm" else "vllm", "%s %s" % (b, mode), entry)
    if not args.limit:
        fidelity_summary.write()  # README.md and the report quote the figures just recorded
    for name, s in groups + per_model:
        if s.get("n"):
            print("%-28s n=%3d  TTFT median |err| %5.1f%% (signed %+5.1f%%)  TPOT median |err| %5.1f%% (signed %+5.1f%%)"
                  % (name, s["n"], s["ttft_median_abs_pct"], s["ttft_median_signed_pct"], s["tpot_median_abs_pct"],
                     s["tpot_median_signed_pct"]))


if __name__ == "__main__":
    main()
