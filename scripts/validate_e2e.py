#!/usr/bin/env python3
"""End-to-end validation: replay the measured runs of silicon_h100.csv through the simulator.

Usage (from the repository root, after building):

    python3 scripts/validate_e2e.py                 # replay, write docs/validation.md (e2e section) and
                                                    # profiles/H100-SXM/<backend>/validation.json ("e2e")
    python3 scripts/validate_e2e.py --calibrate     # also fit the host constants with a held-out split by model
    python3 scripts/validate_e2e.py --datasheet     # the vLLM/SGLang agg rows priced through the datasheet path
                                                    # (another GPU's tables moved to H100's datasheet)
    python3 scripts/validate_e2e.py --check         # replay every expressible row and fail if a group's medians
                                                    # moved above its recorded figures by more than the margin
                                                    # (used by ctest)
Options: --cli PATH (default build/native/servesim), --data DIR (default ../shared/data), --jobs N (2),
--backend vllm|trtllm|sglang|all (default all), --limit N (first N rows per group, quick look), --model SUBSTR
(only rows whose model_path contains SUBSTR, case-insensitive; prints per-model errors and the worst rows and writes
neither docs/validation.md nor validation.json).

Each agg row becomes a closed-loop scenario: `batch_size` clients (x attention_dp_size: the column is per DP rank),
each sending the next request when its previous
one finishes, all starting together; prompts of exactly `isl` tokens; 10 x batch_size requests (at least 32), the
request count of AIConfigurator's own benchmark runners (genai-perf `--request-count` 10 x concurrency,
bench_serving `--num-prompts` 10 x concurrency). Output lengths stand in for how the harness's clients drift apart
after the first wave, which the simulator cannot know (see CLIENT_DRIFT): exactly osl for SGLang (its prefill-first
policy keeps a wave together), osl-1..osl+1 for the other aic-auto-gap-analysis rows (identical clients started
together stay in lockstep forever in a deterministic simulator; one token of spread lets them drift a little), and
osl +- 5% for the database-dump rows (source_file=<date>.csv), whose clients are desynchronised after the first
wave: their measured TTFT at 4 clients with 1024-token prompts is 38-47% of what a wave of 4 prompts prefilled
together costs every cycle. The row's TP/PP/attention-DP/MoE-TP/EP, dtype (fp8 rows: FP8 weights and FP8 KV cache) and backend (which
tables and host constants) are used; engine limits are vLLM's H100 defaults (max_num_batched_tokens 8192,
max_num_seqs 1024; for SGLang 8192 is its H100 --chunked-prefill-size), SGLang agg rows use the `sglang`
scheduler (prefill-first, decodes paused while prompts wait) and TRT-LLM rows the `trtllm` one (GUARANTEED_NO_EVICT
admission, no preemption; see SCHEDULER) with chunked prefill off, TRT-LLM's default and that of AIConfigurator's
templates (`enable_chunked_prefill | default(false)`; no rule sets it). TRT-LLM and SGLang roles run their engines'
overlap schedulers (on by default, as `async_scheduling`: a request arriving during a step joins the step after
the next), except TRT-LLM P roles (TRTLLM_PREFILL_OVERLAP); TRT-LLM roles capture the CUDA-graph sizes of
AIConfigurator's rule, padded (trtllm_cuda_graph_sizes). vLLM's async scheduling follows the recorded
version's default (ASYNC_SCHEDULING_SINCE). SGLang's memory share follows the recorded
version's default (SGLANG_OLD_MEM_RULE_BEFORE); TRT-LLM's free_gpu_memory_fraction on the aic-auto-gap-analysis agg
rows is the default of AIConfigurator's template for the recorded version (TRTLLM_TEMPLATE_KV_FRACTION). TTFT is timed at the first token that carries text (TTFT_FROM: the
harness's chat clients disregard empty responses; gpt-oss opens with a 3-token harmony header). Compared: mean TTFT
and mean TPOT.

Disaggregated rows become P/D scenarios: prefill_num_workers replicas of role P with the prefill_* parallelism,
decode_num_workers replicas of role D with the decode_* parallelism, the KV cache moved over NVLink when all the
row's GPUs fit one node and over the inter-node link otherwise. `batch_size` is empty in disagg rows; the
prefill_/decode_batch_size columns are the configuration's per-worker batch, not the load. The client concurrency
is the source's `silicon_concurrency=N` where the row records it, and decode_batch_size x decode_num_workers for the
db-dump rows (those that also record silicon_concurrency agree exactly with the product). The
aic-auto-gap-analysis disagg rows record neither and are not expressible: their decode_batch_size cannot be the
load (vLLM Qwen3-32B: 224 requests of ~4.5k tokens per TP4 decode worker read ~33 GB of FP8 KV per GPU and step,
>= 9.8 ms at 3.35 TB/s, above the measured 8.7 ms TPOT). Rows that leave num_workers empty (the
2026-03-25/04-06 DeepSeek-R1 sweeps) are one P and one D replica, except where the columns demonstrably do not
describe the run (layout_unknown: the measurement repeats a db-dump row with another layout, or one recorded point
carries two different measurements), or where the measurement itself says the decode side was larger than recorded
(kv_exceeds_layout: by Little's law more requests decoded at once than the recorded decode GPUs' memory beyond the
weights could hold). attention_dp_size becomes the role's dp_attn (DP attention, with the EP
all-to-all where tokens are partitioned).

Standard library only; deterministic (the simulator is).
"""

import argparse
import csv
import datetime
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA = os.path.normpath(os.path.join(ROOT, "..", "shared", "data"))
SILICON = "aiconfigurator/silicon_h100.csv"
DOC = os.path.join(ROOT, "docs", "validation.md")

