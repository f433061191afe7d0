#!/usr/bin/env python3
"""servesim_opcheck --query (scripts/cross_source.py's access to the predictors): a GEMM at a measured cell returns
that cell exactly and unflagged, a shape past the grid is flagged, a collective between measured sizes lies between
its neighbours, and bad lines answer "nan 1" without stopping the run.

    opcheck_query_test.py PATH_TO_servesim_opcheck"""
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PROFILES = os.path.join(ROOT, "profiles")
gemm = json.load(open(os.path.join(PROFILES, "A100-80G", "vllm", "gemm.json")))["tables"][0]
(ns, ks, ms), values = gemm["axes"], gemm["values"]
i, j, k = len(ns) // 2, len(ks) // 2, len(ms) // 2
cell = values[(i * len(ks) + j) * len(ms) + k]
nccl = [t for t in json.load(open(os.path.join(PROFILES, "A100-80G", "nccl.json")))["tables"]
        if t["key"] == ["all_reduce", "half", 8]][0]
xs, ys = nccl["axes"][0], nccl["values"]
queries = ["gemm bfloat16 %d %d %d" % (ms[k], ns[i], ks[j]),
           "gemm bfloat16 %d %d %d" % (ms[-1] * 4, ns[i], ks[j]),
           "collective all_reduce half 8 %d" % ((xs[3] + xs[4]) // 2),
           "gemm nosuchtype 1 2 3", "gemm bfloat16 0 2 3", "hello", "collective all_reduce half 3 100"]
out = subprocess.run([sys.argv[1], "--query", PROFILES, "A100-80G", "vllm"], input="\n".join(queries),
                     capture_output=True, text=True)
got = [line.split() for line in out.stdout.splitlines()]
fails = []
if out.returncode != 0 or len(got) != len(queries):
    fails.append("rc %d, %d answers for %d queries" % (out.returncode, len(got), len(queries)))
else:
    if abs(float(got[0][0]) - cell) > 1e-6 * cell or got[0][1] != "0":
        fails.append("grid cell: got %s, want %s unflagged" % (got[0], cell))
    if got[1][1] != "1":
        fails.append("m past the grid not flagged: %s" % got[1])
    lo, hi = sorted((ys[3], ys[4]))
    if not lo <= float(got[2][0]) <= hi or got[2][1] != "0":
        fails.append("collective between sizes: %s not within [%s, %s]" % (got[2], lo, hi))
    for n in range(3, 7):
        if got[n] != ["nan", "1"]:
            fails.append("bad query %r answered %s" % (queries[n], got[n]))
    if out.stderr.count("query line") != 4:
        fails.append("expected 4 messages naming the bad lines, got: %s" % out.stderr)
if fails:
    sys.exit("opcheck --query: " + "; ".join(fails))
print("servesim_opcheck --query: ok")
