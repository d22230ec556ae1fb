"""Eigen.ceiling(i) against the true lambda_{i+1} (LAPACK) on hostile views: exactly repeated
eigenvalues, clusters within 1e-12, matrices PSD only up to -1e-10..-1e-9 of lambda_max, zero
rows, rank 1 and 2, entries from 1e-8 to 1e8, integer counts; undeflated, remove and
projection views.

* Ritz pairs of random subspaces, taken as unverified (``verified=0``): the ceilings are then a
  proof (Weyl and the trace of the complement), also for subspaces partly or wholly on removed
  words, where the complement holds the PSD margin once per active word (a 5-word c (J - I)
  block, eigenvalues 4c and -c four times, with two Ritz vectors on removed words: the
  complement's trace plus the margin three times gave 3c, below lambda_1 = 4c).
* Every method of :func:`~spca_cli.spectrum.top_eigenpairs` from a cold or coordinate start at
  the tolerances of a topics run's first call.
* The later calls of a topics run (a warm start from the last Ritz block, or the carried basis
  of a remove view), at ``CANDIDATE_TOL``, including the seeds where such a call ended with
  converged residuals after a product or two and missed an eigenvalue: those calls count no
  pair as verified, so their ceilings rest on the trace left outside them.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from spca_cli import bounds
from spca_cli.matrix import Gram
from spca_cli.spectrum import (CANDIDATE_TOL, TOPICS_TOL, Eigen, _outside_bound,
                               first_call_tolerances, top_eigenpairs)

RTOL = 1e-12


def _assert_ceilings(eigen, view, where, scale=None):
    """Every ceiling at or above its eigenvalue, to rounding at ``scale`` (the largest
    |eigenvalue| of the undeflated matrix: a projection view of a low-rank matrix is that
    rounding)."""
    lam = np.linalg.eigvalsh(view.to_dense())[::-1]
    if scale is None:
        scale = float(np.max(np.abs(lam), initial=0.0))
    for i in range(lam.size):
        floor = lam[i] - RTOL * (scale + abs(lam[i]))
        assert eigen.ceiling(i) >= floor, (where, i, eigen.ceiling(i), lam[i], eigen.method,
                                           eigen.verified)


# ---------------------------------------------------------------------- matrices
def hostile(rng, n):
    """(kind, A, S): a hostile symmetric matrix of order n, and S with A = S^T S when it has
    one."""
    kind = str(rng.choice(["blocks", "cluster", "diag", "near_psd", "lowrank", "counts",
                           "range", "mixed"]))
    nonnegative = rng.random() < 0.5

    def factor(rows, cols):
        return rng.random((rows, cols)) if nonnegative else rng.standard_normal((rows, cols))

    if kind in ("blocks", "cluster"):
        G = factor(3, int(rng.integers(1, 4)))
        blocks = [G * (1 + i * 1e-13 if kind == "cluster" else 1.0)
                  for i in range(int(rng.integers(2, 8)))]
        used = sum(b.shape[1] for b in blocks)
        while used < n:
            w = min(n - used, int(rng.integers(1, 5)))
            blocks.append(factor(w + 1, w) * rng.uniform(0.1, 1.2))
            used += w
        S = sp.block_diag(blocks).toarray()[:, rng.permutation(n)]
    elif kind == "diag":
        d = np.sort(rng.random(n))[::-1] * 10
        d[:int(rng.integers(2, 6))] = d[0]
        d[rng.random(n) < 0.1] = 0.0  # words that never occur
        S = np.diag(np.sqrt(d))[:, rng.permutation(n)]
    elif kind == "near_psd":
        Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
        lam = np.sort(rng.random(n) * 10)[::-1]
        lam[1:int(rng.integers(1, 5))] = lam[0]
        lam[n - int(rng.integers(1, n - 2)):] = -10 ** rng.uniform(-10, -9) * lam[0]
        A = (Q * lam) @ Q.T
        return kind, 0.5 * (A + A.T), None
    elif kind == "lowrank":
        V = factor(n, int(rng.integers(1, 3)))
        V[rng.random(V.shape) < 0.5] = 0.0
        S = V.T.copy()
    elif kind == "counts":
        S = rng.poisson(0.5, (int(rng.integers(n // 2, 3 * n)), n)).astype(float)
    elif kind == "range":
        S = factor(n + 3, n) * 10 ** rng.uniform(-4, 4, n)
    else:
        S = rng.standard_normal((int(rng.integers(2, n)), n))
    return kind, S.T @ S, S


def gram_of(rng, A, S):
    if S is not None and rng.random() < 0.5:
        return Gram.from_documents(sp.csr_array(S))
    return Gram.from_dense(A)


def deflated(rng, view, eigen, k, deflation):
    """The view with a k-word topic taken out: the k largest |v_1| entries (as threshold picks
    them) or k random active words; its x is v_1 on those words."""
    active = np.flatnonzero(view.active())
    if rng.random() < 0.6:
        idx = np.argsort(-np.abs(eigen.vectors[:, 0]) * view.active())[:k]
    else:
        idx = rng.choice(active, k, replace=False)
    if deflation == "remove":
        return view.remove(idx)
    x = np.zeros(view.n)
    x[idx] = eigen.vectors[idx, 0] if np.any(eigen.vectors[idx, 0]) else 1.0
    return view.project_out(x)


# ---------------------------------------------------------------------- random subspaces
def test_complement_holds_the_margin_of_every_active_word():
    c = 1e-9
    A = np.zeros((8, 8))
    A[:5, :5] = c * (np.ones((5, 5)) - np.eye(5))  # eigenvalues 4c, -c (four times)
    A[5:, 5:] = np.diag([3.0, 2.0, 1.0])
    view = Gram.from_dense(A).remove([5, 6, 7])
    X = np.zeros((8, 2))
    X[5, 0] = X[6, 1] = 1.0  # Ritz vectors on removed words: values 0, residuals 0
    theta = np.zeros(2)
    eigen = Eigen(values=theta, vectors=X, residuals=np.zeros(2), verified=0,
                  outside=_outside_bound(view, theta))
    assert eigen.ceiling(0) >= 4 * c
    assert eigen.known == 0  # nothing above what the complement may hold


@pytest.mark.parametrize("seed", range(60))
def test_ritz_pairs_of_random_subspaces_never_ceil_below_an_eigenvalue(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 24))
    kind, A, S = hostile(rng, n)
    view = gram_of(rng, A, S)
    scale = float(np.max(np.abs(np.linalg.eigvalsh(view.to_dense()))))
    deflation = str(rng.choice(["remove", "projection"]))  # (a run deflates one way)
    for _ in range(int(rng.integers(0, 3))):  # a deflated view, sometimes
        e = top_eigenpairs(view, 2, method="dense")
        if np.count_nonzero(view.active()) <= 5:
            break
        view = deflated(rng, view, e, int(rng.integers(1, 4)), deflation)
    D = view.to_dense()
    m = int(rng.integers(1, 7))
    how = rng.random()
    B = rng.standard_normal((n, m))
    if how < 0.3:  # on removed words as much as possible
        B[view.active()] *= 1e-3
    elif how < 0.6:  # near the leading eigenvectors, one of them left out
        U = np.linalg.eigh(D)[1][:, ::-1]
        B = U[:, 1:m + 1] + 1e-4 * B[:, :min(m, n - 1)]
    V = np.linalg.qr(B)[0]
    theta, Y = np.linalg.eigh(V.T @ D @ V)
    theta, Y = theta[::-1], Y[:, ::-1]
    X = V @ Y
    residuals = np.linalg.norm(D @ X - X * theta, axis=0)
    eigen = Eigen(values=np.maximum(theta, 0.0), vectors=X, residuals=residuals, verified=0,
                  outside=_outside_bound(view, theta))
    _assert_ceilings(eigen, view, kind, scale)


# ---------------------------------------------------------------------- cold starts
@pytest.mark.parametrize("seed", range(40))
def test_first_call_ceilings_of_every_method(seed):
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(10, 70))
    kind, A, S = hostile(rng, n)
    view = gram_of(rng, A, S)
    for method in ("krylov", "arpack", "dense", "auto"):
        p = int(rng.integers(2, min(n - 1, 10)))
        sharp = int(rng.integers(1, p + 1))
        coordinates = bounds.first_exact_words(view) if rng.random() < 0.6 else None
        eigen = top_eigenpairs(view, p, method=method, tol=first_call_tolerances(p, sharp),
                               coordinates=coordinates, random_state=seed)
        _assert_ceilings(eigen, view, (kind, method))


# ---------------------------------------------------------------------- later calls
def _later_calls(seed):
    """A topics run's sequence of eigen calls on one hostile matrix: the first from the
    coordinates, then one per deflated view from the last call's Ritz block and carry at
    ``CANDIDATE_TOL``, refined at ``TOPICS_TOL`` now and then; each checked."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(14, 90))
    kind, A, S = hostile(rng, n)
    method = str(rng.choice(["krylov", "arpack", "auto", "dense"], p=[0.45, 0.35, 0.1, 0.1]))
    view = gram_of(rng, A, S)
    p0 = int(rng.integers(2, 8))
    rank = int(rng.integers(1, 4))
    deflation = str(rng.choice(["remove", "projection"]))
    coordinates = bounds.first_exact_words(view) if rng.random() < 0.7 else None
    eigen = top_eigenpairs(view, p0, method=method, coordinates=coordinates, random_state=seed,
                           tol=first_call_tolerances(p0, min(p0, rank + 1)))
    scale = float(np.max(np.abs(np.linalg.eigvalsh(view.to_dense()))))
    _assert_ceilings(eigen, view, (kind, method, "first"), scale)
    k = int(rng.integers(2, 6))
    for step in range(int(rng.integers(1, 6))):
        if np.count_nonzero(view.active()) <= k + 2:
            break
        source, view = view, deflated(rng, view, eigen, k, deflation)
        p = max(rank + 1, 2)
        eigen = top_eigenpairs(view, p, method=method, tol=CANDIDATE_TOL, start=eigen.basis,
                               previous=(source, eigen), random_state=seed)
        _assert_ceilings(eigen, view, (kind, method, deflation, step + 1), scale)
        if rng.random() < 0.3:
            eigen = top_eigenpairs(view, p, method=method, tol=TOPICS_TOL, start=eigen.basis,
                                   previous=(view, eigen), random_state=seed)
            _assert_ceilings(eigen, view, (kind, method, deflation, step + 1, "refined"), scale)


