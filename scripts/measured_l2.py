"""The "L2 warmth measured here" section of docs/validation.md: decode attention and GEMM timed with their operands
left in L2 (a repeated call, as AIConfigurator's collectors time) and evicted, on a lent H100 and H200
(profiles/measured/<gpu>/l2_warmth/, scripts/measure/l2_warmth.py), and the fit the simulator prices with
(scripts/fit_l2_warmth.py -> profiles/<gpu>/l2_warmth.json). Called by scripts/validate_ops.py."""
import collections
import json
import os
import statistics

from fit_l2_warmth import L2_BYTES, kept_rows

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPUS = sorted(L2_BYTES)
MIB = 1 << 20
ATTN_MIB = [8, 16, 24, 28, 32, 36, 40, 44, 48, 52, 64, 128]
KERNEL_MIB = [16, 24, 32, 36, 40, 44, 48, 52, 64]
KERNELS = [("attention_decode", "FlashAttention-2"), ("attention_decode_mea", "memory-efficient SDPA"),
           ("read_sum", "sum (pure read)")]
GEMM_BUCKETS = [(0, 1.5, "<= 1 MiB"), (1.5, 4.5, "2-4 MiB"), (4.5, 8.5, "8 MiB"), (8.5, 16.5, "16 MiB"),
                (16.5, 40, "24-32 MiB"), (40, 80, "48-64 MiB"), (80, 1e9, "96-224 MiB")]


def _cells(gpu):
    """{(op, shape...): {mode: [latency us]}, ...} and each cell's operand MiB."""
    cells, mib = collections.defaultdict(lambda: collections.defaultdict(list)), {}
    for r in kept_rows(gpu):
        if r["op"] != "gemm":
            key = (r["op"], r["num_heads"], r["num_kv_heads"], r["head_dim"], r["b"], r["kv_len"])
        else:
            key = ("gemm", r["m"], r["n"], r["k"])
        cells[key][r["mode"]].append(float(r["latency"]) * 1e3)
        mib[key] = int(r["operand_bytes"]) / MIB
    return cells, mib


