"""Kernels of duplicate detection: a 64-bit hash of each byte segment (a document's normalised
text, or one word of it), and the MinHash signature of each document's word shingles.

The hash is FNV-1a over the bytes with splitmix64's finaliser, the same in every process (a
worker of the parallel ingest, a Dask worker), unlike Python's salted ``hash``. Two different
texts of a million share a hash with probability about 3e-8 (n^2 / 2^65).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["hash_segments", "minhash"]

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, nogil=True)
def _finish(h):
    h ^= h >> np.uint64(30)
    h *= _MIX1
    h ^= h >> np.uint64(27)
    h *= _MIX2
    h ^= h >> np.uint64(31)
    return h


@njit(cache=True, nogil=True)
def hash_segments(data, starts, stops):
    """uint64 hash of each segment ``data[starts[i]:stops[i]]`` of a uint8 array."""
    out = np.empty(len(starts), dtype=np.uint64)
    for i in range(len(starts)):
        h = _FNV_OFFSET
        for j in range(starts[i], stops[i]):
            h = (h ^ np.uint64(data[j])) * _FNV_PRIME
        out[i] = _finish(h)
    return out


@njit(cache=True, nogil=True)
def minhash(shingles, bounds, a, b):
    """The MinHash signature of each document: ``out[d, p]`` is the least of
    ``(a[p] * s + b[p]) >> 32`` (arithmetic mod 2^64, a multiply-shift hash family) over the
    shingle hashes ``s`` of document d, ``shingles[bounds[d]:bounds[d + 1]]``; 2^32 - 1 for a
    document without shingles."""
    n, p = len(bounds) - 1, len(a)
    out = np.full((n, p), np.uint32(0xFFFFFFFF), dtype=np.uint32)
    shift = np.uint64(32)
    for d in range(n):
        for j in range(bounds[d], bounds[d + 1]):
            s = shingles[j]
            for k in range(p):
                v = np.uint32((a[k] * s + b[k]) >> shift)
                if v < out[d, k]:
                    out[d, k] = v
    return out
