#!/usr/bin/env python3
"""Generate servesim request traces and workload CDFs from the shared data sets.

Usage (from the repository root):

    python3 scripts/gen_traces.py [--data DIR]

DIR defaults to ../shared/data relative to the repository root.  Writes
profiles/traces/*.csv, profiles/workloads/*_cdf.json and
profiles/traces/README.md.  Standard library only; the output is
byte-identical on every run (no timestamps, fixed ordering, LF line ends).
"""

import argparse
import csv
import datetime
import hashlib
import json
import os
import re
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA = os.path.normpath(os.path.join(REPO_ROOT, "..", "shared", "data"))
TRACES_DIR = os.path.join(REPO_ROOT, "profiles", "traces")
WORKLOADS_DIR = os.path.join(REPO_ROOT, "profiles", "workloads")

MOONCAKE_BLOCK_TOKENS = 512


# --------------------------------------------------------------------------- helpers

def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_provenance(data_dir, folder):
    """Repository / commit / license lines from <folder>/README.md."""
    info = {"repository": "?", "commit": "?", "license": "?"}
    path = os.path.join(data_dir, folder, "README.md")
    key = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^- (Repository|Commit|License): (.+?)\s*$", line)
            if m:
                key = m.group(1).lower()
                info[key] = m.group(2)
            elif key and re.match(r"^\s{2,}\S", line):  # wrapped continuation of the same item
                info[key] += " " + line.strip()
            else:
                key = None
    return info


