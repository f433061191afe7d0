"""Mixed-batch attention servesim measured itself (profiles/measured/<GPU>/attention_mixed/ for the H100 and the
H200, scripts/measure/attention_mixed.py): the simulator's attention predictor, built from a uniform grid of one kernel,
scored on batches of mixed lengths timed on the same kernel, against the total-tokens proxy and against the
uniform-equivalent lookup without the work model's composition ratio.

Used by scripts/validate_ops.py (the sections "Mixed-batch attention measured here" of docs/validation.md, one per
GPU, and `--check-measured`). Run alone it prints the sections. Standard library only.
"""

import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import gen_tables
import measured_tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPUS = ["H100-SXM", "H200-SXM"]  # where the files were measured (the H200's hold no order_repeat_seed3)
# repeat_seed1 re-times sweep_seed1's cells and order_repeat_seed3 decode_seed3's decode_order cells: repeatability.
SCORED = ["sweep_seed1", "more_seed2", "decode_seed3", "decode_seed4", "prefill_seed5"]
RAGGED = ["prefill", "chunked", "decode", "decode_order", "mixed"]
# A cell whose slowest timed block took more than this times its fastest was disturbed (as for the GEMM grid).
MAX_SPREAD = 1.5
DTYPE = "bfloat16"


def data_dir(gpu):
    return os.path.join(ROOT, "profiles", "measured", gpu, "attention_mixed")


def validation_path(gpu):
    return os.path.join(data_dir(gpu), "validation.json")


def gpu_fact(gpu, field):
    """One field of profiles/gpus/<gpu>.json (sm_count, hbm_tb_s)."""
    with open(os.path.join(ROOT, "profiles", "gpus", gpu + ".json")) as f:
        return gen_tables.json.load(f)[field]


def load(gpu, name):
    """Cells of one committed CSV: dicts with cfg (heads, kv_heads, head_dim), set, id, reqs [(q, k)], us."""
    rows, _ = gen_tables.read_csv(os.path.join(data_dir(gpu), name + ".csv.gz"))
    out = []
    for r in rows:
        if r["error"] or not r["latency"] or float(r["spread"]) > MAX_SPREAD:
            continue
        qs = [int(x) for x in r["q_lens"].split(";")]
        ks = [int(x) for x in r["k_lens"].split(";")]
        out.append({"cfg": (int(r["num_heads"]), int(r["num_kv_heads"]), int(r["head_dim"])), "set": r["set"],
                    "id": r["id"], "reqs": list(zip(qs, ks)), "us": float(r["latency"]) * 1000.0})
    return out, len(rows) - len(out)


def write_profile(root, gpu, cells, datasheet=True):
    """The uniform cells as a profile the simulator's loader reads: ROOT/<gpu>/measured/{context,generation}_
    attention.json (AIConfigurator's key and axes), and (`datasheet`) the GPU's facts for its SM count (a shape
    timed in several files: their mean)."""
    os.makedirs(os.path.join(root, gpu, "measured"))
    if datasheet:
        os.makedirs(os.path.join(root, "gpus"))
        shutil.copy(os.path.join(ROOT, "profiles", "gpus", gpu + ".json"), os.path.join(root, "gpus"))
    for op, phase, axis in (("context_attention", "uniform_prefill", "isl"),
                            ("generation_attention", "uniform_decode", "kv_len")):
        g = gen_tables.Grid(["kv_cache_dtype", "head_dim", "num_heads", "num_kv_heads"], ["batch", axis])
        for c in cells:
            if c["set"] == phase:
                h, kv, d = c["cfg"]
                g.add((DTYPE, d, h, kv), (len(c["reqs"]), c["reqs"][0][1]), c["us"] / 1000.0,
                      "aten._flash_attention_forward")
        with open(os.path.join(root, gpu, "measured", op + ".json"), "w") as f:
            f.write(measured_tables.table_file_text(op, g))


