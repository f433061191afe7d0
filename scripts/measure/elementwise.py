#!/usr/bin/env python3
"""Time the small memory-bound kernels of a transformer layer (copy, add, RMSNorm, a row sum) over their bytes.

Needs a CUDA GPU and PyTorch; nothing in the build or the tests runs it. What it wrote on lent GPUs is committed
under profiles/measured/<GPU>/elementwise/, with what it shows and the end-to-end check of pricing with it (README
there; not adopted: the simulator still prices these kernels by the roofline).

Why: no collector's tables hold these kernels, so they are priced by a roofline with two borrowed constants (80% of
the HBM datasheet bandwidth and 3 us per kernel, AIConfigurator's H100 scaling). Here each is timed as serving runs
it inside a CUDA graph: one call repeated on the same tensors (what a layer's kernel reads was just written by the
kernel before it, so small tensors are in L2, as in a decode step), from a few KiB to 1.5 GiB of traffic.

Kernels (bf16, a [tokens, hidden] activation; `bytes` = what one call reads plus writes):
  copy       dst.copy_(src)                               4 x tokens x hidden
  add        torch.add(a, b, out=c)                       6 x tokens x hidden
  rms_norm   torch.nn.functional.rms_norm(x, [hidden], w) 4 x tokens x hidden (+ the weight)
  row_sum    x.sum(-1)                                    2 x tokens x hidden (+ the sums)
and the same layer kernels as vLLM V1 runs them by default (its custom ops off under torch.compile, so the native
PyTorch forms compiled by Inductor into Triton kernels), each compiled per width with the token count marked dynamic
(torch._dynamo.mark_dynamic on dimension 0, the width static, as vLLM compiles; one token is specialised apart):
  add_rms_norm_inductor  residual += x; y = RMSNorm(residual)   8 x tokens x hidden (reads x, residual; writes both)
  silu_mul_inductor      silu(x[:, :d]) * x[:, d:]              6 x tokens x d (d = `hidden` here)
  rope_inductor          neox rotary on q and k ([tokens, hidden] together, head_dim 128), cos/sin by position
                                                                4 x tokens x hidden (+ the cos/sin rows read)
`kernels` is how many GPU kernels one call launched (torch.profiler, once per kernel and width, at 64 tokens).
Each cell as gpu_timing.time_calls times it: CALLS calls in one CUDA graph, median of
`--blocks` blocks; the sweep runs twice (sweep 0, 1): the repeat spread (README of the measured data).

  python3 scripts/measure/elementwise.py --out elementwise.csv [--deadline-s 240] [--smoke]
"""
import argparse

from gpu_timing import CellLog, add_run_args, nvml_clock, open_gpu

KERNELS = ["copy", "add", "rms_norm", "row_sum", "add_rms_norm_inductor", "silu_mul_inductor", "rope_inductor"]
HIDDEN = [1024, 4096, 8192]
# add_rms_norm: hidden; silu_mul: intermediate; rope: q + k width
INDUCTOR_HIDDEN = [1024, 2048, 4096, 5120, 8192, 16384, 32768]
ROPE_HEAD_DIM = 128
TOKENS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
MAX_TENSOR_BYTES = 512 << 20  # one activation tensor at most
CALLS = 16  # calls per CUDA graph
SWEEPS = 2
COLUMNS = ["device", "version", "sweep", "kernel", "kernels", "hidden", "tokens", "bytes", "latency", "spread",
           "sm_mhz", "error"]


def widths(kernel):
    return INDUCTOR_HIDDEN if kernel.endswith("_inductor") else HIDDEN


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_args(ap, 240.0)
    ap.add_argument("--smoke", action="store_true", help="a few cells of each kernel (checks the script runs)")
    ap.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated subset of " + ", ".join(KERNELS))
    return ap.parse_args()


_COMPILED = {}


