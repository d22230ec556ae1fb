"""The block Krylov method on small matrices (the path of ``--eigensolver krylov`` below the
dense limit), where a block after a thick restart can have more columns than the dimensions
left outside the basis: the basis stays orthonormal, Ritz values stay Rayleigh quotients, and
no copy of a repeated eigenvalue is lost (so the total bound stays above what disjoint supports
attain). Matrices are generated: these are properties of the eigensolver, not of any text.
"""

from __future__ import annotations

import numpy as np
import pytest

from spca_cli.matrix import Gram
from spca_cli.spectrum import first_call_tolerances, top_eigenpairs
from spca_cli.topics import run_topics
from test_first_call_tolerances import _best_disjoint_total
from test_topics import matrix_input


def _tail_cluster():
    """22 words: eigenvalues 10, 7, six within 1e-4 of 3, the rest near 1, random eigenvectors."""
    rng = np.random.default_rng(365)
    n = 22
    lam = np.concatenate([[10.0, 7.0], 3.0 + 1e-4 * rng.standard_normal(6),
                          1.0 + 0.01 * rng.random(n)])[:n]
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    A = (Q * lam) @ Q.T
    return 0.5 * (A + A.T)


@pytest.mark.parametrize("tol", ["first call", 1e-5])
def test_krylov_on_a_small_matrix_keeps_its_basis_orthonormal(tol):
    """Five pairs of a 22-word matrix (block of 8, restart keeps 16): a block after the restart
    may hold no more columns than the dimensions left outside the basis (23 columns in 22
    dimensions would raise a ValueError, or give theta_1 = 10.39 above lambda_1 = 10 with Ritz
    vectors far from orthonormal). Orthonormal vectors, Ritz values never above the
    eigenvalues, each within its residual of them, and residuals within their tolerances."""
    A = _tail_cluster()
    tols = first_call_tolerances(5, 4) if tol == "first call" else np.full(5, tol)
    e = top_eigenpairs(Gram.from_dense(A), 5, tol=tols, method="krylov", random_state=0)
    lam = np.linalg.eigvalsh(A)[::-1][:5]
    assert np.abs(e.vectors.T @ e.vectors - np.eye(5)).max() < 1e-12
    assert np.all(e.values <= lam + 1e-12 * lam[0])
    assert np.all(np.abs(e.values - lam) <= e.residuals + 1e-12 * lam[0])
    assert np.all(e.residuals <= tols * e.values[0])


def _repeated_two_word_blocks(seed, n=22, copies=4):
    """Eigenvalue 5 and ``copies`` times 2 on eigenvectors of two words each (rotated 2 x 2
    blocks, words permuted), the rest below 0.5: four disjoint 2-word supports attain the Ky
    Fan sum 5 + 2 + 2 + 2."""
    rng = np.random.default_rng(seed)
    lam = np.concatenate([[5.0], np.repeat(2.0, copies),
                          np.sort(rng.random(n - 1 - copies) * 0.5)[::-1]])
    Q = np.zeros((n, n))
    for b in range(n // 2):
        t = rng.uniform(0, np.pi)
        Q[2 * b:2 * b + 2, 2 * b:2 * b + 2] = [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]
    Q = Q[:, list(range(0, n, 2)) + list(range(1, n, 2))]
    A = (Q * lam) @ Q.T
    P = rng.permutation(n)
    return 0.5 * (A + A.T)[np.ix_(P, P)]


@pytest.mark.parametrize("coordinates", [True, False])
def test_repeated_eigenvalue_keeps_the_total_bound_above_the_best_total(monkeypatch,
                                                                         coordinates):
    """Four topics of 2 words with the krylov eigensolver, eigenvalue 2 four times: a basis that
    lost orthogonality would lose copies of it (5, 2, 2, 0.46 reported) and put the total bound
    (9.48) below the 11 the four blocks attain. The bound is above the brute-force total and
    the reported eigenvalues are the true ones."""
    if not coordinates:  # the first call from a random block
        monkeypatch.setattr(Gram, "column_room", lambda self: 0)
    A = _repeated_two_word_blocks(0)
    result = run_topics(matrix_input(A), solver="spannogram", k=2, n_components=4, rank=2,
                        eigensolver="krylov", random_state=0)
    best = _best_disjoint_total(A, 2, 4)
    assert best == pytest.approx(11.0, rel=1e-12)
    assert result.total_bound.value >= best * (1 - 1e-12)
    assert result.total_explained_variance <= best * (1 + 1e-12)
    np.testing.assert_allclose(result.eigenvalues, [5.0, 2.0, 2.0, 2.0], rtol=1e-3)
