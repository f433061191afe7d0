#!/usr/bin/env python3
"""validate_e2e.py's exploration flags (--rows, --outputs, --set): they change the replayed scenarios, print one line
per replayed row, refuse a malformed override naming it, and write neither docs/validation.md nor validation.json.
Usage: validate_e2e_explore_test.py SERVESIM_CLI"""
import hashlib
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "validate_e2e.py")
WRITTEN = [os.path.join(ROOT, "docs", "validation.md"),
           os.path.join(ROOT, "profiles", "H100-SXM", "vllm", "validation.json")]


def digest():
    return [hashlib.sha256(open(p, "rb").read()).hexdigest() for p in WRITTEN]


def run(*extra):
    return subprocess.run([sys.executable, SCRIPT, "--cli", sys.argv[1], "--backend", "vllm", "--model", "MiniMax",
                           "--limit", "2"] + list(extra), capture_output=True, text=True)


before = digest()
fails = []
base = run("--rows")
small = run("--rows", "--outputs", "exact", "--set", "engine.max_num_batched_tokens=1024")
rows = [l for l in small.stdout.splitlines() if l.startswith("  vllm agg MiniMax-M2.5")]
if base.returncode or small.returncode:
    fails.append("exploration run failed: %s %s" % (base.stderr[-300:], small.stderr[-300:]))
if len(rows) != 2:
    fails.append("--rows printed %d row lines for --limit 2, want 2" % len(rows))
if "replayed with outputs exact engine.max_num_batched_tokens=1024" not in small.stdout:
    fails.append("the overrides are not announced")


def ttfts(out):
    return [float(m.group(1)) for m in re.finditer(r"TTFT +[\d.]+ -> +([\d.]+) ms", out)]


if ttfts(base.stdout) == ttfts(small.stdout) or not ttfts(base.stdout):
    fails.append("a 1024-token budget and exact outputs left the simulated TTFTs unchanged: %s" % ttfts(small.stdout))
bad = run("--set", "engine.moe_routing=power_law")
if bad.returncode == 0 or "engine.moe_routing" not in (bad.stdout + bad.stderr):
    fails.append("a non-JSON --set value was accepted or not named")
mixed = run("--rows", "--check")
if mixed.returncode == 0:
    fails.append("--rows with --check was accepted")
if digest() != before:
    fails.append("an exploration run rewrote docs/validation.md or validation.json")
if fails:
    sys.exit("validate_e2e exploration flags: " + "; ".join(fails))
print("validate_e2e exploration flags: ok")
