#!/usr/bin/env python3
"""Memory model against engine start-up logs: the KV-cache budget servesim computes for a deployment, against what
the engine logged when it started that deployment (tests/data/engine_kv_logs.json: public logs, each with its source,
version and the verbatim lines its numbers come from).

    python3 scripts/validate_memory.py            # replay every sample, print the table, write the "memory"
                                                  # section of docs/validation.md and tests/data/engine_kv_logs.validation.json
    python3 scripts/validate_memory.py --check    # replay and fail if the gated group's errors grew past the recorded
                                                  # ones by more than CHECK_MARGIN_PP, or a refusal no longer matches
                                                  # (used by ctest)
Options: --cli PATH (default build/native/servesim).

Each sample becomes a scenario with its model (a bundled one; `block_fp8`: its block-FP8 release), GPU, parallelism
and engine settings, and a one-request workload; the result's `kv_cache` object is compared term by term with the
log: weights, the profile run's activation peak, the KV cache in GiB and in tokens, and whether the engine refused to
start. Only the `vllm-native` group (the vLLM versions whose accounting servesim's vLLM roles follow, memory_model.h)
is gated; the others are reported. Standard library only; deterministic.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from e2e_protocol import block_fp8_model  # noqa: E402
from validate_e2e import replace_section, write_atomic  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data", "engine_kv_logs.json")
RECORD = os.path.join(ROOT, "tests", "data", "engine_kv_logs.validation.json")
DOC = os.path.join(ROOT, "docs", "validation.md")
SECTION = "memory"  # docs/validation.md's <!-- BEGIN memory --> ... <!-- END memory -->
GATED = "vllm-native"
# --check: the gated group's median and largest |error| of the KV cache (GiB) may not grow by more than this
# (percentage points).
CHECK_MARGIN_PP = 0.5
GROUP_TITLES = {
    "vllm-native": "vLLM 0.10.2-0.20 (the accounting servesim's vLLM roles follow; gated)",
    "vllm-flashinfer-sampler": "vLLM 0.10.1 with FlashInfer's sampler (reported, not gated)",
    "trtllm": "TensorRT-LLM (PyTorch backend)",
    "sglang": "SGLang",
}


def scenario(sample):
    s = sample["scenario"]
    model = block_fp8_model(s["model"]) if s.get("block_fp8") else s["model"]
    par = {"pp": 1, "tp_attn": 1, "dp_attn": 1}
    par.update(s["parallelism"])
    par.setdefault("tp_ffn", par["tp_attn"])
    par.setdefault("ep_ffn", 1)
    return {"version": 1, "name": sample["id"], "seed": 1, "model": model, "hardware": {"gpu": s["gpu"]},
            "engine": s["engine"], "deployment": {"roles": [{"role": "C", "replicas": 1, "parallelism": par}]},
            "workload": {"num_requests": 1, "arrival": {"process": "closed_loop", "max_concurrency": 1},
                         "input_len": {"dist": "fixed", "value": 16}, "output_len": {"dist": "fixed", "value": 2}}}


def replay(cli, sample, tmp):
    """The role's kv_cache object, or {"refused": message} when the simulator refuses the deployment or warns that the
    engine would."""
    path = os.path.join(tmp, sample["id"] + ".json")
    with open(path, "w") as f:
        json.dump(scenario(sample), f)
    out = path + ".result.json"
    p = subprocess.run([cli, "run", path, "--out", out, "--quiet"], capture_output=True, text=True)
    if p.returncode != 0:
        lines = p.stderr.strip().splitlines()
        # The message without the temporary scenario path the CLI puts first, so that the record is reproducible.
        return {"refused": lines[-1].replace(path + ": ", "", 1) if lines else "failed"}
    with open(out) as f:
        result = json.load(f)
    # A deployment the engine would refuse to start is simulated anyway, with the refusal among the warnings.
    refusals = [w for w in result.get("warnings", []) if "would refuse to start" in w]
    if refusals:
        return {"refused": refusals[0]}
    return result["deployment"]["roles"][0]["kv_cache"]


def pct(sim, logged):
    return 100.0 * (sim / logged - 1.0) if logged else None


def compare(sample, kv):
    """One row: logged and simulated terms, the KV error, and whether the refusals agree."""
    lg = sample["logged"]
    row = {"id": sample["id"], "group": sample["group"], "logged": lg, "refusal_agrees": True}
    refused = "refused" in kv
    row["refusal_agrees"] = refused == bool(lg.get("refused"))
    if refused:
        row["sim_refused"] = kv["refused"]
        return row
    row["sim"] = {"weights_gib": kv["weights_gib"], "peak_activation_gib": kv["activation_peak_gib"],
                  "kv_cache_gib": kv["kv_cache_gib"], "kv_cache_tokens": kv["kv_cache_tokens"],
                  "cuda_graph_gib": kv["terms_gib"]["cuda_graphs"]}
    if not lg.get("refused"):
        row["kv_err_pct"] = pct(kv["kv_cache_gib"], lg["kv_cache_gib"])
        if "kv_cache_tokens" in lg:
            row["tokens_err_pct"] = pct(kv["kv_cache_tokens"], lg["kv_cache_tokens"])
    if "weights_gib" in lg:
        row["weights_err_pct"] = pct(kv["weights_gib"], lg["weights_gib"])
    if "peak_activation_gib" in lg:
        row["activation_err_pct"] = pct(kv["activation_peak_gib"], lg["peak_activation_gib"])
    return row


def group_summary(rows):
    out = {}
    for g in GROUP_TITLES:
        rs = [r for r in rows if r["group"] == g]
        if not rs:
            continue
        kv = [abs(r["kv_err_pct"]) for r in rs if r.get("kv_err_pct") is not None]
        out[g] = {"samples": len(rs), "kv_compared": len(kv),
                  "kv_median_abs_err_pct": round(statistics.median(kv), 2) if kv else None,
                  "kv_max_abs_err_pct": round(max(kv), 2) if kv else None,
                  "refusals_agree": all(r["refusal_agrees"] for r in rs)}
    return out


def fmt(v, spec="%.2f"):
    return "-" if v is None else spec % v


def signed(v):
    return "-" if v is None else "%+.1f%%" % v


def table(rows, samples):
    by_id = {s["id"]: s for s in samples}
    lines = ["| sample | group | version | weights GiB (log -> sim) | activation peak GiB | KV cache GiB | KV error | "
             "KV tokens (log -> sim) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s, lg, sim = by_id[r["id"]], r["logged"], r.get("sim", {})
        if "sim_refused" in r:
            kv = "%s -> refused" % ("refused" if lg.get("refused") else fmt(lg.get("kv_cache_gib")))
            err = "agrees" if r["refusal_agrees"] else "DISAGREES"
        elif lg.get("refused"):
            kv, err = "refused -> %s" % fmt(sim.get("kv_cache_gib")), "DISAGREES"
        else:
            kv, err = "%s -> %s" % (fmt(lg.get("kv_cache_gib")), fmt(sim.get("kv_cache_gib"))), signed(r.get("kv_err_pct"))
        toks = "-"
        if "kv_cache_tokens" in lg and sim:
            toks = "{:,} -> {:,} ({})".format(lg["kv_cache_tokens"], sim["kv_cache_tokens"], signed(r.get("tokens_err_pct")))
        w = "%s -> %s" % (fmt(lg.get("weights_gib")), fmt(sim.get("weights_gib"))) if "weights_gib" in lg else "-"
        a = "%s -> %s" % (fmt(lg.get("peak_activation_gib")), fmt(sim.get("peak_activation_gib"))) \
            if "peak_activation_gib" in lg else "-"
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["id"], r["group"], s["source"]["version"].split(" (")[0], w, a, kv, err, toks))
    return "\n".join(lines)


def section(rows, summary, samples):
    parts = ["## Memory model against engine start-up logs", "",
             "Command: `python3 scripts/validate_memory.py`. Each sample of `tests/data/engine_kv_logs.json` (a public "
             "start-up log: its source, engine version, settings and the verbatim lines) replayed as a one-request "
             "scenario; the result's `kv_cache` terms against the logged ones. KV error: servesim's KV cache in GiB "
             "against the logged one. Gated by ctest (`--check`): the `vllm-native` group, the vLLM versions whose "
             "accounting servesim's vLLM roles follow (core/fidelity/memory_model.h).", ""]
    parts.append("| group | samples | KV compared | KV median abs err | KV max abs err | refusals agree |")
    parts.append("|---|---|---|---|---|---|")
    for g, s in summary.items():
        parts.append("| %s | %d | %d | %s | %s | %s |" % (GROUP_TITLES[g], s["samples"], s["kv_compared"],
                                                        fmt(s["kv_median_abs_err_pct"], "%.2f%%"),
                                                        fmt(s["kv_max_abs_err_pct"], "%.2f%%"),
                                                        "yes" if s["refusals_agree"] else "NO"))
    parts += ["", table(rows, samples), ""]
    return "\n".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "native", "servesim"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if not os.path.exists(args.cli):
        sys.exit("simulator not built: %s" % args.cli)
    with open(DATA) as f:
        samples = json.load(f)["samples"]
    with tempfile.TemporaryDirectory() as tmp:
        rows = [compare(s, replay(args.cli, s, tmp)) for s in samples]
    summary = group_summary(rows)
    print(section(rows, summary, samples))
    if args.check:
        with open(RECORD) as f:
            rec = json.load(f)["summary"][GATED]
        now = summary[GATED]
        bad = []
        for key in ("kv_median_abs_err_pct", "kv_max_abs_err_pct"):
            if now[key] > rec[key] + CHECK_MARGIN_PP:
                bad.append("%s %.2f%% > recorded %.2f%% + %.1f" % (key, now[key], rec[key], CHECK_MARGIN_PP))
        bad += ["%s: the engine %s, servesim %s" % (r["id"], "refused" if r["logged"].get("refused") else "started",
                                                    "refused" if "sim_refused" in r else "starts")
                for r in rows if not r["refusal_agrees"]]
        if bad:
            sys.exit("memory model moved against the logs:\n  " + "\n  ".join(bad))
        print("memory check passed (%s: KV median %.2f%%, max %.2f%%)" % (
            GATED, now["kv_median_abs_err_pct"], now["kv_max_abs_err_pct"]))
        return
    write_atomic(RECORD, json.dumps({"command": "python3 scripts/validate_memory.py", "summary": summary, "rows": rows},
                                    indent=1, sort_keys=True) + "\n")
    replace_section(DOC, SECTION, section(rows, summary, samples))


if __name__ == "__main__":
    main()
