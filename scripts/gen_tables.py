#!/usr/bin/env python3
"""Generate servesim's per-GPU operator tables from the AIConfigurator measurements in the shared data.

Usage (from the repository root):

    python3 scripts/gen_tables.py [--data DIR]     # write profiles/<gpu>/...
    python3 scripts/gen_tables.py --check          # regenerate in memory, compare byte for byte

DIR defaults to ../shared/data relative to the repository root. Standard library only; the output is
byte-identical on every run (fixed ordering, fixed number formatting, no timestamps, LF line ends).

Writes, for each GPU with measurements (H100-SXM, H200-SXM, A100-80G):
  profiles/<gpu>/<backend>/gemm.json                  GEMM latency by (dtype; n, k, m)
  profiles/<gpu>/<backend>/context_attention.json     prefill attention by (kv dtype, head_dim, heads, kv heads; batch, isl)
  profiles/<gpu>/<backend>/generation_attention.json  decode attention by (kv dtype, head_dim, heads, kv heads; batch, kv_len)
  profiles/<gpu>/<backend>/{context,generation}_attention_window.json   the same with a sliding window (key + window)
  profiles/<gpu>/<backend>/moe.json                   fused MoE by (dtype, hidden, inter, topk, experts, tp, ep, skew; tokens)
  profiles/<gpu>/<backend>/mla_context.json, mla_generation.json   DeepSeek MLA attention (module or kernel tables)
  profiles/<gpu>/<backend>/custom_allreduce.json      custom all-reduce by (variant, gpus; elements)
  profiles/<gpu>/sglang/deepep_ll.json, deepep_normal.json   SGLang DeepEP dispatch/combine by (phase, hidden,
                                                      topk, experts[, sms]; tokens per rank), H100-SXM only
  profiles/<gpu>/nccl.json                            NCCL collectives by (op, dtype, gpus; elements)
  profiles/<gpu>/p2p.json                             NCCL send/recv between two GPUs by (placement; bytes), from
                                                      Vidur's network profiling (A100-80G, H100-SXM)
  profiles/<gpu>/manifest.json                        source files (sha256, rows read, rows kept) and output sizes
  profiles/datasheet/efficiency.json                  efficiency curves for GPUs without tables (fitted here),
                                                      and the measured window/full prefill ratio
The format is documented in profiles/README.md.
"""

import argparse
import csv
import gzip
import hashlib
import io
import json
import math
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA = os.path.normpath(os.path.join(REPO_ROOT, "..", "shared", "data"))
PROFILES = os.path.join(REPO_ROOT, "profiles")
AIC = "aiconfigurator/systems_data"

# servesim GPU name -> AIConfigurator system folder
GPUS = [("A100-80G", "a100_sxm"), ("H100-SXM", "h100_sxm"), ("H200-SXM", "h200_sxm")]
FORMAT = "servesim-op-table/1"


# --------------------------------------------------------------------------- helpers

def sha256_bytes(b):
    return hashlib.sha256(b).hexdigest()


def fmt(v):
    """A latency in microseconds with 4 significant digits, shortest decimal, no exponent."""
    if v is None:
        return "null"
    if v <= 0:
        raise ValueError("non-positive latency %r" % v)
    s = "%.4g" % v
    if "e" in s:  # %.4g switches to exponent form at >= 1e4 (or tiny values): print the rounded value plainly
        r = float(s)
        s = ("%d" % round(r)) if r >= 1 else ("%.10f" % r).rstrip("0")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def num_text(x):
    """Axis / key numbers: integers print without a decimal point."""
    if isinstance(x, str):
        return json.dumps(x)
    if float(x).is_integer():
        return str(int(x))
    return repr(float(x))


def read_csv(path):
    """Rows of a .csv or .csv.gz file and the sha256 of its bytes as stored."""
    raw = open(path, "rb").read()
    text = (gzip.decompress(raw) if path.endswith(".gz") else raw).decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    return rows, sha256_bytes(raw)


class Source:
    """One measured file: where it came from and how many of its rows a table kept."""

    def __init__(self, data_dir, rel):
        self.rel = rel
        self.path = os.path.join(data_dir, rel)
        self.rows, self.sha = read_csv(self.path)
        self.kept = 0

    def doc(self):
        return {"file": self.rel, "sha256": self.sha, "rows": len(self.rows), "rows_kept": self.kept}


