"""Certified upper bounds on the best k-sparse explained variance.

Every function returns ``(value, bound_source)`` pairs; each value is provably >= the optimum of
the problem it bounds, so ``certified_ratio = attained / bound`` says "this topic is at least this
close to optimal". Solvers add their own, tighter bounds (e.g. the spannogram's
OPT_d + lambda_{d+1}, Lemma 3 of the 2013 paper); :func:`tightest` picks the smallest.

Eigenvalues from an iterative eigensolver are Ritz values, which can sit slightly *below* the
true eigenvalue; we add the residual norm ||A v - theta v||, which bounds that error for the
extreme eigenvalue Lanczos converges to (Bauer-Fike for symmetric matrices).
"""

from __future__ import annotations

import numpy as np

__all__ = ["single_bounds", "total_bounds", "tightest", "certified_ratio"]


def _top_sum(values, count):
    count = min(int(count), values.size)
    if count <= 0:
        return 0.0
    return float(np.sum(np.partition(values, values.size - count)[values.size - count:]))


def single_bounds(A, k, eigen):
    """Upper bounds on max { x^T A' x : ||x|| = 1, ||x||_0 <= k } for the view ``A``.

    * ``lambda_1``: dropping the sparsity constraint can only help.
    * ``top-k diagonal``: for PSD A and support I, lambda_max(A_I) <= trace(A_I) <= sum of the
      k largest diagonal entries.
    * ``rank-1 + lambda_2``: the spannogram's data-dependent bound with d = 1, which costs
      nothing once v_1 is known.
    """
    lam1 = float(eigen.values[0] + eigen.residuals[0])
    diag = A.diagonal()[A.active()]
    out = [(lam1, "lambda_1"), (_top_sum(diag, k), "top-k diagonal")]
    if len(eigen.values) >= 2:
        # Lemma 3 of the 2013 paper with d = 1: OPT <= OPT_1 + lambda_2, and OPT_1 is exact and
        # free (thresholding: lambda_1 times the k largest v1_i^2). The eigensolver's error
        # enters to first order through the residuals (r_2 + 2 r_1), as for the spannogram.
        v1_sq = eigen.vectors[:, 0] ** 2
        opt1 = float(eigen.values[0] * _top_sum(v1_sq[A.active()], k))
        slack = float(eigen.residuals[1] + 2.0 * eigen.residuals[0])
        out.append((opt1 + float(eigen.values[1]) + slack, "rank-1 + lambda_2"))
    return out


def total_bounds(A, k, n_components, eigen):
    """Upper bounds on the best total sum_j x_j^T A x_j over ``n_components`` disjoint
    k-sparse unit vectors.

    * ``sum of top-K eigenvalues``: Ky Fan's maximum principle (the x_j are orthonormal, as
      disjoint supports make them).
    * ``top-Kk diagonal``: each lambda_max(A_Ij) <= trace(A_Ij), and the supports are disjoint.
    """
    K = int(n_components)
    if len(eigen.values) >= K:
        ky_fan = float(np.sum(eigen.values[:K]) + np.sum(eigen.residuals[:K]))
        out = [(ky_fan, f"sum of top-{K} eigenvalues")]
    else:
        out = []
    diag = A.diagonal()[A.active()]
    out.append((_top_sum(diag, K * k), f"top-{K * k} diagonal"))
    return out


def tightest(bounds):
    """The smallest of several ``(value, source)`` bounds."""
    return min(bounds, key=lambda b: b[0])


def certified_ratio(value, bound, *, rtol=1e-9):
    """value / bound in [0, 1]; 1.0 for the degenerate 0 / 0.

    A bound below an attained value (beyond rounding) is a bug, never a ratio above 1: raise.
    """
    if bound <= 0:
        if value > rtol:
            raise RuntimeError(f"upper bound {bound!r} is below the attained value {value!r}")
        return 1.0
    ratio = value / bound
    if ratio > 1.0 + rtol:
        raise RuntimeError(f"upper bound {bound!r} is below the attained value {value!r}")
    return float(min(max(ratio, 0.0), 1.0))
