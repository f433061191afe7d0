#!/usr/bin/env python3
"""servesim_opcheck --cells FILE: one CSV line per held-out comparison behind every family's reported figure, so
the per-family counts and the cells over 10% match the JSON's "all" (n, over_10pct) exactly, each line's error is
its measured and predicted time's, a held-out cell is a measured cell of its table, and a bad invocation or an
unwritable file is refused with a message and no report. --family NAME reports that family alone, as the full report
has it, with the same cells.

    opcheck_cells_test.py PATH_TO_servesim_opcheck"""
import collections
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PROFILES = os.path.join(ROOT, "profiles")
tool = sys.argv[1]
fails = []

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "cells.csv")
    p = subprocess.run([tool, PROFILES, "A100-80G", "vllm", "--cells", path], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("--cells run failed: %s" % p.stderr)
    families = json.loads(p.stdout)["families"]
    rows = list(csv.DictReader(open(path)))
    plain = subprocess.run([tool, PROFILES, "A100-80G", "vllm"], capture_output=True, text=True, check=True)
    if json.loads(plain.stdout) != json.loads(p.stdout):
        fails.append("the report differs with --cells")

n = collections.Counter(r["family"] for r in rows)
over = collections.Counter(r["family"] for r in rows if round(float(r["ape_pct"]), 2) > 10)
for f, v in families.items():
    if (n[f], over[f]) != (v["all"]["n"], v["all"]["over_10pct"]):
        fails.append("%s: %d cells, %d over 10%% in the log; the report says %d, %d"
                     % (f, n[f], over[f], v["all"]["n"], v["all"]["over_10pct"]))
if set(n) != set(families):
    fails.append("families logged %s, reported %s" % (sorted(n), sorted(families)))
for r in rows:
    m, pr, ape = float(r["measured_us"]), float(r["predicted_us"]), float(r["ape_pct"])
    want = abs(pr / m - 1) * 100 if pr > 0 else 100.0
    if abs(ape - want) > 1e-3 * max(1.0, want):
        fails.append("%s: ape %s, measured %s, predicted %s" % (r, ape, m, pr))
        break

# A held-out GEMM cell is a measured cell of the grid it names.
gemm = {t["key"][0]: t for t in json.load(open(os.path.join(PROFILES, "A100-80G", "vllm", "gemm.json")))["tables"]}
r = next(r for r in rows if r["family"] == "gemm")
at = dict(kv.split("=") for kv in r["at"].split(";"))
t = gemm[r["table"]]
(ns, ks, ms), values = t["axes"], t["values"]
i, j, k = ns.index(int(at["n"])), ks.index(int(at["k"])), ms.index(int(at["m"]))
if abs(values[(i * len(ks) + j) * len(ms) + k] - float(r["measured_us"])) > 1e-6 * float(r["measured_us"]):
    fails.append("gemm cell %s is not the table's %s" % (r, values[(i * len(ks) + j) * len(ms) + k]))

# One family alone: its entry and its cells as in the full run.
with tempfile.TemporaryDirectory() as tmp:
    for family in ("attention_decode", "nccl"):
        path = os.path.join(tmp, family + ".csv")
        q = subprocess.run([tool, PROFILES, "A100-80G", "vllm", "--family", family, "--cells", path],
                           capture_output=True, text=True)
        if q.returncode != 0:
            fails.append("--family %s: exit %d, %s" % (family, q.returncode, q.stderr[:200]))
            continue
        one = json.loads(q.stdout)
        if one["families"] != {family: families[family]}:
            fails.append("--family %s: families %s differ from the full report's entry"
                         % (family, sorted(one["families"])))
        if {k: v for k, v in one.items() if k != "families"} != {k: v for k, v in json.loads(plain.stdout).items()
                                                                   if k != "families"}:
            fails.append("--family %s: the report's other fields differ" % family)
        if list(csv.DictReader(open(path))) != [r for r in rows if r["family"] == family]:
            fails.append("--family %s: its cells differ from the full run's" % family)

for args, code in (([PROFILES, "A100-80G", "vllm", "--cells"], 2),
                   ([PROFILES, "A100-80G", "vllm", "--family", "attention"], 2),
                   ([PROFILES, "A100-80G", "vllm", "--family", "nccl", "--family", "p2p"], 2),
                   ([PROFILES, "A100-80G", "vllm", "--cell", "x.csv"], 2),
                   ([PROFILES, "A100-80G", "vllm", "--cells", os.path.join(ROOT, "no-such-dir", "x.csv")], 1)):
    q = subprocess.run([tool] + args, capture_output=True, text=True)
    if q.returncode != code or q.stdout or not q.stderr:
        fails.append("%s: exit %d (want %d), stdout %r, stderr %r" % (args[3:], q.returncode, code, q.stdout[:80],
                                                                       q.stderr[:80]))

if fails:
    print("\n".join(fails))
    sys.exit(1)
print("opcheck --cells: %d cells over %d families, counts as reported" % (len(rows), len(families)))