def stated_count(data_dir, folder, source_rel):
    """The row/request count the data README states for a source file, or None."""
    base = re.escape(os.path.basename(source_rel))
    with open(os.path.join(data_dir, folder, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(base + r"`?\s*\(([\d,]+) (?:requests|rows)", text)
    return int(m.group(1).replace(",", "")) if m else None


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line)
            f.write("\n")


def fmt_us_as_ms(us):
    """Integer microseconds -> milliseconds string with exactly 3 decimals."""
    sign = "-" if us < 0 else ""
    us = abs(us)
    return "%s%d.%03d" % (sign, us // 1000, us % 1000)


def is_sorted(keys):
    return all(keys[i] <= keys[i + 1] for i in range(len(keys) - 1))


def parse_nonneg_int(text, where):
    if not text.isdigit():
        raise ValueError("%s: not a non-negative integer: %r" % (where, text))
    return int(text)


# --------------------------------------------------------------------------- Azure 2023

_TS_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?$")


def azure_ticks(ts, where):
    """'2023-11-16 18:17:03.9799600' -> integer count of 100 ns ticks (exact)."""
    m = _TS_RE.match(ts.strip())
    if not m:
        raise ValueError("%s: bad TIMESTAMP %r" % (where, ts))
    day = datetime.date.fromisoformat(m.group(1)).toordinal()
    hh, mm, ss = int(m.group(2)), int(m.group(3)), int(m.group(4))
    frac = (m.group(5) or "").ljust(7, "0")
    secs = day * 86400 + hh * 3600 + mm * 60 + ss
    return secs * 10_000_000 + int(frac)


def gen_azure(data_dir, kind):
    folder = "azure-llm-inference-2023"
    rel = "%s/AzureLLMInferenceTrace_%s.csv" % (folder, kind)
    src = os.path.join(data_dir, rel)
    rows = []
    blank = 0
    with open(src, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader)
        if header != ["TIMESTAMP", "ContextTokens", "GeneratedTokens"]:
            raise ValueError("%s: unexpected header %r" % (rel, header))
        for i, rec in enumerate(reader, start=2):
            if not rec:
                blank += 1
                continue
            where = "%s:%d" % (rel, i)
            rows.append((azure_ticks(rec[0], where),
                         parse_nonneg_int(rec[1], where),
                         parse_nonneg_int(rec[2], where)))
    ticks = [r[0] for r in rows]
    was_sorted = is_sorted(ticks)
    if not was_sorted:
        rows.sort(key=lambda r: r[0])  # stable: ties keep file order
    t0 = rows[0][0]
    rounded = 0
    out = ["arrival_ms,input_tokens,output_tokens"]
    for t, inp, outp in rows:
        d = t - t0
        if d % 10:
            rounded += 1
        us = (d + 5) // 10  # 100 ns ticks -> microseconds (round half up)
        out.append("%s,%d,%d" % (fmt_us_as_ms(us), inp, outp))
    name = "azure_%s_2023.csv" % kind
    dst = os.path.join(TRACES_DIR, name)
    write_lines(dst, out)
    span_ms = fmt_us_as_ms((rows[-1][0] - t0 + 5) // 10)
    notes = [
        "arrival_ms = TIMESTAMP - first row's TIMESTAMP (%s), exact integer arithmetic on the "
        "100 ns source resolution, printed in ms with 3 decimals (us resolution); "
        "%d value(s) needed rounding to the microsecond." % (_ts_text(t0), rounded),
        "Source rows %s sorted by TIMESTAMP%s." % (
            "are" if was_sorted else "were NOT",
            "; kept in file order" if was_sorted else "; stable-sorted by TIMESTAMP (ties keep file order)"),
        "input_tokens = ContextTokens, output_tokens = GeneratedTokens. Trace span %s ms." % span_ms,
    ]
    with open(src, "rb") as f:
        raw = f.read()
    count_note = ""
    if raw and not raw.endswith(b"\n"):
        count_note = (" (the last line has no trailing newline, so `wc -l` reports one line fewer; every "
                      "data row parses as TIMESTAMP,int,int; blank lines skipped: %d)" % blank)
    return {"file": name, "source": rel, "folder": folder, "rows": len(rows), "notes": notes,
            "columns": "arrival_ms,input_tokens,output_tokens", "count_note": count_note}


def _ts_text(ticks):
    secs, frac = divmod(ticks, 10_000_000)
    days, rem = divmod(secs, 86400)
    d = datetime.date.fromordinal(days)
    hh, rem = divmod(rem, 3600)
    mm, ss = divmod(rem, 60)
    return "%s %02d:%02d:%02d.%07d" % (d.isoformat(), hh, mm, ss, frac)


# --------------------------------------------------------------------------- Mooncake

def gen_mooncake(data_dir):
    folder = "mooncake-traces"
    rel = "%s/conversation_trace.jsonl" % folder
    src = os.path.join(data_dir, rel)
    rows = []
    hash_mismatch = 0
    with open(src, encoding="utf-8") as f:
        for i, line in enumerate(f, start=1):
            line = line.strip()
            if not line:
                continue
            obj = json.loads(line)
            ts, inp, outp, hashes = (obj["timestamp"], obj["input_length"],
                                     obj["output_length"], obj["hash_ids"])
            for v in [ts, inp, outp] + list(hashes):
                if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                    raise ValueError("%s:%d: non-integer or negative value %r" % (rel, i, v))
            if len(hashes) != -(-inp // MOONCAKE_BLOCK_TOKENS):
                hash_mismatch += 1
            rows.append((ts, inp, outp, hashes))
    ts_list = [r[0] for r in rows]
    was_sorted = is_sorted(ts_list)
    if not was_sorted:
        rows.sort(key=lambda r: r[0])
    t0 = rows[0][0]
    out = ["arrival_ms,input_tokens,output_tokens,hash_ids"]
    for ts, inp, outp, hashes in rows:
        out.append("%s,%d,%d,%s" % (fmt_us_as_ms((ts - t0) * 1000), inp, outp,
                                    " ".join(str(h) for h in hashes)))
    name = "mooncake_conversation.csv"
    write_lines(os.path.join(TRACES_DIR, name), out)
    notes = [
        "arrival_ms = timestamp - first row's timestamp (source timestamps are integer ms, first = %d), "
        "printed with 3 decimals." % t0,
        "Source rows %s sorted by timestamp%s." % (
            "are" if was_sorted else "were NOT",
            "; kept in file order" if was_sorted else "; stable-sorted (ties keep file order)"),
        "input_tokens = input_length, output_tokens = output_length, hash_ids = the row's hash_ids joined by "
        "single spaces (one id per %d-token prefix block; equal leading ids = reusable prefix KV)."
        % MOONCAKE_BLOCK_TOKENS,
        "Rows whose hash_ids count != ceil(input_tokens/%d): %d." % (MOONCAKE_BLOCK_TOKENS, hash_mismatch),
    ]
    return {"file": name, "source": rel, "folder": folder, "rows": len(rows), "notes": notes,
            "columns": "arrival_ms,input_tokens,output_tokens,hash_ids"}


# --------------------------------------------------------------------------- ShareGPT (Sarathi-Serve)

def gen_sharegpt(data_dir):
    folder = "sarathi-serve"
    rel = "%s/sharegpt_8k_filtered_stats_llama2_tokenizer.csv" % folder
    src = os.path.join(data_dir, rel)
    out = ["input_tokens,output_tokens"]
    n = 0
    bad_total = 0
    with open(src, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader)
        if header[:3] != ["num_prefill_tokens", "num_decode_tokens", "num_total_tokens"]:
            raise ValueError("%s: unexpected header %r" % (rel, header))
        for i, rec in enumerate(reader, start=2):
            if not rec:
                continue
            where = "%s:%d" % (rel, i)
            p = parse_nonneg_int(rec[0], where)
            d = parse_nonneg_int(rec[1], where)
            if p + d != parse_nonneg_int(rec[2], where):
                bad_total += 1
            out.append("%d,%d" % (p, d))
            n += 1
    name = "sharegpt_llama2.csv"
    write_lines(os.path.join(TRACES_DIR, name), out)
    notes = [
        "Lengths only (no arrival times); file order kept.",
        "input_tokens = num_prefill_tokens, output_tokens = num_decode_tokens (Llama-2 tokenizer); "
        "rows where prefill+decode != num_total_tokens: %d." % bad_total,
    ]
    return {"file": name, "source": rel, "folder": folder, "rows": n, "notes": notes,
            "columns": "input_tokens,output_tokens"}


# --------------------------------------------------------------------------- fleet-sim CDFs

class RawNumber(object):
    """Keeps a JSON number's source text so it is written back unchanged."""

    def __init__(self, text):
        self.text = text
        self.value = float(text)


def _num_text(v):
    if isinstance(v, RawNumber):
        return v.text
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError("unexpected CDF value %r" % (v,))
    return str(v)


def _num_value(v):
    return v.value if isinstance(v, RawNumber) else float(v)


def gen_cdf(data_dir, name):
    folder = "fleet-sim"
    rel = "%s/%s_cdf.json" % (folder, name)
    with open(os.path.join(data_dir, rel), encoding="utf-8") as f:
        obj = json.load(f, parse_float=RawNumber)
    extra = ""
    if isinstance(obj, dict):
        points = obj["cdf"]
        extra = " Upstream metadata: source=%s; provenance: %s; n_samples=%s; seed=%s." % (
            obj.get("source"), obj.get("provenance"), obj.get("n_samples"), obj.get("seed"))
    else:
        points = obj
    prev_x, prev_y = None, None
    for x, y in points:
        xv, yv = _num_value(x), _num_value(y)
        if prev_x is not None and (xv <= prev_x or yv < prev_y):
            raise ValueError("%s: CDF not monotone at %r" % (rel, (xv, yv)))
        if not 0.0 <= yv <= 1.0:
            raise ValueError("%s: fraction out of range %r" % (rel, yv))
        prev_x, prev_y = xv, yv
    if prev_y != 1.0:
        raise ValueError("%s: CDF does not end at 1.0" % rel)
    info = read_provenance(data_dir, folder)
    source = ("vllm-project/semantic-router (inference-fleet-sim) src/fleet-sim/fleet_sim/data/%s_cdf.json "
              "at commit %s, license %s. CDF of total request tokens (input+output); points copied unchanged.%s"
              % (name, info["commit"], info["license"].rstrip("."), extra))
    header = {"name": name, "quantity": "total_tokens", "source": source}
    lines = ["{"]
    for k, v in header.items():
        lines.append("  %s: %s," % (json.dumps(k), json.dumps(v, ensure_ascii=False)))
    lines.append('  "points": [')
    for i, (x, y) in enumerate(points):
        sep = "," if i + 1 < len(points) else ""
        lines.append("    [%s, %s]%s" % (_num_text(x), _num_text(y), sep))
    lines.append("  ]")
    lines.append("}")
    out_name = "%s_cdf.json" % name
    dst = os.path.join(WORKLOADS_DIR, out_name)
    write_lines(dst, lines)
    with open(dst, encoding="utf-8") as f:
        json.load(f)  # must parse
    return {"file": "../workloads/" + out_name, "source": rel, "folder": folder, "rows": len(points),
            "notes": ["%d (tokens, cumulative_fraction) points; quantity = total tokens per request." % len(points)],
            "columns": "JSON {name, quantity, source, points}"}


# --------------------------------------------------------------------------- README

def gen_readme(data_dir, entries, multiturn_identical):
    lines = [
        "# Generated traces and workload CDFs",
        "",
        "Generated by `python3 scripts/gen_traces.py` (run from the repository root; `--data DIR` overrides the",
        "shared data directory, default `../shared/data`). Do not edit by hand: rerun the script. The output is",
        "deterministic (byte-identical on every run).",
        "",
        "Row counts below are data rows (header excluded). sha256 values identify the exact source file read and",
        "the exact file written.",
        "",
        "| file | source (under shared/data) | rows |",
        "|---|---|---|",
    ]
    for e in entries:
        lines.append("| `%s` | `%s` | %d |" % (e["file"], e["source"], e["rows"]))
    lines.append("")
    for e in entries:
        info = read_provenance(data_dir, e["folder"])
        lines.append("## %s" % e["file"])
        lines.append("")
        lines.append("- Source: `%s` (shared/data), sha256 `%s`" % (
            e["source"], sha256_of(os.path.join(data_dir, e["source"]))))
        lines.append("- Upstream repository: %s" % info["repository"])
        lines.append("- Upstream commit: %s" % info["commit"])
        lines.append("- License: %s" % info["license"])
        lines.append("- Columns: `%s`" % e["columns"])
        lines.append("- Rows: %d" % e["rows"])
        out_path = os.path.normpath(os.path.join(TRACES_DIR, e["file"]))
        lines.append("- Output sha256: `%s`" % sha256_of(out_path))
        for n in e["notes"]:
            lines.append("- %s" % n)
        lines.append("")
    lines.append("## Not generated")
    lines.append("")
    lines.append("- `fleet-sim/lmsys_multiturn_cdf.json`: skipped, %s `lmsys_cdf.json` at the pinned commit "
                 "(so `lmsys_cdf.json` stands for both)." % (
                     "byte-identical to" if multiturn_identical else "NOTE: now differs from"))
    lines.append("- `mooncake-traces/synthetic_trace.jsonl` and the vidur/splitwise copies of the Azure trace are "
                 "not converted.")
    lines.append("")
    lines.append("## Row counts vs. the data READMEs")
    lines.append("")
    for e in entries:
        stated = stated_count(data_dir, e["folder"], e["source"])
        if stated is None:
            continue
        if stated == e["rows"]:
            lines.append("- `%s`: %d rows, matches the count in `%s/README.md`." % (e["source"], stated, e["folder"]))
        else:
            lines.append("- `%s`: `%s/README.md` states %d, but the file holds %d data rows%s." % (
                e["source"], e["folder"], stated, e["rows"], e.get("count_note", "")))
    lines.append("")
    write_lines(os.path.join(TRACES_DIR, "README.md"), lines)


# --------------------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA,
                    help="shared data directory (default: ../shared/data relative to the repo root)")
    args = ap.parse_args(argv)
    data_dir = os.path.abspath(args.data)
    if not os.path.isdir(data_dir):
        sys.exit("data directory not found: %s (use --data DIR)" % data_dir)
    os.makedirs(TRACES_DIR, exist_ok=True)
    os.makedirs(WORKLOADS_DIR, exist_ok=True)

    entries = [
        gen_azure(data_dir, "conv"),
        gen_azure(data_dir, "code"),
        gen_mooncake(data_dir),
        gen_sharegpt(data_dir),
    ]
    for name in ("azure", "lmsys", "agent_heavy"):
        entries.append(gen_cdf(data_dir, name))
    with open(os.path.join(data_dir, "fleet-sim", "lmsys_cdf.json"), "rb") as a, \
            open(os.path.join(data_dir, "fleet-sim", "lmsys_multiturn_cdf.json"), "rb") as b:
        identical = a.read() == b.read()
    gen_readme(data_dir, entries, identical)

    written = [os.path.normpath(os.path.join(TRACES_DIR, e["file"])) for e in entries]
    written.append(os.path.join(TRACES_DIR, "README.md"))
    for e, path in zip(entries + [None], written):
        rows = "%8d rows" % e["rows"] if e else "         -"
        print("%-48s %s %12d bytes" % (os.path.relpath(path, REPO_ROOT), rows, os.path.getsize(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
