"""Greedy forward selection (d'Aspremont, Bach and El Ghaoui 2007/2008), exact at every step.

Start from the word of largest variance A'[j, j]; then, k - 1 times, add the word j that
maximises lambda_max(A'[I + j, I + j]). This is the full greedy path of d'Aspremont et al.
("FullPath" in the spannogram paper's tables), not their cheaper approximate greedy: every
candidate's lambda_max is exact. Instead of one eigen-solve per candidate, each step
eigen-decomposes the small |I| x |I| matrix once and solves the secular equation of every
bordered matrix at once (:func:`spca_cli.kernels.greedy.bordered_lmax`), so a step costs one
column A'[:, j] plus O(n |I|) work.
"""

from __future__ import annotations

import numpy as np

from spca_cli.kernels.greedy import bordered_lmax
from spca_cli.solvers._base import check_k, finish_component

__all__ = ["greedy"]


def greedy(A, k, *, forced=None):
    """Sparse PCA by exact greedy forward selection of the support.

    Parameters
    ----------
    A : Gram
        The (possibly deflated) co-occurrence operator of shape (n_words, n_words).
    k : int
        Number of nonzero words.
    forced : array-like of int, optional
        Words every support must hold (``include``, at most k, all active): the path starts
        from them, in the order given, and adds the others greedily.

    Returns
    -------
    SolverOutput
        Weights are the leading eigenvector of A'[I, I]. ``info["path"]`` lists
        lambda_max(A'[I_c, I_c]) for the greedy supports of size c = 1 .. k (the whole
        regularisation path, which is nondecreasing) and ``info["order"]`` the words in the
        order they were added.

    See Also
    --------
    spca_cli.solvers.tpower.tpower : truncated power method, usually at least as good.

    Notes
    -----
    Each step is exact: with B = A'[I, I] = Q diag(mu) Q^T and z_j = Q^T A'[I, j], the
    largest eigenvalue of A'[I + j, I + j] is the largest root of
    lam - A'[j, j] - sum_i z_ji^2 / (lam - mu_i) = 0, found by a monotone Newton iteration for
    all j at once. Ties go to the lower word index. Only active (not removed) words are added.

    References
    ----------
    .. [1] A. d'Aspremont, F. Bach and L. El Ghaoui, "Full regularization path for sparse
       principal component analysis", ICML 2007 ("FullPath" in the spannogram paper's tables),
       and "Optimal solutions for sparse principal component analysis", JMLR 9, 2008
       (greedy forward search, exact and approximate).
    .. [2] B. Moghaddam, Y. Weiss and S. Avidan, "Spectral bounds for sparse PCA: exact and
       greedy algorithms", NIPS 18, 2006 (forward greedy selection).
    .. [3] G. H. Golub, "Some modified matrix eigenvalue problems", SIAM Review 15, 1973
       (the secular equation of a bordered matrix).

    Examples
    --------
    >>> import numpy as np
    >>> from spca_cli.matrix import Gram
    >>> u = np.zeros(8); u[[1, 4, 6]] = 1 / np.sqrt(3)
    >>> A = Gram.from_dense(10 * np.outer(u, u) + np.eye(8))
    >>> out = greedy(A, 3)
    >>> sorted(out.indices.tolist()), round(out.value, 6)
    ([1, 4, 6], 11.0)
    """
    k = check_k(A, k)
    ops = A.sparse_products()
    free = ops.active.copy()  # (n,) words that may still be added
    diag = ops.diagonal()  # (n,)
    if forced is not None and len(forced):
        order = [int(i) for i in forced]
        free[order] = False
        C = ops.columns(order)  # (n, |I|) A'[:, I]
        path = [float(np.linalg.eigvalsh(ops.submatrix(order[:c]))[-1])
                for c in range(1, len(order) + 1)]
    else:
        first = int(np.argmax(np.where(free, diag, -np.inf)))  # first maximum: lowest index
        order = [first]
        free[first] = False
        path = [float(diag[first])]
        C = ops.columns([first])  # (n, |I|) A'[:, I]
    for _ in range(len(order), k):
        idx = np.asarray(order, dtype=np.int64)
        B = C[idx]
        mu, Q = np.linalg.eigh(0.5 * (B + B.T))  # ascending, as bordered_lmax expects
        rows = np.flatnonzero(free)
        # pruned: a word that cannot beat the best one before it comes back as -inf, which
        # leaves the first maximum (lowest word index among ties) unchanged
        vals = bordered_lmax(mu, np.ascontiguousarray(Q), C, np.arange(idx.size), diag, rows,
                             -np.inf, True)
        t = int(np.argmax(vals))
        j = int(rows[t])
        order.append(j)
        free[j] = False
        path.append(float(vals[t]))
        C = np.column_stack([C, ops.columns([j])])
    info = {"path": path, "order": order}
    return finish_component(A, order, info=info)