def query(tool, root, gpu, lines):
    """servesim_opcheck --query answers (us, or None where it could not price) for `lines`."""
    p = subprocess.run([tool, "--query", root, gpu, "measured"], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, check=True)
    out = []
    for a in p.stdout.split("\n")[:len(lines)]:
        v = float(a.split()[0])
        out.append(None if math.isnan(v) else v)
    return out


def split(cell):
    """(prefill chunks, decode contexts) of a cell: mixed cells hold both; the others one or the other."""
    if cell["set"] in ("decode", "decode_order", "uniform_decode", "mixed_d"):
        return [], [k for _, k in cell["reqs"]]
    if cell["set"] in ("mixed", "mixed_p"):
        return [r for r in cell["reqs"] if r[0] > 1 or cell["set"] == "mixed_p"], \
               [k for q, k in cell["reqs"] if q == 1 and cell["set"] == "mixed"]
    return cell["reqs"], []


def prefill_line(cfg, chunks):
    h, kv, d = cfg
    return "attention_prefill %s %d %d %d %s" % (DTYPE, d, h, kv, " ".join("%d:%d" % c for c in chunks))


def decode_line(cfg, contexts):
    h, kv, d = cfg
    return "attention_decode %s %d %d %d %s" % (DTYPE, d, h, kv, " ".join(str(k) for k in contexts))


def step_line(cfg, chunks, contexts):
    """Prompt chunks and decodes in one call, priced as a vLLM role prices a mixed step."""
    h, kv, d = cfg
    return "attention_step %s %d %d %d %s %s" % (DTYPE, d, h, kv, " ".join("%d:%d" % c for c in chunks),
                                                 " ".join(str(k) for k in contexts))


def uniform_equivalent(chunks, contexts):
    """The uniform batches the simulator reads the grid at (as many requests; prefill: the same (query, key) pairs
    per request, s(s+1)/2; decode: the mean KV length), rounded to whole tokens."""
    pre = dec = []
    if chunks:
        pairs = statistics.fmean(q * (k - q) + q * (q + 1) / 2.0 for q, k in chunks)
        s = max(1, int(round((math.sqrt(1 + 8 * pairs) - 1) / 2)))
        pre = [(s, s)] * len(chunks)
    if contexts:
        dec = [max(1, int(round(statistics.fmean(contexts))))] * len(contexts)
    return pre, dec


class TokenProxy:
    """Latency as a function of the batch's total tokens (new tokens in prefill, keys in decode), log-log over the
    uniform cells' distinct totals, flat below the smallest and linear above the largest (as servesim_opcheck's
    proxy for the held-out uniform cells)."""

    def __init__(self, pts):
        by = {}
        for x, y in pts:
            by.setdefault(x, []).append(y)
        self.x = sorted(by)
        self.y = [statistics.fmean(by[x]) for x in self.x]

    def __call__(self, t):
        x, y = self.x, self.y
        if t <= x[0]:
            return y[0]
        if t >= x[-1]:
            return y[-1] * t / x[-1]
        i = max(j for j in range(len(x)) if x[j] <= t)
        if x[i] == t:
            return y[i]
        f = math.log(t / x[i]) / math.log(x[i + 1] / x[i])
        return math.exp(math.log(y[i]) + f * math.log(y[i + 1] / y[i]))


