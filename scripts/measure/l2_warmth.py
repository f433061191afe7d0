#!/usr/bin/env python3
"""Time the same decode-attention and GEMM calls with their operands left in L2 and with them evicted.

Needs a CUDA GPU and PyTorch; nothing in the build or the tests runs it. What it wrote on a lent GPU is committed
under profiles/measured/<GPU>/l2_warmth/ (README there) and read by scripts/validate_ops.py.

Why: AIConfigurator's collectors time one layer's call again and again (its vLLM attention collector: one layer,
repeated; its vLLM fp8_block GEMM collector: one weight; bf16 / fp8: six weights). Where the operands of that one
call fit in L2 (50 MB on an H100, 60 MB on an H200), every repetition after the first reads them from L2. In
serving they never are: between two reads of one layer's KV cache or weights, every other layer's pass through L2.
vLLM's FA3 decode tables step where a batch's K and V go from 32 to 64 MiB; this measures, on one kernel, how
much faster a call is when its operands stay in L2, and where that stops.

Modes, per cell (each timed as in gpu_timing.time_calls: one CUDA graph, median of `--blocks` blocks):
  warm     one operand set, the call repeated (what the collectors time)
  rotate   `copies` operand sets (views into one pool; the decode's queries are shared) cycled through, so
           that one replay touches at least ROTATE_BYTES or MAX_ROTATE sets; `rot_bytes` says how much it did
  flush    one operand set; before each call a read of FLUSH_BYTES of a scratch buffer (a sum: clean lines, as
           other layers' weights leave L2) evicts it; the flush timed alone is subtracted (`flush_ms` gives it)
  six      (GEMM only) six weights cycled through, as AIConfigurator's vLLM bf16 / fp8 GEMM collector does

Attention: torch.ops.aten._flash_attention_forward (FlashAttention-2 varlen, bf16, causal), b decodes of kv_len
keys. GEMM: torch.nn.functional.linear (cuBLAS, bf16), x [m, k] and w [n, k]. With --kernels also PyTorch's
memory-efficient SDPA decode (`attention_decode_mea`) and a plain sum over the same bytes (`read_sum`).

  python3 scripts/measure/l2_warmth.py --out l2_warmth.csv [--deadline-s 300] [--smoke] [--taper | --kernels]
"""
import argparse

from attention_mixed import flash
from gpu_timing import CellLog, add_run_args, nvml_clock, open_gpu, time_calls

ATTN_CONFIGS = [(32, 8, 128), (8, 1, 128), (64, 8, 128), (16, 2, 128), (32, 4, 128)]
DECODE_B = [1, 2, 4, 8, 16, 32, 64, 128, 256]
DECODE_S = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
DECODE_CAP_BYTES = 1 << 30  # K and V of one call at most
GEMM_M = [1, 16, 64, 256, 1024]
GEMM_NK = [(1024, 512), (1024, 1024), (2048, 1024), (1280, 2048), (2048, 2048), (4096, 1024), (3072, 2048),
           (4096, 2048), (2560, 4096), (4096, 4096), (1280, 8192), (8192, 1024), (6144, 4096), (8192, 3072),
           (8192, 4096), (3584, 8192), (8192, 7168), (7168, 8192), (10240, 8192), (8192, 14336)]
TAPER_CONFIGS = [(32, 8, 128), (8, 1, 128), (16, 2, 128)]
KERNEL_OPS = ["attention_decode", "attention_decode_mea", "read_sum"]
KERNEL_CONFIGS = [(8, 8, 128), (32, 32, 128)]
TAPER_B = [4, 16, 64]
TAPER_MIB = [16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 72, 80, 96]
ROTATE_BYTES = 384 << 20
MAX_ROTATE = 1024
FLUSH_BYTES = 256 << 20
COLUMNS = ["device", "version", "op", "num_heads", "num_kv_heads", "head_dim", "b", "kv_len", "m", "n", "k",
           "operand_bytes", "mode", "copies", "rot_bytes", "latency", "flush_ms", "spread", "sm_mhz", "error"]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_args(ap, 300.0)
    ap.add_argument("--smoke", action="store_true", help="a few cells of each op (checks the script runs)")
    ap.add_argument("--kernels", action="store_true",
                    help="the taper sizes on multi-head (kv_heads = heads) shapes for three kernels: FlashAttention-2 "
                         "decode, PyTorch's memory-efficient SDPA decode, and a plain sum over K and V (a pure read)")
    ap.add_argument("--taper", action="store_true",
                    help="decode cells only, K+V from 16 to 96 MiB in steps of 4-8 MiB (where L2 stops holding a "
                         "repeated call's operands), each timed twice")
    return ap.parse_args()


def attention_calls(torch, b, s, heads, kv_heads, d, copies, gen):
    """`copies` decode calls over distinct K/V (views into one pool) sharing one q; the K+V bytes of one."""
    dev = torch.device("cuda")
    tk = b * s
    q = torch.randn((b, heads, d), device=dev, dtype=torch.bfloat16, generator=gen)
    pool = torch.randn((copies, 2, tk, kv_heads, d), device=dev, dtype=torch.bfloat16, generator=gen)
    cu_q = torch.arange(0, b + 1, device=dev, dtype=torch.int32)
    cu_k = torch.arange(0, b + 1, device=dev, dtype=torch.int32) * s
    calls = [lambda i=i: flash(torch, q, pool[i, 0], pool[i, 1], cu_q, cu_k, 1, s) for i in range(copies)]
    return calls, pool


