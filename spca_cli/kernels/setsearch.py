"""Kernels of the set search (:mod:`spca_cli.solvers.setsearch`)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["replacement_gains"]


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