def predictions(tool, gpu, cells):
    """Per cell: simulator, uniform-equivalent and total-tokens-proxy predictions (us), priced from the same file's
    uniform grid."""
    lines, where = [], []
    for c in cells:
        chunks, contexts = split(c)
        ue_pre, ue_dec = uniform_equivalent(chunks, contexts)
        # The simulator prices a call holding both as one step (decodes beside prompt tokens); alone, each part.
        sim = [("sim", chunks, step_line(c["cfg"], chunks, contexts))] if chunks and contexts else \
              [("sim", chunks, prefill_line(c["cfg"], chunks)), ("sim", contexts, decode_line(c["cfg"], contexts))]
        for tag, part, line in sim + [("ue", ue_pre, prefill_line(c["cfg"], ue_pre)),
                                      ("ue", ue_dec, decode_line(c["cfg"], ue_dec))]:
            if part:
                where.append((id(c), tag))
                lines.append(line)
    with tempfile.TemporaryDirectory() as tmp:
        write_profile(tmp, gpu, cells)
        answers = query(tool, tmp, gpu, lines)
    pred = {}
    for (cid, tag), v in zip(where, answers):
        d = pred.setdefault(cid, {})
        d[tag] = None if v is None or d.get(tag, 0) is None else d.get(tag, 0) + v
    proxies = {}
    for cfg in {c["cfg"] for c in cells}:
        for phase, decode in (("uniform_prefill", False), ("uniform_decode", True)):
            pts = [(sum(k if decode else q for q, k in c["reqs"]), c["us"]) for c in cells
                   if c["cfg"] == cfg and c["set"] == phase]
            proxies[(cfg, decode)] = TokenProxy(pts)
    out = []
    for c in cells:
        chunks, contexts = split(c)
        proxy = 0.0
        if chunks:
            proxy += proxies[(c["cfg"], False)](sum(q for q, _ in chunks))
        if contexts:
            proxy += proxies[(c["cfg"], True)](sum(contexts))
        d = pred.get(id(c), {})
        out.append(dict(c, sim=d.get("sim"), ue=d.get("ue"), proxy=proxy))
    return out


def ape_stats(pairs):
    """p50 / p95 / max absolute percentage error and the signed median, in percent, of (predicted, measured)."""
    e = [(p / m - 1) * 100 for p, m in pairs]
    a = [abs(x) for x in e]
    return {"n": len(e), "p50": round(gen_tables.pct(a, 0.5), 2), "p95": round(gen_tables.pct(a, 0.95), 2),
            "max": round(max(a), 2) if a else 0.0, "signed": round(statistics.median(e), 2) if e else 0.0}


def repeat_stats(gpu, rows, first, repeat, sets=None):
    """|diff| of the cells of scored file `first` (in `rows`) timed again in file `repeat`, optionally only `sets`;
    None where `repeat` was not measured on `gpu`."""
    if not os.path.exists(os.path.join(data_dir(gpu), repeat + ".csv.gz")):
        return None
    again = {(c["cfg"], c["set"], c["id"]): c["us"] for c in load(gpu, repeat)[0] if sets is None or c["set"] in sets}
    return ape_stats([(again[k], r["us"]) for r in rows if r["file"] == first
                      for k in [(r["cfg"], r["set"], r["id"])] if k in again])


def scored(tool, gpu):
    """Predictions for the scored files' cells (priced by `tool`, servesim_opcheck), and how many disturbed cells
    were left out."""
    rows, dropped = [], 0
    for name in SCORED:
        cells, d = load(gpu, name)
        rows += [dict(r, file=name) for r in predictions(tool, gpu, cells)]
        dropped += d
    return rows, dropped


def uniform_cells(gpu):
    """Every scored file's uniform cells on `gpu`."""
    return [c for name in SCORED for c in load(gpu, name)[0] if c["set"].startswith("uniform_")]


def uniform_means(gpu):
    """{(set, cfg, batch, length): us} of uniform_cells(gpu), a shape timed in several files at their mean."""
    by = {}
    for c in uniform_cells(gpu):
        by.setdefault((c["set"], c["cfg"], len(c["reqs"]), c["reqs"][0][1]), []).append(c["us"])
    return {k: statistics.fmean(v) for k, v in by.items()}


def transfer(tool):
    """servesim_opcheck --transfer between the two GPUs' uniform grids (the same-architecture rule): {"H100-SXM ->
    H200-SXM": {"attention_prefill": {"transfer": ..., "unscaled": ...}, "attention_decode": ...}, the reverse}."""
    def write(profiles):
        for gpu in GPUS:
            write_profile(profiles, gpu, uniform_cells(gpu), datasheet=False)
    return measured_tables.transfer_pairs(tool, GPUS[1], write)


