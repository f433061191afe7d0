#!/usr/bin/env python3
"""Runs a P/D preset under each decode router (round_robin, least_load, sibyl and SIBYL's sensitivity
variants with --variants) over several seeds, and prints mean / p99 / p99.9 TPOT, p99 TTFT, output throughput
and the optimal-assignment ratio. Usage:
  python3 scripts/compare_decode_routers.py presets/sibyl_64_decode.json [--seeds 1,2,3] [--variants] [--rate R]
"""
import argparse
import json
import math
import os
import subprocess
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CLI = os.path.join(ROOT, "build", "native", "servesim")


def pct(sorted_vals, p):
    """numpy-style linear-interpolated percentile."""
    idx = p / 100 * (len(sorted_vals) - 1)
    lo = math.floor(idx)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (idx - lo)


def run(scenario, tmp):
    path = os.path.join(tmp, "s.json")
    out = os.path.join(tmp, "r.json")
    with open(path, "w") as f:
        json.dump(scenario, f)
    subprocess.run([CLI, "run", path, "--out", out, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    r = json.load(open(out))
    req = r["requests"]
    tpot = sorted((f - t) / (n - 1) for f, t, n, bad in zip(req["finished_ms"], req["first_token_ms"],
                  req["output_tokens"], req["failed"]) if not bad and n > 1)
    s = r["summary"]
    return {"mean": s["mean_tpot_ms"], "p99": pct(tpot, 99), "p999": pct(tpot, 99.9), "ttft99": s["p99_ttft_ms"],
            "thr": s["output_throughput"], "opt": r["disaggregation"]["optimal_assignment_ratio"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("preset")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--variants", action="store_true")
    ap.add_argument("--rate", type=float)
    a = ap.parse_args()
    base = json.load(open(a.preset))
    base.setdefault("output", {})["requests"] = True
    if a.rate:
        base["workload"]["arrival"]["request_rate"] = a.rate
    policies = [("round_robin", None), ("least_load", None), ("sibyl", "full")]
    if a.variants:
        policies += [("sibyl", v) for v in ("prob_at_1", "no_type1", "no_type2", "no_type3", "request_level")]
    seeds = [int(x) for x in a.seeds.split(",")]
    print(f"{os.path.basename(a.preset)} rate {base['workload']['arrival'].get('request_rate')} req/s, "
          f"seeds {seeds} (means over seeds)")
    print(f"{'router':24} {'mean TPOT':>9} {'p99 TPOT':>9} {'p99.9 TPOT':>10} {'p99 TTFT':>9} {'out tok/s':>10} {'opt ratio':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for router, variant in policies:
            rows = []
            for seed in seeds:
                sc = json.loads(json.dumps(base))
                sc["seed"] = seed
                sc["deployment"]["decode_router"] = router
                if variant:
                    sc["deployment"]["sibyl"] = {"variant": variant}
                rows.append(run(sc, tmp))
            m = {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]}
            name = router if not variant or variant == "full" else f"sibyl/{variant}"
            print(f"{name:24} {m['mean']:9.1f} {m['p99']:9.1f} {m['p999']:10.1f} {m['ttft99']:9.0f} {m['thr']:10.0f} "
                  f"{m['opt']:9.3f}")


if __name__ == "__main__":
    main()
