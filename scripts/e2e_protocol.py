"""The replay protocol of scripts/validate_e2e.py: which rows of silicon_h100.csv the simulator can express and
the scenario each becomes.

Each agg row becomes a closed-loop scenario: `batch_size` clients (x attention_dp_size: the column is per DP rank),
each sending the next request when its previous one finishes, all starting together; prompts of exactly `isl` tokens;
10 x batch_size requests (at least 32), the request count of AIConfigurator's own benchmark runners (genai-perf
`--request-count` 10 x concurrency, bench_serving `--num-prompts` 10 x concurrency). Output lengths stand in for how
the harness's clients drift apart after the first wave, which the simulator cannot know (see client_drift): exactly
osl for the agg rows of AIConfigurator's harness (aic-auto-gap-analysis), which asks for exactly osl tokens,
osl-1..osl+1 for disagg rows, and osl +- 5% for the database-dump rows (source_file=<date>.csv), whose clients are
desynchronised after the first wave: their measured TTFT at 4 clients with 1024-token prompts is 38-47% of what a wave
of 4 prompts prefilled together costs every cycle. The row's TP/PP/attention-DP/MoE-TP/EP, dtype (fp8 rows: FP8
weights and FP8 KV cache) and backend (which tables and host constants) are used; engine limits are vLLM's H100
defaults (max_num_batched_tokens 8192, max_num_seqs 1024; for SGLang 8192 is its H100 --chunked-prefill-size; for the
TRT-LLM and vLLM agg rows of AIConfigurator's harness its generator's token budget, generator_max_num_tokens, and
for the vLLM ones its --max-num-seqs and --max-model-len; run sets whose measured TTFT shows one request always
waiting for a slot get one slot fewer than clients, one_waiting_runs),
SGLang agg rows use the `sglang` scheduler (prefill-first, decodes paused while prompts wait) and TRT-LLM rows the
`trtllm` one (GUARANTEED_NO_EVICT admission, no preemption; see SCHEDULER) with chunked prefill off, TRT-LLM's default
and that of AIConfigurator's templates (`enable_chunked_prefill | default(false)`; no rule sets it). TRT-LLM and
SGLang roles run their engines' overlap schedulers (on by default, as `async_scheduling`: a request arriving during a
step joins the step after the next), except TRT-LLM P roles (TRTLLM_PREFILL_OVERLAP); TRT-LLM roles capture the
CUDA-graph sizes of AIConfigurator's rule, padded (trtllm_cuda_graph_sizes). vLLM's async scheduling follows the
recorded version's default (ASYNC_SCHEDULING_SINCE). SGLang's memory share is 0.80 on the aic-auto-gap-analysis agg
rows (SGLANG_HARNESS_MEM_FRACTION, calibrated on that harness's TP 1 run set and held out on its other one) and
follows the recorded version's default elsewhere (SGLANG_OLD_MEM_RULE_BEFORE); TRT-LLM's free_gpu_memory_fraction on
the aic-auto-gap-analysis agg rows is the default of AIConfigurator's template for the recorded version
(TRTLLM_TEMPLATE_KV_FRACTION), and those rows stream their tokens through trtllm-serve's front-end, one serial
stage of TRTLLM_HARNESS_STREAM_US a token (engine.frontend; read off the TP 2 rows' ceiling). TTFT is timed at the
first token that carries text (TTFT_FROM: the harness's chat clients disregard empty responses; gpt-oss opens with a
3-token harmony header). Compared: mean TTFT and mean TPOT.

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

"""

