#!/usr/bin/env python3
"""e2e_protocol.py's one-waiting-request rule (one_waiting_runs), generator token budget (generator_max_num_tokens),
client drift and block-FP8 checkpoints on hand-made rows: a run set whose TTFT rises with osl by one departure
interval per cycle is flagged and replayed with one slot fewer than clients; a flat one, a steep one (requests
queueing by the dozen) and groups above 64 clients are not; the token budget applies to the TRT-LLM and vLLM agg
rows of AIConfigurator's harness only (not its SGLang or disagg rows, nor database-dump rows); the harness's agg
rows get exactly osl output tokens, database-dump rows a spread; a row recording fp8_block weights, naming Qwen's
block-scaled FP8 release, or recording TRT-LLM FP8 on a Qwen 16-bit path runs the block-FP8 checkpoint; a row
repeating another's columns and measurement under another id and source (duplicate_rows) is not counted twice, and
one differing in a measured digit is not a repeat; the harness's SGLang agg rows run at its memory fraction of 0.80,
other SGLang rows at their version's default; the harness's TRT-LLM agg rows stream through its front-end at
TRTLLM_HARNESS_STREAM_US a token, no other row does."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import e2e_protocol as ep  # noqa: E402

HARNESS = "source_file=/x/aic-auto-gap-analysis/data/h100_sxm/trtllm/1.0.0rc3/%s.csv; silicon_concurrency=%d"
COLUMNS = ["id", "silicon_data_source", "backend", "backend_version", "model_path", "mode", "isl", "osl", "batch_size",
           "tp_size", "pp_size", "attention_dp_size", "silicon_ttft_ms", "silicon_tpot_ms"]


def row(model, c, osl, ttft, tpot=10.0, backend="trtllm", mode="agg", isl=1024):
    r = dict.fromkeys(COLUMNS, "")
    r.update({"id": "%s_%dx%d_c%d_tp1" % (model, isl, osl, c), "silicon_data_source": HARNESS % (model, c),
              "backend": backend, "model_path": "org/" + model, "mode": mode, "isl": str(isl), "osl": str(osl),
              "batch_size": str(c), "tp_size": "1", "silicon_ttft_ms": str(ttft), "silicon_tpot_ms": str(tpot)})
    return r


def group(model, c, per_cycle_share, base=100.0):
    # TTFT = base + share x (osl x TPOT) / c: share 1 is one request per cycle waiting for a whole request.
    return [row(model, c, osl, base + per_cycle_share * osl * 10.0 / c) for osl in (128, 256, 512)]


rows = (group("waits", 8, 1.0) + group("waits", 16, 0.9) + group("waits", 32, 1.1)
        + group("flat", 8, 0.0) + group("flat", 16, 0.05)
        + group("kvbound", 8, 40.0) + group("kvbound", 16, 70.0)
        + group("bigonly", 128, 1.0))
flagged = {k[1] for k in ep.one_waiting_runs(rows)}
fails = []
if flagged != {"org/waits"}:
    fails.append("one_waiting_runs flagged %s, want only org/waits" % sorted(flagged))
slopes = ep.one_waiting_slopes(rows)
got = {k[1]: v for k, v in slopes.items()}
if abs(got["org/waits"][0] - 1.0) > 1e-9 or got["org/waits"][1] != 3:
    fails.append("waits: median slope %r, want (1.0, 3)" % (got["org/waits"],))
if "org/bigonly" in got:
    fails.append("groups above %d clients were counted" % ep.ONE_WAITING_MAX_CLIENTS)

# The scenario takes the flag and the budget.
r = rows[0]
parts = {"model": "Llama-3.1-8B", "fp8": False, "kv_fp8": False, "concurrency": 8, "pp": 1, "tp": 1, "dp": 1,
         "mtp": 1, "mep": 1, "one_waiting": True}
eng = ep.scenario(r, parts, None)["engine"]
if eng.get("max_num_seqs") != 7 or eng.get("max_num_batched_tokens") != 8 + 1024 + 1500:
    fails.append("flagged TRT-LLM harness row: max_num_seqs %s (want 7), max_num_batched_tokens %s (want 2532)"
                 % (eng.get("max_num_seqs"), eng.get("max_num_batched_tokens")))
parts["one_waiting"] = False
harness_vllm = row("x", 8, 128, 100.0, backend="vllm")
sc = ep.scenario(harness_vllm, parts, None)
# ... and the generator's --max-num-seqs (its max_batch_size, the batch size) and --max-model-len (isl + osl + 1500),
# which its vLLM templates pass.
if (sc["engine"]["max_num_seqs"] != 8 or sc["engine"]["max_num_batched_tokens"] != 8 + 1024 + 1500
        or sc["engine"].get("max_model_len") != 1024 + 128 + 1500):
    fails.append("vLLM harness row: limits %s / %s / %s, want 8 / 2532 / 2652"
                 % (sc["engine"]["max_num_seqs"], sc["engine"]["max_num_batched_tokens"],
                    sc["engine"].get("max_model_len")))
if sc["workload"]["output_len"] != {"dist": "fixed", "value": 128}:
    fails.append("vLLM harness row: outputs %s, want exactly 128" % sc["workload"]["output_len"])
dump = dict(r, silicon_data_source="source_file=2026-04-06.csv")
for other in (row("x", 8, 128, 100.0, backend="sglang"), dump, dict(harness_vllm, mode="disagg")):
    eng = ep.scenario(other, parts, None)["engine"] if other["mode"] == "agg" else None
    if eng is not None and (eng["max_num_seqs"] != 1024 or eng["max_num_batched_tokens"] != 8192):
        fails.append("%s row from %s got limits %s / %s" % (other["backend"], other["silicon_data_source"],
                                                            eng["max_num_seqs"], eng["max_num_batched_tokens"]))
    if ep.generator_max_num_tokens(other, 8) is not None:
        fails.append("%s %s row from %s got the generator's budget" % (other["backend"], other["mode"],
                                                                     other["silicon_data_source"]))
if ep.output_len(dump)["dist"] != "uniform" or ep.output_len(dict(harness_vllm, mode="disagg"))["dist"] != "uniform":
    fails.append("database-dump and disagg rows lost their output spread")
# A row recording fp8_block GEMMs and experts ran a block-FP8 checkpoint: the bundled 16-bit model's config with
# 128 x 128 block scales, inline; a row recording per-tensor fp8, and a model whose bundled config is already
# quantised (DeepSeek-V3), keep the bundled model.
block_row = dict(row("x", 8, 128, 100.0), model_path="Qwen/Qwen3-235B-A22B-FP8", precision="fp8",
                 gemm_quant_mode="fp8_block", moe_quant_mode="fp8_block")
bp, why = ep.classify(dict(block_row, batch_size="8", moe_tp_size="1", moe_ep_size="1"))
model = ep.scenario(block_row, dict(parts, model="Qwen3-235B-A22B", block_fp8=bp and bp["block_fp8"]),
                    None)["model"] if bp else None
if not isinstance(model, dict) or model["config"].get("quantization_config", {}).get("weight_block_size") != [128, 128] \
        or model["config"]["num_experts"] != 128:
    fails.append("a row recording fp8_block did not get the block-FP8 checkpoint (%s; %s)" % (why, model))
# The path of Qwen's block-scaled FP8 release names the checkpoint whatever quant mode the row records; a TRT-LLM
# row recording fp8 on the 16-bit Qwen path ran that release too (TRT-LLM quantises no weights at load time); a vLLM
# row there quantised online per tensor, a TRT-LLM row of a model without a block-scaled release (Llama) ran per-tensor
# FP8, and a model whose bundled config is already quantised (DeepSeek-V3) keeps it.
qwen32 = dict(block_row, model_path="Qwen/Qwen3-32B", gemm_quant_mode="fp8", moe_quant_mode="fp8")
for other, want in ((dict(block_row, gemm_quant_mode="fp8", moe_quant_mode="fp8"), True),
                    (qwen32, True), (dict(qwen32, backend="vllm"), False),
                    (dict(qwen32, model_path="meta-llama/Llama-3.1-8B-Instruct"), False),
                    (dict(block_row, model_path="deepseek-ai/DeepSeek-V3"), False)):
    op, why = ep.classify(dict(other, batch_size="8", moe_tp_size="1", moe_ep_size="1"))
    if op is None or op["block_fp8"] != want:
        fails.append("%s %s row with gemm %s: block_fp8 %s, want %s (%s)" % (
            other["backend"], other["model_path"], other["gemm_quant_mode"], op and op["block_fp8"], want, why))
# Repeats: the same run exported in two dumps (other id and source, every other column equal) is counted once.
first = row("dump", 8, 128, 123.456, backend="vllm")
again = dict(first, id="other_id", silicon_data_source="source_file=2026-04-06.csv")
remeasured = dict(first, id="third_id", silicon_ttft_ms="123.457")
reps = ep.duplicate_rows([first, again, remeasured])
if set(reps) != {"other_id"}:
    fails.append("duplicate_rows found %s, want only other_id" % sorted(reps))
# SGLang's memory share: 0.80 on the harness's agg rows (any version); elsewhere the recorded version's default (the
# pre-0.5.2 rule, or none: the simulator's own).
sg_parts = {"tp": 2, "dp": 1, "pp": 1}
for version in ("0.5.1.post1", "0.5.8.post1"):
    harness_sg = dict(row("x", 16, 128, 100.0, backend="sglang"), backend_version=version)
    if ep.sglang_mem_fraction(harness_sg, sg_parts) != ep.SGLANG_HARNESS_MEM_FRACTION:
        fails.append("SGLang %s harness row: memory fraction %s, want %s" % (
            version, ep.sglang_mem_fraction(harness_sg, sg_parts), ep.SGLANG_HARNESS_MEM_FRACTION))
dump_sg = dict(row("x", 16, 128, 100.0, backend="sglang"), silicon_data_source="source_file=2026-04-06.csv")
old_rule = ep.sglang_mem_fraction(dict(dump_sg, backend_version="0.5.1.post1"), sg_parts)
if old_rule is None or abs(old_rule - round((ep.H100_MIB - 10.5 * 1024) / ep.H100_MIB, 3)) > 1e-12:
    fails.append("SGLang 0.5.1.post1 database-dump row: memory fraction %s, want the release's rule" % old_rule)
if ep.sglang_mem_fraction(dict(dump_sg, backend_version="0.5.8.post1"), sg_parts) is not None:
    fails.append("SGLang 0.5.8.post1 database-dump row got a memory fraction; want SGLang's own default")
# The harness's TRT-LLM front-end: its agg rows stream tokens through trtllm-serve at TRTLLM_HARNESS_STREAM_US a token;
# its vLLM and SGLang rows, TRT-LLM disagg rows and database-dump rows keep no front-end.
eng = ep.scenario(r, dict(parts, one_waiting=False), None)["engine"]
if eng.get("frontend") != {"token_us": ep.TRTLLM_HARNESS_STREAM_US}:
    fails.append("TRT-LLM harness agg row: frontend %s, want token_us %s" % (eng.get("frontend"),
                                                                           ep.TRTLLM_HARNESS_STREAM_US))
for other in (harness_vllm, row("x", 8, 128, 100.0, backend="sglang"), dump, dict(r, mode="disagg")):
    if ep.frontend_token_us(other) is not None:
        fails.append("%s %s row from %s got the harness's TRT-LLM front-end" % (
            other["backend"], other["mode"], other["silicon_data_source"]))
if fails:
    sys.exit("e2e_protocol rules: " + "; ".join(fails))
print("e2e_protocol one-waiting, generator token-budget, client-drift, block-FP8, repeated-row, SGLang memory-share "
      "and TRT-LLM front-end rules: ok")