MODELS = {
    "Qwen/Qwen3-32B": "Qwen3-32B",
    "meta-llama/Llama-3.1-70B": "Llama-3.1-70B",
    "meta-llama/Llama-3.1-8B-Instruct": "Llama-3.1-8B",
    "Qwen/Qwen3-235B-A22B-FP8": "Qwen3-235B-A22B",
    "deepseek-ai/DeepSeek-V3": "DeepSeek-V3",
    "deepseek-ai/DeepSeek-R1": "DeepSeek-V3",
    "MiniMaxAI/MiniMax-M2.5": "MiniMax-M2.5",
    "openai/gpt-oss-120b": "gpt-oss-120b",
}
MOE_MODELS = ("Qwen3-235B-A22B", "DeepSeek-V3", "MiniMax-M2.5", "gpt-oss-120b")
# Models whose released checkpoint is quantised (config.json quantization_config); the simulator uses the
# checkpoint's format per module whatever the engine dtype says, so these rows' precision columns only decide the
# KV cache:
#  - MiniMax-M2.5 rows say fp8: the released block-FP8 checkpoint (128x128 scales); FP8 KV cache as every fp8 row.
#  - gpt-oss-120b rows say fp4 / nvfp4, but H100 has no FP4 tensor cores: vLLM serves the MXFP4 checkpoint there
#    with weight-only kernels. vllm/model_executor/layers/quantization/mxfp4.py, get_mxfp4_backend: on SM90 the
#    choices are SM90_FI_MXFP4_BF16 (FlashInfer, opt-in), TRITON (OpenAI's triton_kernels) or MARLIN, all MXFP4
#    weights with BF16 activations (mxfp4_w4a16_moe_quant_config); the MXFP8-activation backends are SM100 only.
#    AIConfigurator measured that path as w4a16_mxfp4 (kernel vllm_gptossmxfp4moe_triton_oaitritonmxfp4experts...).
#    Attention and the other GEMMs run in bf16; the KV cache is bf16 (vLLM's default "auto"; the rows record no KV
#    quantisation). The TRT-LLM rows say fp8: their KV cache is FP8 as for every fp8 row, and their experts are
#    priced on TRT-LLM's w4a16_mxfp4 grid, the only MXFP4 one measured (an assumption: TRT-LLM may run W4A8 there).
CHECKPOINT_QUANT = {"MiniMax-M2.5": "fp8", "gpt-oss-120b": "mxfp4"}
# Host constants fitted by --calibrate (names are engine.host keys). Kept few and physical.
PARAMS = ["iteration_us", "per_request_us"]
# Gate for --check: the recorded medians, of each gated group and of each model in it, may not grow by more than
# this (percentage points).
CHECK_MARGIN_PP = 1.0
# Groups --check replays and gates against their recorded figures.
CHECK_GROUPS = ("vllm agg", "vllm disagg", "trtllm agg", "trtllm disagg", "sglang agg", "sglang disagg")
# Batch-formation policy per backend (engine `scheduler`; the default is vLLM V1's), and the modes it applies to.
# SGLang runs its own prefill-first scheduler on agg rows (a waiting prompt gets a prefill-only step, decodes pause;
# enable_mixed_chunk is off by default). Its disagg rows keep the default: a P role only prefills and a D role only
# decodes, so the policies coincide there apart from admission order. TRT-LLM runs its GUARANTEED_NO_EVICT capacity
# scheduler in both modes: admission books each request's whole length, so a decode role short of KV queues requests
# before their transfer instead of preempting them (vLLM's policy preempted 6320 times on the c=1845 DeepSeek-R1 row).
SCHEDULER = {"sglang": ("sglang", ("agg",)), "trtllm": ("trtllm", ("agg", "disagg"))}
# How a row's clients drift apart after the first wave (they all start together), as output lengths: a property of
# the harness, not of the engine. "exact": outputs of exactly osl tokens (SGLang's prefill-first policy undoes any
# drift physically: a wave's prompts are prefilled while all decodes pause, then decode in the same steps and finish
# together). "token": osl-1..osl+1, the least spread that lets identical clients drift at all. "desync":
# osl +- DESYNC_SPREAD, clients that are out of phase after the first wave. The AIConfigurator database-dump rows
# (source_file=<date>.csv: vLLM Llama-3.1-70B) are of that kind: at 4 clients their measured TTFT is 81 / 70 / 121 ms
# (1024-token prompts, TP 4 / 8 / 2) where a wave of 4 prompts prefilled together costs 210 / 150 / 322 ms per cycle
# (the simulator's price with exact outputs), and the 1024x1024 and 1024x8192 rows measure the same TTFT.
DESYNC_SPREAD = 0.05
# Every spread from 2% to 20% gives the dump rows' TTFT median |err| within 6.5-9.0%: it only has to exceed a
# prefill step's worth of decode steps; the value is not fitted.


def client_drift(r):
    if r["mode"] != "agg":
        return "token"
    if r["backend"] == "sglang":
        return "exact"
    if "aic-auto-gap-analysis" not in r["silicon_data_source"]:
        return "desync"
    return "token"


def output_len(r):
    osl = num(r["osl"])
    drift = client_drift(r)
    if drift == "exact":
        return {"dist": "fixed", "value": osl}
    spread = max(1, round(osl * DESYNC_SPREAD)) if drift == "desync" else 1
    return {"dist": "uniform", "min": max(1, osl - spread), "max": osl + spread}


# Which token the harness times as the first: "first_text", the first streamed chunk that carries text.
# AIConfigurator's genai_perf_runner (the aic-auto-gap-analysis rows) runs genai-perf with --endpoint-type chat
# --streaming, and genai-perf and AIPerf disregard responses with no content; the database-dump rows record no
# harness, and their Llama-3.1-70B rows (no preamble) fit either way. It matters only for models whose chat response
# opens with tokens that carry no text (response_preamble_tokens in profiles/models: gpt-oss's harmony header, 3):
# without it the gpt-oss rows' TTFT was short by 5.3 measured TPOTs (median, 1024-token prompts; 3.8-5.9 for 36 of
# 40 rows at TP 2-8 and 4-64 clients), Llama-3.1-70B's by -0.2, MiniMax-M2.5's by 1.9 (docs/validation.md).
TTFT_FROM = "first_text"
# Requests per client, as AIConfigurator's benchmark runners send them (genai_perf_runner / bench_serving_runner).
REQUESTS_PER_CLIENT = 10
# Held-out splits for backends whose agg rows cover one model only (a split by model is impossible): a physical
# axis the host constants should not depend on. (column, held-out values)
SPLITS = {"sglang": [("tp_size", ("8",)), ("isl", ("4096",))]}


# TRTLLM_PREFILL_OVERLAP: TRT-LLM's overlap scheduler is on by default and in AIConfigurator's rules for agg and
# decode workers, which set `prefill disable_overlap_scheduler = true` (generator/rule_plugin/trtllm.rule and
# benchmark/trtllm.rule): the P roles of the TRT-LLM disagg rows replay without it.

# vLLM's async scheduling (host work of step n+1 overlapping the GPU's step n) as each row's engine ran it. vLLM
# 0.11's SchedulerConfig had async_scheduling = False; later versions leave it unset and VllmConfig resolves it to
# on (the image the MiniMax-M2.5 and gpt-oss-120b rows record is v0.18.0). The Qwen3-32B rows (0.12.0) and the
# Llama-3.1-70B rows (no version recorded) are replayed synchronous, as the host constants were fitted on them.
ASYNC_SCHEDULING_SINCE = (0, 13)


def async_scheduling(r):
    v = re.match(r"(\d+)\.(\d+)", r["backend_version"] or "")
    return bool(v) and (int(v.group(1)), int(v.group(2))) >= ASYNC_SCHEDULING_SINCE


# SGLang's default --mem-fraction-static as each row's engine computed it. Releases before its PR #10975 (the
# 0.5.1.post1 agg rows) reserved (9.5 + tp x pp / 2) GiB on GPUs of 35-90 GiB (+ 4 GiB with DP attention):
# ServerArgs.__post_init__ of that release; later ones use the formula the simulator applies by default
# (core/spec/engine_options.h). gpu_mem is the H100-SXM profile's memory in MiB, as in the simulator.
SGLANG_OLD_MEM_RULE_BEFORE = (0, 5, 2)
H100_MIB = 85029158912 / (1 << 20)