def section():
    lines = ["", "### L2 warmth measured here (H100-SXM and H200-SXM: FlashAttention-2 decode, cuBLAS bf16 GEMM)", "",
             "Measured by servesim on lent GPUs (`scripts/measure/l2_warmth.py`; data and method in "
             "profiles/measured/<gpu>/l2_warmth/README.md). AIConfigurator's collectors time one layer's call over and "
             "over (vLLM's and TensorRT-LLM's attention collectors: one layer, repeated; vLLM's GEMM collector: six "
             "weights, one for fp8_block), so what a call reads stays in L2 when it fits; in serving every other "
             "layer's weights and KV pass through L2 between two reads of one layer's. Each cell is timed `warm` (the "
             "call repeated on one operand set), `rotate` (cycling through operand sets of >= 384 MiB in all: cold), "
             "`flush` (after reading 256 MiB elsewhere, subtracted) and, for GEMMs, `six` (six weights, the vLLM "
             "bf16 / fp8 tables' method). Cells whose timed blocks spread over 1.5x are left out; a cell's figure is "
             "the median over the files.", "",
             "Decode attention with grouped query heads (as every bundled model), cold - warm (`rotate` - `warm`, us; "
             "median over the cells of that K + V size, cells in brackets):", "",
             "| GPU | " + " | ".join("%d MiB" % m for m in ATTN_MIB) + " |",
             "|---|" + "---|" * len(ATTN_MIB)]
    gemm_lines = []
    for gpu in GPUS:
        cells, mib = _cells(gpu)
        by = collections.defaultdict(list)
        for key, modes in cells.items():
            if key[0] == "attention_decode" and key[1] != key[2] and modes["warm"] and modes["rotate"]:
                by[round(mib[key])].append(statistics.median(modes["rotate"]) - statistics.median(modes["warm"]))
        lines.append("| %s | " % gpu + " | ".join(
            "%+.1f (%d)" % (statistics.median(by[m]), len(by[m])) if by.get(m) else "-" for m in ATTN_MIB) + " |")
        g = collections.defaultdict(list)
        for key, modes in cells.items():
            if key[0] == "gemm" and all(modes[x] for x in ("warm", "rotate", "six")):
                w, r, s = (statistics.median(modes[x]) for x in ("warm", "rotate", "six"))
                for lo, hi, name in GEMM_BUCKETS:
                    if lo < mib[key] <= hi:
                        g[name].append((w / r, s / r))
        gemm_lines.append("| %s | " % gpu + " | ".join(
            "%.2f / %.2f (%d)" % (statistics.median(x[0] for x in g[n]), statistics.median(x[1] for x in g[n]),
                                  len(g[n])) if g.get(n) else "-" for _, _, n in GEMM_BUCKETS) + " |")
    lines += ["", "Fitted (`scripts/fit_l2_warmth.py`, cells of 8-96 MiB; cold - warm = offset + us_per_mib x B, the "
              "extra tapering linearly from full_mib to none at zero_mib; the offset is the one-call graph's launch "
              "gap, a property of the measurement, and is not priced):", "",
              "| GPU | L2 | us per MiB | full to | none from | offset | cells | abs residual p50 / p90 |",
              "|---|---|---|---|---|---|---|---|"]
    for gpu in GPUS:
        path = os.path.join(ROOT, "profiles", gpu, "l2_warmth.json")
        if not os.path.exists(path):
            continue
        j = json.load(open(path))
        lines.append("| %s | %.0f MiB | %.3f | %d MiB | %d MiB | %+.2f us | %d | %.2f / %.2f us |" % (
            gpu, j["l2_bytes"] / MIB, j["us_per_mib"], j["full_mib"], j["zero_mib"], j["fit"]["bias_us"],
            j["fit"]["cells"], j["fit"]["residual_us_p50"], j["fit"]["residual_us_p90"]))
    lines += ["", "The simulator adds this to decode attention priced from a GPU's own tables (vLLM, SGLang and "
              "TensorRT-LLM roles alike: their collectors all repeat one call), with B = the batch's keys x one "
              "layer's K and V per key on the GPU (core/fidelity/l2_warmth.h); not to tables moved to another GPU's "
              "datasheet, whose L2 and HBM differ. The step in vLLM's FA3 tables where K + V go from 32 to 64 MiB is "
              "thus partly warmth: on this kernel it remains when cold, smaller (see the README).", "",
              "GEMM, warm / cold and six weights / cold (median ratio to `rotate` by weight size, cells in brackets):",
              "", "| GPU | " + " | ".join(n for _, _, n in GEMM_BUCKETS) + " |",
              "|---|" + "---|" * len(GEMM_BUCKETS)] + gemm_lines
    lines += ["", "Three kernels on multi-head shapes (32/32/128 and 8/8/128 at 4, 16 and 64 requests; `--kernels`), "
              "cold - warm in us by K + V size: FlashAttention-2 decode, PyTorch's memory-efficient SDPA decode, and a "
              "plain sum over the same bytes, which reads them and nothing else (the most a call can lose):", "",
              "| GPU | kernel | " + " | ".join("%d MiB" % m for m in KERNEL_MIB) + " |",
              "|---|---|" + "---|" * len(KERNEL_MIB)]
    for gpu in GPUS:
        cells, mib = _cells(gpu)
        for op, label in KERNELS:
            by = collections.defaultdict(list)
            for key, modes in cells.items():
                if key[0] == op and key[1] == key[2] and modes["warm"] and modes["rotate"]:
                    by[round(mib[key])].append(statistics.median(modes["rotate"]) - statistics.median(modes["warm"]))
            if by:
                lines.append("| %s | %s | " % (gpu, label) + " | ".join(
                    "%+.1f" % statistics.median(by[m]) if by.get(m) else "-" for m in KERNEL_MIB) + " |")
    lines += ["", "A plain read loses the most (H100 0.2 us per MiB up to 40 MiB, none at 44; H200 0.12 up to 48 MiB, "
              "little at 52): the fits above stop where it stops, so the taper is the L2's. The grouped-query "
              "FlashAttention-2 decode loses nearly as much as the plain read (offset added back, H100 6.0 against "
              "6.4 us at 32 MiB), the multi-head decodes less. The simulator prices with the grouped-query fit.", ""]
    lines += ["Six weights time within a few percent of cold from 8 MiB up, so the vLLM bf16 / fp8 tables that "
              "price roles need no correction there; the few GEMMs with weights under 8 MiB (small models at high TP) "
              "and the one-weight fp8_block grid read fast, and are not corrected."]
    return lines