import functools
import json
import os
import re
import statistics
import sys


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA = os.path.normpath(os.path.join(ROOT, "..", "shared", "data"))
SILICON = "aiconfigurator/silicon_h100.csv"

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
# Which rows ran a block-FP8 checkpoint (fine-grained FP8 weights in 128 x 128 blocks, AIConfigurator's fp8_block:
# its collectors' group_size 128), whose config.json is the 16-bit model's plus BLOCK_FP8_QUANTIZATION. The bundled
# model is the 16-bit one, so the replay gives the scenario that config inline (block_fp8_model). Models whose bundled
# config already carries a quantization_config keep it. Three kinds of row (serves_block_fp8):
# - the row records fp8_block GEMMs and experts (the 126 TRT-LLM Qwen/Qwen3-235B-A22B-FP8 rows);
# - the row's model path is a block-scaled FP8 release (BLOCK_FP8_RELEASES), whatever quant mode it records: the
#   harness's 1.2.0rc6.post1 row of Qwen/Qwen3-235B-A22B-FP8 records "fp8" for that same checkpoint, so the column
#   does not tell per-tensor from block scales;
# - a TRT-LLM row recording FP8 on the 16-bit path of a model whose publisher's FP8 release is block-scaled.
#   TRT-LLM's PyTorch backend quantises no weights when it loads a model: it runs checkpoints quantised beforehand
#   (the publisher's, or ModelOpt's offline), and vLLM and SGLang quantise a 16-bit checkpoint online per tensor
#   (--quantization fp8), so only TRT-LLM's rows need a checkpoint the row does not name. For Qwen the harness's FP8
#   checkpoint is Qwen's release (its 235B rows name it). The measurement agrees (docs/validation.md, 2026-11-26):
#   the 176 TRT-LLM Qwen/Qwen3-32B rows' TPOT median |err| is 7.5% priced per tensor, with a bias that follows the
#   client count (median signed +12.5% at 8 clients, where per-tensor FP8 GEMMs with their dynamic input
#   quantisation are the slower ones, -4.6% at 128), and 2.5% priced with block scales (-2.0% to -0.1% signed at
#   every client count, 2.0-3.5% median |err| in each TP fold).
BLOCK_FP8_QUANTIZATION = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                          "weight_block_size": [128, 128]}
# Publishers' FP8 releases of bundled 16-bit models that are block-scaled (their config.json's quantization_config
# has weight_block_size [128, 128]).
BLOCK_FP8_RELEASES = {"Qwen3-32B": "Qwen/Qwen3-32B-FP8", "Qwen3-30B-A3B": "Qwen/Qwen3-30B-A3B-FP8",
                      "Qwen3-235B-A22B": "Qwen/Qwen3-235B-A22B-FP8"}
MODELS_DIR = os.path.join(ROOT, "profiles", "models")


def records_block_fp8(r):
    return r["gemm_quant_mode"] == "fp8_block" and r["moe_quant_mode"] in ("", "fp8_block")


def serves_block_fp8(r, model):
    """Whether the row ran a block-FP8 checkpoint of the bundled 16-bit `model` (see BLOCK_FP8_RELEASES)."""
    if bundled_config(model).get("quantization_config"):
        return False
    if records_block_fp8(r):
        return True
    release = BLOCK_FP8_RELEASES.get(model)
    if release is None or not (r["gemm_quant_mode"] or r["precision"] or "").lower().startswith("fp8"):
        return False
    return r["model_path"] == release or r["backend"] == "trtllm"


@functools.lru_cache(maxsize=None)
def bundled_config(model):
    """A bundled model's config.json (read once per model; callers copy before changing it)."""
    with open(os.path.join(MODELS_DIR, model + ".json")) as f:
        return json.load(f)["config"]


def block_fp8_model(model, hf_id=None):
    """The inline model of a block-FP8 checkpoint of a bundled 16-bit model: its config plus
    BLOCK_FP8_QUANTIZATION (`hf_id`: the checkpoint's name, when known)."""
    config = dict(bundled_config(model), quantization_config=BLOCK_FP8_QUANTIZATION)
    return dict({"name": model + "-FP8", "config": config}, **({"hf_id": hf_id} if hf_id else {}))


