"""Kernel for the exact greedy step: lambda_max of every one-word extension of a support at once.

For a support I with B = A[I, I] = Q diag(mu) Q^T and a candidate word j with column
b = A[I, j] and diagonal entry a = A[j, j], the eigenvalues of the bordered matrix

    [[B,   b],
     [b^T, a]]

that are not eigenvalues of B are the roots of the secular equation (Golub 1973; Bunch, Nielsen
and Sorensen 1978)

    f(lam) = lam - a - sum_i z_i^2 / (lam - mu_i) = 0,      z = Q^T b.

On (mu_max, inf) f is increasing and concave, so Newton's method started at any point left of
the largest root climbs to it monotonically (the tangent of a concave function lies above it, so
a step never overshoots). A point known to be left of the root is the largest eigenvalue of the
2 x 2 compression of the bordered matrix onto span{q_max, e_j}: a Rayleigh-Ritz value, hence a
lower bound. Scoring every candidate j then costs O(|I|) per Newton step instead of an
eigen-decomposition per candidate.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["bordered_lmax"]


@njit(cache=True)
def bordered_lmax(mu, Q, C, cols, diag, rows, tau=-np.inf, prune=False):
    """Largest eigenvalue of [[B, b_j], [b_j^T, a_j]] for every candidate j in ``rows``.

    With ``prune``, only the maximum matters: a candidate that provably cannot beat
    max(tau, the largest value found among the earlier rows) is reported as -inf without
    solving its secular equation. For lam > mu_max, f(lam) >= 0 means the root is <= lam, and
    f(lam) >= lam - a - ||b||^2 / (lam - mu_max) needs no eigen-coordinates at all, so most
    words are dismissed after |I| multiplications. np.argmax of the output (first maximum) is
    then the same word as without pruning.

    Parameters
    ----------
    mu : ndarray of float64, shape (m,)
        Eigenvalues of B, ascending (as ``numpy.linalg.eigh`` returns them); m may be 0.
    Q : ndarray of float64, shape (m, m)
        The matching eigenvectors of B (columns).
    C : ndarray of float64, shape (n, p)
        Columns of A; ``C[j, cols]`` is b_j = A[I, j].
    cols : ndarray of int64, shape (m,)
        Which columns of ``C`` make up the support I, in the order of B's rows.
    diag : ndarray of float64, shape (n,)
        a_j = A[j, j].
    rows : ndarray of int64, shape (c,)
        Candidate words to score.
    tau : float, default=-inf
        With ``prune``: only values above tau are of interest.
    prune : bool, default=False
        Skip candidates that cannot be the maximum (reported as -inf).

    Returns
    -------
    ndarray of float64, shape (c,)
    """
    m = mu.shape[0]
    out = np.empty(rows.shape[0])
    if m == 0:
        for t in range(rows.shape[0]):
            out[t] = diag[rows[t]]
        return out
    mu_max = mu[m - 1]
    scale = max(abs(mu_max), abs(mu[0]), 1e-300)
    b = np.empty(m)
    z = np.empty(m)  # z_j = Q^T b_j, the coupling of word j to B's eigenvectors
    best = tau
    for t in range(rows.shape[0]):
        j = rows[t]
        a = diag[j]
        nb2 = 0.0
        for i in range(m):
            b[i] = C[j, cols[i]]
            nb2 += b[i] * b[i]
        gap = best - mu_max
        if prune and gap > 0.0 and best - a - nb2 / gap >= 0.0:
            out[t] = -np.inf  # f(best) >= 0 already from ||b||: the root is <= best
            continue
        for i in range(m):
            s = 0.0
            for r in range(m):
                s += Q[r, i] * b[r]
            z[i] = s
        if prune and gap > 0.0:
            f = best - a
            for i in range(m):
                f -= z[i] * z[i] / (best - mu[i])
            if f >= 0.0:
                out[t] = -np.inf
                continue
        out[t] = _largest_root(mu, z, a, scale)
        if prune and out[t] > best:
            best = out[t]
    return out


@njit(cache=True)
def _largest_root(mu, z, a, scale):
    """Largest eigenvalue of [[diag(mu), z], [z^T, a]] (mu ascending), by monotone Newton."""
    m = mu.shape[0]
    mu_max = mu[m - 1]
    # couplings below rounding level are zeros: their mu_i stay eigenvalues of the bordered
    # matrix and drop out of the secular equation (deflation of the secular problem)
    floor = 1e-30 * max(scale, abs(a)) ** 2
    top = -1
    for i in range(m - 1, -1, -1):
        if z[i] * z[i] > floor:
            top = i
            break
    if top < 0:
        return max(mu_max, a)
    mu_top = mu[top]
    # Rayleigh-Ritz lower bound from the 2 x 2 compression onto span{q_top, e_j}
    half = 0.5 * (mu_top - a)
    lam = 0.5 * (mu_top + a) + np.sqrt(half * half + z[top] * z[top])
    if lam <= mu_top:  # rounding put us on the pole; the root is mu_top to working precision
        return max(mu_max, lam)
    for _ in range(100):
        f = lam - a
        fp = 1.0
        for i in range(top + 1):
            zi2 = z[i] * z[i]
            if zi2 <= floor:
                continue
            r = 1.0 / (lam - mu[i])
            f -= zi2 * r
            fp += zi2 * r * r
        step = -f / fp
        if step <= 0.0:  # at (or, by rounding, just past) the root
            break
        lam += step
        if step <= 4e-16 * abs(lam):
            break
    return max(mu_max, lam)
