#!/usr/bin/env python3
"""Cross-source agreement: the simulator's GEMM and all-reduce predictors, built on AIConfigurator's tables
(profiles/), against the same operations measured by another campaign, Vidur's profiling data
(../shared/data/vidur/profiling: A100 linear layers of eight dense models, NCCL all-reduce on one DGX-A100 and one
DGX-H100 node). Neither measurement is the truth; the figures say how far two careful campaigns on the same GPU type
disagree, which bounds what a per-op error goal can mean. Writes the "Cross-source agreement" section of
docs/validation.md (between its markers) and prints the tables.

    python3 scripts/cross_source.py [--opcheck build/native/cli/servesim_opcheck] [--no-write | --check]

Vidur times one layer's projections as PyTorch fp16 linear modules (cuBLAS) at each token count and TP size; the
simulator reads bf16 cells (same tensor-core rate). Shapes: QKV n = (heads + 2 kv heads) x head_dim / TP,
k = hidden; O n = hidden, k = heads x head_dim / TP; gate/up n = (2 if gated else 1) x intermediate / TP, k = hidden;
down n = hidden, k = intermediate / TP. All-reduce: Vidur's single-node rows (devices_per_node = num_workers), size
in bytes of fp16, against the profile's NCCL all_reduce half curve for that many GPUs. Medians of repeated timings on
both sides. Rows whose shape lies outside the profile's measured range are counted apart (extrapolated)."""
import argparse
import csv
import glob
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import gen_tables  # noqa: E402  (pct: the nearest-rank quantile validate_ops.py reports with)
VIDUR = os.path.join(ROOT, "..", "shared", "data", "vidur", "profiling")
DOC = os.path.join(ROOT, "docs", "validation.md")
BEGIN, END = "<!-- BEGIN cross_source -->", "<!-- END cross_source -->"
# Vidur node folder -> the profile GPU whose NCCL table it is compared with.
NODES = {"a100_dgx": "A100-80G", "h100_dgx": "H100-SXM"}
OPS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")
OP_NAMES = {"attn_pre_proj": "QKV", "attn_post_proj": "O", "mlp_up_proj": "gate/up", "mlp_down_proj": "down"}


def gemm_shape(op, r):
    heads, kv, hidden = int(r["n_head"]), int(r["n_kv_head"]), int(r["n_embd"])
    inter, tp = int(r["n_expanded_embd"]), int(r["num_tensor_parallel_workers"])
    hd = hidden // heads
    if op == "attn_pre_proj":
        return (heads + 2 * kv) * hd // tp, hidden
    if op == "attn_post_proj":
        return hidden, heads * hd // tp
    if op == "mlp_up_proj":
        return (2 if r["use_gated_mlp"].strip().lower() == "true" else 1) * inter // tp, hidden
    return hidden, inter // tp


def run_queries(opcheck, gpu, backend, lines):
    out = subprocess.run([opcheck, "--query", os.path.join(ROOT, "profiles"), gpu, backend], input="\n".join(lines),
                         capture_output=True, text=True, check=True)
    res = []
    for line in out.stdout.splitlines():
        us, flag = line.split()
        res.append((float(us), flag == "1"))
    if len(res) != len(lines):
        sys.exit("servesim_opcheck --query answered %d of %d queries" % (len(res), len(lines)))
    return res


def stats(pairs):
    """pairs: (prediction, measurement). Absolute and signed percentage errors of the prediction."""
    ape = sorted(abs(p / m - 1) * 100 for p, m in pairs)  # sorted: the max is the last
    signed = [(p / m - 1) * 100 for p, m in pairs]

    # The same after dividing out one factor, the median ratio: the shape-by-shape scatter left once a constant
    # difference between the two machines (clocks, power limit, software) is taken away.
    scale = statistics.median(p / m for p, m in pairs)
    rel = [abs(p / m / scale - 1) * 100 for p, m in pairs]

    return {"n": len(pairs), "p50": statistics.median(ape), "p95": gen_tables.pct(ape, 0.95), "max": ape[-1],
            "signed_median": statistics.median(signed), "rel_p50": statistics.median(rel),
            "rel_p95": gen_tables.pct(rel, 0.95)}


M_BANDS = ("m <= 64", "m 65-512", "m 513-2048", "m > 2048")


def m_band(m):
    return M_BANDS[0] if m <= 64 else M_BANDS[1] if m <= 512 else M_BANDS[2] if m <= 2048 else M_BANDS[3]


