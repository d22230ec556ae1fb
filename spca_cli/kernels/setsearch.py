"""Kernels of the set search (:mod:`spca_cli.solvers.setsearch`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from spca_cli.kernels.greedy import _largest_root

__all__ = ["replacement_gains", "replaced_lmax"]


@njit(cache=True, nogil=True)
def replacement_gains(cols, x, z, a, root, diag, value, out, first):
    """The mu-gain of every word v in place of every word u of one topic, into
    ``out[:, first + u]``: mu - ``value`` with mu the larger eigenvalue of
    [[a_u, b_vu], [b_vu, A_vv]], b_vu = (z_v - A_vu x_u) / ``root_u``; -inf where ``a_u`` is
    -inf (the word u holds the whole vector) or mu is not finite.

    One pass over the (n, k) columns A[:, T] (``cols``): the array expressions it replaces made
    seven (n, k) temporaries per topic."""
    n, k = cols.shape
    for v in range(n):
        c = diag[v]
        for u in range(k):
            if a[u] == -np.inf:
                out[v, first + u] = -np.inf
                continue
            b = (z[v] - cols[v, u] * x[u]) / root[u]
            half = 0.5 * (a[u] - c)
            mu = 0.5 * (a[u] + c) + np.sqrt(half * half + b * b)
            out[v, first + u] = mu - value if np.isfinite(mu) else -np.inf
    return out


@njit(cache=True, nogil=True)
def replaced_lmax(mu, Q, cols, rest, diag, positions, words, out):
    """lambda_max of one topic's block with its ``positions[c]``-th word replaced by
    ``words[c]``, into ``out[c]``: the bordered matrix [[B_p, b], [b^T, A_vv]] of B_p, the
    block of the topic's other k - 1 words (positions ``rest[p]``; eigenvalues ``mu[p]``
    ascending, eigenvectors the columns of ``Q[p]``), and b = A[T_rest, v] from the columns
    A[:, T] (``cols``), by its secular equation (as :func:`~spca_cli.kernels.greedy.
    bordered_lmax`): (k - 1)^2 multiplications a word and a few Newton steps instead of a k x k
    eigenvalue problem per replacement, the block of the other words decomposed once."""
    m = mu.shape[1]
    z = np.empty(m)
    for c in range(words.shape[0]):
        p = positions[c]
        v = words[c]
        if m == 0:  # (a topic of one word: the replacement alone)
            out[c] = diag[v]
            continue
        for i in range(m):
            s = 0.0
            for r in range(m):
                s += Q[p, r, i] * cols[v, rest[p, r]]
            z[i] = s
        scale = max(abs(mu[p, m - 1]), abs(mu[p, 0]), 1e-300)
        out[c] = _largest_root(mu[p], z, diag[v], scale)
    return out
