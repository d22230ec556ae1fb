"""Timings and values of the ``tpower`` and ``greedy`` solvers on real and generated corpora.

Run with ``python -m bench.bench_tpower``. Prints, for KOS and the airline tweets (when
../shared/data is present) and for a generated 100k-word Zipf corpus:

* the first k=10 component's x^T A x next to the best published figure (PROVENANCE.md);
* solve seconds for 5 components with ``remove`` deflation (eigenpairs excluded, numba
  kernels compiled beforehand).
"""

from __future__ import annotations

from bench._data import matrices_folder

import argparse
import os
import time
import warnings

import numpy as np
import scipy.io
import scipy.sparse as sp

from spca_cli.matrix import Gram
from spca_cli.solvers.greedy import greedy
from spca_cli.solvers.threshold import threshold
from spca_cli.solvers.tpower import tpower
from spca_cli.spectrum import top_eigenpairs

MATRICES = matrices_folder()
PUBLISHED = {"airline": 3821.31, "kos": 73173.24}  # best published k=10 first component
PUBLISHED_TOTAL5 = {"airline": 7359.19, "kos": 132666.68}  # best total of 5, disjoint supports


def zipf_corpus(n_docs=200_000, n_words=100_000, mean_length=30, n_topics=20, seed=0):
    """A seeded document-word count matrix: Zipf background words plus planted topics.

    Every document draws Poisson(mean_length) + 1 tokens; a word of rank r has probability
    proportional to 1 / (r + 2)^1.05. Half the documents also have a topic (one of
    ``n_topics`` sets of 15 mid-frequency words) that supplies 30 % of their tokens, so the
    corpus has sparse structure for the solvers to find.
    """
    rng = np.random.default_rng(seed)
    lengths = rng.poisson(mean_length, n_docs) + 1
    docs = np.repeat(np.arange(n_docs), lengths)
    p = 1.0 / (np.arange(n_words) + 2.0) ** 1.05
    words = np.searchsorted(np.cumsum(p / p.sum()), rng.random(docs.size))
    words = np.minimum(words, n_words - 1)
    topics = rng.choice(np.arange(200, 5000), size=(n_topics, 15), replace=False)
    doc_topic = np.where(rng.random(n_docs) < 0.5, rng.integers(0, n_topics, n_docs), -1)
    t = doc_topic[docs]
    use = (t >= 0) & (rng.random(docs.size) < 0.3)
    words[use] = topics[t[use], rng.integers(0, 15, int(use.sum()))]
    S = sp.coo_array((np.ones(docs.size), (docs, words)), shape=(n_docs, n_words)).tocsr()
    S.sum_duplicates()
    return S


def deflation_loop(solver, A, k, components, **options):
    """Solve seconds, wall and CPU (eigen excluded), and values of ``components`` components
    with remove deflation: ``out = solver(A, k, eigen=top_eigenpairs(A, 2)); A = A.remove(...)``.
    """
    wall, cpu, values = 0.0, 0.0, []
    for _ in range(components):
        eigen = top_eigenpairs(A, 2)
        t0, c0 = time.perf_counter(), time.process_time()
        out = solver(A, k, eigen=eigen, **options)
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        values.append(out.value)
        A = A.remove(out.indices)
    return wall, cpu, values


def report(name, S, k=10, components=5):
    A = Gram.from_documents(S)
    eigen = top_eigenpairs(A, 2)
    print(f"\n== {name}: {S.shape[0]} documents x {S.shape[1]} words, {S.nnz} nonzeros ==")
    print(f"lambda_1 = {eigen.values[0]:.2f}   threshold (k={k}) = "
          f"{threshold(A, k, eigen=eigen).value:.2f}")
    first = {}
    for label, solver, options in (("tpower", tpower, {}),
                                   ("tpower (plain Algorithm 1)", tpower,
                                    {"local_search": False}),
                                   ("greedy", greedy, {})):
        t0, c0 = time.perf_counter(), time.process_time()
        out = solver(A, k, eigen=eigen, **options)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        first[label] = out.value
        extra = ""
        if "starts" in out.info:
            extra = "  starts: " + ", ".join(f"{s}={v:.2f}" for s, v in out.info["starts"].items())
        print(f"{label:28s} first component {out.value:12.2f}  ({dt:.3f} s wall, {dc:.3f} s CPU)"
              f"{extra}")
        wall, cpu, values = deflation_loop(solver, A, k, components, **options)
        each = ", ".join(f"{v:.1f}" for v in values)
        print(f"{'':28s} {components} components, remove deflation: solve {wall:.3f} s wall, "
              f"{cpu:.3f} s CPU, total {sum(values):.2f}  ({each})")
    if name in PUBLISHED:
        print(f"published best first component {PUBLISHED[name]:.2f}, "
              f"best total of 5 {PUBLISHED_TOTAL5[name]:.2f}")
    return first


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=200_000)
    parser.add_argument("--words", type=int, default=100_000)
    args = parser.parse_args(argv)
    warnings.simplefilter("always")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores "
          "(other jobs inflate wall time, not CPU time)")
    # compile (or load from the numba cache) every kernel on a tiny corpus first
    tiny = Gram.from_documents(sp.random(50, 30, density=0.3, random_state=0, format="csr"))
    tpower(tiny, 3, eigen=top_eigenpairs(tiny, 1))
    greedy(tiny, 3)
    for name in ("airline", "kos"):
        path = MATRICES / f"{name}.mtx"
        if path.exists():
            report(name, sp.csr_array(scipy.io.mmread(path)))
        else:
            print(f"{path} not present; skipping {name}")
    t0 = time.perf_counter()
    S = zipf_corpus(args.docs, args.words)
    print(f"\n(generated the Zipf corpus in {time.perf_counter() - t0:.1f} s)")
    report(f"zipf-{args.words // 1000}k", S)


if __name__ == "__main__":
    main()