def h200_lines(tool):
    """The two GPUs compared on the same uniform cells, and the datasheet transfer between their uniform grids."""
    a, b = (uniform_means(g) for g in GPUS)
    sms = gpu_fact(GPUS[0], "sm_count")
    groups = {"prefill": [], "split": [], "unsplit": []}
    for k in a:
        if k in b:
            phase, (_, kv, _), n, _ = k
            g = "prefill" if phase == "uniform_prefill" else "split" if n * kv < 0.8 * 2 * sms else "unsplit"
            groups[g].append(b[k] / a[k])
    ratios = {g: round(statistics.median(v), 3) for g, v in groups.items()}
    moved = transfer(tool)
    hbm = [gpu_fact(g, "hbm_tb_s") for g in GPUS]

    def example(n, keys):  # 32 query heads over 8 KV heads of 128: the H100's share of its HBM bandwidth, both times
        k = ("uniform_decode", (32, 8, 128), n, keys)
        moved_bytes = n * keys * 2 * 8 * 128 * 2
        return "%d requests of %d keys: %.0f / %.0f us, %.0f%% of the H100's HBM bandwidth" % (
            n, keys, a[k], b[k], 100 * moved_bytes / (a[k] * 1e-6) / (hbm[0] * 1e12))
    lines = ["", "The H200 against the H100 on the same uniform cells (H200 time / H100 time, median): prefill %.3f; "
                 "decodes FlashAttention-2 splits %.3f, decodes it does not split (batch x KV heads at least 80%% of "
                 "2 x %d CTA slots) %.3f. The unsplit kernel, one CTA per (request, KV head) over all its keys, keeps "
                 "the H100's time where HBM would allow less (32 query heads over 8 KV heads of 128, %s), while split "
                 "decodes of long contexts follow the HBM ratio (%s; %.2f / %.2f TB/s = %.2f). FlashAttention-2's "
                 "unsplit decode is limited by what its resident CTAs stream, not by HBM (the simulator's hbm_ctas "
                 "constant, fitted per table)."
                 % (ratios["prefill"], ratios["split"], sms, ratios["unsplit"], example(64, 16384),
                    example(16, 65536), hbm[0], hbm[1], hbm[0] / hbm[1]),
             "", "The datasheet transfer (same-architecture rule, t' = t - roof + roof', as between AIConfigurator's "
                 "H100 and H200 tables above) between the two measured uniform grids, p50 / p95 / max of "
                 "|transferred / measured - 1|; `as measured` leaves the other GPU's time unchanged:", "",
             "| direction | family | n | transfer | as measured |", "|---|---|---|---|---|"]
    for d, fams in moved.items():
        for fam in ("attention_prefill", "attention_decode"):
            t, u = fams[fam]["transfer"], fams[fam]["unscaled"]
            lines.append("| %s | %s | %d | %.2f%% / %.2f%% / %.1f%% | %.2f%% / %.2f%% / %.1f%% |" % (
                d, fam, t["n"], t["p50"], t["p95"], t["max"], u["p50"], u["p95"], u["max"]))
    return lines, {"h200_over_h100": ratios,
                   "transfer_ape_pct": {d: {f: v["transfer"] for f, v in fams.items()} for d, fams in moved.items()}}


def row_stats(rows, key):
    return ape_stats([(r[key], r["us"]) for r in rows if r[key] is not None])


def fmt(s):
    return "%.1f%% / %.1f%%" % (s["p50"], s["p95"])


def fmt_n(s):
    return "%s (n %d)" % (fmt(s), s["n"]) if s["n"] else "-"


DEVICE = {"H100-SXM": "an H100 80GB HBM3", "H200-SXM": "an H200 (lent, 2026-11-28; the H100's script and software)"}


