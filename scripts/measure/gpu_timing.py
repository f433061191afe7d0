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


def add_run_args(ap, deadline_s, deadline_of="cells"):
    """The options every measuring script takes: --out (rows appended as cells finish), --deadline-s, and the timing
    options --blocks and --block-us (see time_calls)."""
    ap.add_argument("--out", required=True, help="CSV to write (appended to as cells finish)")
    ap.add_argument("--deadline-s", type=float, default=deadline_s,
                    help="stop starting new %s after this" % deadline_of)
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


class CellLog:
    """A measuring run's CSV and bookkeeping, as every measuring script keeps them: the header, rows as cells finish,
    every `every` cells a flush, an emptied allocator cache and a progress line; the deadline; and how long the last
    cell kept the GPU busy, so the next is timed after settle()."""

    def __init__(self, torch, f, columns, deadline_s, every=100):
        import csv
        import time
        self._torch = torch
        self._f = f
        self._w = csv.writer(f, lineterminator="\n")
        self._w.writerow(columns)
        self._every = every
        self._clock = time.time
        self.deadline_s = deadline_s
        self.t0 = time.time()
        self.busy_ms = 0.0
        self.done = 0

    def elapsed(self):
        return self._clock() - self.t0

    def expired(self):
        return self.elapsed() > self.deadline_s

    def settle(self):
        settle(self._torch, self.busy_ms)

    def ran(self, lat_ms, calls, blocks):
        """Records a timed cell: `calls` calls of `lat_ms` per graph replay, replayed 3 + `blocks` times at least."""
        self.busy_ms = lat_ms * calls * (3 + blocks)

    def time(self, calls, blocks, block_us):
        """settle(), then time_calls(calls, ...) recorded by ran(); returns its (latency ms, spread)."""
        self.settle()
        lat, spread = time_calls(self._torch, calls, blocks, block_us)
        self.ran(lat, len(calls), blocks)
        return lat, spread

    def error(self, e):
        """The first line of a refused cell's error (out of memory, a shape the kernel refuses), the GPU synchronised:
        recorded in the cell's row, not fatal."""
        self._torch.cuda.synchronize()
        return str(e).splitlines()[0][:200]

    def write(self, row):
        self._w.writerow(row)

    def cell_done(self, what=""):
        """Counts a finished cell (one or more rows); `what` names it in the progress line."""
        self.done += 1
        if self.done % self._every == 0:
            self._f.flush()
            self._torch.cuda.empty_cache()
            print("%d cells, %.0f s%s" % (self.done, self.elapsed(), " (%s)" % what if what else ""), flush=True)

    def finish(self):
        print("measured %d cells in %.0f s" % (self.done, self.elapsed()), flush=True)