# Batch-formation policy per backend (engine `scheduler`; the default is vLLM V1's), and the modes it applies to.
# SGLang runs its own prefill-first scheduler on agg rows (a waiting prompt gets a prefill-only step, decodes pause;
# enable_mixed_chunk is off by default). Its disagg rows keep the default: a P role only prefills and a D role only
# decodes, so the policies coincide there apart from admission order. TRT-LLM runs its GUARANTEED_NO_EVICT capacity
# scheduler in both modes: admission books each request's whole length, so a decode role short of KV queues requests
# before their transfer instead of preempting them (vLLM's policy preempted 6320 times on the c=1845 DeepSeek-R1 row).
SCHEDULER = {"sglang": ("sglang", ("agg",)), "trtllm": ("trtllm", ("agg", "disagg"))}
# How a row's clients drift apart after the first wave (they all start together), as output lengths: a property of
# the harness, not of the engine. "exact": outputs of exactly osl tokens, what AIConfigurator's harness asks for
# (genai_perf_runner: --output-tokens-mean osl with stddev 0, min_tokens = max_tokens = osl, ignore_eos), so identical
# clients that start together come back together (the aic-auto-gap-analysis agg rows; SGLang's prefill-first policy
# would undo any drift anyway: a wave's prompts are prefilled while all decodes pause, then decode in the same steps).
# "token": osl-1..osl+1, the least spread that lets identical clients drift at all (disagg rows; it stood in for the
# harness's vLLM and TRT-LLM agg rows until their token budget was known, see generator_max_num_tokens). "desync":
# osl +- DESYNC_SPREAD, clients that are out of phase after the first wave. The AIConfigurator database-dump rows
# (source_file=<date>.csv: vLLM Llama-3.1-70B) are of that kind: at 4 clients their measured TTFT is 81 / 70 / 121 ms
# (1024-token prompts, TP 4 / 8 / 2) where a wave of 4 prompts prefilled together costs 210 / 150 / 322 ms per cycle
# (the simulator's price with exact outputs), and the 1024x1024 and 1024x8192 rows measure the same TTFT.
DESYNC_SPREAD = 0.05
# Every spread from 2% to 20% gives the dump rows' TTFT median |err| within 6.5-9.0%: it only has to exceed a
# prefill step's worth of decode steps; the value is not fitted.


def harness_agg(r):
    """An agg row of AIConfigurator's own benchmark harness (aic-auto-gap-analysis), whose run settings the replay
    follows: exact outputs, its generator's token budget, its templates' memory settings, trtllm-serve's front-end."""
    return r["mode"] == "agg" and "aic-auto-gap-analysis" in r["silicon_data_source"]


def client_drift(r):
    if r["mode"] != "agg":
        return "token"
    return "exact" if harness_agg(r) else "desync"


DRIFTS = ("exact", "token", "desync")


def output_len(r, drift=None):
    """The row's output lengths under its client_drift, or under `drift` (one of DRIFTS) when given."""
    osl = num(r["osl"])
    drift = drift or client_drift(r)
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


# The token budget of the aic-auto-gap-analysis agg rows, TRT-LLM's and vLLM's: AIConfigurator's generator writes
# `agg max_num_tokens = max_batch_size + isl + 1500` in its benchmark rules (generator/rule_plugin/benchmark/trtllm.rule
# and vllm.rule, max_batch_size = the batch size; the production trtllm.rule raises max_batch_size to 512 first and
# rounds the sum up to 32-token blocks) and maps it to TRT-LLM's max_num_tokens and vLLM's --max-num-batched-tokens
# (config/backend_config_mapping.yaml). TRT-LLM: with chunked prefill off (the template's default) a step then holds
# the running decodes and one or two whole prompts, not TRT-LLM's default of 8192 tokens. vLLM: the generic cli_args.j2
# and cli_args.0.14.1.j2 emit the flag and AIConfigurator PR #238 (2026-01-09) added it to the generated vLLM launch;
# the stored cli_args.0.12.0.j2 does not, and the rows do not record which ran. The measurement decides it: the harness
# asks for exactly osl tokens (client_drift), so a cohort of clients that starts together comes back together, and
# under vLLM's 8192-token default every client of an 8-client cohort of 1024-token prompts waits for one step of all
# 8 prompts every cycle: mean TTFT 163.6 / 256.7 / 448.6 ms at TP 8 / 4 / 2 (1024 x 512) by the validated per-op
# prices, where the rows measure 93.1 / 126.0 / 153.6 ms, 0.34-0.57 of it; under the rule's budget (two prompts and a
# chunk a step) the replay gives 86.9 / 128.3 / 213.5 ms.
# The same rules write vLLM's --max-num-seqs (max_batch_size: the batch size) and --max-model-len
# (`agg max_seq_len = isl + osl + 1500`), which the generator's vLLM templates pass (cli_args.0.12.0.j2 and
# cli_args.0.14.1.j2 both emit them): the sequences bound how many rows vLLM's profile run samples, so the KV budget
# (memory_model.h), and the length whether vLLM would start.
# Other rows keep their engine's default.
GENERATOR_TOKEN_MARGIN = 1500
GENERATOR_TOKEN_BUDGET_BACKENDS = ("trtllm", "vllm")


