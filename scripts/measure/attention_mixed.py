#!/usr/bin/env python3
"""Measure varlen FlashAttention latency on uniform and on mixed (ragged) batches on the local GPU.

Needs a CUDA GPU and PyTorch; nothing in the build or the tests runs it. What it wrote on an H100 and on an H200 is
committed under profiles/measured/{H100-SXM,H200-SXM}/attention_mixed/ (READMEs there) and scored by
scripts/measured_attention.py.

Why: the measured attention tables (AIConfigurator's) hold uniform batches only, b requests of one length. The
simulator prices a serving batch, whose requests differ in length, from such a grid through its per-request work
model (core/fidelity/attention_model.h). Whether that beats a total-tokens proxy was shown on held-out *uniform*
cells only. Here one kernel is timed on both: a uniform grid (what the simulator is calibrated on) and batches of
mixed lengths (what it must predict), so the prediction can be scored against real ragged batches.

The kernel: PyTorch's bundled FlashAttention-2 varlen forward (torch.ops.aten._flash_attention_forward), bf16,
causal with FlashAttention's bottom-right alignment, grouped-query heads native. One call holds the whole batch:
each request i has q_i new tokens attending to k_i keys (k_i >= q_i; a decode is q_i = 1). vLLM on Hopper runs
FlashAttention-3 instead, so these figures validate the method, not vLLM's tables.

What one measurement is: `copies` independent sets of q/k/v buffers (enough that one replay touches at least
COPY_BYTES, at most MAX_COPIES sets, so the keys are not re-read out of L2), one CUDA graph running the call once
per set; the latency is a replay's time / copies, the median of `--blocks` blocks of replays (each at least
`--block-us`). Before a cell that follows one which kept the GPU busy more than 2 ms, a spinning low-power kernel
runs for twice that time (at most 20 ms) so that the clock recovers from the power limit.

Sets per head configuration (lengths drawn by a seeded generator, written into the CSV):
  uniform_prefill   b x isl, b * isl <= PREFILL_CAP          (the calibration grid, AIConfigurator's axes)
  uniform_decode    b x kv_len, b * kv_len <= DECODE_CAP
  prefill           whole prompts of mixed lengths (log-uniform; and one long prompt among short ones)
  chunked           prompt chunks over a cached prefix (k = prefix + q)
  decode            decodes over mixed KV lengths (log-uniform; and a few long among many short)
  mixed             prefill chunks and decodes in one call (vLLM's mixed step); mixed_p / mixed_d are its
                    prefill part and its decode part timed alone, the same buffers' lengths
  decode_order      (only with --sets) the same decode lengths with the long requests first, then last

  python3 scripts/measure/attention_mixed.py --out attention_mixed.csv [--configs 32:8:128,...] [--deadline-s 400]
"""
import argparse
import math
import random
import sys

from gpu_timing import CellLog, add_run_args, nvml_clock, open_gpu, time_calls

PREFILL_B = [1, 2, 4, 8, 16, 32, 64, 128]
PREFILL_S = [16, 32, 64, 128, 256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 10240, 12288, 16384]
PREFILL_CAP = 65536
DECODE_B = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
DECODE_S = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
DECODE_CAP = 1 << 21
COPY_BYTES = 128 << 20
MAX_COPIES = 8
COLUMNS = ["framework", "version", "device", "kernel_source", "num_heads", "num_kv_heads", "head_dim", "set", "id",
           "q_lens", "k_lens", "latency", "spread", "sm_mhz", "copies", "error"]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_args(ap, 400.0)
    ap.add_argument("--configs", default="32:8:128,64:8:128,8:1:128",
                    help="heads:kv_heads:head_dim list (Llama-3.1-8B TP1, Qwen3-32B / Llama-3.1-70B TP1, "
                         "Llama-3.1-70B TP8)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the mixed batches' lengths")
    ap.add_argument("--smoke", action="store_true", help="a few cells per set (checks the script runs)")
    ap.add_argument("--sets", default="",
                    help="comma-separated sets to measure (default: all but decode_order; uniform_decode,decode,"
                         "decode_order measures decodes only)")
    return ap.parse_args()


