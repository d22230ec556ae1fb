"""Enumerating combinations in place, shared by the spannogram and nonneg kernels."""

from __future__ import annotations

from numba import njit

__all__ = ["next_combination"]


@njit(cache=True)
def next_combination(idx, r, n):
    """Advance ``idx[:r]`` (strictly increasing, values < n) to the next r-combination in
    lexicographic order; return False, leaving it unchanged, when it was the last one."""
    i = r - 1
    while i >= 0 and idx[i] == n - r + i:
        i -= 1
    if i < 0:
        return False
    idx[i] += 1
    for j in range(i + 1, r):
        idx[j] = idx[j - 1] + 1
    return True
