"""Eigen.ceilings: upper bounds on the leading eigenvalues counted with multiplicity, whatever
the pairs are. The inequality behind the unverified ones (Weyl on [[Theta, R^T], [R, C]] with
lambda_max(C) <= trace(C)) is checked against LAPACK on random subspaces that are not
eigenspaces, on nonnegative and mixed-sign matrices, and with repeated eigenvalues."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from spca_cli.matrix import Gram
from spca_cli.spectrum import Eigen, _outside_bound, top_eigenpairs


def _ritz(A, V):
    """Rayleigh-Ritz of the dense A on the orthonormal V: values (largest first), vectors,
    residual norms."""
    theta, Y = np.linalg.eigh(V.T @ A @ V)
    theta, Y = theta[::-1], Y[:, ::-1]
    X = V @ Y
    return theta, X, np.linalg.norm(A @ X - X * theta, axis=0)


def _matrix(rng, n, kind):
    if kind == "nonnegative":
        B = rng.random((n, max(2, n // 3)))
    elif kind == "mixed":
        B = rng.standard_normal((n, max(2, n // 3)))
    else:  # a block repeated: its top eigenvalue three times
        G = rng.random((3, 3))
        B = scipy.linalg.block_diag(G, G, G, rng.random((n - 9, 2)) * 0.3)
    return B @ B.T


@pytest.mark.parametrize("kind", ["nonnegative", "mixed", "repeated"])
@pytest.mark.parametrize("seed", range(25))
def test_ceilings_of_unverified_pairs_bound_every_eigenvalue(kind, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 16))
    A = _matrix(rng, n, kind)
    lam = np.linalg.eigvalsh(A)[::-1]
    m = int(rng.integers(1, 6))
    # a random subspace, or one close to the leading eigenvectors but missing one of them
    V = np.linalg.qr(rng.standard_normal((n, m)))[0]
    if seed % 2:
        U = np.linalg.eigh(A)[1][:, ::-1]
        V = np.linalg.qr(U[:, 1:m + 1] + 1e-3 * rng.standard_normal((n, m)))[0]
    theta, X, r = _ritz(A, V)
    gram = Gram.from_dense(A)
    eigen = Eigen(values=theta, vectors=X, residuals=r, verified=0,
                  outside=_outside_bound(gram, theta))
    for i in range(n):
        assert eigen.ceiling(i) >= lam[i] * (1 - 1e-12) - 1e-12, (i, eigen.ceiling(i), lam[i])
    assert np.all(np.diff(eigen.ceilings) <= 0)


@pytest.mark.parametrize("method", ["krylov", "arpack", "dense"])
@pytest.mark.parametrize("seed", range(6))
def test_ceilings_of_every_method_bound_the_eigenvalues_of_a_repeated_block(method, seed):
    """Three copies of a block's eigenvalue among 40 words: the ceilings of every method's
    pairs, verified or not, are at least the true eigenvalues (LAPACK)."""
    rng = np.random.default_rng(seed)
    A = _matrix(rng, 40, "repeated")
    lam = np.linalg.eigvalsh(A)[::-1]
    eigen = top_eigenpairs(Gram.from_dense(A), 6, method=method, random_state=seed)
    for i in range(8):
        assert eigen.ceiling(i) >= lam[i] * (1 - 1e-9), (method, i)


def test_cold_block_method_knows_its_pairs_warm_starts_and_arpack_none():
    rng = np.random.default_rng(0)
    A = _matrix(rng, 40, "repeated")
    gram = Gram.from_dense(A)
    cold = top_eigenpairs(gram, 6, method="krylov")
    assert cold.verified == 6
    assert top_eigenpairs(gram, 6, method="dense").verified is None  # (LAPACK: all)
    arpack = top_eigenpairs(gram, 6, method="arpack")
    assert arpack.verified == 0 and arpack.unverified
    view = gram.remove([0])
    warm = top_eigenpairs(view, 3, method="krylov", start=cold.basis)
    assert warm.verified == 0


def test_outside_bound_is_the_trace_left_over():
    A = np.diag([5.0, 3.0, 1.0, 1.0])
    gram = Gram.from_dense(A)
    assert _outside_bound(gram, np.array([5.0, 3.0])) == pytest.approx(2.0)