def loguniform(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def uniform_sets():
    cells = []
    for s in PREFILL_S:
        for b in PREFILL_B:
            if b * s <= PREFILL_CAP:
                cells.append(("uniform_prefill", "b%d_s%d" % (b, s), [(s, s)] * b))
    for s in DECODE_S:
        for b in DECODE_B:
            if b * s <= DECODE_CAP:
                cells.append(("uniform_decode", "b%d_s%d" % (b, s), [(1, s)] * b))
    return cells


def mixed_sets(rng):
    """(set, id, [(q, k)] per request) of the ragged batches; deterministic for a seed."""
    cells = []
    for i in range(60):  # whole prompts, log-uniform lengths
        r = rng.choice([2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32])
        while True:
            lens = [loguniform(rng, 16, 8192) for _ in range(r)]
            if sum(lens) <= PREFILL_CAP:
                break
        cells.append(("prefill", "p%d" % i, [(s, s) for s in lens]))
    for i in range(20):  # one long prompt among short ones
        lens = [loguniform(rng, 2048, 16384)] + [loguniform(rng, 16, 512) for _ in range(rng.randint(1, 31))]
        cells.append(("prefill", "pl%d" % i, [(s, s) for s in lens]))
    for i in range(30):  # chunks over cached prefixes
        reqs = []
        for _ in range(rng.randint(1, 8)):
            q = loguniform(rng, 16, 4096)
            prefix = 0 if rng.random() < 0.3 else loguniform(rng, 64, 16384)
            reqs.append((q, q + prefix))
        cells.append(("chunked", "c%d" % i, reqs))
    for i in range(60):  # decodes, log-uniform KV lengths
        r = rng.choice([2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512])
        while True:
            kv = [loguniform(rng, 16, 32768) for _ in range(r)]
            if sum(kv) <= DECODE_CAP:
                break
        cells.append(("decode", "d%d" % i, [(1, k) for k in kv]))
    for i in range(20):  # a few long contexts among many short ones
        r = rng.choice([8, 16, 32, 64, 128, 256])
        frac = rng.choice([0.05, 0.1, 0.2, 0.3])
        kv = [loguniform(rng, 8192, 65536) if rng.random() < frac else loguniform(rng, 16, 1024) for _ in range(r)]
        while sum(kv) > DECODE_CAP:
            kv.pop()
        cells.append(("decode", "dl%d" % i, [(1, k) for k in kv]))
    for i in range(40):  # vLLM's mixed step: prefill chunk(s) and decodes in one call
        pre = []
        for _ in range(rng.choice([1, 1, 1, 2])):
            q = loguniform(rng, 64, 2048)
            prefix = 0 if rng.random() < 0.3 else loguniform(rng, 64, 16384)
            pre.append((q, q + prefix))
        dec = [(1, loguniform(rng, 64, 16384)) for _ in range(rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256]))]
        cells.append(("mixed", "m%d" % i, pre + dec))
        cells.append(("mixed_p", "m%d" % i, pre))
        cells.append(("mixed_d", "m%d" % i, dec))
    return cells


def order_sets(rng):
    """decode_order: the same KV lengths (a few long among many short, enough CTAs for several waves) launched with
    the long requests first and last: whether a request's place in the batch moves the time."""
    cells = []
    for i in range(20):
        r = rng.choice([32, 64, 128, 256, 512])
        frac = rng.choice([0.05, 0.1, 0.2])
        kv = [loguniform(rng, 8192, 65536) if rng.random() < frac else loguniform(rng, 16, 1024) for _ in range(r)]
        kv[0] = max(kv[0], 8192)
        while sum(kv) > DECODE_CAP:
            kv.pop()
        cells.append(("decode_order", "o%d_first" % i, [(1, k) for k in sorted(kv, reverse=True)]))
        cells.append(("decode_order", "o%d_last" % i, [(1, k) for k in sorted(kv)]))
    return cells


def flash(torch, q, k, v, cu_q, cu_k, max_q, max_k):
    return torch.ops.aten._flash_attention_forward(q, k, v, cu_q, cu_k, max_q, max_k, 0.0, True, False)[0]


