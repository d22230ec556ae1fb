"""Topics per group against one run on the whole corpus, on real corpora with groups.

Run with ``python -m bench.bench_groups [NAME ...]``. For each corpus, as whole processes
(imports and start-up included), alternating, best of :data:`REPEATS`:

* ``one run``: ``spca topics FILE --format json`` with the corpus's options and no groups;
* ``--by``: the same with ``--by COLUMN``: every group solved and certified.

fortunes.csv ``--by category`` (40 groups, default options: auto, k = 10, 5 topics) must take
less than :data:`TARGET` times one run. The airline tweets ``--by airline -c 3`` are measured
the same way. The smallest certified ratio of any group's topic is printed beside. The machine
is shared: only ratios measured in the same run mean anything.
"""

from __future__ import annotations

import json
import os
import sys

from bench.bench_scale import _spawn

REPEATS = 3
TARGET = 2.0


def corpora():
    """name -> (path, column, extra options) of every corpus present, and name -> why not."""
    from spca_cli.datasets import DatasetError, data_folder, local

    found, missing = {}, {}
    fortunes = os.path.join(str(data_folder()), "fortunes.csv")
    if os.path.exists(fortunes):
        found["fortunes"] = (fortunes, "category", [])
    else:
        missing["fortunes"] = f"{fortunes} not present"
    try:
        found["airline tweets"] = (str(local("airline")[0]), "airline", ["-c", "3"])
    except DatasetError as exc:
        missing["airline tweets"] = str(exc)
    return found, missing


def _cmd(path, extra, column=None):
    by = [] if column is None else ["--by", column]
    return [sys.executable, "-m", "spca_cli", "topics", path, *extra, *by, "--format", "json",
            "--quiet", "--documents", "0"]


def _certified(doc):
    groups = doc.get("groups")
    comps = ([c for g in groups for c in g["components"]] if groups is not None
             else doc["components"])
    return min(c["certified_ratio"] for c in comps)


def measure(name, path, column, extra):
    best_one = best_by = float("inf")
    one = by = None
    for _ in range(REPEATS):
        out, wall, _ = _spawn(_cmd(path, extra))
        best_one, one = min(best_one, wall), json.loads(out)
        out, wall, _ = _spawn(_cmd(path, extra, column))
        best_by, by = min(best_by, wall), json.loads(out)
    solved = sum(g["not_solved"] is None for g in by["groups"])
    return {"name": name, "column": column, "one": best_one, "by": best_by,
            "groups": len(by["groups"]), "solved": solved, "certified_one": _certified(one),
            "certified_by": _certified(by), "extra": " ".join(extra)}


def table(rows, missing):
    lines = [f"{'corpus':16} {'--by':10} {'groups':>9} {'one run s':>10} {'--by s':>7} "
             f"{'ratio':>6} {'target':>7}  min certified (one run, groups)"]
    for r in rows:
        ratio = r["by"] / r["one"]
        target = "met" if ratio < TARGET else "not met"
        if r["name"] != "fortunes":
            target = "-"
        groups = f"{r['solved']}/{r['groups']}"
        lines.append(f"{r['name']:16} {r['column']:10} {groups:>9} {r['one']:>10.2f} "
                     f"{r['by']:>7.2f} {ratio:>5.2f}x {target:>7}  {r['certified_one']:.4f}, "
                     f"{r['certified_by']:.4f}")
    for name, why in missing.items():
        lines.append(f"{name:16} skipped: {why}")
    lines.append(f"groups: solved/all (the others below --min-documents or with too few words). "
                 f"Each a whole process, best of {REPEATS}, alternating; airline with -c 3. "
                 f"Target (fortunes, defaults): --by < {TARGET:g}x one run.")
    return "\n".join(lines)


def main(argv):
    found, missing = corpora()
    selected = set(argv)
    rows = [measure(name, *spec) for name, spec in found.items()
            if not selected or name in selected]
    print(table(rows, missing))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
