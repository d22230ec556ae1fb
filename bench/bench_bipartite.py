"""Timings and totals of the joint ``bipartite`` solver against one-by-one deflation.

Run with ``python -m bench.bench_bipartite`` (needs ../shared/data/matrices). Prints:

* KOS, K = 8 components of k = 10 words, rank-4 sketch, 20,000 samples: wall and CPU seconds,
  samples per second (n_jobs = 1 and 2), the total explained variance, and the gain over
  deflation with word removal (threshold; tpower and spannogram rank 2 when available), as in
  Table 2 of the 2015 paper;
* K = 5 on KOS and on the airline tweets next to the best published total (PROVENANCE.md);
* the tightest certified upper bound on the total and the certified ratio.
"""

from __future__ import annotations

from bench._data import matrices_folder

import argparse
import importlib
import time
import warnings

import scipy.io
import scipy.sparse as sp

from spca_cli.matrix import Gram
from spca_cli.solvers import SOLVERS
from spca_cli.solvers.bipartite import bipartite
from spca_cli.solvers.threshold import threshold
from spca_cli.spectrum import top_eigenpairs

MATRICES = matrices_folder()
PUBLISHED_TOTAL5 = {"airline": 7359.19, "kos": 132666.68}  # best total of 5, disjoint, k = 10


def load(name):
    S = sp.csr_array(scipy.io.mmread(str(MATRICES / f"{name}.mtx")))
    return Gram.from_documents(S)


def baseline_solvers():
    """threshold, plus tpower and spannogram (rank 2) when their modules exist."""
    out = {"threshold": (threshold, {})}
    for name, options in (("tpower", {}), ("spannogram", {"rank": 2})):
        solver = SOLVERS.get(name)
        if solver is None:
            try:
                solver = getattr(importlib.import_module(f"spca_cli.solvers.{name}"), name)
            except (ImportError, AttributeError):
                continue
        out[name] = (solver, options)
    return out


def deflation_total(A, solver, K, k, options, time_limit):
    view, total = A, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(K):
            eigen = top_eigenpairs(view, max(options.get("rank", 1) + 1, 2))
            out = solver(view, k, eigen=eigen, random_state=0, time_limit=time_limit, **options)
            total += A.sparse_quadratic(out.indices, out.weights)
            view = view.remove(out.indices)
    return total


def run(A, K, k, rank, samples, n_jobs, seed=0):
    eigen = top_eigenpairs(A, max(rank, K) + 1)
    wall, cpu = time.perf_counter(), time.process_time()
    out = bipartite(A, k, K, eigen=eigen, rank=rank, samples=samples, n_jobs=n_jobs,
                    random_state=seed)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    total = sum(A.sparse_quadratic(c.indices, c.weights) for c in out.components)
    return out, total, wall, cpu


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--baseline-time-limit", type=float, default=30.0,
                        help="seconds per component for tpower / spannogram")
    args = parser.parse_args(argv)
    if not (MATRICES / "kos.mtx").exists():
        print(f"{MATRICES} not present; nothing to do")
        return
    k, rank = 10, 4

    print(f"== KOS, K = 8, k = {k}, rank {rank}, {args.samples} samples")
    A = load("kos")
    probe = max(args.samples // 5, 1000)
    for n_jobs in (1, args.n_jobs):
        _, _, wall, cpu = run(A, 8, k, rank, probe, n_jobs)
        print(f"  n_jobs={n_jobs}: {probe} samples in {wall:.2f} s wall, {cpu:.2f} s CPU "
              f"({probe / wall:.0f} samples/s)")
    out, total, wall, cpu = run(A, 8, k, rank, args.samples, args.n_jobs)
    bound, source = min(out.bounds)
    print(f"  bipartite n_jobs={args.n_jobs}: {wall:.2f} s wall, {cpu:.2f} s CPU, "
          f"{out.info['samples'] / wall:.0f} samples/s (target < 20 s on 2 cores)")
    print(f"  total explained variance {total:.2f}; sketch value {out.info['sketch_value']:.2f}")
    print(f"  upper bound {bound:.2f} ({source}); certified ratio {total / bound:.4f}")
    print(f"  {'method':<30}{'total':>14}{'bipartite gain':>16}")
    for name, (solver, options) in baseline_solvers().items():
        t = time.perf_counter()
        base = deflation_total(A, solver, 8, k, options, args.baseline_time_limit)
        label = f"{name} + removal" + (" (rank 2)" if name == "spannogram" else "")
        print(f"  {label:<30}{base:>14.2f}{100 * (total / base - 1):>+15.2f}%"
              f"   ({time.perf_counter() - t:.1f} s)")
    print(f"  {'bipartite (joint)':<30}{total:>14.2f}")

    print(f"\n== K = 5, k = {k}, rank {rank}, {args.samples} samples, vs best published total")
    for name in ("kos", "airline"):
        A = load(name)
        out, total, wall, _ = run(A, 5, k, rank, args.samples, args.n_jobs)
        published = PUBLISHED_TOTAL5[name]
        bound, source = min(out.bounds)
        print(f"  {name:<8} ours {total:12.2f}   published {published:12.2f}   "
              f"{100 * (total / published - 1):+.2f}%   bound {bound:.2f} ({source})   "
              f"{wall:.1f} s")


if __name__ == "__main__":
    main()
