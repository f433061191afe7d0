"""Helpers the GPU measuring scripts share (scripts/measure/*.py; run on a GPU machine, never by the build)."""


def open_gpu(torch, script):
    """GPU 0 made current (exits naming `script` where there is none); its properties and a generator seeded 0."""
    import sys
    if not torch.cuda.is_available():
        sys.exit("%s: no CUDA device" % script)
    torch.cuda.set_device(0)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    return torch.cuda.get_device_properties(0), gen


def add_block_args(ap):
    """The timing options every measuring script takes: --blocks and --block-us (see time_calls)."""
    ap.add_argument("--blocks", type=int, default=5, help="timed blocks per cell; the median is kept")
    ap.add_argument("--block-us", type=float, default=300.0, help="minimum length of one timed block")


def settle(torch, busy_ms):
    """Called before timing a cell, with how long the previous cell kept the GPU busy. After heavy work the clock is
    pulled down by the power limit for a while; spinning a low-power kernel (twice the busy time, at most 20 ms; the
    cycle count assumes the H100's 1980 MHz) lets it recover first. Measured on the bf16 GEMM grid: sweep a, without
    this, agrees with sweep b to p95 7.1% per cell, sweeps b and c (both with it) to 3.8%; random-order retests of
    300 cells gave p95 19.4% (sweep a) and 10.0% (sweep b)."""
    if busy_ms > 2.0:
        torch.cuda._sleep(int(min(20.0, 2.0 * busy_ms) * 1e-3 * 1.98e9))
        torch.cuda.synchronize()


def nvml_clock():
    """A function reading the SM clock (MHz) of GPU 0 through NVML, or returning 0 where NVML is missing."""
    try:
        import pynvml
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        return lambda: pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
    except Exception:
        return lambda: 0


def time_calls(torch, calls, blocks, block_us):
    """Times `calls` (functions of no argument, each one GPU operation): an eager warm-up on a side stream (the
    libraries pick and load their kernels outside the capture), one CUDA graph running them all, then `blocks`
    blocks of replays, each at least `block_us` long. Returns the median over blocks of the mean time per call
    (ms) and the max/min block ratio."""
    import statistics
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for c in calls:
            c()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = [c() for c in calls]
    for _ in range(3):
        graph.replay()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    graph.replay()
    end.record()
    end.synchronize()
    one = max(start.elapsed_time(end), 1e-4)  # ms per replay, rough
    reps = max(1, int(block_us / 1000.0 / one + 0.999))
    samples = []
    for _ in range(blocks):
        start.record()
        for _ in range(reps):
            graph.replay()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / reps / len(calls))
    del graph, outs
    return statistics.median(samples), max(samples) / min(samples)