def mea_calls(torch, b, s, heads, d, copies, gen):
    """Like attention_calls for PyTorch's memory-efficient SDPA kernel (multi-head only: kv_heads = heads)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dev = torch.device("cuda")
    q = torch.randn((b, heads, 1, d), device=dev, dtype=torch.bfloat16, generator=gen)
    pool = torch.randn((copies, 2, b, heads, s, d), device=dev, dtype=torch.bfloat16, generator=gen)

    def one(i):
        with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
            return torch.nn.functional.scaled_dot_product_attention(q, pool[i, 0], pool[i, 1])
    return [lambda i=i: one(i) for i in range(copies)], pool


def read_calls(torch, nbytes, copies, gen):
    """A sum over `nbytes` of bf16 (the K and V of a call, read once and nothing else)."""
    dev = torch.device("cuda")
    pool = torch.randn((copies, nbytes // 2), device=dev, dtype=torch.bfloat16, generator=gen)
    return [lambda i=i: pool[i].sum() for i in range(copies)], pool


def gemm_calls(torch, m, n, k, copies, gen):
    dev = torch.device("cuda")
    x = torch.randn((m, k), device=dev, dtype=torch.bfloat16, generator=gen)
    pool = torch.randn((copies, n, k), device=dev, dtype=torch.bfloat16, generator=gen)
    return [lambda i=i: torch.nn.functional.linear(x, pool[i]) for i in range(copies)], pool


def taper_cells(configs, ops):
    """Decode cells whose K + V take each of TAPER_MIB, per head configuration, batch of TAPER_B and op."""
    cells = []
    for heads, kv_heads, d in configs:
        for b in TAPER_B:
            for mib in TAPER_MIB:
                s = (mib << 20) // (4 * b * kv_heads * d)
                cells += [(op, (heads, kv_heads, d, b, s), 4 * b * s * kv_heads * d) for op in ops]
    return cells


def rotate_copies(operand_bytes):
    return max(1, min(MAX_ROTATE, -(-ROTATE_BYTES // max(operand_bytes, 1))))


def main():
    args = parse_args()
    import torch
    props, gen = open_gpu(torch, "l2_warmth.py")
    name = props.name
    version = "torch-%s" % torch.__version__
    l2 = getattr(props, "L2_cache_size", 0)
    print("device %s, %s, %d SMs, L2 %d bytes" % (name, version, props.multi_processor_count, l2), flush=True)
    clock = nvml_clock()
    scratch = torch.ones(FLUSH_BYTES // 4, device="cuda", dtype=torch.float32)

    def flush():
        return scratch.sum()

    flush_ms, _ = time_calls(torch, [flush], args.blocks, args.block_us)
    print("flush of %d MiB alone: %.4f ms" % (FLUSH_BYTES >> 20, flush_ms), flush=True)

    cells = [("gemm", (m, n, k), n * k * 2) for m in GEMM_M for n, k in GEMM_NK]
    for heads, kv_heads, d in ATTN_CONFIGS:
        for s in DECODE_S:
            for b in DECODE_B:
                nbytes = 2 * b * s * kv_heads * d * 2
                if nbytes <= DECODE_CAP_BYTES:
                    cells.append(("attention_decode", (heads, kv_heads, d, b, s), nbytes))
    if args.taper or args.kernels:
        configs, ops = (KERNEL_CONFIGS, KERNEL_OPS) if args.kernels else (TAPER_CONFIGS, ["attention_decode"])
        cells = taper_cells(configs, ops)
        cells = cells + cells
    if args.smoke:
        cells = cells[:6] + cells[-6:]

    with open(args.out, "w", newline="") as f:
        log = CellLog(torch, f, COLUMNS, args.deadline_s, every=50)
        for op, key, nbytes in cells:
            if log.expired():
                print("deadline: stopped after %d cells" % log.done, flush=True)
                break
            modes = [("warm", 1), ("rotate", rotate_copies(nbytes)), ("flush", 1)]
            if op == "gemm":
                modes.insert(1, ("six", 6))
            for mode, copies in modes:
                if op != "gemm":
                    heads, kv_heads, d, b, s = key
                    lead = [op, heads, kv_heads, d, b, s, "", "", ""]
                else:
                    m, n, k = key
                    lead = [op, "", "", "", "", "", m, n, k]
                row = [name, version] + lead + [nbytes, mode, copies, copies * nbytes]
                try:
                    if op == "attention_decode":
                        calls, pool = attention_calls(torch, b, s, heads, kv_heads, d, copies, gen)
                    elif op == "attention_decode_mea":
                        calls, pool = mea_calls(torch, b, s, heads, d, copies, gen)
                    elif op == "read_sum":
                        calls, pool = read_calls(torch, nbytes, copies, gen)
                    else:
                        calls, pool = gemm_calls(torch, m, n, k, copies, gen)
                    if mode == "flush":
                        one = calls[0]
                        calls = [lambda: (flush(), one())]
                    lat, spread = log.time(calls, args.blocks, args.block_us)
                    sub = 0.0
                    if mode == "flush":
                        sub = flush_ms
                        lat -= flush_ms
                    row += ["%.6g" % lat, "%.6g" % sub, "%.4f" % spread, clock(), ""]
                    del calls, pool
                except RuntimeError as e:
                    row += ["", "", "", 0, log.error(e)]
                log.write(row)
            log.cell_done("%s %s" % (op, key))
    # The flush alone again at the end: how much its time drifted over the run.
    again, _ = time_calls(torch, [flush], args.blocks, args.block_us)
    print("flush alone at the end: %.4f ms (start %.4f)" % (again, flush_ms), flush=True)
    log.finish()


if __name__ == "__main__":
    main()
