"""``make bench``: run every benchmark, print its table, and keep them all in bench/results.md.

Each ``bench/bench_*.py`` is run as its own process (``python -m bench.bench_NAME``) so that the
peak memory each reports is its own, and a failing benchmark does not hide the others.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = ["defaults", "sets", "groups", "ingest", "certificates", "spannogram", "tpower", "nonneg",
         "bipartite", "scale", "targets", "dask"]


def _modules(selected):
    found = sorted(p.stem[len("bench_"):] for p in HERE.glob("bench_*.py"))
    names = [n for n in ORDER if n in found] + [n for n in found if n not in ORDER]
    return [n for n in names if not selected or n in selected]


def main(argv=None):
    selected = set(argv if argv is not None else sys.argv[1:])
    sections = []
    failed = []
    for name in _modules(selected):
        print(f"## bench_{name}", flush=True)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", f"bench.bench_{name}"], cwd=HERE.parent,
                              capture_output=True, text=True)
        seconds = time.perf_counter() - start
        print(proc.stdout, flush=True)
        if proc.returncode != 0:
            failed.append(name)
            print(proc.stderr[-3000:], file=sys.stderr)
        status = "ok" if proc.returncode == 0 else f"FAILED (exit {proc.returncode})"
        sections.append(f"## bench_{name} ({status}, {seconds:.0f} s wall)\n\n```\n"
                        f"{proc.stdout.rstrip()}\n```\n")
    header = (f"# Benchmark results\n\nMade by `make bench` on {dt.date.today()} "
              f"({platform.machine()}, {os.cpu_count()} cores, Python "
              f"{platform.python_version()}).\n\n")
    if not selected:
        (HERE / "results.md").write_text(header + "\n".join(sections), encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
