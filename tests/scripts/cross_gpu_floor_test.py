#!/usr/bin/env python3
"""scripts/cross_gpu_floor.py's agreement on hand-made cells: a second table that is the first times a constant has
that constant as its median ratio and no scatter; one cell off by 20% among ten shows at p95, not at p50; cells only
one table holds are left out. repeat_stats: identical misses correlate 1 and repeat, opposite ones -1 and do not."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import cross_gpu_floor as cg  # noqa: E402

fails = []
a = {("k", (b, s)): 10.0 * b + s for b in (1, 2, 4, 8, 16) for s in (16, 32)}
scaled = {c: 0.9 * v for c, v in a.items()}
got = cg.agreement(a, scaled)
if got != {"n": 10, "median_ratio": 0.9, "p50": 0.0, "p95": 0.0}:
    fails.append("scaled table: %r" % (got,))
off = dict(a)
off[("k", (16, 32))] *= 1.2
off[("k", (32, 32))] = 1.0  # not in `a`: not compared
got = cg.agreement(a, off)
if got["n"] != 10 or got["median_ratio"] != 1.0 or got["p50"] != 0.0 or abs(got["p95"] - 20.0) > 1e-6:
    fails.append("one cell off: %r" % (got,))
if cg.agreement(a, {("x", (1, 1)): 1.0}) is not None:
    fails.append("no common cell: expected None")
# Held-out misses on two GPUs: the same errors correlate 1 and every cell over 10% repeats; a sign flip does not.
e1 = {("t", "isl", str(i)): x for i, x in enumerate([12.0, -3.0, 1.0, -15.0, 4.0])}
got = cg.repeat_stats(e1, dict(e1))
if got != {"n": 5, "corr": 1.0, "over_10pct": 2, "repeat_pct": 100.0}:
    fails.append("repeat_stats, same errors: %r" % (got,))
flipped = {c: -x for c, x in e1.items()}
got = cg.repeat_stats(e1, flipped)
if got["corr"] != -1.0 or got["repeat_pct"] != 0.0:
    fails.append("repeat_stats, flipped: %r" % (got,))
if cg.repeat_stats(e1, {("t", "isl", "0"): 1.0}) is not None:
    fails.append("repeat_stats, one common cell: expected None")
if fails:
    print("\n".join(fails))
    sys.exit(1)
print("cross_gpu_floor rules hold")