def generator_max_num_tokens(r, bs):
    if r["backend"] not in GENERATOR_TOKEN_BUDGET_BACKENDS or not harness_agg(r):
        return None
    return bs + num(r["isl"]) + GENERATOR_TOKEN_MARGIN


# A run set (one source file of one backend and model) in which one of the clients' requests always waits for a
# free slot: at a fixed client count c the measured TTFT rises with osl by about one departure interval per cycle,
#   TTFT(osl2) - TTFT(osl1) = (osl2 x TPOT2 - osl1 x TPOT1) / c,
# which is what c clients on c - 1 slots give (each cycle one request waits for the next departure; identical clients
# depart together, so it waits a whole request). ONE_WAITING_SLOPE bounds the median of that ratio over the set's
# groups (same isl, clients and layout; at least two osl values; c <= 64, above which other limits mix in) for a set
# to count as such. TRT-LLM Llama-3.1-8B measures 0.93 (48 groups, 35 of them 0.8-1.2); every other set -0.98 to
# 0.06, except SGLang 0.5.8.post1's two TP 1 groups at 73, where requests queue for KV by the dozen (TTFTs of 7-89 s),
# not one at a time. What takes the slot is not recorded (the generator's rules give max_batch_size = the batch size,
# or 512); the replay gives such sets max_num_seqs = c - 1.
ONE_WAITING_SLOPE = (0.5, 1.5)
ONE_WAITING_MAX_CLIENTS = 64


def run_set(r):
    m = re.search(r"source_file=([^;]*)", r["silicon_data_source"])
    return (r["backend"], r["model_path"], m.group(1) if m else r["silicon_data_source"])


def one_waiting_slopes(rows):
    """(median osl slope of TTFT in units of (osl x TPOT) / c, groups) per agg run set (see ONE_WAITING_SLOPE)."""
    groups = {}
    for r in rows:
        c = concurrency(r)
        if r["mode"] != "agg" or not 0 < c <= ONE_WAITING_MAX_CLIENTS:
            continue
        key = run_set(r) + (r["isl"], c, r["tp_size"], r["attention_dp_size"], r["pp_size"])
        groups.setdefault(key, []).append((num(r["osl"]), float(r["silicon_ttft_ms"]), float(r["silicon_tpot_ms"])))
    ratios = {}
    for key, pts in groups.items():
        if len({p[0] for p in pts}) < 2:
            continue
        lo, hi = min(pts), max(pts)
        per_cycle = (hi[0] * hi[2] - lo[0] * lo[2]) / key[4]
        if per_cycle > 0:
            ratios.setdefault(key[:3], []).append((hi[1] - lo[1]) / per_cycle)
    return {k: (statistics.median(v), len(v)) for k, v in ratios.items()}


def one_waiting_runs(rows):
    lo, hi = ONE_WAITING_SLOPE
    return {k for k, (v, n) in one_waiting_slopes(rows).items() if lo <= v <= hi}


# The front-end of the harness's TRT-LLM runs (aic-auto-gap-analysis agg rows): trtllm-serve's streaming of output
# tokens, one serial resource per server (engine.frontend.token_us). At 64-128 clients the measured output rate of
# Llama-3.1-8B stops rising with TP: about 9.2k tokens/s at TP 2, 4 and 8 alike (1024 x 512, 128 clients: 9217 / 9241 /
# 9088 tok/s), where the replay without a front-end goes on to 9.3k / 12.8k / 14.5k, and it matches the measured
# rates within about 5% wherever it stays below that. The value is read off the TP 2 run set's highest rate
# (1e6 / 9217 tok/s = 108.5 us a token) and held out on TP 4 and 8 and on the Qwen3 models, which never reach the
# ceiling (docs/validation.md, "A TP-independent ceiling"). Its request-side twin, a ceiling near 36 requests/s at
# 128 output tokens, is not modelled: a serial request stage makes the replay worse.
TRTLLM_HARNESS_STREAM_US = 108.5


def frontend_token_us(r):
    if r["backend"] != "trtllm" or not harness_agg(r):
        return None
    return TRTLLM_HARNESS_STREAM_US