def compiled(torch, kernel, width):
    """The Inductor-compiled form of an *_inductor kernel at one width, the token count dynamic (as vLLM compiles:
    torch.compile with the token dimension marked dynamic, every other size static)."""
    if (kernel, width) in _COMPILED:
        return _COMPILED[(kernel, width)]

    def add_rms_norm(x, residual, w):
        r = residual + x
        v = r.float()
        y = (v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w
        return y, r

    def silu_mul(x):
        d = x.shape[-1] // 2
        return torch.nn.functional.silu(x[:, :d]) * x[:, d:]

    def rope(pos, qk, cos_sin):
        t = qk.shape[0]
        x = qk.view(t, -1, ROPE_HEAD_DIM)
        cs = cos_sin.index_select(0, pos)
        cos, sin = cs.chunk(2, dim=-1)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        x1, x2 = x.chunk(2, dim=-1)
        out = torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
        return out.view(t, -1)
    fn = {"add_rms_norm_inductor": add_rms_norm, "silu_mul_inductor": silu_mul, "rope_inductor": rope}[kernel]
    _COMPILED[(kernel, width)] = torch.compile(fn, dynamic=False)
    return _COMPILED[(kernel, width)]


def dynamic_tokens(torch, *tensors):
    for t in tensors:
        torch._dynamo.mark_dynamic(t, 0)


def make_call(torch, kernel, tokens, hidden, gen):
    """(a function of no argument running one call, its bytes, the tensors it keeps alive)."""
    dev = torch.device("cuda")
    n = tokens * hidden

    def t(width=hidden, rows=tokens):
        return torch.randn((rows, width), device=dev, dtype=torch.bfloat16, generator=gen)
    w = torch.ones((hidden,), device=dev, dtype=torch.bfloat16)
    if kernel.endswith("_inductor"):
        fn = compiled(torch, kernel, hidden)
        if kernel == "add_rms_norm_inductor":
            x, r = t(), t()
            dynamic_tokens(torch, x, r)
            return (lambda: fn(x, r, w)), 8 * n + 2 * hidden, (x, r, w)
        if kernel == "silu_mul_inductor":
            x = t(2 * hidden)
            dynamic_tokens(torch, x)
            return (lambda: fn(x)), 6 * n, (x,)
        qk, cos_sin = t(), t(ROPE_HEAD_DIM, 65536)
        pos = torch.arange(tokens, device=dev, dtype=torch.int64) % 65536
        dynamic_tokens(torch, qk, pos)
        return (lambda: fn(pos, qk, cos_sin)), 4 * n + 2 * tokens * ROPE_HEAD_DIM + 8 * tokens, (qk, cos_sin, pos)
    if kernel == "copy":
        src, dst = t(), t()
        return (lambda: dst.copy_(src)), 4 * n, (src, dst)
    if kernel == "add":
        a, b, c = t(), t(), t()
        return (lambda: torch.add(a, b, out=c)), 6 * n, (a, b, c)
    if kernel == "rms_norm":
        x = t()
        return (lambda: torch.nn.functional.rms_norm(x, [hidden], w, 1e-6)), 4 * n + 2 * hidden, (x, w)
    if kernel == "row_sum":
        x = t()
        return (lambda: x.sum(-1)), 2 * n + 2 * tokens, (x,)
    raise ValueError(kernel)


def kernels_per_call(torch, call):
    """GPU kernels one call launches (after a warm-up call), by torch.profiler; 0 where it cannot tell."""
    from torch.profiler import ProfilerActivity, profile
    call()
    torch.cuda.synchronize()
    try:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            call()
            torch.cuda.synchronize()
        return sum(1 for e in prof.events() if e.device_type.name == "CUDA")
    except Exception:
        return 0


def main():
    args = parse_args()
    import torch
    props, gen = open_gpu(torch, "elementwise.py")
    # One compiled form per (kernel, width) shares its function's code object: lift Dynamo's per-code cache limit.
    for limit in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, limit):
            setattr(torch._dynamo.config, limit, 1024)
    name = props.name
    version = "torch-%s" % torch.__version__
    print("device %s, %s, %d SMs, L2 %d bytes" % (name, version, props.multi_processor_count,
                                                 getattr(props, "L2_cache_size", 0)), flush=True)
    clock = nvml_clock()
    kernels = [k for k in args.kernels.split(",") if k]
    unknown = [k for k in kernels if k not in KERNELS]
    if unknown:
        raise SystemExit("--kernels: unknown %s (known: %s)" % (", ".join(unknown), ", ".join(KERNELS)))
    cells = [(k, h, t) for k in kernels for h in widths(k) for t in TOKENS if t * h * 2 <= MAX_TENSOR_BYTES]
    if args.smoke:
        cells = [c for k in kernels for c in [x for x in cells if x[0] == k][:2]]
    count = {}
    for k in kernels:
        for h in widths(k):
            call, _, keep = make_call(torch, k, 64, h, gen)
            count[(k, h)] = kernels_per_call(torch, call)
            del keep
    print("kernels per call: %s" % {"%s/%d" % kh: c for kh, c in count.items()}, flush=True)
    with open(args.out, "w", newline="") as f:
        log = CellLog(torch, f, COLUMNS, args.deadline_s)
        for sweep in range(1 if args.smoke else SWEEPS):
            for kernel, hidden, tokens in cells:
                if log.expired():
                    break
                row = [name, version, sweep, kernel, count[(kernel, hidden)], hidden, tokens]
                try:
                    call, nbytes, keep = make_call(torch, kernel, tokens, hidden, gen)
                    lat, spread = log.time([call] * CALLS, args.blocks, args.block_us)
                    row += [nbytes, "%.6g" % lat, "%.4f" % spread, clock(), ""]
                    del keep, call
                except RuntimeError as e:
                    row += ["", "", "", 0, log.error(e)]
                log.write(row)
                log.cell_done()
    log.finish()


if __name__ == "__main__":
    main()
