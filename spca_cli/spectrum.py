"""Leading eigenpairs of A (or of a deflated view) and the low-rank factor V = U L^(1/2).

Small matrices (n <= ``DENSE_LIMIT``) are decomposed densely with LAPACK (exact to rounding).
Larger ones go through a block Krylov method on the implicit operator (A is never formed):
every step multiplies a block of a few vectors by A at once, which costs one pass over S and
S^T, about as much as three or four single products on a real corpus, and a Rayleigh-Ritz step
on everything gathered so far picks the best approximations. About ten block products reach
residuals of 1e-10 lambda_1 from a random start, and the Ritz vectors are kept with the
operator's shared data, so the next call on a deflated view of the same A (the next component)
starts from them and needs only a few more. Each eigenpair comes with its residual norm
||A v - theta v||, which the bounds module adds to any bound that uses an eigenvalue, so the
certificates stay honest about the eigensolver's accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

__all__ = ["Eigen", "top_eigenpairs", "low_rank_factor", "DENSE_LIMIT"]

DENSE_LIMIT = 1500
_START_KEY = "eigen_start"  # where the Ritz vectors of the last call are kept (A._shared)
_EXTRA = 3  # block width beyond the p pairs asked for: clusters converge together
_MAX_BLOCKS = 6  # basis size, in blocks, before a thick restart
_MAX_PRODUCTS = 300  # block products before giving up on the tolerance (a warning is issued)


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
        The iteration stops when every residual ||A v_i - theta_i v_i|| <= tol * theta_1.

    Returns
    -------
    Eigen

    Notes
    -----
    The start block is the Ritz vectors of the previous call on any view of the same A (masked
    to this view's words), completed with random vectors. Results therefore depend on the order
    of calls, but only within ``tol``; a fixed sequence of calls (as ``spca topics`` makes) is
    reproducible to the bit.
    """
    n = A.n
    p = int(min(p, n))
    if n <= DENSE_LIMIT or p >= n - 1:
        dense = A.to_dense()
        # eigh returns ascending eigenvalues; we keep the top p and reverse them to largest first
        vals, vecs = scipy.linalg.eigh(dense, subset_by_index=[n - p, n - 1])
        vals, vecs = vals[::-1], vecs[:, ::-1]
        vecs = _sign_fix(np.ascontiguousarray(vecs))
        residuals = np.linalg.norm(A.matmat(vecs) - vecs * vals, axis=0)
        return Eigen(values=np.maximum(vals, 0.0), vectors=vecs, residuals=residuals, products=0)
    rng = check_random_state(random_state)
    start = None
    shared = getattr(A, "_shared", None)
    if shared is not None and _START_KEY in shared:
        start = shared[_START_KEY]
        if A.mask is not None:
            start = start * A.mask[:, None]
    # the small dense steps (Gram-Schmidt, Cholesky, eigh of a 100 x 100 matrix) run on one BLAS
    # thread: two threads gain nothing at this size, and on a busy machine their spin-waits
    # made a 100 x 100 eigh take 0.1 s instead of 1 ms
    with threadpool_limits(1, user_api="blas"):
        vals, vecs, residuals, products, ritz = _block_krylov(A.matmat, n, p, rng=rng, tol=tol,
                                                              start=start)
    if shared is not None:
        shared[_START_KEY] = ritz
    vecs = _sign_fix(vecs)
    return Eigen(values=np.maximum(vals, 0.0), vectors=vecs, residuals=residuals,
                 products=products)


def _orthonormal(W, Q, scale):
    """Orthonormal columns spanning W minus its part in span(Q) (Q orthonormal, may be None);
    columns that vanish (relative to ``scale``) are dropped.

    Two passes of block Gram-Schmidt against Q, then Cholesky QR twice (CholQR2: a tall thin
    QR in two small Gram matrices, several times faster than Householder here); a Gram matrix
    that is not numerically positive definite falls back to a pivoted Householder QR.
    """
    for _ in range(2):  # twice is enough (Giraud et al. 2005), once is not in floating point
        if Q is not None and Q.shape[1]:
            W = W - Q @ (Q.T @ W)
    norms = np.linalg.norm(W, axis=0)
    W = W[:, norms > 1e-12 * scale]
    if W.shape[1] == 0:
        return W
    W = W / np.linalg.norm(W, axis=0)
    try:
        for _ in range(2):
            L = np.linalg.cholesky(W.T @ W)
            W = scipy.linalg.solve_triangular(L, W.T, lower=True, check_finite=False).T
        if np.linalg.cond(L) > 1e4:  # second pass still far from orthonormal
            raise np.linalg.LinAlgError
    except np.linalg.LinAlgError:
        W, R, _ = scipy.linalg.qr(W, mode="economic", pivoting=True, check_finite=False)
        diag = np.abs(np.diag(R))
        W = W[:, diag > 1e-10 * diag[0]]
    if Q is not None and Q.shape[1] and W.shape[1]:
        W = W - Q @ (Q.T @ W)  # the QR can mix rounding back in; once more, then renormalise
        W /= np.linalg.norm(W, axis=0)
    return np.ascontiguousarray(W)


