#!/usr/bin/env python3
"""Runs the benchmark scenarios through the CLI and prints one line per scenario. See scripts/bench."""
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CLI = os.path.join(ROOT, "build", "native", "servesim")

# (label, requests, replicas); rate per replica keeps each replica busy but stable.
CASES = [("10k req x 1 replica", 10_000, 1), ("100k req x 64 replicas", 100_000, 64),
         ("1M req x 256 replicas", 1_000_000, 256), ("100k req P/D 1,024 GPUs", 100_000, "pd")]
RATE_PER_REPLICA = 6.0


def pd_scenario(requests):
    """Llama-3.1-70B, 64 P + 64 D replicas at TP8 (1,024 H100s), SIBYL decode assignment."""
    return {
        "version": 1, "name": f"bench P/D {requests}", "seed": 1, "model": "Llama-3.1-70B",
        "hardware": {"gpu": "H100-SXM"},
        "deployment": {"decode_router": "sibyl", "roles": [
            {"role": "P", "replicas": 64, "tensor_parallel_size": 8},
            {"role": "D", "replicas": 64, "tensor_parallel_size": 8}]},
        "workload": {
            "num_requests": requests,
            "arrival": {"process": "poisson", "request_rate": 400},
            "input_len": {"dist": "lognormal", "median": 1024, "sigma": 0.8, "min": 8, "max": 8192},
            "output_len": {"dist": "lognormal", "median": 256, "sigma": 0.8, "min": 2, "max": 4096},
        },
    }


def scenario(requests, replicas):
    if replicas == "pd":
        return pd_scenario(requests)
    return {
        "version": 1, "name": f"bench {requests} x {replicas}", "seed": 1, "model": "Llama-3.1-8B",
        "hardware": {"gpu": "H100-SXM"},
        "deployment": {"router": "least_outstanding_tokens", "roles": [{"role": "C", "replicas": replicas}]},
        "workload": {
            "num_requests": requests,
            "arrival": {"process": "poisson", "request_rate": RATE_PER_REPLICA * replicas},
            "input_len": {"dist": "lognormal", "median": 512, "sigma": 0.8, "min": 8, "max": 8192},
            "output_len": {"dist": "lognormal", "median": 128, "sigma": 0.8, "min": 2, "max": 2048},
        },
    }


def main():
    cases = [c for c in CASES if c[1] <= 100_000 and c[2] != "pd"] if "--quick" in sys.argv else CASES
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}")
    print(f"{'case':26} {'wall s':>8} {'req/s':>11} {'iter/s':>11} {'events/s':>11} {'peak MiB':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for label, n, reps in cases:
            scen = os.path.join(tmp, "s.json")
            out = os.path.join(tmp, "r.json")
            with open(scen, "w") as f:
                json.dump(scenario(n, reps), f)
            p = subprocess.run([CLI, "run", scen, "--out", out], capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"{label}: servesim failed\n{p.stderr}")
            m = re.search(r"\(([\d.]+) s wall, (\d+) events, peak RSS ([\d.]+) MiB\)", p.stderr)
            wall, events, rss = float(m.group(1)), int(m.group(2)), float(m.group(3))
            res = json.load(open(out))
            iters = res["sim"]["iterations"]
            done = res["summary"]["completed"]
            print(f"{label:26} {wall:8.2f} {done / wall:11.0f} {iters / wall:11.0f} {events / wall:11.0f} {rss:9.1f}")


if __name__ == "__main__":
    main()
