"""A default run against what a topic analyst would run instead, on real corpora.

Run with ``python -m bench.bench_defaults [NAME ...]``. For each corpus, in fresh processes:

* ``spca``: ``spca topics FILE --format json`` with every default (auto, k = 10, 5 topics),
  process wall time with imports and start-up, and each topic's certified ratio;
* ``NMF``: the same file read the plain way (a CSV with the standard library's reader, a UCI
  docword with NumPy), ``CountVectorizer(binary=True, min_df=2)`` where there is text, and
  ``NMF(n_components=5, init="nndsvd")`` fitted, also as a whole process with its imports.

Each is run :data:`REPEATS` times, alternating, and the best wall time of each is compared (the
machine is shared: only ratios measured in the same run mean anything). The target is spca <=
1.0x NMF with every topic certified >= 0.99. The corpora come from the data set folder
(``SPCA_DATA``, see docs/datasets.md) and the bundled KOS sample; a missing one is reported,
not fatal.
"""

from __future__ import annotations

import json
import os
import sys

from bench.bench_scale import _spawn

REPEATS = 5
TARGET = 1.0
CERTIFIED = 0.99
HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(os.path.dirname(HERE), "data_samples", "docword.kos-sample.txt.gz")


def corpora():
    """name -> (path, kind) of every corpus present, and name -> what is missing."""
    from spca_cli.datasets import DatasetError, data_folder, local

    found, missing = {}, {}
    try:
        found["airline tweets"] = (str(local("airline")[0]), "csv")
    except DatasetError as exc:
        missing["airline tweets"] = str(exc)
    try:
        found["KOS"] = (str(local("kos")[0]), "uci")
    except DatasetError as exc:
        missing["KOS"] = str(exc)
    found["KOS sample"] = (SAMPLE, "uci")
    fortunes = os.path.join(str(data_folder()), "fortunes.csv")
    if os.path.exists(fortunes):
        found["fortunes"] = (fortunes, "csv")
    else:
        missing["fortunes"] = f"{fortunes} not present"
    return found, missing


def _nmf_child(path, kind):
    """The plain alternative, in this process: read, vectorise, NMF(5)."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.decomposition import NMF

    if kind == "csv":
        import csv

        from sklearn.feature_extraction.text import CountVectorizer

        with open(path, newline="", encoding="utf-8") as f:
            texts = [row["text"] for row in csv.DictReader(f)]
        S = CountVectorizer(binary=True, min_df=2).fit_transform(texts)
    else:
        table = np.loadtxt(path, skiprows=3, dtype=np.int64, ndmin=2)
        S = sp.csr_array((np.ones(len(table)), (table[:, 0] - 1, table[:, 1] - 1)))
    NMF(n_components=5, init="nndsvd").fit(S)
    print(json.dumps({"documents": S.shape[0], "words": S.shape[1]}))


def _spca_cmd(path):
    return [sys.executable, "-m", "spca_cli", "topics", path, "--format", "json"]


def _nmf_cmd(path, kind):
    return [sys.executable, "-m", "bench.bench_defaults", "--nmf", path, kind]


def measure(name, path, kind):
    best_spca = best_nmf = float("inf")
    doc = None
    for _ in range(REPEATS):
        out, wall, _ = _spawn(_spca_cmd(path))
        best_spca = min(best_spca, wall)
        doc = json.loads(out)
        _, wall, _ = _spawn(_nmf_cmd(path, kind))
        best_nmf = min(best_nmf, wall)
    certified = [c["certified_ratio"] for c in doc["components"]]
    return {"name": name, "spca": best_spca, "nmf": best_nmf, "certified": certified,
            "words": doc["input"]["words"]}


def table(rows, missing):
    lines = [f"{'corpus':16} {'words':>6} {'spca s':>7} {'NMF s':>7} {'ratio':>6} "
             f"{'target':>7}  certified (each topic)"]
    for r in rows:
        ratio = r["spca"] / r["nmf"]
        ok = ratio <= TARGET and min(r["certified"]) >= CERTIFIED
        lines.append(f"{r['name']:16} {r['words']:>6,} {r['spca']:>7.2f} {r['nmf']:>7.2f} "
                     f"{ratio:>5.2f}x {'met' if ok else 'not met':>7}  "
                     + " ".join(f"{c:.4f}" for c in r["certified"]))
    for name, why in missing.items():
        lines.append(f"{name:16} skipped: {why}")
    lines.append(f"spca: `spca topics FILE` (auto, k=10, 5 topics), NMF: CountVectorizer("
                 f"binary=True, min_df=2) + NMF(5, init='nndsvd'); each a whole process, best of "
                 f"{REPEATS}, alternating. Target: ratio <= {TARGET:g}x and every topic "
                 f"certified >= {CERTIFIED:g}.")
    return "\n".join(lines)


def main(argv):
    if argv[:1] == ["--nmf"]:
        _nmf_child(argv[1], argv[2])
        return 0
    found, missing = corpora()
    selected = set(argv)
    rows = [measure(name, path, kind) for name, (path, kind) in found.items()
            if not selected or name in selected]
    print(table(rows, missing))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