def trtllm_kv_fraction(r):
    if r["backend"] != "trtllm" or not harness_agg(r):
        return None
    return TRTLLM_TEMPLATE_KV_FRACTION.get(r["backend_version"])


# SGLang's --mem-fraction-static on the agg rows of AIConfigurator's harness (aic-auto-gap-analysis). Not recorded: its
# generator sets no value for SGLang and its versioned 0.5.x SGLang templates have no line for it (only the unversioned
# cli_args.j2 emits one when given; its evaluation script tools/automation/launch_eval.sh passes one explicitly). The
# measurement decides. At TP 1 (Qwen3-32B in 16 bits, 61.0 GiB of weights on 80 GB) the KV pool is a small difference
# of large numbers and the six SGLang 0.5.8.post1 rows, whose requests queue for KV by the dozen, fix it sharply:
# median |TTFT err| 31% / 8.5% / 29% at 0.795 / 0.80 / 0.805 (83% under the version's own default, 0.834). Held out,
# the harness's other run set (SGLang 0.5.1.post1, TP 2-8, version default 0.868 at TP 2) has five KV-bound rows at
# TP 2 (2048-token prompts at 128 clients, 4096 at 64), and all five move toward their measurements at 0.80 (TTFT
# -32.7% .. -14.0% -> -15.4% .. -2.5%); its other 73 rows move under 2%. docs/validation.md, "SGLang TP 1".
SGLANG_HARNESS_MEM_FRACTION = 0.80


def sglang_mem_fraction(r, parts):
    if r["backend"] == "sglang" and "aic-auto-gap-analysis" in r["silicon_data_source"]:
        return SGLANG_HARNESS_MEM_FRACTION
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


def agg_clients_unknown(r):
    """Why an agg row's client count is not known, or None. Agg rows carry it in their id ("_cN_", equal to batch_size x
    attention DP) and the aic-auto-gap-analysis rows also as silicon_concurrency.
    - 8 aic-auto-gap-analysis rows (4000 x 1000, vLLM and TRT-LLM Qwen3) have a blank count ("_c_") and no
      silicon_concurrency: their batch_size is the configuration's, as on the SGLang disagg rows. At it the vLLM TP 1
      and TP 2 rows' measured TPOT (16.9 / 11.6 ms at 24 / 48 clients) is below the weights plus FP8 KV read alone
      (about 14 / 9 ms) plus the prefills that many clients bring (about 5 ms a step).
    - 5 TRT-LLM gpt-oss-120b rows record silicon_concurrency = 4 x batch_size at TP 2 and 4 with no attention DP
      (192 clients at batch 48): the layout that served that many clients is not recorded."""
    src = r["silicon_data_source"]
    recorded = re.search(r"silicon_concurrency=(\d+)", src)
    count = re.search(r"_c(\d*)_", r["id"])
    if recorded is None and count is not None and count.group(1) == "":
        return ("client concurrency not recorded (agg: the id's client count is blank and no silicon_concurrency; the "
                "batch size is the configuration's)")
    if recorded is not None and int(recorded.group(1)) != concurrency(r):
        return ("the recorded client count (silicon_concurrency) is not batch_size x attention DP, and the layout "
                "that served it is not recorded")
    return None


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
    parts = {"model": model, "fp8": fp8, "kv_fp8": kv_fp8, "concurrency": concurrency(r),
             "block_fp8": serves_block_fp8(r, model)}
    if r["mode"] == "agg":
        par, why = parallelism(r, "", moe)
        if par is None:
            return None, why
        parts.update(par)
        why = agg_clients_unknown(r)
        if why:
            return None, why
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


def duplicate_rows(rows):
    """Rows that repeat another row's measurement, by id -> reason: every column but the id and the source is the same,
    the measured TTFT and TPOT to the last digit. The database dumps 2026-03-25.csv and 2026-04-06.csv both carry the
    2026-03-27 vLLM gpt-oss-120b runs (13 rows) and the DeepSeek-R1 SGLang and TRT-LLM disagg sweeps (13 and 12):
    one measurement each, exported twice, so the first row (file order) is replayed and the repeat is not counted."""
    first = {}
    out = {}
    for r in rows:
        key = tuple(v for k, v in r.items() if k not in ("id", "silicon_data_source"))
        if key in first:
            out[r["id"]] = ("a repeat of another row (every column but the id and the source identical, the measured "
                            "TTFT and TPOT to the last digit: one run exported in two database dumps); the first is "
                            "replayed")
        else:
            first[key] = r["id"]
    return out


