#!/usr/bin/env python3
"""The measured-error summary of README.md and docs/validation.md, written from the committed reports.

Reads every profiles/<gpu>/<backend>/validation.json (what scripts/validate_ops.py and scripts/validate_e2e.py
record) and profiles/datasheet/validation.json, and writes one block, between
<!-- BEGIN fidelity_summary --> and <!-- END fidelity_summary -->, into both documents: the held-out per-op
p50 / p95 of every op family of every profile with the rows that meet the p95 goal counted, and the end-to-end
median errors per backend and mode. Both validation scripts call it after writing their reports, so the figures
quoted up front are the ones recorded, never typed by hand.

  python3 scripts/fidelity_summary.py          # rewrite the two blocks
  python3 scripts/fidelity_summary.py --check  # exit 1 if either block differs from what the reports give
"""
import argparse
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILES = os.path.join(ROOT, "profiles")
DOCS = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "docs", "validation.md")]
TAG = "fidelity_summary"
BEGIN, END = "<!-- BEGIN %s -->" % TAG, "<!-- END %s -->" % TAG
P50_GOAL, P95_GOAL = 3.0, 10.0

# Row order and names of the per-op table; a family no profile reports is left out.
FAMILIES = [("gemm", "GEMM"), ("attention_prefill", "attention, prefill"), ("attention_decode", "attention, decode"),
            ("mla_prefill", "MLA, prefill"), ("mla_decode", "MLA, decode"), ("moe", "MoE"),
            ("custom_allreduce", "custom all-reduce"), ("nccl", "NCCL collectives"), ("p2p", "send/recv (p2p)"),
            ("deepep_ll", "DeepEP low-latency"), ("deepep_normal", "DeepEP normal")]
BACKEND_NAMES = {"vllm": "vLLM", "trtllm": "TRT-LLM", "sglang": "SGLang"}
E2E_GROUPS = ["vllm agg", "trtllm agg", "sglang agg", "trtllm disagg", "sglang disagg"]


def load(path):
    with open(path) as f:
        return json.load(f)


def profiles():
    """(gpu, backend, validation.json) of every profile with a report, by GPU, then vLLM, TRT-LLM, SGLang."""
    out = []
    for path in glob.glob(os.path.join(PROFILES, "*", "*", "validation.json")):
        backend_dir = os.path.dirname(path)
        out.append((os.path.basename(os.path.dirname(backend_dir)), os.path.basename(backend_dir), load(path)))
    order = list(BACKEND_NAMES)
    return sorted(out, key=lambda r: (r[0], order.index(r[1]) if r[1] in order else len(order), r[1]))


def ops_columns(reports):
    return [(gpu, backend, rep) for gpu, backend, rep in reports if rep.get("ops", {}).get("families")]


def header(cols, first):
    return ["| %s | " % first + " | ".join("%s %s" % (gpu, BACKEND_NAMES.get(b, b)) for gpu, b, _ in cols) + " |",
            "|---|" + "---|" * len(cols)]


def ops_table(reports):
    """The per-op lines, (met, rows) for the p95 goal, and the dates the figures were measured."""
    cols = ops_columns(reports)
    known = {name for name, _ in FAMILIES}
    for gpu, b, rep in cols:
        unknown = set(rep["ops"]["families"]) - known
        if unknown:
            sys.exit("fidelity_summary: %s/%s reports op families this summary does not name: %s"
                     % (gpu, b, ", ".join(sorted(unknown))))
    lines, met, rows = header(cols, "op family"), 0, 0
    for name, label in FAMILIES:
        cells = []
        for _, _, rep in cols:
            fam = rep["ops"]["families"].get(name, {}).get("all")
            if not fam or "p95" not in fam:
                cells.append("-")
                continue
            rows += 1
            ok = fam["p95"] <= P95_GOAL
            met += ok
            cells.append("%.1f / %.1f%s" % (fam["p50"], fam["p95"], " ✓" if ok else ""))
        if any(c != "-" for c in cells):
            lines.append("| %s | %s |" % (label, " | ".join(cells)))
    pricing = ["%s %s %.1f / %.1f" % (gpu, BACKEND_NAMES.get(b, b), g["p50"], g["p95"]) for gpu, b, rep in cols
               for g in [rep["ops"]["families"].get("gemm", {}).get("grids_that_price")] if g]
    if pricing:
        lines += ["", "GEMM over the grids that price roles (every dtype but vLLM's fp8_block grid, which is validated "
                      "and prices nothing: roles on vLLM's tables price block-FP8 GEMMs on its per-tensor FP8 grid): "
                  + ", ".join(pricing) + "."]
    return lines, met, rows, sorted({rep["ops"].get("date", "?") for _, _, rep in cols})


# Reads outside what a table measured, from each report's "summary" (the figures results quote).
OUTSIDE = [("beyond_edge_ape_pct", "gemm", "GEMM past the edge"),
           ("beyond_edge_ape_pct", "attention_prefill", "attention, prefill, past the edge"),
           ("beyond_edge_ape_pct", "attention_decode", "attention, decode, past the edge"),
           ("beyond_edge_ape_pct", "moe", "MoE past the edge"),
           ("moe_routing_ape_pct", "power_law_measured_exponent_own_curve",
            "MoE, power-law routing of a measured exponent"),
           ("moe_routing_ape_pct", "other_routing_slowest_rank_model",
            "MoE, other routing (balanced curve x slowest-rank model)")]