def make_buffers(torch, reqs, heads, kv_heads, d, gen):
    dev = torch.device("cuda")
    tq = sum(q for q, _ in reqs)
    tk = sum(k for _, k in reqs)
    cu_q = [0]
    cu_k = [0]
    for q, k in reqs:
        cu_q.append(cu_q[-1] + q)
        cu_k.append(cu_k[-1] + k)
    per_copy = 2 * (2 * tk * kv_heads * d + 2 * tq * heads * d)  # bytes: k, v, q and the output
    copies = max(1, min(MAX_COPIES, -(-COPY_BYTES // max(per_copy, 1))))
    bufs = []
    for _ in range(copies):
        bufs.append((torch.randn((tq, heads, d), device=dev, dtype=torch.bfloat16, generator=gen),
                     torch.randn((tk, kv_heads, d), device=dev, dtype=torch.bfloat16, generator=gen),
                     torch.randn((tk, kv_heads, d), device=dev, dtype=torch.bfloat16, generator=gen),
                     torch.tensor(cu_q, device=dev, dtype=torch.int32),
                     torch.tensor(cu_k, device=dev, dtype=torch.int32)))
    return bufs, max(q for q, _ in reqs), max(k for _, k in reqs)


def time_cell(torch, bufs, max_q, max_k, blocks, block_us):
    """Median over `blocks` of the mean replay time per call (ms) and the max/min block ratio."""
    return time_calls(torch, [lambda b=b: flash(torch, *b, max_q, max_k) for b in bufs], blocks, block_us)


def probe(torch, gen):
    """The op against SDPA on a small ragged grouped-query batch (prompts and a decode); max |difference|."""
    heads, kv_heads, d = 8, 2, 128
    reqs = [(37, 37), (100, 100), (1, 50), (5, 64)]
    bufs, max_q, max_k = make_buffers(torch, reqs, heads, kv_heads, d, gen)
    q, k, v, cu_q, cu_k = bufs[0]
    out = flash(torch, q, k, v, cu_q, cu_k, max_q, max_k)
    worst = 0.0
    qo = ko = 0
    for nq, nk in reqs:
        qi = q[qo:qo + nq].transpose(0, 1).unsqueeze(0).float()
        ki = k[ko:ko + nk].transpose(0, 1).unsqueeze(0).float()
        vi = v[ko:ko + nk].transpose(0, 1).unsqueeze(0).float()
        # Bottom-right causal: query row r sees keys [0, nk - nq + r].
        mask = torch.ones((nq, nk), device=q.device, dtype=torch.bool).tril(diagonal=nk - nq)
        ref = torch.nn.functional.scaled_dot_product_attention(qi, ki, vi, attn_mask=mask, enable_gqa=True)
        worst = max(worst, (ref[0].transpose(0, 1) - out[qo:qo + nq].float()).abs().max().item())
        qo += nq
        ko += nk
    return worst


def main():
    args = parse_args()
    import torch
    props, gen = open_gpu(torch, "attention_mixed.py")
    name = props.name
    sms = props.multi_processor_count
    version = "torch-%s" % torch.__version__
    err = probe(torch, gen)
    print("device %s, %s, %d SMs; probe against SDPA: max |diff| %.4g" % (name, version, sms, err), flush=True)
    if not err < 0.05:
        sys.exit("attention_mixed.py: the op disagrees with SDPA (max |diff| %g)" % err)
    clock = nvml_clock()
    configs = [tuple(int(x) for x in c.split(":")) for c in args.configs.split(",")]
    with open(args.out, "w", newline="") as f:
        log = CellLog(torch, f, COLUMNS, args.deadline_s)
        for ci, (heads, kv_heads, d) in enumerate(configs):
            cells = uniform_sets() + mixed_sets(random.Random(args.seed * 1000 + ci))
            if args.sets:
                wanted = set(args.sets.split(","))
                cells = [c for c in cells + order_sets(random.Random(args.seed * 1000 + 500 + ci)) if c[0] in wanted]
            if args.smoke:
                kept, seen = [], {}
                for c in cells:
                    seen[c[0]] = seen.get(c[0], 0) + 1
                    if seen[c[0]] <= 3:
                        kept.append(c)
                cells = kept
            for set_name, cid, reqs in cells:
                if log.expired():
                    print("deadline: stopped in config %d:%d:%d after %d cells" % (heads, kv_heads, d, log.done),
                          flush=True)
                    return
                row = ["torch", version, name, "aten._flash_attention_forward", heads, kv_heads, d, set_name, cid,
                       ";".join(str(q) for q, _ in reqs), ";".join(str(k) for _, k in reqs)]
                try:
                    bufs, max_q, max_k = make_buffers(torch, reqs, heads, kv_heads, d, gen)
                    log.settle()
                    lat, spread = time_cell(torch, bufs, max_q, max_k, args.blocks, args.block_us)
                    log.ran(lat, len(bufs), args.blocks)
                    row += ["%.6g" % lat, "%.4f" % spread, clock(), len(bufs), ""]
                    del bufs
                except RuntimeError as e:
                    row += ["", "", 0, 0, log.error(e)]
                log.write(row)
                log.cell_done("config %d:%d:%d, set %s" % (heads, kv_heads, d, set_name))
    log.finish()


if __name__ == "__main__":
    main()