def find_source(data_dir, system, op, backend, name):
    """The single <version> folder holding <name>.csv.gz for this system/op/backend, or None."""
    base = os.path.join(data_dir, AIC, system, op, backend)
    if not os.path.isdir(base):
        return None
    hits = []
    for version in sorted(os.listdir(base)):
        p = os.path.join(base, version, name + ".csv.gz")
        if os.path.exists(p):
            hits.append((version, "%s/%s/%s/%s/%s/%s.csv.gz" % (AIC, system, op, backend, version, name)))
    if len(hits) != 1:
        if hits:
            raise SystemExit("more than one version of %s/%s/%s/%s" % (system, op, backend, name))
        return None
    return hits[0]


# --------------------------------------------------------------------------- grid tables

class Grid:
    """Rows grouped by a key tuple; within a key, latency on the cross product of the axis values seen."""

    def __init__(self, key_fields, axis_fields):
        self.key_fields = key_fields
        self.axis_fields = axis_fields
        self.cells = {}  # key tuple -> {axis tuple: [latencies]}
        self.meta = {}   # key tuple -> kernel name(s)

    def add(self, key, axes, latency_ms, kernel):
        self.cells.setdefault(key, {}).setdefault(axes, []).append(latency_ms * 1000.0)
        self.meta.setdefault(key, set()).add(kernel)

    def tables(self):
        out = []
        for key in sorted(self.cells, key=sort_key):
            cells = self.cells[key]
            axes = []
            for i in range(len(self.axis_fields)):
                axes.append(sorted({a[i] for a in cells}, key=sort_key_1))
            values = []
            for point in product(axes):
                lat = cells.get(point)
                # Repeated measurements of one shape (rare) are averaged.
                values.append(None if lat is None else sum(lat) / len(lat))
            out.append({"key": list(key), "kernel": "+".join(sorted(self.meta[key])), "axes": axes,
                        "values": values})
        return out


def sort_key_1(v):
    return (0, v, "") if not isinstance(v, str) else (1, 0, v)


def sort_key(t):
    return tuple(sort_key_1(v) for v in t)


def product(axes):
    if not axes:
        yield ()
        return
    for head in axes[0]:
        for rest in product(axes[1:]):
            yield (head,) + rest


def to_num(s):
    f = float(s)
    return int(f) if f.is_integer() else f


