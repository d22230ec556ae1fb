"""Kernels of duplicate detection: a 64-bit hash of each byte segment (a document's normalised
text, or one word of it), and the MinHash signature of each document's word shingles.

The hash is FNV-1a over the bytes with splitmix64's finaliser, the same in every process (a
worker of the parallel ingest, a Dask worker), unlike Python's salted ``hash``. Two different
texts of a million share a hash with probability about 3e-8 (n^2 / 2^65).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["hash_segments", "hash_keys", "minhash", "near_in_order"]

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


@njit(cache=True, nogil=True, inline="always")
def _space(data, i, end):
    """The byte length of the whitespace character at ``data[i]`` (one that Python's
    ``str.isspace`` calls whitespace, as ``re``'s ``\\s`` does), 0 for any other."""
    b = data[i]
    if b == 32 or 9 <= b <= 13 or 28 <= b <= 31:
        return 1
    if b < 0x80:
        return 0
    if b == 0xC2:
        if i + 1 < end and (data[i + 1] == 0x85 or data[i + 1] == 0xA0):
            return 2
        return 0
    if i + 2 >= end:
        return 0
    c, d = data[i + 1], data[i + 2]
    if b == 0xE1:
        return 3 if c == 0x9A and d == 0x80 else 0  # U+1680
    if b == 0xE2:
        if c == 0x80 and (d <= 0x8A or d == 0xA8 or d == 0xA9 or d == 0xAF):
            return 3  # U+2000-U+200A, U+2028, U+2029, U+202F
        return 3 if c == 0x81 and d == 0x9F else 0  # U+205F
    if b == 0xE3:
        return 3 if c == 0x80 and d == 0x80 else 0  # U+3000
    return 0


@njit(cache=True, nogil=True, inline="always")
def _handle_char(b):
    """An ASCII letter, digit or '_': what a Twitter @handle is made of."""
    return (97 <= b <= 122) or (65 <= b <= 90) or (48 <= b <= 57) or b == 95


@njit(cache=True, nogil=True, inline="always")
def _url_at(data, i, end):
    """The length of ``http://``, ``https://`` or ``www.`` at ``data[i]``, else 0."""
    if data[i] == 119:  # www.
        if i + 3 < end and data[i + 1] == 119 and data[i + 2] == 119 and data[i + 3] == 46:
            return 4
        return 0
    if data[i] != 104 or i + 6 >= end:  # http
        return 0
    if data[i + 1] != 116 or data[i + 2] != 116 or data[i + 3] != 112:
        return 0
    j = i + 4
    if data[j] == 115:  # https
        j += 1
    if j + 2 < end and data[j] == 58 and data[j + 1] == 47 and data[j + 2] == 47:
        return j + 3 - i
    return 0


@njit(cache=True, nogil=True, inline="always")
def _add_byte(h, b, space_first):
    """The key's hash after byte ``b``, with the one space a run of dropped or blank bytes
    leaves before it when ``space_first``."""
    if space_first:
        h = (h ^ np.uint64(32)) * _FNV_PRIME
    return (h ^ np.uint64(b)) * _FNV_PRIME


@njit(cache=True, nogil=True)
def hash_keys(data):
    """The hash (:func:`hash_segments` of its UTF-8 bytes) of each document's key, for a
    lower-cased chunk of documents joined by NUL bytes, in one pass without writing the keys:
    leading ``rt @handle:`` prefixes skipped; URLs (``http://``, ``https://`` or ``www.`` up to
    whitespace) and @handles (``@`` and ASCII letters, digits, '_') read as a space; runs of
    whitespace one space; no space at either end. The same key as
    :func:`spca_cli.corpus.duplicates.normalise` (tests compare them)."""
    n = len(data)
    n_docs = 1
    for i in range(n):
        if data[i] == 0:
            n_docs += 1
    out = np.empty(n_docs, dtype=np.uint64)
    start = 0
    for doc in range(n_docs):
        end = start
        while end < n and data[end] != 0:
            end += 1
        # retweet prefixes: \s* rt \s+ @handle :? (repeated)
        k = start
        while True:
            m = k
            while m < end:
                s = _space(data, m, end)
                if s == 0:
                    break
                m += s
            if m + 1 >= end or data[m] != 114 or data[m + 1] != 116:  # rt
                break
            m += 2
            spaces = 0
            while m < end:
                s = _space(data, m, end)
                if s == 0:
                    break
                m += s
                spaces += 1
            if spaces == 0 or m + 1 >= end or data[m] != 64 or not _handle_char(data[m + 1]):
                break
            m += 1
            while m < end and _handle_char(data[m]):
                m += 1
            if m < end and data[m] == 58:  # :
                m += 1
            k = m
        h = _FNV_OFFSET
        started = False
        pending = False
        while k < end:
            b = data[k]
            # most bytes: printable ASCII that starts no space, handle or URL
            if 32 < b < 128 and b != 64 and b != 104 and b != 119:
                h = _add_byte(h, b, pending and started)
                pending = False
                started = True
                k += 1
                continue
            s = _space(data, k, end)
            if s:
                pending = True
                k += s
                continue
            if b == 64 and k + 1 < end and _handle_char(data[k + 1]):  # @handle
                k += 2
                while k < end and _handle_char(data[k]):
                    k += 1
                pending = True
                continue
            u = _url_at(data, k, end)
            if u:
                k += u
                while k < end and _space(data, k, end) == 0:
                    k += 1
                pending = True
                continue
            h = _add_byte(h, b, pending and started)
            pending = False
            started = True
            k += 1
        out[doc] = _finish(h)
        start = end + 1
    return out


@njit(cache=True, nogil=True)
def _jaccard_at_least(shingles, a0, a1, b0, b1, threshold):
    """Whether the Jaccard index of the sorted, distinct ``shingles[a0:a1]`` and
    ``shingles[b0:b1]`` is at least ``threshold`` (one merge of the two runs)."""
    common = 0
    i, j = a0, b0
    while i < a1 and j < b1:
        x, y = shingles[i], shingles[j]
        if x == y:
            common += 1
            i += 1
            j += 1
        elif x < y:
            i += 1
        else:
            j += 1
    union = (a1 - a0) + (b1 - b0) - common
    return union > 0 and common >= threshold * union


@njit(cache=True, nogil=True)
def near_in_order(shingles, bounds, groups, n_groups, threshold, cap):
    """True for each document that is near (:func:`_jaccard_at_least`) a document kept before
    it with which it shares an LSH band: ``groups[d, b]`` is the bucket of document d's band b,
    -1 when no other document has that band.

    In reading order each document is compared with the documents kept before it in its
    buckets, at most ``cap`` of them per bucket (the first kept), and is kept when none is near;
    a document without shingles is never near. A bucket's kept documents are a linked list over
    the (document, band) entries."""
    n, bands = groups.shape
    head = np.full(n_groups, -1, dtype=np.int64)
    tail = np.full(n_groups, -1, dtype=np.int64)
    count = np.zeros(n_groups, dtype=np.int64)
    following = np.full(n * bands, -1, dtype=np.int64)
    out = np.zeros(n, dtype=np.bool_)
    for d in range(n):
        a0, a1 = bounds[d], bounds[d + 1]
        if a1 == a0:
            continue
        near = False
        for b in range(bands):
            g = groups[d, b]
            if g < 0:
                continue
            e = head[g]
            while e >= 0:
                m = e // bands
                if _jaccard_at_least(shingles, a0, a1, bounds[m], bounds[m + 1], threshold):
                    near = True
                    break
                e = following[e]
            if near:
                break
        if near:
            out[d] = True
            continue
        for b in range(bands):
            g = groups[d, b]
            if g < 0 or count[g] >= cap:
                continue
            e = d * bands + b
            if tail[g] >= 0:
                following[tail[g]] = e
            else:
                head[g] = e
            tail[g] = e
            count[g] += 1
    return out
