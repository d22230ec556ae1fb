"""Leading eigenpairs of A (or of a deflated view) and the low-rank factor V = U L^(1/2).

Small matrices (n <= ``DENSE_LIMIT``) are decomposed densely with LAPACK (exact to rounding).
Larger ones go through SciPy's LOBPCG on the implicit operator (A is never formed): a block
method, so every iteration multiplies a block of a few vectors by A at once, one pass over S and
one over S^T, about as much as three or four single products on a real corpus. About twenty
block products reach residuals of 1e-10 trace(A) (ARPACK's single-vector Lanczos needs about
forty single products for the same accuracy). Each eigenpair comes with its residual norm
||A v - theta v||, which the bounds module adds to any bound that uses an eigenvalue, so the
certificates stay honest about the eigensolver's accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass

import warnings

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import LinearOperator, lobpcg
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from spca_cli.errors import ConvergenceWarning

__all__ = ["Eigen", "top_eigenpairs", "low_rank_factor", "DENSE_LIMIT"]

DENSE_LIMIT = 1500
_EXTRA = 3  # block width beyond the p pairs asked for: clusters converge together
_MAX_ITER = 200  # LOBPCG iterations before giving up on the tolerance (a warning is issued)


@dataclass(frozen=True)
class Eigen:
    """The ``p`` leading eigenpairs of a symmetric PSD operator.

    Attributes
    ----------
    values : ndarray of shape (p,)
        Eigenvalues, largest first, clipped at 0 (A is PSD; tiny negatives are rounding).
    vectors : ndarray of shape (n, p)
        Orthonormal eigenvectors, each signed so that its largest-magnitude entry is positive.
    residuals : ndarray of shape (p,)
        ||A v_i - lambda_i v_i||, an error bar on each eigenvalue.
    products : int
        Block products A X the solver used (0 for the dense path). A block of a few columns
        costs one pass over S and one over S^T, so it counts once, whatever its width.
    """

    values: np.ndarray
    vectors: np.ndarray
    residuals: np.ndarray
    products: int = 0

    def value(self, i):
        """lambda_{i+1} (0-based i), or 0.0 beyond what was computed and beyond n."""
        return float(self.values[i]) if i < len(self.values) else 0.0


def _sign_fix(vectors):
    # flip eigenvectors' sign to enforce deterministic output: largest |entry| positive
    idx = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[idx, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1.0
    return vectors * signs


def top_eigenpairs(A, p, *, random_state=0, tol=1e-10):
    """The ``p`` largest eigenpairs of the :class:`~spca_cli.matrix.Gram` operator ``A``.

    Parameters
    ----------
    A : Gram
        The (possibly deflated) operator.
    p : int
        How many eigenpairs; ``p`` larger than n returns n of them.
    random_state : int, RandomState or None, default=0
        Seeds the random part of the start block; pass an int for reproducible results.
    tol : float, default=1e-10
        The iteration stops when every residual ||A v_i - theta_i v_i|| <= tol * trace(A)
        (trace(A) >= lambda_1 is known before any product, from the diagonal).

    Returns
    -------
    Eigen
    """
    n = A.n
    p = int(min(p, n))
    if n <= DENSE_LIMIT or p >= n - 1 or n < 5 * (p + _EXTRA):
        dense = A.to_dense()
        # eigh returns ascending eigenvalues; we keep the top p and reverse them to largest first
        vals, vecs = scipy.linalg.eigh(dense, subset_by_index=[n - p, n - 1])
        vals, vecs = vals[::-1], vecs[:, ::-1]
        products = 0
    else:
        rng = check_random_state(random_state)
        count = [0]

        def matmat(X):
            count[0] += 1
            return A.matmat(X)

        op = LinearOperator(A.shape, matvec=matmat, matmat=matmat, dtype=np.float64)
        start = rng.standard_normal((n, p + _EXTRA))
        trace = float(A.diagonal().sum())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # the small dense steps of LOBPCG (Rayleigh-Ritz on a few dozen columns) run on one
            # BLAS thread: two gain nothing at this size, and their spin-waits cost on a busy
            # machine
            with threadpool_limits(1, user_api="blas"):
                vals, vecs = lobpcg(op, start, largest=True, tol=tol * max(trace, 1e-300),
                                    maxiter=_MAX_ITER)
        # LOBPCG returns its block in no promised order; we want the top p, largest first
        order = np.argsort(vals)[::-1][:p]
        vals, vecs = vals[order], vecs[:, order]
        products = count[0]
        if caught:
            warnings.warn(f"eigensolver: {caught[0].message}; the bounds add the residuals, so "
                          "they stay valid but may be loose", ConvergenceWarning, stacklevel=2)
    vecs = _sign_fix(np.ascontiguousarray(vecs))
    residuals = np.linalg.norm(A.matmat(vecs) - vecs * vals, axis=0)
    return Eigen(values=np.maximum(vals, 0.0), vectors=vecs, residuals=residuals,
                 products=products)


def low_rank_factor(eigen, d):
    """V = U_d L_d^(1/2) of shape (n, d), so that A_d = V V^T."""
    d = min(d, len(eigen.values))
    return np.ascontiguousarray(eigen.vectors[:, :d] * np.sqrt(eigen.values[:d]))
