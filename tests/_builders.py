"""Small matrices shared by the solver tests (planted answers, a structured count corpus)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from spca_cli.matrix import Gram

# best published first component, k = 10, A = S^T S (../shared/data/PROVENANCE.md)
PUBLISHED = {"airline_mtx": 3821.31, "kos_mtx": 73173.24}


def planted(n=60, k=10, seed=0):
    """A = 10 u u^T + a small PSD noise, u k-sparse: the answer is supp(u)."""
    rng = np.random.RandomState(seed)
    support = np.sort(rng.choice(n, k, replace=False))
    u = np.zeros(n)
    u[support] = rng.uniform(0.5, 1.5, k) * rng.choice([-1, 1], k)
    u /= np.linalg.norm(u)
    G = rng.standard_normal((n, 3 * n))
    A = 10 * np.outer(u, u) + G @ G.T / (3 * n) * 0.5
    return Gram.from_dense(A), support


def small_corpus(m=300, n=120, seed=1):
    """A small document-word count matrix with some structure (a few correlated word blocks)."""
    rng = np.random.RandomState(seed)
    S = sp.random(m, n, density=0.05, random_state=rng, format="csr",
                  data_rvs=lambda s: rng.randint(1, 4, s).astype(float))
    block = rng.choice(n, 8, replace=False)
    docs = rng.choice(m, 60, replace=False)
    S = S.tolil()
    for d in docs:
        for j in block[rng.rand(8) < 0.7]:
            S[d, j] = S[d, j] + 2.0
    return sp.csr_array(S.tocsr())


def dense_x(A, out):
    x = np.zeros(A.n)
    x[out.indices] = out.weights
    return x
