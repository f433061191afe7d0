#!/usr/bin/env python3
"""Fit, per GPU, how much longer a decode-attention call takes when its K and V are not left in L2 by the call
before, from servesim's own measurements (profiles/measured/<GPU>/l2_warmth/, README there), and write
profiles/<GPU>/l2_warmth.json, which the simulator adds to decode attention priced from AIConfigurator's tables
(their collectors repeat one layer's call, so a batch whose K and V fit in L2 is timed reading them from L2; in
serving, every other layer's weights and KV pass through L2 between two reads of one layer's).

Model, for a call whose K and V take B MiB: cold - warm = bias + us_per_mib * B * h(B), with h = 1 up to full_mib,
falling linearly to 0 at zero_mib, and 0 beyond. The bias (a one-call CUDA graph replayed against many calls in
one graph; about -1 us) belongs to the measurement, not to serving, and is fitted but not written as a cost.
Fitted on the grouped-query cells (heads > KV heads, as every bundled model runs; the multi-head shapes of the
--kernels files lose less and are reported, not fitted) by least squares over the cells with 8 <= B <= 96 MiB
(grid search on full_mib / zero_mib in 2 MiB steps, us_per_mib and bias in closed form); each cell is the median
over the files of its warm and rotate latencies, cells whose timed blocks spread over 1.5x left out.

  python3 scripts/fit_l2_warmth.py          # rewrites profiles/<GPU>/l2_warmth.json for each measured GPU
  python3 scripts/fit_l2_warmth.py --check  # exits 1 if a committed file differs from what the data gives
"""
import argparse
import csv
import glob
import gzip
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIB = 1 << 20
# L2 sizes as torch.cuda.get_device_properties().L2_cache_size reported on the lent machines (the script prints it).
L2_BYTES = {"H100-SXM": 52428800, "H200-SXM": 62914560}
FIT_LO_MIB, FIT_HI_MIB = 8, 96


def measured_files(gpu):
    return sorted(glob.glob(os.path.join(ROOT, "profiles", "measured", gpu, "l2_warmth", "*.csv.gz")))


def kept_rows(gpu):
    """Every measured row of the GPU's files that timed without error and whose blocks spread at most 1.5x (also
    what scripts/measured_l2.py reports from)."""
    for path in measured_files(gpu):
        with gzip.open(path, "rt") as f:
            for r in csv.DictReader(f):
                if not r["error"] and float(r["spread"]) <= 1.5:
                    yield r


def cells(gpu):
    """{(heads, kv_heads, head_dim, b, kv_len): (mib, [warm ms...], [rotate ms...])} over the GPU's files."""
    out = {}
    for r in kept_rows(gpu):
        if r["op"] != "attention_decode" or r["mode"] not in ("warm", "rotate"):
            continue
        if int(r["num_heads"]) == int(r["num_kv_heads"]):
            continue  # multi-head shapes (the --kernels files) lose less; every model priced groups heads
        key = tuple(int(r[c]) for c in ("num_heads", "num_kv_heads", "head_dim", "b", "kv_len"))
        entry = out.setdefault(key, (int(r["operand_bytes"]) / MIB, [], []))
        entry[1 if r["mode"] == "warm" else 2].append(float(r["latency"]))
    return out, [os.path.relpath(p, ROOT) for p in measured_files(gpu)]


def hit(mib, full, zero):
    if mib <= full:
        return 1.0
    if mib >= zero:
        return 0.0
    return (zero - mib) / (zero - full)


def fit(points):
    """points: [(mib, extra_us)]. Returns (sse, us_per_mib, bias, full, zero)."""
    best = None
    for full in range(16, 50, 2):
        for zero in range(full + 2, 82, 2):
            xs = [m * hit(m, full, zero) for m, _ in points]
            ys = [e for _, e in points]
            n = len(xs)
            mx, my = sum(xs) / n, sum(ys) / n
            sxx = sum((x - mx) ** 2 for x in xs)
            if sxx <= 0:
                continue
            k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
            b = my - k * mx
            sse = sum((y - b - k * x) ** 2 for x, y in zip(xs, ys))
            if best is None or sse < best[0]:
                best = (sse, k, b, full, zero)
    return best


def build(gpu):
    data, files = cells(gpu)
    points = []
    for key, (mib, warm, rot) in sorted(data.items()):
        if warm and rot and FIT_LO_MIB <= mib <= FIT_HI_MIB:
            points.append((mib, (statistics.median(rot) - statistics.median(warm)) * 1e3))
    if len(points) < 20:
        return None
    sse, k, bias, full, zero = fit(points)
    resid = sorted(abs(e - bias - k * m * hit(m, full, zero)) for m, e in points)
    return {
        "gpu": gpu,
        "l2_bytes": L2_BYTES[gpu],
        "us_per_mib": round(k, 4),
        "full_mib": full,
        "zero_mib": zero,
        "fit": {
            "cells": len(points),
            "bias_us": round(bias, 3),
            "residual_us_p50": round(resid[len(resid) // 2], 3),
            "residual_us_p90": round(resid[int(0.9 * (len(resid) - 1))], 3),
            "range_mib": [FIT_LO_MIB, FIT_HI_MIB],
        },
        "source": {"files": files, "script": "scripts/fit_l2_warmth.py",
                   "measured_by": "scripts/measure/l2_warmth.py (FlashAttention-2 varlen decode, bf16)"},
        "meaning": "Extra time (us) of one decode-attention call whose K and V (B MiB) are read from HBM rather "
                   "than left in L2 by the same call before: us_per_mib * B up to full_mib, tapering linearly to 0 at "
                   "zero_mib. Added to decode attention priced from measured tables (collected warm).",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    args = ap.parse_args()
    stale = 0
    for gpu in sorted(L2_BYTES):
        res = build(gpu)
        if res is None:
            continue
        path = os.path.join(ROOT, "profiles", gpu, "l2_warmth.json")
        text = json.dumps(res, indent=1, sort_keys=True) + "\n"
        print("%s: %.4f us/MiB up to %d MiB, none from %d MiB (bias %.2f us, %d cells, |resid| p50 %.2f / p90 %.2f us)"
              % (gpu, res["us_per_mib"], res["full_mib"], res["zero_mib"], res["fit"]["bias_us"], res["fit"]["cells"],
                 res["fit"]["residual_us_p50"], res["fit"]["residual_us_p90"]))
        if args.check:
            old = open(path).read() if os.path.exists(path) else ""
            if old != text:
                print("stale: %s" % os.path.relpath(path, ROOT))
                stale += 1
        else:
            with open(path, "w") as f:
                f.write(text)
    sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()
