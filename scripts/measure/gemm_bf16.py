#!/usr/bin/env python3
"""Measure bf16 GEMM latency (torch.nn.functional.linear, cuBLAS) on the local GPU.

Needs a CUDA GPU and PyTorch; nothing in the build or the tests runs it. What it wrote on an H100 is committed
under profiles/measured/H100-SXM/gemm_bf16/ (README there) and validated by scripts/validate_ops.py.

What one measurement is (AIConfigurator's vLLM GEMM collector times the same call the same way, so the two can be
compared cell by cell): six independent weight matrices [n, k] and one activation [m, k]; one CUDA graph runs
the six products back to back; the latency of a product is a graph replay's time / 6 (six weights keep a small
matrix from being read out of L2 by the previous call to the same one). Unlike there, each cell is timed in
`--blocks` separate blocks of replays (each at least `--block-us` long) and the median block is kept, and before
a cell that follows a large one the GPU spins a low-power kernel for a while so that its clock recovers from the
power limit (`settle`). Two full sweeps taken so agree to p50 0.9% / p95 3.8% per cell (validate_ops.py reports it).

Output: CSV with AIConfigurator's gemm_perf columns (latency in ms) plus `spread` (max/min block) and `sm_mhz`
(the SM clock read after the cell). Cells already present in `--resume` files are skipped, so a grid too large
for one lease of GPU time is measured over several calls.

  python3 scripts/measure/gemm_bf16.py --out gemm_perf.csv [--resume old.csv ...] [--deadline-s 540]
  python3 scripts/measure/gemm_bf16.py --out z.csv --cells cells.csv --weights zeros --retest 0
"""
import argparse
import csv
import os
import random
import sys
import time

from gpu_timing import add_run_args, nvml_clock, settle, time_calls

# n and k: AIConfigurator's lines from 64 to 16384 plus lines where theirs are a factor 1.5-2 apart (192, 384,
# 640, 896, 1280, 1792, 4608, 9216, 14336); their 51200 / 65536 lines are left out as too costly for one
# session's GPU time.
NK = [64, 128, 192, 256, 384, 512, 640, 768, 896, 1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 4608,
      5120, 6144, 7168, 8192, 9216, 10240, 12288, 14336, 16384]
# m (tokens): AIConfigurator's values up to 16384 (their +1 pairs mark tile boundaries) and a few between.
M = [1, 2, 4, 8, 16, 17, 24, 32, 33, 48, 64, 65, 96, 128, 129, 160, 192, 256, 257, 320, 384, 512, 513, 640, 768,
     1024, 1025, 1280, 1536, 2048, 2049, 2560, 3072, 4096, 4097, 6144, 8192, 12288, 16384]
COPIES = 6
COLUMNS = ["framework", "version", "device", "op_name", "kernel_source", "gemm_dtype", "m", "n", "k", "latency",
           "spread", "sm_mhz"]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_args(ap, 540.0, "(n, k) pairs")
    ap.add_argument("--resume", nargs="*", default=[], help="CSVs whose cells are already measured")
    ap.add_argument("--retest", type=int, default=400, help="cells measured again at the end (test-retest)")
    ap.add_argument("--nk", type=str, default="", help="comma list overriding the n/k grid (smoke runs)")
    ap.add_argument("--m", type=str, default="", help="comma list overriding the m grid (smoke runs)")
    ap.add_argument("--n", type=str, default="", help="comma list overriding the n lines only (k stays the grid)")
    ap.add_argument("--cells", type=str, default="", help="CSV with m,n,k columns: measure these cells instead")
    ap.add_argument("--weights", choices=["randn", "zeros"], default="randn",
                    help="weight contents: randn (bits as varied as a real checkpoint's, the default) or zeros "
                         "(the least power a product can draw; the two are compared in docs/validation.md)")
    return ap.parse_args()


def time_cell(torch, weights, x, blocks, block_us, clock):
    """Median over `blocks` of the mean replay time of a graph of COPIES products, per product, in ms;
    the max/min block ratio; the SM clock (MHz) read after the last block, or 0 where NVML is missing."""
    lat, spread = time_calls(torch, [lambda w=w: torch.nn.functional.linear(x, w) for w in weights], blocks,
                             block_us)
    return lat, spread, clock()


def make_weights(torch, n, k, dev, gen, contents):
    if contents == "zeros":
        return [torch.zeros((n, k), device=dev, dtype=torch.bfloat16) for _ in range(COPIES)]
    return [torch.randn((n, k), device=dev, dtype=torch.bfloat16, generator=gen) for _ in range(COPIES)]


