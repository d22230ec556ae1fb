"""Timings of the spannogram solver on the airline tweets (K = 10, 5 components, remove deflation).

Run with ``python -m bench.bench_spannogram`` (needs ../shared/data/matrices/airline.mtx). Prints
the first-call compile (or cache-load) time, then for ranks 1, 2 and 3 and each component: solve
seconds (eigenpairs excluded), surviving words, distinct candidates, intersection points, the
value x^T A' x, the certified bound and the total solve time; then the first component next to
the best published value (PROVENANCE.md: x^T A x = 3821.31 for k = 10).
"""

from __future__ import annotations

from bench._data import matrices_folder

import argparse
import time

import scipy.io
import scipy.sparse as sp

from spca_cli.matrix import Gram
from spca_cli.solvers.spannogram import spannogram, warm_up
from spca_cli.spectrum import top_eigenpairs

MATRIX = matrices_folder() / "airline.mtx"
PUBLISHED_FIRST = 3821.31


def run(A0, k, components, rank):
    A = A0
    rows, solve_total, first = [], 0.0, None
    for c in range(components):
        eigen = top_eigenpairs(A, rank + 1)
        t = time.perf_counter()
        out = spannogram(A, k, eigen=eigen, rank=rank)
        dt = time.perf_counter() - t
        solve_total += dt
        value = A0.sparse_quadratic(out.indices, out.weights)
        first = value if first is None else first
        bound = out.bounds[0][0] if out.bounds else float("nan")
        rows.append((c + 1, dt, out.info["surviving_words"], out.info["candidates"],
                     out.info["intersections"], value, bound))
        A = A.remove(out.indices)
    return rows, solve_total, first


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--components", type=int, default=5)
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args(argv)
    if not MATRIX.exists():
        print(f"{MATRIX} not present; nothing to do")
        return
    t = time.perf_counter()
    warm_up()
    print(f"first call (compile or cache load): {time.perf_counter() - t:.2f} s")
    S = sp.csr_array(scipy.io.mmread(str(MATRIX)))
    A0 = Gram.from_documents(S)
    print(f"airline: {S.shape[0]} documents, {S.shape[1]} words, k={args.k}, "
          f"{args.components} components, remove deflation")
    firsts = {}
    for rank in args.ranks:
        rows, total, first = run(A0, args.k, args.components, rank)
        firsts[rank] = first
        print(f"\nrank {rank}")
        print(f"{'comp':>4} {'seconds':>8} {'surviving':>9} {'candidates':>10} {'points':>10} "
              f"{'x^T A x':>10} {'bound':>10}")
        for c, dt, surv, cand, pts, value, bound in rows:
            print(f"{c:>4} {dt:>8.3f} {surv:>9} {cand:>10} {pts:>10} {value:>10.2f} {bound:>10.2f}")
        print(f"total solve seconds: {total:.3f}")
    print(f"\nfirst component vs published {PUBLISHED_FIRST}:")
    for rank, value in firsts.items():
        flag = "matches or beats" if value >= PUBLISHED_FIRST - 0.005 else "below"
        print(f"  rank {rank}: {value:.2f} ({flag})")
    generated(args.k, args.components)


def generated(k, components, documents=100_000, words=50_000):
    """A target: a generated corpus, rank 3, under 10 s of solve time."""
    from spca_cli.generate import zipf_corpus

    corpus = zipf_corpus(documents, words, topics=8, words_per_document=15, random_state=0)
    A0 = Gram.from_documents(corpus.S)
    print(f"\ngenerated Zipf corpus: {documents:,} documents, {words:,} words, "
          f"{corpus.S.nnz:,} nonzeros, k={k}, {components} components, rank 3")
    rows, total, _ = run(A0, k, components, 3)
    print(f"{'comp':>4} {'seconds':>8} {'surviving':>9} {'candidates':>10}")
    for c, dt, surv, cand, _pts, _value, _bound in rows:
        print(f"{c:>4} {dt:>8.3f} {surv:>9} {cand:>10}")
    print(f"total solve seconds: {total:.3f} (target < 10 s)")


if __name__ == "__main__":
    main()