def _block_krylov(matmat, n, p, *, rng, tol, start=None):
    """Thick-restart block Lanczos with full reorthogonalisation.

    The basis Q (n x c, orthonormal) and AQ are kept together, so the Rayleigh-Ritz matrix
    T = Q^T A Q, the Ritz pairs (theta, Q y) and their residuals A Q y - theta Q y cost no
    extra products. Each step adds the orthonormalised residuals of the top b Ritz vectors (in
    exact arithmetic the same span as the next block of the block Krylov space) and multiplies
    them by A once. When the basis reaches ``_MAX_BLOCKS`` blocks it is cut back to the top 2b
    Ritz vectors (a thick restart, which keeps them exact: A Q y is kept along with Q y).

    Returns (values (p,), vectors (n, p), residual norms (p,), block products, Ritz block
    (n, b) to start the next call from).
    """
    b = min(n, p + _EXTRA)  # a few more than asked: clusters converge together
    max_cols = min(n, max(_MAX_BLOCKS * b, 4 * b))
    W = rng.standard_normal((n, b))
    if start is not None and start.shape[0] == n and start.shape[1]:
        W = np.column_stack([start, W[:, :max(0, b - start.shape[1])]])
    W = _orthonormal(W, None, 1.0)
    # the basis and its image live in preallocated Fortran-order buffers: the first c columns
    # are then one contiguous block for BLAS, and growing the basis copies nothing
    width = max_cols + max(b, W.shape[1])
    Qbuf = np.empty((n, width), order="F")
    AQbuf = np.empty((n, width), order="F")
    c = 0
    T = np.empty((0, 0))
    products = 0
    scale = 0.0
    while True:
        Z = matmat(W)
        products += 1
        j = W.shape[1]
        Qbuf[:, c:c + j] = W
        AQbuf[:, c:c + j] = Z
        top = Qbuf[:, :c].T @ Z  # (c, j) new columns of T
        corner = W.T @ Z
        T = np.block([[T, top], [top.T, 0.5 * (corner + corner.T)]])
        c += j
        Q, AQ = Qbuf[:, :c], AQbuf[:, :c]
        # eigh returns ascending eigenvalues; reverse them to largest first
        theta, Y = np.linalg.eigh(T)
        theta, Y = theta[::-1], Y[:, ::-1]
        scale = max(scale, abs(theta[0]), 1e-300)
        q = min(b, len(theta))
        Yb = np.ascontiguousarray(Y[:, :q])
        V = Q @ Yb
        R = AQ @ Yb - V * theta[:q]
        res = np.linalg.norm(R, axis=0)
        done = np.all(res[:p] <= tol * scale)
        if done or products >= _MAX_PRODUCTS:
            break
        if c + b > max_cols:
            keep = min(2 * b, len(theta))
            Yk = np.ascontiguousarray(Y[:, :keep])
            Qbuf[:, :keep], AQbuf[:, :keep] = Q @ Yk, AQ @ Yk
            c = keep
            Q, AQ = Qbuf[:, :c], AQbuf[:, :c]
            T = np.diag(theta[:keep])
        # converged wanted pairs are locked: their residuals would only add noise and width
        live = np.ones(q, dtype=bool)
        live[:p] = res[:p] > tol * scale
        W = _orthonormal(R[:, live], Q, scale)
        if W.shape[1] == 0 or c >= n:
            break  # the basis holds an invariant subspace: the Ritz pairs are exact
    if not done and products >= _MAX_PRODUCTS:
        import warnings

        from spca_cli.solvers._base import ConvergenceWarning

        warnings.warn(f"eigensolver stopped after {products} block products with relative "
                      f"residual {res[:p].max() / scale:.1e} > tol={tol:g}; the bounds include "
                      "the residuals, so they stay valid but may be loose", ConvergenceWarning)
    return theta[:p], np.ascontiguousarray(V[:, :p]), res[:p], products, V


def low_rank_factor(eigen, d):
    """V = U_d L_d^(1/2) of shape (n, d), so that A_d = V V^T."""
    d = min(d, len(eigen.values))
    return np.ascontiguousarray(eigen.vectors[:, :d] * np.sqrt(eigen.values[:d]))