# A later call that ends with converged residuals one or two block products after a warm start
# (the last call's Ritz block and max(3, p) random columns) or a carried basis counted its pairs
# as verified (Eigen.verified = min(p, random columns)), but the random columns had not been
# multiplied often enough to bring out an eigenvector the start lacks: one that projecting a
# topic out (or removing its words) brought up, or one below the last call's tolerance.
# theta_i + r_i then lay below lambda_i, and a topic's lambda_1 bound below what another support
# attains (tests/test_bounds_brute_force_views.py). ARPACK starts every call from the same
# positive vector v0: once a topic whose weights are its Ritz vector in a repeated eigenspace
# (v0's part there) is projected out, the copy left is orthogonal to v0, and ARPACK reported
# the next eigenvalue as lambda_1 (its one verified pair). Found by running the seeds 0-1499.
KRYLOV_MISSES = {
    30: "krylov warm start, projection: lambda_2",
    108: "krylov warm start, projection: theta_2 + r_2 = 129 < lambda_2 = 218",
    112: "krylov warm start, projection: lambda_1 8.61 missed (ceiling 6.33)",
    149: "krylov warm start, projection: lambda_4",
    279: "krylov warm start, projection: lambda_3",
    380: "krylov warm start, projection: lambda_2",
    1100: "krylov warm start, projection: lambda_3",
    1196: "krylov warm start, projection: lambda_3 3.76 missed (ceiling 2.98)",
    1252: "krylov warm start, projection: lambda_4",
    1367: "krylov carried basis, remove: lambda_4 6.26 missed (ceiling 6.07)",
}
ARPACK_MISSES = {seed: "arpack, projection: lambda_1 missed"
                 for seed in (24, 61, 209, 323, 594, 745, 784, 797, 881, 921, 942, 966, 1256,
                              1349, 1457)}


# seeds where a later call once missed an eigenvalue (before such calls counted no pair as
# verified): kept as plain tests
_ONCE_MISSED = sorted(set(KRYLOV_MISSES) | set(ARPACK_MISSES))


@pytest.mark.parametrize("seed", [s for s in range(50) if s not in _ONCE_MISSED])
def test_later_calls_ceilings(seed):
    _later_calls(seed)


@pytest.mark.parametrize("seed", _ONCE_MISSED)
def test_later_calls_that_missed_an_eigenvalue(seed):
    _later_calls(seed)
