#!/usr/bin/env python3
"""Writes profiles/index.json: the bundled resource names per folder, so the core can list what exists
(in the browser it cannot read directories). Run from the repository root after adding a profile."""
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "profiles")
FOLDERS = {"models": ".json", "gpus": ".json", "traces": ".csv", "workloads": ".json"}


def names(folder, ext):
    d = os.path.join(ROOT, folder)
    if not os.path.isdir(d):
        return []
    out = []
    for f in sorted(os.listdir(d)):
        if f.endswith(ext):
            n = f[: -len(ext)]
            out.append(n[: -len("_cdf")] if folder == "workloads" and n.endswith("_cdf") else n)
    return out


def tables():
    """Measured operator tables per GPU (profiles/<gpu>/<backend>/<op>.json, scripts/gen_tables.py), as
    "<gpu>/<backend>/<op>" without the extension, so the page knows which files a role may load."""
    out = []
    for gpu in names("gpus", ".json"):
        base = os.path.join(ROOT, gpu)
        if not os.path.isdir(base):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(".json") and f not in ("manifest.json",):
                    rel = os.path.relpath(os.path.join(dirpath, f), ROOT)[: -len(".json")]
                    out.append(rel.replace(os.sep, "/"))
    if os.path.exists(os.path.join(ROOT, "datasheet", "efficiency.json")):
        out.append("datasheet/efficiency")
    return sorted(out)


def main():
    index = {folder: names(folder, ext) for folder, ext in FOLDERS.items()}
    index["tables"] = tables()
    text = json.dumps(index, indent=1) + "\n"
    path = os.path.join(ROOT, "index.json")
    if "--check" in sys.argv:
        current = open(path).read() if os.path.exists(path) else ""
        if current != text:
            sys.exit("profiles/index.json is stale: run python3 scripts/gen_profile_index.py")
        return
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