def gemm_rows(opcheck):
    found = sorted(glob.glob(os.path.join(VIDUR, "compute", "a100", "*", "*", "mlp.csv")))
    groups, queries, meta = {}, [], []
    for path in found:
        model = os.path.basename(os.path.dirname(path))
        for r in csv.DictReader(open(path)):
            m = int(r["num_tokens"])
            for op in OPS:
                med = r.get("time_stats.%s.median" % op, "")
                if not med:
                    continue
                n, k = gemm_shape(op, r)
                queries.append("gemm bfloat16 %d %d %d" % (m, n, k))
                meta.append((model, op, m, float(med) * 1000.0))
    answers = run_queries(opcheck, "A100-80G", "vllm", queries)
    extrapolated = 0
    for (model, op, m, truth), (pred, extra) in zip(meta, answers):
        if extra or pred != pred:
            extrapolated += 1
            continue
        for key in ("all", OP_NAMES[op], "model " + model, m_band(m)):
            groups.setdefault(key, []).append((pred, truth))
    return groups, extrapolated, len(found)


def allreduce_rows(opcheck):
    groups, extrapolated = {}, 0
    for node, gpu in NODES.items():
        path = os.path.join(VIDUR, "network", node, "all_reduce.csv")
        if not os.path.exists(path):
            continue
        rows = [r for r in csv.DictReader(open(path))
                if r["collective"] == "all_reduce" and r["devices_per_node"] == r["num_workers"]]
        queries = ["collective all_reduce half %s %d" % (r["num_workers"], int(r["size"]) // 2) for r in rows]
        for r, (pred, extra) in zip(rows, run_queries(opcheck, gpu, "vllm", queries)):
            if extra or pred != pred:
                extrapolated += 1
                continue
            truth = float(r["time_stats.all_reduce.median"]) * 1000.0
            size = int(r["size"])
            band = "<= 256 KiB" if size <= 256 << 10 else ("<= 8 MiB" if size <= 8 << 20 else "> 8 MiB")
            for key in ("%s all" % gpu, "%s %s GPUs" % (gpu, r["num_workers"]), "%s %s" % (gpu, band)):
                groups.setdefault(key, []).append((pred, truth))
    return groups, extrapolated


def table(title, groups, order):
    lines = ["| %s | n | p50 | p95 | max | signed median | p50 / p95 after the median ratio |" % title,
             "|---|---|---|---|---|---|---|"]
    for key in order:
        if key in groups:
            s = stats(groups[key])
            lines.append("| %s | %d | %.1f%% | %.1f%% | %.0f%% | %+.1f%% | %.1f%% / %.1f%% |" % (
                key, s["n"], s["p50"], s["p95"], s["max"], s["signed_median"], s["rel_p50"], s["rel_p95"]))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--opcheck", default=os.path.join(ROOT, "build", "native", "cli", "servesim_opcheck"))
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--check", action="store_true",
                    help="fail unless docs/validation.md holds exactly this run's section (nothing is written)")
    args = ap.parse_args()
    if not os.path.exists(args.opcheck):
        sys.exit("servesim_opcheck not built: %s" % args.opcheck)
    if not os.path.isdir(VIDUR):
        sys.exit("Vidur profiling data not found at %s" % VIDUR)
    gemm, gemm_extra, files = gemm_rows(args.opcheck)
    comm, comm_extra = allreduce_rows(args.opcheck)
    models = sorted(k for k in gemm if k.startswith("model "))
    lines = [BEGIN, "## Cross-source agreement: the profiles against Vidur's measurements", "",
             "Command: `python3 scripts/cross_source.py` (tool: `servesim_opcheck --query`, the simulator's own "
             "predictors over the full tables). %d Vidur A100 linear-layer files; %d GEMM and %d all-reduce rows "
             "fell outside the profiles' measured ranges and are left out. Errors are (profile - Vidur) / Vidur of "
             "the median timings: a disagreement between two campaigns, not an error against a truth."
             % (files, gemm_extra, comm_extra), ""]
    lines += table("A100-80G GEMM (AIConfigurator vLLM bf16 vs Vidur fp16 linear)", gemm,
                   ["all", "QKV", "O", "gate/up", "down"] + list(M_BANDS) + models) + [""]
    comm_order = []
    for gpu in NODES.values():
        comm_order += ["%s all" % gpu] + ["%s %d GPUs" % (gpu, g) for g in (2, 4, 8)] + [
            "%s %s" % (gpu, b) for b in ("<= 256 KiB", "<= 8 MiB", "> 8 MiB")]
    lines += table("NCCL all-reduce, one node (AIConfigurator vs Vidur)", comm, comm_order) + ["", END]
    text = "\n".join(lines)
    doc = open(DOC).read()
    if args.check:
        if text not in doc:
            sys.exit("docs/validation.md's cross-source section is stale: run python3 scripts/cross_source.py")
        print("cross-source section up to date")
        return
    print(text)
    if args.no_write:
        return
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + text + doc[doc.index(END) + len(END):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + text + "\n"
    open(DOC, "w").write(doc)


if __name__ == "__main__":
    main()