# TRT-LLM's kv_cache_config.free_gpu_memory_fraction in the engine configs AIConfigurator's generator writes for the
# aic-auto-gap-analysis agg rows: its version-matched templates
# (generator/config/backend_templates/trtllm/extra_engine_args.<version>.yaml.j2) write
# `free_gpu_memory_fraction: {{ kv_cache_config.free_gpu_memory_fraction | default(...) }}` and its rules set no value,
# so the template's default is what ran. Other TRT-LLM rows keep TRT-LLM's own default (0.9).
TRTLLM_TEMPLATE_KV_FRACTION = {"1.0.0rc3": 0.80, "1.2.0rc6.post1": 0.90, "1.3.0rc1": 0.80}


# TRT-LLM's CUDA graphs as AIConfigurator's rule writes them for agg and decode workers (generator/rule_plugin/
# trtllm.rule: `cuda_graph_batch_sizes` dense up to 512 plus the batch size +- 8, `cuda_graph_enable_padding = true`;
# its benchmark rule captures every size up to the batch size instead, which replays the same batches). TRT-LLM's own
# default (1-31, 32, 64, 128 without padding) would run every larger decode batch eagerly.
def trtllm_cuda_graph_sizes(bs):
    sizes = (list(range(1, 17)) + list(range(16, 33, 4)) + list(range(32, 65, 8)) + list(range(64, 129, 16))
             + list(range(128, 257, 32)) + list(range(256, 513, 64)) + list(range(1 if bs <= 8 else bs - 8, bs + 9)))
    return sorted(set(sizes))


def trtllm_kv_fraction(r):
    if r["backend"] != "trtllm" or r["mode"] != "agg" or "aic-auto-gap-analysis" not in r["silicon_data_source"]:
        return None
    return TRTLLM_TEMPLATE_KV_FRACTION.get(r["backend_version"])


def sglang_mem_fraction(r, parts):
    v = re.match(r"(\d+)\.(\d+)\.(\d+)", r["backend_version"] or "")
    if r["backend"] != "sglang" or not v or tuple(int(x) for x in v.groups()) >= SGLANG_OLD_MEM_RULE_BEFORE:
        return None
    reserved = (9.5 + parts["tp"] * parts["dp"] * parts["pp"] / 2) * 1024 + (4 * 1024 if parts["dp"] > 1 else 0)
    return round((H100_MIB - reserved) / H100_MIB, 3)


def num(s, default=0):
    try:
        return int(float(s))
    except (TypeError, ValueError):
        return default


def concurrency(r):
    """Closed-loop client count of a row (see the docstring for disagg rows); 0 when unknown."""
    if r["mode"] == "agg":
        # batch_size is per attention-DP rank: the ids of the 15 attention-DP agg rows (MiniMax-M2.5, DP 4) say
        # "_c64_" for batch_size 16, "_c32_" for 8, ..., as every other agg id's "_cN_" equals its batch_size.
        return num(r["batch_size"]) * max(1, num(r["attention_dp_size"], 1))
    m = re.search(r"silicon_concurrency=(\d+)", r["silicon_data_source"])
    if m:
        return int(m.group(1))
    if "workflow_run_id" in r["silicon_data_source"]:  # db-dump rows: concurrency = decode batch x workers
        return num(r["decode_batch_size"]) * num(r["decode_num_workers"])
    return 0


def parallelism(r, prefix, moe):
    """(parts, None) or (None, reason) for one side's columns (prefix "" for agg, "prefill_"/"decode_")."""
    tp, pp = max(1, num(r[prefix + "tp_size"], 1)), max(1, num(r[prefix + "pp_size"], 1))
    dp = max(1, num(r[prefix + "attention_dp_size"], 1))
    mtp, mep = max(1, num(r[prefix + "moe_tp_size"], 1)), max(1, num(r[prefix + "moe_ep_size"], 1))
    if not moe or (num(r[prefix + "moe_tp_size"]) <= 0 and num(r[prefix + "moe_ep_size"]) <= 0):
        mtp, mep = tp * dp, 1
    if mtp * mep != tp * dp:
        return None, "parallelism tp %d x dp %d != moe_tp %d x moe_ep %d" % (tp, dp, mtp, mep)
    return {"pp": pp, "tp": tp, "dp": dp, "mtp": mtp, "mep": mep}, None


def classify(r):
    """(scenario parts, None) or (None, reason the row cannot be expressed)."""
    model = MODELS.get(r["model_path"])
    if model is None:
        return None, "model %s is not bundled in profiles/models" % r["model_path"]
    prec = (r["gemm_quant_mode"] or r["precision"] or "").lower()
    quant = CHECKPOINT_QUANT.get(model)
    if quant == "mxfp4":
        # The MXFP4 checkpoint as H100 runs it (see CHECKPOINT_QUANT): bf16 activations and GEMMs, w4a16 experts.
        fp8, kv_fp8 = False, prec.startswith("fp8")
    elif "fp4" in prec or "int4" in prec:
        return None, "%s weights: no FP4/INT4 dtype in the simulator" % prec
    else:
        fp8 = kv_fp8 = prec.startswith("fp8")
    moe = model in MOE_MODELS
    parts = {"model": model, "fp8": fp8, "kv_fp8": kv_fp8, "concurrency": concurrency(r)}
    if r["mode"] == "agg":
        par, why = parallelism(r, "", moe)
        if par is None:
            return None, why
        parts.update(par)
    else:
        for side in ("prefill", "decode"):
            par, why = parallelism(r, side + "_", moe)
            if par is None:
                return None, why
            par["workers"] = max(1, num(r[side + "_num_workers"], 1))
            parts[side] = par
    if parts["concurrency"] <= 0:
        return None, ("client concurrency not recorded (aic-auto-gap-analysis rows: the batch sizes are the "
                      "configuration's; at decode_batch_size per worker the measured TPOT would be below the KV-read "
                      "time alone)")
    if r["mode"] == "agg":
        return parts, None
    gpus = sum(parts[s]["workers"] * parts[s]["pp"] * parts[s]["tp"] * parts[s]["dp"] for s in ("prefill", "decode"))
    parts["link"] = "nvlink" if gpus <= 8 else "inter_node"
    return parts, None


def layout_unknown(rows):
    """Disagg rows whose columns do not identify the run, by id -> reason. Rows that leave num_workers empty are
    replayed as 1P1D with the recorded TP, which is only right when those columns describe the run: not when the
    measurement is one of a db-dump row (whose recorded layout differs), nor when two different measurements share
    the same recorded layout, isl, osl and concurrency (two configurations folded into one description)."""
    def meas(r):
        return round(float(r["silicon_ttft_ms"]), 3), round(float(r["silicon_tpot_ms"]), 3)
    dump = {meas(r): r["id"] for r in rows if "workflow_run_id" in r["silicon_data_source"]}
    blank = [r for r in rows if r["mode"] == "disagg" and not r["prefill_num_workers"]]
    points = {}
    for r in blank:
        points.setdefault((r["backend"], r["model_path"], r["isl"], r["osl"], concurrency(r)), set()).add(meas(r))
    out = {}
    for r in blank:
        if meas(r) in dump:
            out[r["id"]] = ("worker counts not recorded and the measurement is that of a db-dump row with another "
                            "layout (prefill attention DP 16, 2-3 decode workers)")
        elif len(points[(r["backend"], r["model_path"], r["isl"], r["osl"], concurrency(r))]) > 1:
            out[r["id"]] = ("worker counts not recorded and the same recorded layout, isl, osl and concurrency carry "
                            "two different measurements (two configurations)")
    out.update(agg_run_unknown(rows))
    return out


