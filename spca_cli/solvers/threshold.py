"""The rank-1 solver: keep the k largest |entries| of the leading eigenvector (PCA + thresholding).

This is the exact k-sparse optimum of A_1 = lambda_1 v_1 v_1^T (Section 3.1 of the 2013 paper),
so it is also the spannogram with rank 1; reported weights are the leading eigenvector of A on
that support, which can only explain more (Lemma 2).
"""

from __future__ import annotations

import numpy as np

from spca_cli.solvers._base import check_k, finish_component

__all__ = ["threshold"]


def threshold(A, k, *, eigen):
    """Top-k entries of the leading eigenvector of A, re-weighted on that support.

    Parameters
    ----------
    A : Gram
        The (possibly deflated) co-occurrence operator of shape (n_words, n_words).
    k : int
        Number of nonzero words.
    eigen : Eigen
        Leading eigenpairs of ``A`` (at least one).

    Returns
    -------
    SolverOutput
    """
    k = check_k(A, k)
    # removed words last: when fewer than k active words have a nonzero entry, the support is
    # filled with active words of zero entry, never with a word an earlier topic took
    v1 = np.where(A.active(), np.abs(eigen.vectors[:, 0]), -np.inf)
    # stable sort: ties broken by the smaller word index, so the output is deterministic
    support = np.argsort(-v1, kind="stable")[:k]
    opt1 = float(eigen.values[0] * np.sum(eigen.vectors[support, 0] ** 2))
    return finish_component(A, support, info={"rank1_value": opt1})
