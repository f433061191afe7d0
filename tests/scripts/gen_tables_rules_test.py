#!/usr/bin/env python3
"""gen_tables.py's vLLM fp8 GEMM step rule (MONOTONE_IN_M) on a hand-made curve: a cell above the top of its
256-row step is lowered to it; cells at or below it, cells at m <= 128 and cells whose step top is not measured keep their
values."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import gen_tables  # noqa: E402

M = [64, 65, 128, 129, 256, 257, 512, 1024, 1025, 1280, 1281, 1536, 2048, 2049, 4353]
# n = k = 8192 on H100 (us) where measured, shaped like the real grid: overshoots at 129, 257, 1025, 1281, 2049.
V = [30, 33, 32, 48, 38, 80, 57, 118, 194, 157, 219, 185, 240, 310, 616]
table = {"key": ["fp8"], "axes": [[8192], [8192], M], "values": list(V)}
lowered = gen_tables.monotone_in_m([table])
got = dict(zip(M, table["values"]))
want = dict(zip(M, V))
want.update({129: 38, 257: 57, 1025: 157, 1281: 185})  # lowered to 256, 512, 1280, 1536
# 65 > 64 stays (m <= 128: other configurations); 2049's step top 2304 is not measured; 4353's neither.
fails = [m for m in M if got[m] != want[m]]
if fails or lowered != 4:
    sys.exit("monotone_in_m: lowered %d (want 4), wrong cells %s: got %s" % (lowered, fails, [got[m] for m in fails]))
# A step top without a measurement (None in the grid) binds nothing; a lowered cell takes the top's value exactly.
table = {"key": ["fp8"], "axes": [[1], [1], [1000, 1024, 1025, 1280]], "values": [65.0, None, 90.0, 70.0]}
gen_tables.monotone_in_m([table])
if table["values"] != [65.0, None, 70.0, 70.0]:
    sys.exit("monotone_in_m: unmeasured step top handled wrong: %s" % table["values"])
print("gen_tables MONOTONE_IN_M rule: ok")