def agg_run_unknown(rows):
    """Agg rows whose own measurements contradict the recorded run, by id -> reason.
    - Attention-DP rows that repeat a DP-1 row: 13 of the 15 MiniMax-M2.5 rows recorded as TP 4 x DP 4, EP 16 (16
      GPUs) measure what the TP 4, EP 4 rows (4 GPUs) at the same isl, osl and client count measure, TPOT within
      1.4% and TTFT within 12%: two runs of one deployment, not a layout with 4x the GPUs.
    - Rows whose decode is no slower than at a quarter of the clients or fewer: a step decoding N requests reads N
      requests' KV and cannot be as fast as one decoding N/4, so the engine ran far fewer requests than it had
      clients, under a running cap the row does not record (vLLM gpt-oss-120b at 512 clients: TPOT 3.6-26.9 ms
      against 7.1-26.3 ms at 64 or fewer clients of the same layout, with TTFTs of 20-462 s)."""
    agg = [r for r in rows if r["mode"] == "agg"]

    def layout(r, dp=True):
        return (r["backend"], r["model_path"], r["tp_size"], r["attention_dp_size"] if dp else "", r["isl"], r["osl"])
    dp1 = {}
    for r in agg:
        if num(r["attention_dp_size"], 1) <= 1:
            dp1.setdefault(layout(r, False) + (concurrency(r),), []).append(r)
    same = {}
    for r in agg:
        same.setdefault(layout(r), []).append(r)
    out = {}
    for r in agg:
        tpot, ttft, c = float(r["silicon_tpot_ms"]), float(r["silicon_ttft_ms"]), concurrency(r)
        if num(r["attention_dp_size"], 1) > 1:
            for o in dp1.get(layout(r, False) + (c,), []):
                if (abs(float(o["silicon_tpot_ms"]) / tpot - 1) <= 0.02
                        and abs(float(o["silicon_ttft_ms"]) / ttft - 1) <= 0.15):
                    out[r["id"]] = ("attention-DP layout recorded, but the measurement repeats the DP-1 row of the "
                                    "same isl, osl and client count (TPOT within 2%, TTFT within 15%) on a quarter "
                                    "of the GPUs")
                    break
        if r["id"] in out:
            continue
        for o in same[layout(r)]:
            if 4 * concurrency(o) <= c and 1.05 * float(o["silicon_tpot_ms"]) >= tpot:
                out[r["id"]] = ("the engine's running cap is not recorded and the measurement shows one: TPOT at "
                                "this client count is no more than 5% above the same layout's at a quarter of the "
                                "clients or fewer")
                break
    return out


