#!/usr/bin/env python3
"""servesim_opcheck --query (scripts/cross_source.py's and scripts/measured_attention.py's access to the
predictors): a GEMM and a uniform attention batch at a measured cell return that cell (unflagged), a shape past the
grid is flagged, a collective between measured sizes lies between its neighbours, a batch of mixed lengths is
priced, decodes in one call with prompt tokens cost more on this FlashAttention-2 table than the two parts alone
(grouped heads unpacked), an MoE curve returns its measured counts (unflagged) and reads every count between two of
them inside their range (across the power-law generator's switch too), and bad lines answer "nan 1" without
stopping the run.

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
# Two sizes where the curve rises (3 and 4 fall, 21.43 -> 21.27 us: the model reads its non-decreasing fit there).
C0 = 12
assert ys[C0] < ys[C0 + 1] and all(ys[C0] >= y for y in ys[:C0])

def attention_cell(op):
    """(key, batch, length, us) of a measured cell in the middle of one of the A100 table's grids."""
    t = [t for t in json.load(open(os.path.join(PROFILES, "A100-80G", "vllm", op + ".json")))["tables"]
         if t["key"][1:] == [128, 32, 8]][0]
    (bs, ss), v = t["axes"], t["values"]
    for a in range(len(bs) // 2, len(bs)):
        for b in range(len(ss) // 2, len(ss)):
            if v[a * len(ss) + b] is not None:
                return t["key"], bs[a], ss[b], v[a * len(ss) + b]


moe = json.load(open(os.path.join(PROFILES, "A100-80G", "vllm", "moe.json")))["tables"][0]
mx, my = moe["axes"][0], moe["values"]
# The two counts either side of the power-law generator's switch (tokens x topk passing the experts), which the
# simulator reads through its model's draws.
topk, experts = moe["key"][3], moe["key"][4]
M0 = [n for n in range(len(mx) - 1) if mx[n] * topk <= experts < mx[n + 1] * topk][0]
assert mx[M0 + 1] - mx[M0] >= 3 and my[M0] is not None and my[M0 + 1] is not None
moe_between = list(range(int(mx[M0]) + 1, int(mx[M0 + 1])))
pkey, pb, ps, pcell = attention_cell("context_attention")
dkey, db, ds, dcell = attention_cell("generation_attention")
head = lambda key: " ".join(str(x) for x in key)
queries = ["gemm bfloat16 %d %d %d" % (ms[k], ns[i], ks[j]),
           "gemm bfloat16 %d %d %d" % (ms[-1] * 4, ns[i], ks[j]),
           "collective all_reduce half 8 %d" % ((xs[C0] + xs[C0 + 1]) // 2),
           "attention_prefill %s %s" % (head(pkey), " ".join(["%d:%d" % (ps, ps)] * pb)),
           "attention_decode %s %s" % (head(dkey), " ".join([str(ds)] * db)),
           "attention_decode %s 100 5000 20 30000" % head(dkey),
           "attention_prefill %s 512:512" % head(pkey),
           "attention_step %s 512:512 100 5000 20 30000" % head(pkey),
           "attention_step %s 100 5000 20 30000" % head(pkey),
           "moe %s %d" % (head(moe["key"]), mx[M0]),
           "moe %s %d" % (head(moe["key"]), mx[-1] * 2)]
queries += ["moe %s %d" % (head(moe["key"]), t) for t in moe_between]
good = len(queries)
queries += ["gemm nosuchtype 1 2 3", "gemm bfloat16 0 2 3", "hello", "collective all_reduce half 3 100",
           "attention_prefill %s 5:3" % head(pkey), "attention_decode bfloat16 128 33 8 10",
           "attention_decode nosuchtype 128 32 8 10", "moe %s 0" % head(moe["key"]),
           "moe nosuchtype 1 2 3 4 5 6 balanced 8"]
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
    lo, hi = ys[C0], ys[C0 + 1]
    if not lo <= float(got[2][0]) <= hi or got[2][1] != "0":
        fails.append("collective between sizes: %s not within [%s, %s]" % (got[2], lo, hi))
    for n, want in ((3, pcell), (4, dcell)):
        if abs(float(got[n][0]) - want) > 1e-3 * want or got[n][1] != "0":
            fails.append("uniform attention batch at a measured cell: got %s, want %s unflagged" % (got[n], want))
    if not float(got[5][0]) > 0 or got[5][1] != "0":
        fails.append("decode batch of mixed lengths: %s" % got[5])
    parts = float(got[5][0]) + float(got[6][0])
    if not float(got[7][0]) > 1.2 * parts:
        fails.append("mixed step %s not above its parts alone (%s)" % (got[7], parts))
    if abs(float(got[8][0]) - float(got[5][0])) > 1e-6 * float(got[5][0]):
        fails.append("a step of decodes only %s differs from the decode batch %s" % (got[8], got[5]))
    if abs(float(got[9][0]) - my[M0]) > 1e-6 * my[M0] or got[9][1] != "0":
        fails.append("moe at a measured count: got %s, want %s unflagged" % (got[9], my[M0]))
    if got[10][1] != "1":
        fails.append("moe past the last count not flagged: %s" % got[10])
    lo, hi = sorted((my[M0], my[M0 + 1]))
    for n, t in enumerate(moe_between, 11):
        if not lo <= float(got[n][0]) <= hi or got[n][1] != "0":
            fails.append("moe at %d tokens: %s not within [%s, %s]" % (t, got[n], lo, hi))
    for n in range(good, len(queries)):
        if got[n] != ["nan", "1"]:
            fails.append("bad query %r answered %s" % (queries[n], got[n]))
    if out.stderr.count("query line") != len(queries) - good:
        fails.append("expected %d messages naming the bad lines, got: %s" % (len(queries) - good, out.stderr))
if fails:
    sys.exit("opcheck --query: " + "; ".join(fails))
print("servesim_opcheck --query: ok")