def main():
    args = parse_args()
    import torch
    if not torch.cuda.is_available():
        sys.exit("gemm_bf16.py: no CUDA device")
    dev = torch.device("cuda:0")
    torch.cuda.set_device(dev)
    name = torch.cuda.get_device_name(dev)
    try:
        import importlib.metadata as md
        cublas = md.version("nvidia-cublas")
    except Exception:
        cublas = "?"
    version = "torch-%s+cublas-%s" % (torch.__version__, cublas)
    nk = [int(v) for v in args.nk.split(",")] if args.nk else NK
    ms = [int(v) for v in args.m.split(",")] if args.m else M
    done = set()
    for path in args.resume:
        with open(path) as f:
            for r in csv.DictReader(f):
                done.add((int(r["m"]), int(r["n"]), int(r["k"])))
    print("device %s, %s, %d SMs; %d n/k values, %d m values, %d cells already measured"
          % (name, version, torch.cuda.get_device_properties(dev).multi_processor_count, len(nk), len(ms),
             len(done)), flush=True)
    clock = nvml_clock()
    dtype_label = "bfloat16" if args.weights == "randn" else "bfloat16_zero_weights"
    t0 = time.time()
    gen = torch.Generator(device=dev)
    gen.manual_seed(0)
    new = 0
    busy_ms = 0.0
    fresh = not os.path.exists(args.out)
    with open(args.out, "a", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        if fresh:
            w.writerow(COLUMNS)
        if args.cells:
            with open(args.cells) as cf:
                wanted = [(int(r["m"]), int(r["n"]), int(r["k"])) for r in csv.DictReader(cf)]
            pairs = sorted({(n, k) for _, n, k in wanted})
            per_pair = {}
            for m, n, k in wanted:
                per_pair.setdefault((n, k), []).append(m)
        else:
            pairs = [(n, k) for n in ([int(v) for v in args.n.split(",")] if args.n else nk) for k in nk]
            per_pair = {pair: ms for pair in pairs}
        for pi, (n, k) in enumerate(pairs):
            todo = [m for m in sorted(per_pair[(n, k)]) if (m, n, k) not in done]
            if not todo:
                continue
            if time.time() - t0 > args.deadline_s:
                print("deadline: stopped before pair %d of %d" % (pi, len(pairs)), flush=True)
                break
            weights = make_weights(torch, n, k, dev, gen, args.weights)
            for m in todo:
                x = torch.randn((m, k), device=dev, dtype=torch.bfloat16, generator=gen)
                settle(torch, busy_ms)
                lat, spread, mhz = time_cell(torch, weights, x, args.blocks, args.block_us, clock)
                busy_ms = lat * COPIES * (3 + args.blocks)
                w.writerow(["torch", version, name, "gemm", "torch.nn.functional.linear", dtype_label, m, n, k,
                            "%.6g" % lat, "%.4f" % spread, mhz])
                new += 1
            f.flush()
            del weights
            torch.cuda.empty_cache()
            if pi % 50 == 0:
                print("pair %d/%d (n %d, k %d): %d cells, %.0f s" % (pi, len(pairs), n, k, new, time.time() - t0),
                      flush=True)
    print("measured %d cells in %.0f s" % (new, time.time() - t0), flush=True)
    # Test-retest: a random sample of this call's cells timed again, as a fresh graph on fresh tensors.
    with open(args.out) as f:
        rows = [r for r in csv.DictReader(f)]
    rng = random.Random(1)
    sample = rng.sample(rows, min(args.retest, len(rows)))  # random order: any cell may follow a large one
    errs = []
    with open(args.out + ".retest", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["m", "n", "k", "latency", "retest", "sm_mhz", "retest_sm_mhz"])
        for r in sample:
            m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
            weights = make_weights(torch, n, k, dev, gen, args.weights)
            x = torch.randn((m, k), device=dev, dtype=torch.bfloat16, generator=gen)
            settle(torch, busy_ms)
            lat, _, mhz = time_cell(torch, weights, x, args.blocks, args.block_us, clock)
            busy_ms = lat * COPIES * (3 + args.blocks)
            w.writerow([m, n, k, r["latency"], "%.6g" % lat, r["sm_mhz"], mhz])
            errs.append(abs(lat / float(r["latency"]) - 1) * 100)
            del weights
    if errs:
        errs.sort()
        print("test-retest |diff| over %d cells: p50 %.2f%%, p95 %.2f%%, max %.1f%%"
              % (len(errs), errs[len(errs) // 2], errs[int(len(errs) * 0.95)], errs[-1]), flush=True)


if __name__ == "__main__":
    main()