def scenario(r, parts, host, gpu="H100-SXM"):
    bs, isl, osl = parts["concurrency"], num(r["isl"]), num(r["osl"])
    engine = {"backend": r["backend"], "max_num_seqs": 1024, "max_num_batched_tokens": 8192,
              "dtype": "fp8" if parts["fp8"] else "bfloat16"}
    if parts["kv_fp8"]:
        engine["kv_cache_dtype"] = "fp8"
    if r["backend"] == "vllm":
        engine["async_scheduling"] = async_scheduling(r)
    if r["backend"] == "trtllm":
        per_worker = bs if r["mode"] == "agg" else max(1, bs // max(1, parts["decode"]["workers"]))
        engine["cuda_graph_sizes"] = trtllm_cuda_graph_sizes(per_worker)
        engine["cuda_graph_padding"] = True
    mem_fraction = sglang_mem_fraction(r, parts) if r["mode"] == "agg" else None
    if mem_fraction is None:
        mem_fraction = trtllm_kv_fraction(r)
    if mem_fraction is not None:
        engine["gpu_memory_utilization"] = mem_fraction
    if r["backend"] in SCHEDULER and r["mode"] in SCHEDULER[r["backend"]][1]:
        engine["scheduler"] = SCHEDULER[r["backend"]][0]
    if host:
        engine["host"] = host

    def par(p):
        return {"pp": p["pp"], "tp_attn": p["tp"], "dp_attn": p["dp"], "tp_ffn": p["mtp"], "ep_ffn": p["mep"]}
    if r["mode"] == "agg":
        deployment = {"roles": [{"role": "C", "replicas": 1, "parallelism": par(parts)}]}
    else:
        prefill = {"role": "P", "replicas": parts["prefill"]["workers"], "parallelism": par(parts["prefill"])}
        if r["backend"] == "trtllm":
            prefill["engine"] = {"async_scheduling": False}  # TRTLLM_PREFILL_OVERLAP
        deployment = {"kv_transfer": {"link": parts["link"]},
                      "roles": [prefill,
                                {"role": "D", "replicas": parts["decode"]["workers"],
                                 "parallelism": par(parts["decode"])}]}
    return {"version": 1, "name": r["id"], "seed": 1, "model": parts["model"], "hardware": {"gpu": gpu},
            "engine": engine, "deployment": deployment,
            "workload": {"num_requests": max(REQUESTS_PER_CLIENT * bs, 32),
                         "arrival": {"process": "closed_loop", "max_concurrency": bs},
                         "input_len": {"dist": "fixed", "value": isl},
                         "output_len": output_len(r), "ttft_from": TTFT_FROM}}


def decode_kv_bound(result):
    """Tokens of KV the decode side of a disaggregated run could hold at most whatever its engine's memory settings:
    every byte of its GPUs beyond the weights, over all D replicas and attention-DP ranks. None for agg runs."""
    for role in result["deployment"]["roles"]:
        kv = role.get("kv_cache")
        if role["role"] == "D" and kv:
            per_rank = (kv["device_gib"] - kv["weights_gib"]) * 2 ** 30 / kv["kv_bytes_per_token"]
            return per_rank * role["replicas"] * role["parallelism"]["dp_attn"]
    return None


def kv_exceeds_layout(r, sim):
    """Reason a disagg row's measurement cannot have run on its recorded decode layout, or "". By Little's law the
    measurement says how many requests decoded at once: clients x decode time / (TTFT + decode time), each holding
    about isl + osl / 2 tokens of KV on average; when that is more than every byte of the decode GPUs beyond their
    weights could hold (decode_kv_bound), the decode side of the run was larger than recorded (more workers or
    attention DP). Uses the simulator's memory model only, not its timing."""
    if r["mode"] != "disagg" or not sim or sim[3] is None:
        return ""
    c, isl, osl = concurrency(r), num(r["isl"]), num(r["osl"])
    decode_ms = (osl - 1) * float(r["silicon_tpot_ms"])
    decoding = c * decode_ms / (float(r["silicon_ttft_ms"]) + decode_ms)
    need = decoding * (isl + osl / 2)
    if need <= sim[3]:
        return ""
    print("  %s: about %d requests decoding at once need about %.2fM tokens of KV; the decode layout holds at most "
          "%.2fM" % (r["id"], decoding, need / 1e6, sim[3] / 1e6), file=sys.stderr)
    return ("the measurement implies more KV than the recorded decode layout can hold (Little's law: clients x decode "
            "time / (TTFT + decode time) requests decoding at once, each with about isl + osl / 2 tokens, exceed all "
            "the decode GPUs' memory beyond the weights): the run's decode side was larger than recorded")


def simulate(cli, rows, host_by_backend, jobs, tmp, gpu="H100-SXM", profiles=None):
    """(mean TTFT ms, mean TPOT ms, supplemented, decode KV bound) per row id; None where the run failed.
    `supplemented`: the GPUs a role took grids from besides its tables' own (fidelity.supplements), "" if none;
    `decode KV bound`: decode_kv_bound, None for agg rows. `gpu`: the hardware (a name or an inline object);
    `profiles`: another profiles directory for the CLI."""
    def one(item):
        r, parts = item
        sc = scenario(r, parts, host_by_backend.get(r["backend"]), gpu)
        base = os.path.join(tmp, r["id"].replace("/", "_"))
        with open(base + ".json", "w") as f:
            json.dump(sc, f)
        p = subprocess.run([cli, "run", base + ".json", "--out", base + ".result.json", "--quiet"] +
                           (["--profiles", profiles] if profiles else []), capture_output=True, text=True)
        if p.returncode != 0:
            return r["id"], None, p.stderr.strip().splitlines()[-1:] or ["failed"]
        res = json.load(open(base + ".result.json"))
        s = res["summary"]
        if s["completed"] == 0:
            return r["id"], None, ["no request completed"]
        # The GPUs a role took grids its tables' GPU lacks from (fidelity.supplements), "" if none.
        supplemented = ", ".join(sorted({x["from"] for role in res["deployment"]["roles"]
                                         for x in role.get("fidelity", {}).get("supplements", [])}))
        return r["id"], (s["mean_ttft_ms"], s["mean_tpot_ms"], supplemented, decode_kv_bound(res)), None
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        out = {}
        for rid, val, err in ex.map(one, rows):
            out[rid] = val if val else None
            if err:
                print("  %s: %s" % (rid, err[0]), file=sys.stderr)
        return out


def errors(rows, sims):
    """Per row: (row, ttft_err, tpot_err) as signed relative errors."""
    out = []
    for r, _ in rows:
        v = sims.get(r["id"])
        if not v:
            continue
        out.append((r, v[0] / float(r["silicon_ttft_ms"]) - 1.0, v[1] / float(r["silicon_tpot_ms"]) - 1.0))
    return out


def summary(errs):
    if not errs:
        return {"n": 0}
    at = sorted(abs(e[1]) * 100 for e in errs)
    ap = sorted(abs(e[2]) * 100 for e in errs)

    def p(v, q):
        i = max(0, min(len(v) - 1, int(math.ceil(q * len(v))) - 1))
        return round(v[i], 1)
    return {"n": len(errs),
            "ttft_median_abs_pct": round(statistics.median(at), 1), "ttft_p90_abs_pct": p(at, 0.9),
            "ttft_median_signed_pct": round(statistics.median(e[1] for e in errs) * 100, 1),
            "tpot_median_abs_pct": round(statistics.median(ap), 1), "tpot_p90_abs_pct": p(ap, 0.9),
            "tpot_median_signed_pct": round(statistics.median(e[2] for e in errs) * 100, 1),
            # TTFT the simulation lacks, in the row's measured TPOTs: a whole number of output tokens at every load
            # says the gap is tokens the client does not count, not prefill work (docs/validation.md)
            "ttft_gap_tpots_median": round(statistics.median(
                -e[1] * float(e[0]["silicon_ttft_ms"]) / float(e[0]["silicon_tpot_ms"]) for e in errs), 1)}


def fit(cli, rows, start, jobs, tmp, backend):
    """Gauss-Newton on the log errors of TPOT with finite-difference Jacobians; parameters kept >= 0."""
    theta = dict(start)
    steps = {"iteration_us": 200.0, "per_request_us": 5.0}

    def residuals(th):
        sims = simulate(cli, rows, {backend: th}, jobs, tmp)
        res = {}
        for r, et, ep in errors(rows, sims):
            # TPOT only: the host constants set the steady-state step time; TTFT is dominated by how the
            # clients' phases are spread (docs/validation.md), which no host constant represents.
            res[r["id"]] = (0.0, math.log(1 + ep))
        return res
    for it in range(4):
        base = residuals(theta)
        ids = sorted(base)
        jac = {}
        for k in PARAMS:
            th = dict(theta)
            th[k] = theta[k] + steps[k]
            rk = residuals(th)
            jac[k] = [((rk[i][0] - base[i][0]) / steps[k], (rk[i][1] - base[i][1]) / steps[k]) for i in ids
                      if i in rk]
        # Normal equations J^T J d = -J^T r (small, solved by Gaussian elimination)
        n = len(PARAMS)
        a = [[0.0] * (n + 1) for _ in range(n)]
        for row_i, i in enumerate(ids):
            for comp in (0, 1):
                g = [jac[k][row_i][comp] for k in PARAMS]
                for x in range(n):
                    a[x][n] -= g[x] * base[i][comp]
                    for y in range(n):
                        a[x][y] += g[x] * g[y]
        for x in range(n):
            a[x][x] += 1e-12 + 1e-3 * a[x][x]  # Levenberg damping
        for c in range(n):
            piv = max(range(c, n), key=lambda q: abs(a[q][c]))
            a[c], a[piv] = a[piv], a[c]
            for q in range(n):
                if q != c and a[c][c] != 0:
                    f = a[q][c] / a[c][c]
                    for w in range(c, n + 1):
                        a[q][w] -= f * a[c][w]
        d = {k: (a[x][n] / a[x][x] if a[x][x] else 0.0) for x, k in enumerate(PARAMS)}
        new = {k: max(0.0, theta[k] + d[k]) for k in PARAMS}
        old_loss = sum(v[0] ** 2 + v[1] ** 2 for v in base.values()) / max(1, len(base))
        print("  iteration %d: loss %.4f, step %s" % (it, old_loss, {k: round(v, 2) for k, v in d.items()}),
              file=sys.stderr)
        if all(abs(new[k] - theta[k]) < 0.02 * steps[k] for k in PARAMS):
            theta = new
            break
        theta = new
    return {k: round(v, 1) for k, v in theta.items()}


def md_table(title, rows_by_group):
    lines = ["| %s | rows | TTFT median abs err | TTFT p90 | TTFT median signed | TPOT median abs err | TPOT p90 | "
             "TPOT median signed | TTFT gap in TPOTs |" % title, "|---|---|---|---|---|---|---|---|---|"]
    for name, s in rows_by_group:
        if s.get("n", 0) == 0:
            continue
        lines.append("| %s | %d | %.1f%% | %.1f%% | %+.1f%% | %.1f%% | %.1f%% | %+.1f%% | %+.1f |" % (
            name, s["n"], s["ttft_median_abs_pct"], s["ttft_p90_abs_pct"], s["ttft_median_signed_pct"],
            s["tpot_median_abs_pct"], s["tpot_p90_abs_pct"], s["tpot_median_signed_pct"], s["ttft_gap_tpots_median"]))
    return lines


def replace_section(path, tag, body):
    text = open(path).read() if os.path.exists(path) else "# Validation\n"
    begin, end = "<!-- BEGIN %s -->" % tag, "<!-- END %s -->" % tag
    block = begin + "\n" + body.rstrip() + "\n" + end
    if begin in text and end in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)