def section(tool, gpu):
    """Markdown lines for docs/validation.md and the summary recorded in validation_path(gpu)."""
    rows, dropped = scored(tool, gpu)
    sms = gpu_fact(gpu, "sm_count")
    cfgs = sorted({r["cfg"] for r in rows}, key=lambda c: (c[2], c[0], c[1]))
    counts = {s: sum(1 for r in rows if r["set"] == s) for s in ["uniform_prefill", "uniform_decode"] + RAGGED}
    lines = ["", "### Mixed-batch attention measured here (%s, bf16, FlashAttention-2 varlen)" % gpu, "",
             "Measured by servesim on %s (`scripts/measure/attention_mixed.py`; data and method in "
             "profiles/measured/%s/attention_mixed/README.md). One kernel (PyTorch's bundled FlashAttention-2 "
             "varlen forward, one call per batch, causal) timed on a uniform grid per head configuration (%d prefill "
             "and %d decode cells, AIConfigurator's axes) and on batches whose requests differ in length: %d whole "
             "prompts of mixed lengths, %d prompt chunks over cached prefixes, %d decodes over mixed KV lengths (%d more "
             "in two launch orders) and %d mixed steps (prefill chunks and decodes in one call, as vLLM runs them). "
             "%d head configurations "
             "(heads / KV heads / head_dim: %s). The predictor is built from the uniform grid alone, as the "
             "simulator builds it from a table, and prices each ragged batch; a mixed step is priced as the "
             "simulator prices one for a vLLM role on a FlashAttention-2 table: its prefill part plus its decode part "
             "run ungrouped and unsplit beside the prompt tokens (AttentionGeometry::ungrouped_beside_prefill). "
             "`uniform equivalent` is the same lookup "
             "without the work model's ratio for the batch's composition; `total-tokens proxy` predicts from the "
             "batch's total tokens only (new tokens in prefill, keys in decode). %d disturbed cells (timed blocks "
             "spread over %.1fx) left out." %
             (DEVICE[gpu], gpu, counts["uniform_prefill"], counts["uniform_decode"], counts["prefill"],
              counts["chunked"],
              counts["decode"], counts["decode_order"], counts["mixed"], len(cfgs), ", ".join("%d/%d/%d" % c for c in cfgs), dropped,
              MAX_SPREAD),
             "", "| batches | n | simulator p50 / p95 | signed median | max | uniform equivalent p50 / p95 | "
                 "total-tokens proxy p50 / p95 |", "|---|---|---|---|---|---|---|"]
    summary = {}
    for s in ["uniform_prefill", "uniform_decode"] + RAGGED:
        sub = [r for r in rows if r["set"] == s]
        sim, ue, px = row_stats(sub, "sim"), row_stats(sub, "ue"), row_stats(sub, "proxy")
        label = {"uniform_prefill": "uniform prefill (grid cells)", "uniform_decode": "uniform decode (grid cells)",
                 "prefill": "prompts of mixed lengths", "chunked": "chunks over cached prefixes",
                 "decode": "decodes of mixed KV lengths",
                 "decode_order": "decodes, long requests first or last",
                 "mixed": "mixed steps (chunks + decodes)"}[s]
        lines.append("| %s | %d | %s | %+.1f%% | %.1f%% | %s | %s |" % (label, sim["n"], fmt(sim), sim["signed"],
                                                                      sim["max"], fmt(ue), fmt(px)))
        summary[s] = {"simulator": sim, "uniform_equivalent": ue, "total_tokens_proxy": px}
    lines += ["", "By head configuration (simulator p50 / p95; prompts and chunks, then decodes of mixed KV lengths):", ""]
    for c in cfgs:
        pre = row_stats([r for r in rows if r["cfg"] == c and r["set"] in ("prefill", "chunked")], "sim")
        dec = row_stats([r for r in rows if r["cfg"] == c and r["set"] == "decode"], "sim")
        lines.append("- %d/%d/%d: %s; %s" % (c + (fmt_n(pre), fmt_n(dec))))
    # Decodes by file: the H100's sweep_seed1 chose the decode rule's free choices; every other file is held out.
    chose = gpu == GPUS[0]
    lines += ["", "Decodes of mixed KV lengths by file (simulator p50 / p95, signed median; `split` batches are those "
                  "FlashAttention-2 splits, batch x KV heads under 80%% of 2 x %d CTA slots, `unsplit` the rest):"
              % sms, ""]
    by_file = {}
    for name in SCORED:
        sub = [r for r in rows if r["file"] == name and r["set"] == "decode"]
        if not sub:
            continue
        st = row_stats(sub, "sim")
        parts = {}
        for tag, keep in (("split", True), ("unsplit", False)):
            part = [r for r in sub if (len(r["reqs"]) * r["cfg"][1] < 0.8 * 2 * sms) == keep]
            parts[tag] = row_stats(part, "sim")
        by_file[name] = dict(parts, all=st)
        lines.append("- %s%s: %s, %+.1f%% (n %d); split %+.1f%% (n %d), unsplit %+.1f%% (n %d)" % (
            name, " (chose the rule)" if chose and name == SCORED[0] else "", fmt(st), st["signed"], st["n"],
            parts["split"]["signed"], parts["split"]["n"], parts["unsplit"]["signed"], parts["unsplit"]["n"]))
    # Prompts and chunks by file: the H100's sweep_seed1 chose kKeyTileLoadShare; every other file is held out.
    lines += ["", "Prompts and chunks by file (simulator p50 / p95, signed median; the H100's sweep_seed1 chose the "
                  "prefill tile-load share, core/fidelity/attention_model.h `kKeyTileLoadShare`):", ""]
    pre_by_file = {}
    for name in SCORED:
        got = {s: row_stats([r for r in rows if r["file"] == name and r["set"] == s], "sim")
               for s in ("prefill", "chunked")}
        if not got["prefill"]["n"]:
            continue
        pre_by_file[name] = got
        lines.append("- %s%s: prompts %s, %+.1f%% (n %d); chunks %s, %+.1f%% (n %d)" % (
            name, " (chose the share)" if chose and name == SCORED[0] else "", fmt(got["prefill"]),
            got["prefill"]["signed"],
            got["prefill"]["n"], fmt(got["chunked"]), got["chunked"]["signed"], got["chunked"]["n"]))
    summary["prefill_by_file"] = pre_by_file
    # Launch order: the same lengths with the long requests first and last (the simulator does not see the order).
    pairs = {}
    for r in rows:
        if r["set"] == "decode_order":
            base, where = r["id"].rsplit("_", 1)
            pairs.setdefault((r["file"], r["cfg"], base), {})[where] = r["us"]
    ratios = sorted(v["last"] / v["first"] for v in pairs.values() if "first" in v and "last" in v)
    order = {"n": len(ratios)}
    if ratios:
        order.update({"median_last_over_first": round(statistics.median(ratios), 3),
                      "p05": round(gen_tables.pct(ratios, 0.05), 3), "p95": round(gen_tables.pct(ratios, 0.95), 3)})
        order["repeat"] = repeat_stats(gpu, rows, "decode_seed3", "order_repeat_seed3", {"decode_order"})
        again = ("; the same cells timed twice differ by p50 %.2f%% / p95 %.2f%%. The order moves the time by no more "
                 "than the timing repeats, so the simulator, which does not model it, loses little there" % (
                     order["repeat"]["p50"], order["repeat"]["p95"])) if order["repeat"] else \
            " (not timed twice on this GPU; the simulator does not model the order)"
        lines += ["", "Launch order (decode_order: %d batches of a few long among many short requests, timed with the "
                      "long requests first and with them last): last / first median %.3f, 5-95%% range %.2f-%.2f%s." % (
                          len(ratios), order["median_last_over_first"], order["p05"], order["p95"], again)]
    summary["decode_by_file"] = by_file
    summary["launch_order"] = order
    # One call or two: the mixed step against its two parts timed alone.
    part = {(r["file"], r["cfg"], r["id"], r["set"]): r["us"] for r in rows if r["set"] in ("mixed_p", "mixed_d")}
    ratio = {}
    for r in rows:
        k = (r["file"], r["cfg"], r["id"])
        if r["set"] == "mixed" and k + ("mixed_p",) in part and k + ("mixed_d",) in part:
            ratio.setdefault(r["cfg"], []).append(r["us"] / (part[k + ("mixed_p",)] + part[k + ("mixed_d",)]))
    fused = [x for v in ratio.values() for x in v]
    fs = {"n": len(fused), "median_ratio": round(statistics.median(fused), 3) if fused else 0.0,
          "by_config": {"%d/%d/%d" % c: round(statistics.median(v), 3) for c, v in sorted(ratio.items())}}
    parts = row_stats([r for r in rows if r["set"] in ("mixed_p", "mixed_d")], "sim")
    # Repeatability: the same cells timed twice, one lease apart.
    rep = repeat_stats(gpu, rows, "sweep_seed1", "repeat_seed1")
    lines += ["", "A mixed step as one call against its prefill and decode parts timed alone (what pricing them "
                  "separately assumes): the call took %.2fx their sum at the median (n %d); by head configuration %s. "
                  "No penalty without grouped heads (32/32/128): in FlashAttention-2's varlen forward, decode "
                  "queries share their KV head's loads (grouped heads packed into one tile, split-KV) only when every "
                  "query of the call is a decode; the simulator prices such a call's decodes that way (the table above). "
                  "FlashAttention-3 (vLLM on Hopper) packs grouped heads in every varlen call. The simulator on the "
                  "parts alone: %s (n %d)." %
              (fs["median_ratio"], fs["n"], ", ".join("%s %.2fx" % kv for kv in fs["by_config"].items()),
               fmt(parts), parts["n"]),
              "", "The same cells timed twice (sweep_seed1, then repeat_seed1): |diff| p50 %.2f%%, p95 %.2f%%, max "
                  "%.1f%% (n %d)." % (rep["p50"], rep["p95"], rep["max"], rep["n"])]
    summary["mixed_call_over_parts"] = fs
    summary["repeatability"] = rep
    extra = {}
    if gpu == GPUS[1]:
        more, extra = h200_lines(tool)
        lines += more
    return lines, {**extra, "ape_pct": summary, "scored": SCORED,
                   "kernel": "aten._flash_attention_forward (FlashAttention-2 "
                   "varlen, bf16, causal)"}


def check(tool, gpu, margin_p50, margin_p95):
    """Exits non-zero if the simulator's error on `gpu`'s measured ragged batches grew past the recorded figures."""
    rec = gen_tables.json.load(open(validation_path(gpu)))["ape_pct"]
    rows, _ = scored(tool, gpu)
    for s in RAGGED:
        got = row_stats([r for r in rows if r["set"] == s], "sim")
        measured_tables.require_within("measured mixed-batch attention error on %s %s" % (gpu, s), got,
                                       rec[s]["simulator"], margin_p50, margin_p95)
    if gpu == GPUS[1]:
        want = gen_tables.json.load(open(validation_path(gpu)))["transfer_ape_pct"]
        for direction, fams in transfer(tool).items():
            for fam, w in want[direction].items():
                measured_tables.require_within("datasheet transfer between the measured attention grids, %s %s" % (
                    direction, fam), fams[fam]["transfer"], w, margin_p50, margin_p95)
    print("measured mixed-batch attention error within the recorded figures (%s)" % gpu)


if __name__ == "__main__":
    for g in GPUS:
        print("\n".join(section(os.path.join(ROOT, "build", "native", "cli", "servesim_opcheck"), g)[0]))
    sys.exit(0)