def agg_run_unknown(rows):
    """Agg rows whose own measurements contradict the recorded run, by id -> reason.
    - Attention-DP rows that repeat a DP-1 row: 13 of the 15 MiniMax-M2.5 rows recorded as TP 4 x DP 4, EP 16 (16
      GPUs) measure what the TP 4, EP 4 rows (4 GPUs) at the same isl, osl and client count measure, TPOT within
      1.4% and TTFT within 12%: two runs of one deployment, not a layout with 4x the GPUs.
    - Rows whose decode is no slower than at a quarter of the clients or fewer: a step decoding N requests reads N
      requests' KV and cannot be as fast as one decoding N/4, so the engine ran far fewer requests than it had
      clients, under a running cap the row does not record (vLLM gpt-oss-120b at 512 clients: TPOT 3.6-26.9 ms
      against 7.1-26.3 ms at 64 or fewer clients of the same layout, with TTFTs of 20-462 s).
    - Rows whose decode is more than 5% slower than at twice the clients or more: the other side of the same bound.
      A step of 2N requests reads at least the weights and KV a step of N reads, and twice the clients bring twice
      the prompts per second, so the TPOT cannot fall with the client count; a row above a larger count's ran with
      something the row does not record (vLLM gpt-oss-120b TP 4, 1024 x 1024 at 32 clients: 15.9 ms against 9.7 ms
      at 64; TP 4, 1024 x 8192 at 16 clients: 8.5 ms against 7.1 ms at 32; TP 8, 1024 x 8192 at 8 clients: 4.9 ms
      against 4.6 ms at 16)."""
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
    # Against the rows the rules above keep only (their own TPOTs are not those of the recorded run).
    for r in agg:
        if r["id"] in out:
            continue
        tpot, c = float(r["silicon_tpot_ms"]), concurrency(r)
        for o in same[layout(r)]:
            if concurrency(o) >= 2 * c and o["id"] not in out and tpot > 1.05 * float(o["silicon_tpot_ms"]):
                out[r["id"]] = ("the run had something the row does not record: its TPOT is more than 5% above the "
                                "same layout's at twice the clients or more, where a decode step can only be longer")
                break
    return out


def scenario(r, parts, host, gpu="H100-SXM", drift=None):
    """The row's scenario (module docstring). `drift`: another output-length protocol than the row's (DRIFTS), for
    exploring the protocol's effect (validate_e2e.py --outputs)."""
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
    max_tokens = generator_max_num_tokens(r, bs)
    if max_tokens is not None:
        engine["max_num_batched_tokens"] = max_tokens
        if r["backend"] == "vllm":
            engine["max_num_seqs"] = bs
            engine["max_model_len"] = num(r["isl"]) + num(r["osl"]) + GENERATOR_TOKEN_MARGIN
    if parts.get("one_waiting") and r["mode"] == "agg" and bs > 1:
        engine["max_num_seqs"] = bs - 1
    mem_fraction = sglang_mem_fraction(r, parts) if r["mode"] == "agg" else None
    if mem_fraction is None:
        mem_fraction = trtllm_kv_fraction(r)
    if mem_fraction is not None:
        engine["gpu_memory_utilization"] = mem_fraction
    if r["backend"] in SCHEDULER and r["mode"] in SCHEDULER[r["backend"]][1]:
        engine["scheduler"] = SCHEDULER[r["backend"]][0]
    if host:
        engine["host"] = host
    stream_us = frontend_token_us(r)
    if stream_us is not None:
        engine["frontend"] = {"token_us": stream_us}

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
    model = block_fp8_model(parts["model"], r["model_path"]) if parts.get("block_fp8") else parts["model"]
    return {"version": 1, "name": r["id"], "seed": 1, "model": model, "hardware": {"gpu": gpu},
            "engine": engine, "deployment": deployment,
            "workload": {"num_requests": max(REQUESTS_PER_CLIENT * bs, 32),
                         "arrival": {"process": "closed_loop", "max_concurrency": bs},
                         "input_len": {"dist": "fixed", "value": isl},
                         "output_len": output_len(r, drift), "ttft_from": TTFT_FROM}}


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