def update_validation_json(table_backend, group, full):
    """profiles/H100-SXM/<table backend>/validation.json: "e2e" (full) and the compact "summary"."""
    path = os.path.join(ROOT, "profiles", "H100-SXM", table_backend, "validation.json")
    doc = json.load(open(path)) if os.path.exists(path) else {}
    doc.setdefault("e2e", {})[group] = full
    summ = doc.setdefault("summary", {})
    summ["report"] = "docs/validation.md"
    s = full["summary"]
    summ.setdefault("e2e_median_abs_pct", {})[group] = {"rows": s["n"], "ttft": s["ttft_median_abs_pct"],
                                                        "tpot": s["tpot_median_abs_pct"]}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


# The datasheet path end to end (--datasheet): the rows priced as if H100 had no tables of its own, from another
# GPU's tables moved to H100's datasheet (hardware.gpu.tables_from), one source GPU per transfer rule.
DATASHEET_SOURCES = (("H200-SXM", "same architecture"), ("A100-80G", "other architecture"))
DATASHEET_GROUPS = ("vllm agg", "sglang agg")  # the groups priced from vLLM's tables, which all three GPUs have


def datasheet_e2e(args, expressible, tmp):
    """Replays DATASHEET_GROUPS with H100's own tables and with each DATASHEET_SOURCES GPU's tables moved to H100;
    writes the e2e_datasheet section of docs/validation.md and profiles/datasheet/validation.json."""
    rows = [x for x in expressible if "%s %s" % (x[0]["backend"], x[0]["mode"]) in DATASHEET_GROUPS]
    h100 = json.load(open(os.path.join(ROOT, "profiles", "gpus", "H100-SXM.json")))

    def profiles_listing(name, keep):
        """A copy of the bundled profiles whose index lists only the tables `keep` accepts."""
        path = os.path.join(tmp, name)
        shutil.copytree(os.path.join(ROOT, "profiles"), path)
        index = json.load(open(os.path.join(path, "index.json")))
        index["tables"] = [t for t in index["tables"] if keep(t)]
        json.dump(index, open(os.path.join(path, "index.json"), "w"))
        return path
    # The transfers see no H100 tables, so that grids the source GPU lacks (MiniMax's FP8, gpt-oss's MXFP4 experts and
    # 64-wide heads on A100) come from the other GPU, as for a GPU without tables, never from H100's own.
    without_h100 = profiles_listing("profiles_without_h100", lambda t: not t.startswith("H100-SXM/"))
    runs = [("H100-SXM (own tables)", None, "H100-SXM", None)]
    for src, rule in DATASHEET_SOURCES:
        g = dict(h100, name="H100-SXM from %s" % src, tables_from=src)
        runs.append(("H100-SXM from %s tables (%s)" % (src, rule), rule, g, without_h100))
    # The efficiency curves that price a GPU when no GPU has tables: the bundled profiles with an index listing none
    # (so nothing can be transferred) and an H100 under another name (so its own tables are not found).
    bare = profiles_listing("profiles_without_tables", lambda t: False)
    runs.append(("H100-SXM by the efficiency curves (fitted on A100, H100 and H200)", None,
                 dict(h100, name="H100-SXM by the curves"), bare))
    table = []
    by_rule = {}
    for label, rule, gpu, profiles in runs:
        print("replaying %d rows: %s" % (len(rows), label), file=sys.stderr)
        sims = simulate(args.cli, rows, {}, args.jobs, tmp, gpu, profiles)
        for group in DATASHEET_GROUPS:
            in_group = [x for x in rows if "%s %s" % (x[0]["backend"], x[0]["mode"]) == group]
            s = summary(errors(in_group, sims))
            table.append((label, group, s))
            # Rows where grids the source GPU lacks came from a further GPU (supplement_role_tables): shown apart, and
            # the rule's own figure (quoted by results as its measured error) counts only the rows priced by it alone.
            ran = [x for x in in_group if sims.get(x[0]["id"])]
            alone = [x for x in ran if not sims[x[0]["id"]][2]]
            sup = [x for x in ran if sims[x[0]["id"]][2]]
            if sup:
                extra = sorted({sims[x[0]["id"]][2] for x in sup})
                models = sorted({x[1]["model"] for x in sup})
                table.append(("... of which priced by the rule alone", group, summary(errors(alone, sims))))
                table.append(("... of which with grids the source lacks from %s (%s)" % (", ".join(extra),
                                                                                        ", ".join(models)),
                              group, summary(errors(sup, sims))))
            s_rule = summary(errors(alone, sims))
            if rule and s_rule.get("n"):
                by_rule.setdefault(rule, {})[group] = {k: s_rule[k] for k in ("n", "ttft_median_abs_pct",
                                                                              "tpot_median_abs_pct")}
    lines = ["## End-to-end through the datasheet path", "",
             "Command: `python3 scripts/validate_e2e.py --datasheet` (%s). The vLLM and SGLang agg rows of "
             "silicon_h100.csv replayed as above, once with H100's own tables and once per transfer rule with another "
             "GPU's tables moved to H100's datasheet (an inline H100 with `tables_from`, H100's own tables hidden), as "
             "a GPU without tables is priced: grids the source GPU lacks (a weight format, a head size) come from the "
             "next nearest GPU with tables, moved by that pair's rule, and those rows are also shown apart; and once by "
             "the datasheet efficiency curves alone (what prices a GPU when no GPU has tables; in-sample, as H100 is "
             "one of the GPUs they are fitted on). The host constants are the same in every run."
             % datetime.date.today().isoformat(), "",
             "| pricing | group | rows | TTFT median abs err | TTFT p90 | TTFT median signed | TPOT median abs err | "
             "TPOT p90 | TPOT median signed |", "|---|---|---|---|---|---|---|---|---|"]
    for label, group, s in table:
        if s.get("n"):
            lines.append("| %s | %s | %d | %.1f%% | %.1f%% | %+.1f%% | %.1f%% | %.1f%% | %+.1f%% |" % (
                label, group, s["n"], s["ttft_median_abs_pct"], s["ttft_p90_abs_pct"], s["ttft_median_signed_pct"],
                s["tpot_median_abs_pct"], s["tpot_p90_abs_pct"], s["tpot_median_signed_pct"]))
    replace_section(DOC, "e2e_datasheet", "\n".join(lines))
    path = os.path.join(ROOT, "profiles", "datasheet", "validation.json")
    doc = json.load(open(path)) if os.path.exists(path) else {}
    doc.setdefault("summary", {})["e2e_median_abs_pct"] = by_rule
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "native", "servesim"))
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--backend", default="all")
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--model", default="", help="only rows whose model_path contains this (case-insensitive)")
    ap.add_argument("--datasheet", action="store_true",
                    help="replay the vLLM/SGLang agg rows through the datasheet path (DATASHEET_SOURCES)")
    args = ap.parse_args()
    if not os.path.exists(args.cli):
        sys.exit("simulator not built: %s" % args.cli)
    all_rows = list(csv.DictReader(open(os.path.join(args.data, SILICON))))
    backends = ["vllm", "trtllm", "sglang"] if args.backend == "all" else [args.backend]
    expressible, skipped = [], {}
    unknown_layout = layout_unknown(all_rows)
    for r in all_rows:
        if r["backend"] not in backends:
            continue
        if args.model and args.model.lower() not in r["model_path"].lower():
            continue
        # --check replays the gated groups only (CHECK_GROUPS)
        if args.check and "%s %s" % (r["backend"], r["mode"]) not in CHECK_GROUPS:
            continue
        parts, why = classify(r)
        if parts is not None and r["id"] in unknown_layout:
            parts, why = None, unknown_layout[r["id"]]
        if parts is None:
            skipped.setdefault((r["backend"], r["mode"], why), []).append(r["id"])
        else:
            expressible.append((r, parts))
    if args.limit:
        seen = {}
        lim = []
        for r, p in expressible:
            k = (r["backend"], p["model"])
            seen[k] = seen.get(k, 0) + 1
            if seen[k] <= args.limit:
                lim.append((r, p))
        expressible = lim

    if args.datasheet:
        with tempfile.TemporaryDirectory() as tmp:
            datasheet_e2e(args, expressible, tmp)
        return
    with tempfile.TemporaryDirectory() as tmp:
        calib = {}
        if args.calibrate:
            for b in backends:
                rows_b = [x for x in expressible if x[0]["backend"] == b and x[0]["mode"] == "agg"]
                models = sorted({p["model"] for _, p in rows_b})
                start = {"iteration_us": 800.0, "per_request_us": 20.0}
                folds = []
                if len(models) < 2 and b in SPLITS and rows_b:
                    # One model: hold out by a physical axis instead (SPLITS), then fit on all rows.
                    for col, held in SPLITS[b]:
                        train = [x for x in rows_b if x[0][col] not in held]
                        test = [x for x in rows_b if x[0][col] in held]
                        print("calibrating %s without %s %s (%d train rows)" % (b, col, "/".join(held), len(train)),
                              file=sys.stderr)
                        th = fit(args.cli, train, start, args.jobs, tmp, b)
                        sims = simulate(args.cli, rows_b, {b: th}, args.jobs, tmp)
                        folds.append({"held_out_model": "%s %s" % (col, "/".join(held)), "constants": th,
                                      "train": summary(errors(train, sims)), "test": summary(errors(test, sims))})
                    print("calibrating %s on all its rows" % b, file=sys.stderr)
                    th = fit(args.cli, rows_b, start, args.jobs, tmp, b)
                    calib[b] = {"constants_all_models": th, "fitted_on": "all %d rows" % len(rows_b), "folds": folds}
                    continue
                if len(models) < 2:
                    continue
                if len(models) > 2:
                    # Leave-one-model-out is too slow here: fit on the first model only, test on the others, and
                    # keep those constants (every other model stays held out).
                    train = [x for x in rows_b if x[1]["model"] == models[0]]
                    test = [x for x in rows_b if x[1]["model"] != models[0]]
                    print("calibrating %s on %s only (%d rows)" % (b, models[0], len(train)), file=sys.stderr)
                    th = fit(args.cli, train, start, args.jobs, tmp, b)
                    sims = simulate(args.cli, rows_b, {b: th}, args.jobs, tmp)
                    folds.append({"held_out_model": ", ".join(models[1:]), "constants": th,
                                  "train": summary(errors(train, sims)), "test": summary(errors(test, sims))})
                    calib[b] = {"constants_all_models": th, "fitted_on": models[0], "folds": folds}
                    continue
                for held in models:
                    train = [x for x in rows_b if x[1]["model"] != held]
                    test = [x for x in rows_b if x[1]["model"] == held]
                    print("calibrating %s without %s (%d train rows)" % (b, held, len(train)), file=sys.stderr)
                    th = fit(args.cli, train, start, args.jobs, tmp, b)
                    sims = simulate(args.cli, train + test, {b: th}, args.jobs, tmp)
                    folds.append({"held_out_model": held, "constants": th,
                                  "train": summary(errors(train, sims)), "test": summary(errors(test, sims))})
                print("calibrating %s on all models" % b, file=sys.stderr)
                th = fit(args.cli, rows_b, start, args.jobs, tmp, b)
                calib[b] = {"constants_all_models": th, "folds": folds}
            print(json.dumps(calib, indent=1))
        sims = simulate(args.cli, expressible, {}, args.jobs, tmp)

    kept = []
    for r, parts in expressible:
        why = kv_exceeds_layout(r, sims.get(r["id"]))
        if why:
            skipped.setdefault((r["backend"], r["mode"], why), []).append(r["id"])
        else:
            kept.append((r, parts))
    expressible = kept
    errs = errors(expressible, sims)
    # Calibrations not redone in this run are kept from the recorded validation.json.
    for b in backends:
        if b in calib or args.check:
            continue
        path = os.path.join(ROOT, "profiles", "H100-SXM", "trtllm" if b == "trtllm" else "vllm", "validation.json")
        rec = (json.load(open(path)) if os.path.exists(path) else {}).get("e2e", {}).get("%s agg" % b, {})
        if "calibration" in rec:
            calib[b] = rec["calibration"]
    groups = []
    for b in backends:
        for mode in ("agg", "disagg"):
            e = [x for x in errs if x[0]["backend"] == b and x[0]["mode"] == mode]
            groups.append(("%s %s" % (b, mode), summary(e)))
    per_model = []
    for b in backends:
        for mode in ("agg", "disagg"):
            for m in sorted({p["model"] for r, p in expressible if r["backend"] == b and r["mode"] == mode}):
                ids = {r["id"] for r, p in expressible if r["backend"] == b and r["mode"] == mode and p["model"] == m}
                per_model.append(("%s %s %s" % (b, mode, m), summary([x for x in errs if x[0]["id"] in ids])))

    if args.model:
        # A look at some models' rows: per model and mode, then the worst rows. Writes nothing.
        for name, s in per_model:
            if not s.get("n"):
                continue
            print("%-36s n=%3d  TTFT median |err| %5.1f%% (signed %+5.1f%%)  TPOT median |err| %5.1f%% (signed %+5.1f%%)"
                  % (name, s["n"], s["ttft_median_abs_pct"], s["ttft_median_signed_pct"], s["tpot_median_abs_pct"],
                     s["tpot_median_signed_pct"]))
        for label, k in (("TTFT", 1), ("TPOT", 2)):
            print("worst %s rows:" % label)
            for r, et, ep in sorted(errs, key=lambda e: -abs(e[k]))[:8]:
                sim = sims[r["id"]]
                print("  %-60s %s tp%s dp%s ep%s isl %s osl %s bs %s: TTFT %.1f vs %.1f ms (%+.0f%%), "
                      "TPOT %.2f vs %.2f ms (%+.0f%%)" % (
                          r["id"][:60], r["model_path"].split("/")[-1], r["tp_size"], r["attention_dp_size"] or 1,
                          r["moe_ep_size"] or 1, r["isl"], r["osl"], r["batch_size"], sim[0],
                          float(r["silicon_ttft_ms"]), et * 100, sim[1], float(r["silicon_tpot_ms"]), ep * 100))
        for (b, mode, why), ids in sorted(skipped.items()):
            print("not expressible: %s %s: %s (%d rows)" % (b, mode, why, len(ids)))
        return

    if args.check:
        bad, done = [], []
        for name in CHECK_GROUPS:
            b = name.split()[0]
            if b not in backends:
                continue
            got = dict(groups).get(name, {"n": 0})
            path = os.path.join(ROOT, "profiles", "H100-SXM", "trtllm" if b == "trtllm" else "vllm", "validation.json")
            rec = json.load(open(path)).get("e2e", {}).get(name, {}).get("summary")
            if rec is None:
                if got.get("n"):
                    bad.append("%s: no recorded figures in %s" % (name, os.path.relpath(path, ROOT)))
                continue
            for k in ("ttft_median_abs_pct", "tpot_median_abs_pct"):
                if got.get(k, 1e9) > rec[k] + CHECK_MARGIN_PP:
                    bad.append("%s %s %.1f%% > recorded %.1f%% + %.1f" % (name, k, got.get(k, -1), rec[k],
                                                                         CHECK_MARGIN_PP))
            if got.get("n", 0) < rec["n"]:
                bad.append("%s: only %d of %d rows replayed" % (name, got.get("n", 0), rec["n"]))
            # Each model of the group on its own, so that a large group cannot hide one model's regression.
            got_models = dict(per_model)
            by_model = json.load(open(path)).get("e2e", {}).get(name, {}).get("by_model", {})
            for model, mrec in sorted(by_model.items()):
                mgot = got_models.get("%s %s" % (name, model), {"n": 0})
                for k in ("ttft_median_abs_pct", "tpot_median_abs_pct"):
                    if mgot.get(k, 1e9) > mrec[k] + CHECK_MARGIN_PP:
                        bad.append("%s %s %s %.1f%% > recorded %.1f%% + %.1f" % (
                            name, model, k, mgot.get(k, -1), mrec[k], CHECK_MARGIN_PP))
            if got.get("n"):
                done.append("%s: TTFT median |err| %.1f%%, TPOT %.1f%% (recorded %.1f%%, %.1f%%; %d rows)" % (
                    name, got["ttft_median_abs_pct"], got["tpot_median_abs_pct"], rec["ttft_median_abs_pct"],
                    rec["tpot_median_abs_pct"], got["n"]))
        print("\n".join(done))
        if bad:
            sys.exit("end-to-end error regressed: " + "; ".join(bad))
        return

    lines = ["## End-to-end: silicon_h100.csv replayed", "",
             "Command: `python3 scripts/validate_e2e.py` (%s; %d rows replayed, %d not expressible)." % (
                 datetime.date.today().isoformat(), len(errs), sum(len(v) for v in skipped.values())), "",
             "Protocol: see the script's docstring (closed loop, concurrency = batch_size (x attention DP) for agg rows and the "
             "recorded silicon_concurrency for disagg rows, all clients starting together, fixed isl, outputs of "
             "osl +- 1 token (SGLang agg rows: exactly osl, with the sglang scheduler; database-dump agg rows, whose "
             "clients are out of phase after the first wave: osl +- 5%), 10 x concurrency requests, the "
             "row's parallelism/dtype/backend; disagg rows as P/D scenarios with the row's worker counts and per-role "
             "parallelism; TTFT timed at the first token that carries text, as genai-perf and AIPerf do: after gpt-oss's "
             "3-token harmony header). Errors are (simulated - measured) / "
             "measured of mean TTFT and mean TPOT; goal on vLLM agg rows: median |error| <= 10% TTFT, <= 5% TPOT. "
             "`TTFT gap in TPOTs` is the median of (measured - simulated TTFT) / measured TPOT: the TTFT the "
             "simulation lacks, in output tokens.",
             ""]
    lines += md_table("backend, mode", groups) + [""] + md_table("backend, mode, model", per_model) + [""]
    if calib:
        lines += ["### Calibration of the host constants (held-out split by model; by TP size and ISL for SGLang, "
                  "which has one model)", ""]
        for b, c in calib.items():
            lines.append("%s, constants in use (fitted on %s): %s" % (
                b, c.get("fitted_on", "all its models"),
                ", ".join("`%s` = %s" % kv for kv in sorted(c["constants_all_models"].items()))))
            lines += ["", "| held out | constants fitted on the others | train TTFT / TPOT median abs | "
                          "held-out TTFT / TPOT median abs |", "|---|---|---|---|"]
            for f in c["folds"]:
                lines.append("| %s | %s | %.1f%% / %.1f%% | %.1f%% / %.1f%% |" % (
                    f["held_out_model"], ", ".join("%s %s" % kv for kv in sorted(f["constants"].items())),
                    f["train"]["ttft_median_abs_pct"], f["train"]["tpot_median_abs_pct"],
                    f["test"]["ttft_median_abs_pct"], f["test"]["tpot_median_abs_pct"]))
            lines.append("")
    lines += ["### Rows not expressible", "", "| backend | mode | reason | rows |", "|---|---|---|---|"]
    for (b, mode, why), ids in sorted(skipped.items()):
        lines.append("| %s | %s | %s | %d |" % (b, mode, why, len(ids)))
    lines.append("")
    lines += ["### Every replayed row", "", "| row | sim TTFT ms | measured | err | sim TPOT ms | measured | err |",
              "|---|---|---|---|---|---|---|"]
    for r, et, ep in errs:
        s = sims[r["id"]]
        lines.append("| %s | %.1f | %.1f | %+.0f%% | %.2f | %.2f | %+.0f%% |" % (
            r["id"], s[0], float(r["silicon_ttft_ms"]), et * 100, s[1], float(r["silicon_tpot_ms"]), ep * 100))
    replace_section(DOC, "e2e", "\n".join(lines))
    for b in backends:
        for mode in ("agg", "disagg"):
            g = dict(groups).get("%s %s" % (b, mode))
            if g and g.get("n"):
                entry = {"summary": g, "command": "python3 scripts/validate_e2e.py",
                         "date": datetime.date.today().isoformat()}
                if b in calib and mode == "agg":
                    entry["calibration"] = calib[b]
                prefix = "%s %s " % (b, mode)
                entry["by_model"] = {n[len(prefix):]: ms for n, ms in per_model if n.startswith(prefix) and ms.get("n")}
                update_validation_json("trtllm" if b == "trtllm" else "vllm", "%s %s" % (b, mode), entry)
    for name, s in groups + per_model:
        if s.get("n"):
            print("%-28s n=%3d  TTFT median |err| %5.1f%% (signed %+5.1f%%)  TPOT median |err| %5.1f%% (signed %+5.1f%%)"
                  % (name, s["n"], s["ttft_median_abs_pct"], s["ttft_median_signed_pct"], s["tpot_median_abs_pct"],
                     s["tpot_median_signed_pct"]))


if __name__ == "__main__":
    main()