def outside_table(reports):
    """Profiles without any such figure (SGLang's DeepEP-only report) get no column."""
    cols = [c for c in ops_columns(reports) if any(c[2].get("summary", {}).get(g, {}).get(k) for g, k, _ in OUTSIDE)]
    lines = header(cols, "read")
    for group, key, label in OUTSIDE:
        cells = []
        for _, _, rep in cols:
            s = rep.get("summary", {}).get(group, {}).get(key)
            cells.append("%.1f / %.1f" % (s["p50"], s["p95"]) if s else "-")
        if any(c != "-" for c in cells):
            lines.append("| %s | %s |" % (label, " | ".join(cells)))
    return lines


def e2e_table(reports):
    """The end-to-end lines from H100-SXM's reports (silicon_h100.csv), and the dates they were measured."""
    groups, dates = {}, set()
    for gpu, _, rep in reports:
        for name, entry in rep.get("e2e", {}).items():
            groups[name] = entry
            dates.add(entry.get("date", "?"))
    lines = ["| backend, mode | rows | TTFT median abs err | TPOT median abs err |", "|---|---|---|---|"]
    for name in E2E_GROUPS + sorted(set(groups) - set(E2E_GROUPS)):
        entry = groups.get(name)
        if not entry:
            continue
        s = entry["summary"]
        b, mode = name.split(" ", 1)
        lines.append("| %s %s | %d | %.1f%% | %.1f%% |" % (BACKEND_NAMES.get(b, b), mode, s["n"],
                                                           s["ttft_median_abs_pct"], s["tpot_median_abs_pct"]))
        for model, ms in sorted(entry.get("by_model", {}).items()) if name == "vllm agg" else ():
            lines.append("| &nbsp;&nbsp;%s | %d | %.1f%% | %.1f%% |" % (model, ms["n"], ms["ttft_median_abs_pct"],
                                                                       ms["tpot_median_abs_pct"]))
    return lines, sorted(dates)


def datasheet_line():
    path = os.path.join(PROFILES, "datasheet", "validation.json")
    if not os.path.exists(path):
        return []
    by_rule = load(path).get("summary", {}).get("e2e_median_abs_pct", {})
    parts = []
    for rule in ("same architecture", "other architecture"):
        groups = ["%s %s %.1f%% / %.1f%% (%d rows)" % (BACKEND_NAMES[g.split()[0]], g.split()[1],
                                                     s["ttft_median_abs_pct"], s["tpot_median_abs_pct"], s["n"])
                  for g, s in sorted(by_rule.get(rule, {}).items(), key=lambda kv: E2E_GROUPS.index(kv[0])
                                     if kv[0] in E2E_GROUPS else len(E2E_GROUPS))]
        if groups:
            parts.append("%s: %s" % (rule, ", ".join(groups)))
    if not parts:
        return []
    return ["", "The same rows priced as a GPU without tables is, from another GPU's tables moved to H100's datasheet "
                "(`python3 scripts/validate_e2e.py --datasheet`; TTFT / TPOT median abs err, rows the rule prices "
                "alone): " + "; ".join(parts) + "."]


def block(doc):
    """The block for one document (README.md links the report; the report points below itself)."""
    details = ("details and history in [docs/validation.md](docs/validation.md)" if os.path.basename(doc) == "README.md"
               else "details and history in the sections below")
    reports = profiles()
    ops_lines, met, rows, ops_dates = ops_table(reports)
    e2e_lines, e2e_dates = e2e_table(reports)
    lines = [BEGIN,
             "Written by `python3 scripts/fidelity_summary.py` from the committed `profiles/*/*/validation.json` "
             "(per op %s, end to end %s); %s."
             % (", ".join(ops_dates), ", ".join(e2e_dates), details), "",
             "Per op (`python3 scripts/validate_ops.py`): whole grid lines of each measured table held out and "
             "predicted by the simulator's own C++ predictors, p50 / p95 absolute percentage error; goal p50 <= "
             "%g%%, p95 <= %g%% (✓). **The p95 goal is met in %d of %d rows.**" % (P50_GOAL, P95_GOAL, met, rows),
             ""] + ops_lines + [
             "",
             "End to end (`python3 scripts/validate_e2e.py`): the expressible rows of AIConfigurator's "
             "silicon_h100.csv replayed, median |error| of mean TTFT and mean TPOT; goal on vLLM agg rows "
             "<= 10% / <= 5%.", ""] + e2e_lines + datasheet_line() + [
             "",
             "Outside what the tables measured (p50 / p95): a shape past a grid's edge, read from the edge as the "
             "simulator reads it, with each grid's edge line held out (flagged in results, `beyond_edge_ape_pct`); "
             "MoE routing the balanced tables did not measure.", ""] + outside_table(reports) + [END]
    return "\n".join(lines)


def splice(text, body, path):
    if BEGIN not in text or END not in text:
        sys.exit("fidelity_summary: %s has no %s ... %s markers" % (os.path.relpath(path, ROOT), BEGIN, END))
    return text[:text.index(BEGIN)] + body + text[text.index(END) + len(END):]


def write(check=False):
    """Rewrites (or, with check, compares) the block in every document; returns the stale documents' paths."""
    stale = []
    for path in DOCS:
        body = block(path)
        with open(path) as f:
            text = f.read()
        new = splice(text, body, path)
        if new == text:
            continue
        stale.append(os.path.relpath(path, ROOT))
        if not check:
            tmp = path + ".tmp"
            with open(tmp, "w") as f:
                f.write(new)
            os.replace(tmp, path)
    return stale


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 when stale")
    args = ap.parse_args()
    stale = write(check=args.check)
    if args.check and stale:
        print("fidelity_summary: stale in %s; run python3 scripts/fidelity_summary.py" % ", ".join(stale),
              file=sys.stderr)
        return 1
    for path in stale:
        print("fidelity_summary: rewrote %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