def table_text(doc_head, tables):
    """JSON with one line per table (stable diffs) and the fixed number format above."""
    lines = ["{"]
    for k, v in doc_head.items():
        lines.append(" %s: %s," % (json.dumps(k), json.dumps(v, sort_keys=True, separators=(", ", ": "))))
    lines.append(' "tables": [')
    for i, t in enumerate(tables):
        key = "[" + ",".join(num_text(x) for x in t["key"]) + "]"
        axes = "[" + ",".join("[" + ",".join(num_text(x) for x in a) + "]" for a in t["axes"]) + "]"
        vals = "[" + ",".join(fmt(v) for v in t["values"]) + "]"
        sep = "," if i + 1 < len(tables) else ""
        lines.append('  {"key":%s,"kernel":%s,"axes":%s,"values":%s}%s' % (key, json.dumps(t["kernel"]), axes, vals,
                                                                            sep))
    lines.append(" ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- per-op builders
# Each returns (grid, doc) or None; `doc` holds the field names and units written into the file.

# vLLM's per-tensor FP8 GEMM (CUTLASS scaled_mm) picks its kernel configuration by next_pow2(m), and above m = 128 runs
# one configuration of 128 x 128 tiles in 2 x 1 clusters (csrc/quantization/cutlass_w8a8/c3x/
# scaled_mm_sm90_fp8_dispatch.cuh), so its work grows in steps of 256 rows: every m in (256 (j - 1), 256 j] launches
# the clusters of 256 j with the same kernel (256 j never crosses a next_pow2 bucket boundary above 128) and cannot
# take longer. AIConfigurator measures m = 256 j + 1 beside 256 j (the step), and on H100 and H200 those cells often
# exceed the top of their own step (m = 1025: 194 us against 157 us at m = 1280, n = k = 8192; m = 129: 48 us against
# 38 us at 256), which that kernel cannot do. Such a cell is lowered to the value at the top of its step when that is
# measured: a batch of 1025-1280 tokens costs what 1280 does, the 256-row step stays and its overshoot goes. Counted
# per table in the file's "monotone_in_m" record. (backend, dtype) pairs the rule applies to:
MONOTONE_IN_M = {("vllm", "fp8")}
STEP_ROWS = 256   # rows per tile cluster (128-row tile x 2 along m) of the configuration above m = 128
STEP_FROM = 128   # smaller m runs the (64, 128] and [1, 64] configurations


def monotone_in_m(tables):
    """Lowers, in place, each cell above the value at the top of its 256-row step; returns how many."""
    lowered = 0
    for t in tables:
        n_axis, k_axis, m_axis = t["axes"]
        v = t["values"]
        index = {m: l for l, m in enumerate(m_axis)}
        for i in range(len(n_axis)):
            for j in range(len(k_axis)):
                base = (i * len(k_axis) + j) * len(m_axis)
                for l, m in enumerate(m_axis):
                    top = -(-m // STEP_ROWS) * STEP_ROWS
                    if m <= STEP_FROM or top == m or top not in index:
                        continue
                    x, y = v[base + l], v[base + index[top]]
                    if x is not None and y is not None and x > y:
                        v[base + l] = y
                        lowered += 1
    return lowered


def apply_monotone_in_m(backend, head, tables):
    """MONOTONE_IN_M on a GEMM file's tables of this backend, recorded in its head (nothing for other backends)."""
    dtypes = sorted(dt for b, dt in MONOTONE_IN_M if b == backend)
    sel = [t for t in tables if t["key"][0] in dtypes]
    if sel:
        head["monotone_in_m"] = {"dtypes": dtypes, "rule": "a cell above the top of its 256-row step lowered to it "
                                 "(scripts/gen_tables.py, MONOTONE_IN_M)",
                                 "cells": sum(len(t["values"]) for t in sel), "cells_lowered": monotone_in_m(sel)}


def build_gemm(src):
    g = Grid(["dtype"], ["n", "k", "m"])
    for r in src.rows:
        g.add((r["gemm_dtype"],), (int(r["n"]), int(r["k"]), int(r["m"])), float(r["latency"]), r["kernel_source"])
        src.kept += 1
    return g, {"axes_doc": "n = output features, k = input features, m = tokens (rows)"}


# Sliding-window rows kept as grids of their own (attention *_window.json): the window of the bundled models that
# have one (gpt-oss: 128 keys). Rows of other windows are left out.
SLIDING_WINDOW = 128


def build_attention(src, generation, window=0):
    """FlashAttention-style kernels with head_dim <= 256 and the given sliding window (0 = full attention; the
    window tables key their grids by it too). FA4's head_dim 512 rows and windows no bundled model uses are left
    out."""
    kf = ["kv_cache_dtype", "head_dim", "num_heads", "num_kv_heads"] + (["window"] if window else [])
    g = Grid(kf, ["batch", "kv_len" if generation else "isl"])
    for r in src.rows:
        w = int(r.get("window_size", "0") or 0)
        if w != window or int(r.get("beam_width", "1")) != 1 or int(r["head_dim"]) > 256:
            continue
        key = (r["kv_cache_dtype"], int(r["head_dim"]), int(r["num_heads"]), int(r["num_key_value_heads"])) + \
              ((w,) if window else ())
        # Generation: `step` is the KV history; the new token attends to step + 1 keys.
        second = int(r["step"]) + 1 if generation else int(r["isl"])
        g.add(key, (int(r["batch_size"]), second), float(r["latency"]), r["kernel_source"])
        src.kept += 1
    doc = {"axes_doc": ("batch = requests, each decoding one token that attends to kv_len keys (step + 1)"
                        if generation else "batch = requests, each a whole prompt of isl tokens (causal, no prior KV)")}
    if window:
        doc["axes_doc"] += ("; sliding window: each query attends to at most `window` keys (itself and the "
                            "window - 1 before it); kv_len / isl is the whole sequence")
    return g, doc


def build_moe(src):
    g = Grid(["dtype", "hidden", "inter", "topk", "experts", "tp", "ep", "distribution"], ["tokens"])
    for r in src.rows:
        key = (r["moe_dtype"], int(r["hidden_size"]), int(r["inter_size"]), int(r["topk"]), int(r["num_experts"]),
               int(r["moe_tp_size"]), int(r["moe_ep_size"]), r["distribution"])
        g.add(key, (int(r["num_tokens"]),), float(r["latency"]), r["kernel_source"])
        src.kept += 1
    return g, {"axes_doc": "tokens = tokens entering the MoE layer; latency of the busiest EP rank's experts "
                           "(inter is the full expert width; tp shards it)"}


def build_mla(src, generation):
    module = "gemm_type" in src.rows[0]
    kf = ["kernel", "kv_cache_dtype"] + (["gemm_type"] if module else []) + ["num_heads", "tp"]
    g = Grid(kf, ["batch", "kv_len" if generation else "isl"])
    for r in src.rows:
        key = (r["kernel_source"], r["kv_cache_dtype"]) + ((r["gemm_type"],) if module else ()) + \
              (int(r["num_heads"]), int(r["tp_size"]))
        second = (int(r["step"]) + (0 if module else 1)) if generation else int(r["isl"])
        g.add(key, (int(r["batch_size"]), second), float(r["latency"]), r["kernel_source"])
        src.kept += 1
    doc = {"module": module,
           "axes_doc": ("attention module of one DeepSeek layer (projections + attention)" if module else
                        "MLA attention kernel") + "; num_heads = heads on this GPU"}
    return g, doc


def build_custom_ar(src):
    g = Grid(["variant", "gpus"], ["elements"])
    for r in src.rows:
        variant = r.get("backend") or r.get("implementation") or "custom"
        variant = {"vllm_graph": "graph", "vllm_eager": "eager", "trtllm": "graph"}.get(variant, variant)
        g.add((variant, int(r["num_gpus"])), (int(r["message_size"]),), float(r["latency"]), r["kernel_source"])
        src.kept += 1
    return g, {"axes_doc": "elements = bfloat16 values reduced; graph = replayed in a CUDA graph, "
                           "eager = launched from Python"}


def build_nccl(src):
    g = Grid(["op", "dtype", "gpus"], ["elements"])
    for r in src.rows:
        g.add((r["op_name"], r["nccl_dtype"], int(r["num_gpus"])), (int(r["message_size"]),), float(r["latency"]),
              r["kernel_source"])
        src.kept += 1
    return g, {"axes_doc": "elements = values per GPU message (half = 2 bytes, int8 = 1 byte)"}


# Point-to-point send/recv between two GPUs (what a pipeline stage hands the next), from Vidur's network profiling
# (data/vidur/README.md: torch.distributed NCCL send/recv timed with CUDA events, medians in ms). Vidur measured a
# DGX-A100 and a DGX-H100: two GPUs of one node (devices_per_node 2, NVLink) and one GPU on each of two nodes
# (devices_per_node 1, the inter-node network). AIConfigurator's data has no point-to-point measurements.
P2P_SOURCES = {"A100-80G": "vidur/profiling/network/a100_dgx/send_recv.csv",
               "H100-SXM": "vidur/profiling/network/h100_dgx/send_recv.csv"}


def build_p2p(src):
    g = Grid(["placement"], ["bytes"])
    for r in src.rows:
        if r["collective"] != "send_recv" or r["num_workers"] != "2":
            continue
        placement = {"2": "intra_node", "1": "inter_node"}.get(r["devices_per_node"])
        if placement is None:
            continue
        g.add((placement,), (int(r["size"]),), float(r["time_stats.send_recv.median"]), "nccl_send_recv")
        src.kept += 1
    return g, {"axes_doc": "bytes = message size; intra_node = two GPUs of one node (NVLink), inter_node = one GPU on "
                           "each of two nodes; median of Vidur's timings"}


# SGLang's DeepEP MoE all-to-all (H100-SXM, sglang 0.5.12; AIConfigurator collector/wideep/sglang/
# collect_deepep_{ll,normal}.py wrapping deepep/test_{low_latency,intranode}.py). What the columns mean, from those
# sources (docs in profiles/README.md):
# - num_token is per rank: every rank builds x = [num_token, hidden] and dispatches it (test_intranode.test_main,
#   test_low_latency.test_main); AIConfigurator's consumer queries it with the tokens of one attention-DP rank.
# - node_num 1 = one collective over every visible GPU of one node, i.e. EP 8 on an 8-GPU H100 node (the collector
#   spawns one rank per visible GPU and skips expert counts not divisible by the rank count).
# - Normal mode: each row is the best NVL chunk size at a fixed SM count; dispatch is timed with the FP8 payload
#   when DeepEP is built for SM90 (H100), combine in BF16; notify is 0 on one node (no RDMA phase). SGLang's
#   default SM count is DeepEP's Buffer.num_sms = 20 (DeepEPConfig without --deepep-config), so only the 20-SM rows
#   are kept. Low-latency mode: dispatch_avg_t_us / combine_avg_t_us with SGLang's fixed 128-token receive buffer.
# The CSV already holds microseconds: divided by 1000 here because Grid.add takes milliseconds.
DEEPEP_NORMAL_SMS = 20


def build_deepep_ll(src):
    g = Grid(["phase", "hidden", "topk", "experts"], ["tokens"])
    for r in src.rows:
        if int(r["node_num"]) != 1:
            continue
        shape = (int(r["hidden_size"]), int(r["num_topk"]), int(r["num_experts"]))
        for phase, col in (("dispatch", "dispatch_avg_t_us"), ("combine", "combine_avg_t_us")):
            g.add((phase,) + shape, (int(r["num_token"]),), float(r[col]) / 1000.0, r["kernel_source"])
        src.kept += 1
    return g, {"axes_doc": "tokens = tokens each of the 8 EP ranks (one H100 node) dispatches; one low-latency "
                           "dispatch or combine (DeepEP, SGLang's 128-token receive buffer)",
               "ep_ranks": 8}


def build_deepep_normal(src):
    g = Grid(["phase", "hidden", "topk", "experts", "sms"], ["tokens"])
    for r in src.rows:
        if int(r["node_num"]) != 1 or int(r["dispatch_sms"]) != DEEPEP_NORMAL_SMS:
            continue
        if int(r["combine_sms"]) != DEEPEP_NORMAL_SMS:
            raise SystemExit("deepep normal row with dispatch_sms %s but combine_sms %s"
                             % (r["dispatch_sms"], r["combine_sms"]))
        shape = (int(r["hidden_size"]), int(r["num_topk"]), int(r["num_experts"]), DEEPEP_NORMAL_SMS)
        for phase, col, notify in (("dispatch", "dispatch_transmit_us", "dispatch_notify_us"),
                                   ("combine", "combine_transmit_us", "combine_notify_us")):
            g.add((phase,) + shape, (int(r["num_token"]),), (float(r[col]) + float(r[notify])) / 1000.0,
                  r["kernel_source"])
        src.kept += 1
    return g, {"axes_doc": "tokens = tokens each of the 8 EP ranks (one H100 node) dispatches; one normal-mode "
                           "(intranode NVLink) dispatch or combine, transmit + notify, best NVL chunk at sms SMs "
                           "(dispatch with the FP8 payload, combine BF16)",
               "ep_ranks": 8}


# (output name, op folder, source file name, builder)
BACKEND_OPS = [
    ("gemm", "gemm", "gemm_perf", build_gemm),
    ("context_attention", "attention", "context_attention_perf", lambda s: build_attention(s, False)),
    ("generation_attention", "attention", "generation_attention_perf", lambda s: build_attention(s, True)),
    ("context_attention_window", "attention", "context_attention_perf", lambda s: build_attention(s, False, SLIDING_WINDOW)),
    ("generation_attention_window", "attention", "generation_attention_perf",
     lambda s: build_attention(s, True, SLIDING_WINDOW)),
    ("moe", "moe", "moe_perf", build_moe),
    ("mla_context", "mla", "mla_context_module_perf", lambda s: build_mla(s, False)),
    ("mla_generation", "mla", "mla_generation_module_perf", lambda s: build_mla(s, True)),
    ("mla_context", "mla", "context_mla_perf", lambda s: build_mla(s, False)),
    ("mla_generation", "mla", "generation_mla_perf", lambda s: build_mla(s, True)),
    ("custom_allreduce", "comm", "custom_allreduce_perf", build_custom_ar),
]
# SGLang runs vLLM's kernel families (its roles load the vllm tables); only its DeepEP all-to-all is its own.
SGLANG_OPS = [
    ("deepep_ll", "comm", "wideep_deepep_ll_perf", build_deepep_ll),
    ("deepep_normal", "comm", "wideep_deepep_normal_perf", build_deepep_normal),
]
BACKENDS = ["vllm", "trtllm", "sglang"]
OPS = {"vllm": BACKEND_OPS, "trtllm": BACKEND_OPS, "sglang": SGLANG_OPS}


def add_gpu_table(out, manifest, gpu, op, version, src, builder):
    """Writes profiles/<gpu>/<op>.json (a table of the GPU, not of one engine: backend "nccl") and its manifest entry."""
    grid, doc = builder(src)
    head = {"format": FORMAT, "gpu": gpu, "backend": "nccl", "backend_version": version, "op": op,
            "unit": "us", "key_fields": grid.key_fields, "axis_fields": grid.axis_fields}
    head.update(doc)
    head["source"] = src.doc()
    tables = grid.tables()
    path = "%s/%s.json" % (gpu, op)
    out[path] = table_text(head, tables)
    manifest["files"].append({"path": path, "op": op, "backend": "nccl", "backend_version": version,
                              "source": src.doc(), "tables": len(tables),
                              "cells": sum(len(t["values"]) for t in tables),
                              "measured_cells": sum(1 for t in tables for v in t["values"] if v is not None),
                              "bytes": len(out[path].encode())})


def generate(data_dir):
    """Returns {relative path under profiles/: text}."""
    out = {}
    for gpu, system in GPUS:
        manifest = {"format": "servesim-op-manifest/1", "gpu": gpu, "aiconfigurator_system": system,
                    "data_readme": "aiconfigurator/README.md", "files": []}
        for backend in BACKENDS:
            done = set()
            for name, op, src_name, builder in OPS[backend]:
                if name in done:
                    continue  # a module table was preferred over the per-kernel one
                hit = find_source(data_dir, system, op, backend, src_name)
                if hit is None:
                    continue
                version, rel = hit
                src = Source(data_dir, rel)
                grid, doc = builder(src)
                if name.endswith("_window") and src.kept == 0:
                    continue  # no rows of the window (A100's data): no file
                done.add(name)
                head = {"format": FORMAT, "gpu": gpu, "backend": backend, "backend_version": version, "op": name,
                        "unit": "us", "key_fields": grid.key_fields, "axis_fields": grid.axis_fields}
                head.update(doc)
                head["source"] = src.doc()
                tables = grid.tables()
                if name == "gemm":
                    apply_monotone_in_m(backend, head, tables)
                path = "%s/%s/%s.json" % (gpu, backend, name)
                out[path] = table_text(head, tables)
                manifest["files"].append({"path": path, "op": name, "backend": backend, "backend_version": version,
                                          "source": src.doc(), "tables": len(tables),
                                          "cells": sum(len(t["values"]) for t in tables),
                                          "measured_cells": sum(1 for t in tables for v in t["values"] if v is not None),
                                          "bytes": len(out[path].encode())})
        hit = find_source(data_dir, system, "comm", "nccl", "nccl_perf")
        if hit:
            version, rel = hit
            add_gpu_table(out, manifest, gpu, "nccl", version, Source(data_dir, rel), build_nccl)
        rel = P2P_SOURCES.get(gpu)
        if rel and os.path.exists(os.path.join(data_dir, rel)):
            add_gpu_table(out, manifest, gpu, "p2p", "vidur", Source(data_dir, rel), build_p2p)
        for b in BACKENDS:
            # What a role of this backend may load: its own files and NCCL's (SGLang's also the vLLM ones).
            loads = (b, "nccl", "vllm") if b == "sglang" else (b, "nccl")
            total = sum(f["bytes"] for f in manifest["files"] if f["backend"] in loads)
            if any(f["backend"] == b for f in manifest["files"]):
                manifest.setdefault("bytes_per_backend", {})[b] = total
        out["%s/manifest.json" % gpu] = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    out["datasheet/efficiency.json"] = efficiency_doc(out)
    return out



# --------------------------------------------------------------------------- datasheet efficiency curves
# GPUs without measured tables are priced by the roofline of core/fidelity/roofline_cost_model.cc corrected by
# these curves: for each op family, the median of measured / roofline time over the GPUs with tables, against a
# size feature. The roofline below mirrors the C++ one (same constants); keep them in step.

ROOF = {"gemm_efficiency": 0.70, "attention_efficiency": 0.55, "memory_efficiency": 0.80, "kernel_fixed_us": 3.0,
        "link_efficiency": 0.80, "link_latency_us": 10.0}


def gpu_facts(name):
    g = json.load(open(os.path.join(PROFILES, "gpus", name + ".json")))
    return {"bf16": g["bf16_tflops"] * 1e12, "fp8": (g.get("fp8_tflops") or g["bf16_tflops"]) * 1e12,
            "hbm": g["hbm_tb_s"] * 1e12, "link": (g.get("nvlink_gb_s") or g.get("pcie_gb_s")) * 1e9}


def roof_gemm_us(g, m, n, k, fp8):
    peak = g["fp8"] if fp8 else g["bf16"]
    w = 1.0 if fp8 else 2.0
    comp = 2.0 * m * n * k / (peak * ROOF["gemm_efficiency"])
    mem = (k * n * w + (m * k + m * n) * 2.0) / (g["hbm"] * ROOF["memory_efficiency"])
    return max(comp, mem) * 1e6 + ROOF["kernel_fixed_us"]


def roof_attn_us(g, heads, kv_heads, d, chunks, decode):
    flops = bytes_ = 0.0
    for q, ctx in chunks:
        if decode:
            flops += 2.0 * heads * 2 * d * ctx
            bytes_ += ctx * kv_heads * 2 * d * 2.0
        else:
            pairs = q * (ctx - q) + q * (q + 1) / 2.0
            flops += 2.0 * heads * 2 * d * pairs
            bytes_ += ctx * kv_heads * 2 * d * 2.0 + q * heads * 2 * d * 2.0
    comp = flops / (g["bf16"] * ROOF["attention_efficiency"])
    mem = bytes_ / (g["hbm"] * ROOF["memory_efficiency"])
    return max(comp, mem) * 1e6 + ROOF["kernel_fixed_us"]


def roof_moe_us(g, T, H, I, topk, E, tp, ep, fp8):
    e_local = E / ep
    rows = T * topk / ep
    inter = I / tp
    touched = e_local * (1.0 - (1.0 - 1.0 / E) ** (T * topk))
    w = 1.0 if fp8 else 2.0
    flops = 2.0 * rows * 3.0 * H * inter
    bytes_ = touched * 3.0 * H * inter * w + rows * (H + inter) * 2 * 2.0
    peak = g["fp8"] if fp8 else g["bf16"]
    t = max(flops / (peak * ROOF["gemm_efficiency"]), bytes_ / (g["hbm"] * ROOF["memory_efficiency"])) * 1e6
    t += 2 * ROOF["kernel_fixed_us"]
    if ep > 1:
        t += roof_allreduce_us(g, T * topk * H * 2.0 / ep, ep)
    return t


def roof_allreduce_us(g, bytes_, gpus):
    if gpus <= 1 or bytes_ <= 0:
        return 0.0
    return 2.0 * (gpus - 1) / gpus * bytes_ / (g["link"] * ROOF["link_efficiency"]) * 1e6 + ROOF["link_latency_us"]


def pct(v, q):
    """Nearest-rank q-quantile (0 < q <= 1) of v; 0 for an empty v."""
    v = sorted(v)
    return v[max(0, min(len(v) - 1, int(math.ceil(q * len(v))) - 1))] if v else 0.0


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def bucket(x):
    """Power-of-two bucket of a positive size."""
    b = 1
    while b * 2 <= x:
        b *= 2
    return b


def ratio_samples(files, gpus):
    """{family: [(gpu, x, measured / roofline)]} from the generated vLLM tables (and NCCL)."""
    out = {"gemm_bfloat16": [], "gemm_fp8": [], "context_attention": [], "generation_attention": [], "moe": [],
           "all_reduce": []}
    for gpu in gpus:
        g = gpu_facts(gpu)
        def tables(rel):
            text = files.get("%s/%s" % (gpu, rel))
            return json.loads(text)["tables"] if text else []
        for t in tables("vllm/gemm.json"):
            dt = t["key"][0]
            if dt not in ("bfloat16", "fp8"):
                continue
            N, K, M = t["axes"]
            for a, n in enumerate(N):
                for b_, k in enumerate(K):
                    if n < 1024 or k < 1024:
                        continue
                    for c, m in enumerate(M):
                        v = t["values"][(a * len(K) + b_) * len(M) + c]
                        if v is not None:
                            out["gemm_" + dt].append((gpu, m, v / roof_gemm_us(g, m, n, k, dt == "fp8")))
        for name, decode in (("context_attention", False), ("generation_attention", True)):
            for t in tables("vllm/%s.json" % name):
                kvd, d, h, kvh = t["key"]
                if kvd != "bfloat16" or d != 128:
                    continue
                B, S = t["axes"]
                for i, b_ in enumerate(B):
                    for j, s_ in enumerate(S):
                        v = t["values"][i * len(S) + j]
                        if v is None:
                            continue
                        r = roof_attn_us(g, h, kvh, d, [(1 if decode else s_, s_)] * b_, decode)
                        out[name].append((gpu, b_ * s_, v / r))
        for t in tables("vllm/moe.json"):
            dt, H, I, topk, E, tp, ep, dist = t["key"]
            if dt not in ("bfloat16", "fp8") or dist not in ("balanced", "power_law_1.01"):
                continue
            for T, v in zip(t["axes"][0], t["values"]):
                if v is not None:
                    out["moe"].append((gpu, T, v / roof_moe_us(g, T, H, I, topk, E, tp, ep, dt == "fp8")))
        for t in tables("nccl.json"):
            op, dt, n = t["key"]
            if op != "all_reduce" or dt != "half":
                continue
            for e, v in zip(t["axes"][0], t["values"]):
                if v is not None:
                    out["all_reduce"].append((gpu, 2.0 * e, v / roof_allreduce_us(g, 2.0 * e, n)))
    return out


def fit_curves(samples, gpus):
    """Median ratio per power-of-two bucket of x, over the given GPUs (each GPU weighted by its samples)."""
    curves = {}
    for fam, pts in sorted(samples.items()):
        by = {}
        for gpu, x, r in pts:
            if gpu in gpus:
                by.setdefault(bucket(x), []).append(r)
        xs = sorted(by)
        curves[fam] = {"x": xs, "y": [float("%.4g" % median(by[x])) for x in xs]}
    return curves


def window_ratio_curve(files, gpus):
    """Sliding-window prefill against full attention, measured: for every vLLM window-grid cell with a full-grid
    cell of the same head configuration, batch and prompt length (bf16 KV), window time / full time; the median
    per prompt length over the window (x = isl / window; the measured lengths, so no bucketing)."""
    by = {}
    for gpu in gpus:
        wtext, ftext = files.get("%s/vllm/context_attention_window.json" % gpu), files.get(
            "%s/vllm/context_attention.json" % gpu)
        if not wtext or not ftext:
            continue
        full = {tuple(t["key"]): t for t in json.loads(ftext)["tables"]}
        for t in json.loads(wtext)["tables"]:
            ft = full.get(tuple(t["key"][:4]))
            if ft is None or t["key"][0] != "bfloat16":
                continue
            B, S = t["axes"]
            FB, FS = ft["axes"]
            for i, b_ in enumerate(B):
                for j, s_ in enumerate(S):
                    v = t["values"][i * len(S) + j]
                    if v is None or b_ not in FB or s_ not in FS:
                        continue
                    fv = ft["values"][FB.index(b_) * len(FS) + FS.index(s_)]
                    if fv is not None:
                        by.setdefault(s_ / t["key"][4], []).append(v / fv)
    xs = sorted(by)
    return {"x": [float("%.4g" % x) for x in xs], "y": [float("%.4g" % median(by[x])) for x in xs]}


def efficiency_doc(files):
    gpus = [g for g, _ in GPUS]
    samples = ratio_samples(files, gpus)
    curves = fit_curves(samples, gpus)
    curves["context_attention_window"] = window_ratio_curve(files, gpus)
    doc = {"format": "servesim-efficiency/1",
           "what": "measured / roofline time per op family (median per power-of-two size bucket) over the GPUs with "
                   "tables; the roofline is core/fidelity/roofline_cost_model.cc's (constants in 'roofline'). "
                   "x: gemm = tokens m; attention = batch x length tokens; moe = tokens; all_reduce = bytes. "
                   "context_attention_window is not against the roofline: sliding-window prefill time / full-attention "
                   "prefill time of the same batch (median), x = prompt length / window, for GPUs without window "
                   "tables.",
           "fitted_on": gpus, "roofline": ROOF, "curves": curves}
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA, help="shared data directory (default ../shared/data)")
    ap.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.data, AIC)):
        sys.exit("no AIConfigurator data under %s" % os.path.join(args.data, AIC))
    files = generate(args.data)
    if args.check:
        bad = []
        for rel, text in sorted(files.items()):
            p = os.path.join(PROFILES, rel)
            cur = open(p, "rb").read() if os.path.exists(p) else None
            if cur != text.encode():
                bad.append(rel)
        if bad:
            sys.exit("stale or missing operator tables (run python3 scripts/gen_tables.py): " + ", ".join(bad))
        print("operator tables up to date: %d files" % len(files))
        return
    for rel, text in sorted(files.items()):
        p = os.path.join(PROFILES, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    for rel in sorted(files):
        print("%9d  profiles/%s" % (len(files[rel].encode()), rel))


if __name__ == "__main__":
    main()
