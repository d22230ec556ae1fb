"""Certified ratios and times of the default (auto), exact and the paper solvers on the matrices
of published implementations (../shared/data/matrices, k = 10, 5 topics).

Run with ``python -m bench.bench_certificates``. For each matrix and solver it prints the first
topic's value, the certified ratio of each of the 5 topics, the smallest, and the seconds spent
solving and bounding. The baseline, measured in the same run, is the same solver certified only
by the eigenvalue bounds (lambda_1, top-k diagonal, rank-1 + lambda_2, the spannogram's
OPT_d + lambda_{d+1}), labelled ``before``: the certificates without the weighted row bound.
``exact -c 1`` shows the time to prove the first topic optimal.
"""

from __future__ import annotations

from bench._data import matrices_folder

import time
from contextlib import contextmanager

import numpy as np

from spca_cli import bounds
from spca_cli.corpus import load_input
from spca_cli.topics import run_topics

MATRICES = matrices_folder()
PUBLISHED = {"airline": 3821.31, "kos": 73173.24}


@contextmanager
def eigenvalue_bounds_only():
    """Certify with the eigenvalue bounds only, without the weighted row bound (the baseline)."""
    saved = bounds.row_certificate

    def none(A, k, *, totals=()):
        model = bounds.RowModel.of(A, exact_rows=0, words=np.zeros(0, dtype=np.int64))
        return bounds.RowCertificate(model, bounds.RowBound(np.inf, np.zeros(0), np.zeros(0), 0,
                                                            {c: np.inf for c in totals}))

    bounds.row_certificate = none
    try:
        yield
    finally:
        bounds.row_certificate = saved


def run(data, solver, components=5, **options):
    t = time.perf_counter()
    result = run_topics(data, solver=solver, k=10, n_components=components, rank=2,
                        solver_options=options)
    return result, time.perf_counter() - t


def main():
    if not MATRICES.is_dir():
        print(f"{MATRICES} not present: nothing to measure")
        return
    header = (f"{'matrix':8} {'solver':17} {'first':>10} {'certified ratios of topics 1-5':>38} "
              f"{'min':>6} {'solve s':>8} {'bound s':>8} {'total s':>8}")
    print(header)
    print("-" * len(header))
    for name in ("airline", "kos"):
        data = load_input(str(MATRICES / f"{name}.mtx"),
                          labels=str(MATRICES / f"{name}.vocab.txt"))
        run_topics(data, solver="auto", k=10, n_components=1)  # numba compile, not timed
        rows = []
        for solver in ("auto", "spannogram", "tpower"):
            rows.append((solver, *run(data, solver)))
            if solver != "auto":
                with eigenvalue_bounds_only():
                    rows.append((f"{solver} before", *run(data, solver)))
        rows.append(("exact -c 1", *run(data, "exact", components=1)))
        for label, result, seconds in rows:
            ratios = [t.certified_ratio for t in result.components]
            print(f"{name:8} {label:17} {result.components[0].explained_variance:10.2f} "
                  f"{' '.join(f'{r:.4f}' for r in ratios):>38} {min(ratios):6.4f} "
                  f"{result.seconds['solve']:8.1f} {result.seconds.get('bounds', 0.0):8.1f} "
                  f"{seconds:8.1f}")
        print(f"{name:8} published best first topic: {PUBLISHED[name]}")
    print("\nbefore = the same solver certified by the eigenvalue bounds only (without the "
          "weighted row bound), measured in this run")


if __name__ == "__main__":
    main()
