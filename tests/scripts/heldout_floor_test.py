#!/usr/bin/env python3
"""scripts/heldout_floor.py on hand-made grids: a held-out value inside its neighbours' range has a floor of 0, one
outside it the distance to the nearer neighbour in percent of the value; GEMM holds out every other interior n and
k line, attention every third interior length and batch, collectives every other message size, as
servesim_opcheck does."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import heldout_floor as hf  # noqa: E402

fails = []


def near(a, b):
    return abs(a - b) < 1e-9


if not near(hf.bound_pct(10, 20, 15), 0) or not near(hf.bound_pct(20, 10, 25), 20) or not near(hf.bound_pct(10, 20, 8), 25):
    fails.append("bound_pct: %r %r %r" % (hf.bound_pct(10, 20, 15), hf.bound_pct(20, 10, 25), hf.bound_pct(10, 20, 8)))

# A 1-D curve 1, 2, 10, 4, 5: every other interior point held out (indices 1 and 3).
curve = {"axes": [[1, 2, 3, 4, 5]], "values": [1.0, 2.0, 10.0, 4.0, 5.0]}
got = hf.curve_bounds(curve, 2)
if got != [(1.0, 10.0, 2.0), (10.0, 5.0, 4.0)]:
    fails.append("curve_bounds: %r" % (got,))

# A 4 x 4 (batch, length) grid: every third interior line of each axis is index 1 only.
grid = {"axes": [[1, 2, 4, 8], [16, 32, 64, 128]], "values": [float(i * 4 + j + 1) for i in range(4) for j in range(4)],
        "key": ["bfloat16", "128", "8", "8"]}
triples = hf.grid2_bounds(grid)
if len(triples) != 8 or triples[0] != (1.0, 3.0, 2.0) or triples[4] != (1.0, 9.0, 5.0):
    fails.append("grid2_bounds: %r" % (triples,))

# GEMM: n, k lines of 3 values each (index 1 held out on both), 2 m values.
n_ax, k_ax, m_ax = [64, 128, 256], [64, 128, 256], [1, 2]
vals = [float(a * 100 + b * 10 + c) for a in range(3) for b in range(3) for c in range(2)]
triples = hf.gemm_bounds({"axes": [n_ax, k_ax, m_ax], "values": vals})
if len(triples) != 12 or triples[0] != (0.0, 200.0, 100.0):
    fails.append("gemm_bounds: %d triples, first %r" % (len(triples), triples[:1]))

stats = hf.floor_stats([0.0, 0.0, 5.0, 50.0])
if stats["n"] != 4 or stats["outside_pct"] != 50.0:
    fails.append("floor_stats: %r" % (stats,))

if fails:
    sys.exit("heldout_floor: " + "; ".join(fails))
print("heldout_floor bounds and hold-out lines: ok")
