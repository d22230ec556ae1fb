"""Kernel of :class:`~spca_cli.corpus.texts.Strings`: the bytes of chosen strings gathered into
one array, string by string, with no index array as long as the bytes (a vectorised gather over
150 MB of kept tweets made three int64 arrays of that length: 3.6 GB at its peak)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["gather_bytes"]


@njit(cache=True)
def gather_bytes(blob, starts, lengths, total):
    """``blob[starts[i]:starts[i] + lengths[i]]`` for each i, concatenated (``total`` bytes)."""
    out = np.empty(total, dtype=np.uint8)
    at = 0
    for i in range(starts.size):
        n = lengths[i]
        out[at:at + n] = blob[starts[i]:starts[i] + n]
        at += n
    return out
