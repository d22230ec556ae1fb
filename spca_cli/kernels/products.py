"""Kernel of the block product A X = S^T (S X) of the eigen step, in one pass over S.

Each document d contributes S_d^T (S_d X): the sum y of the rows of X at its words (weighted by
its values), then y added back at the same words. Reading the document's words twice while they
are in cache replaces SciPy's two products, whose intermediate S X (documents x width) is as
large as 72 MB for a 9-wide block over 1,000,000 documents and is allocated, filled and read
again at every product. On the clustered 1M-tweet benchmark (17.7M entries, 2 threads, warm):
width 9 0.093-0.099 s against 0.106-0.133 s for SciPy's products on document slices in two
threads, and 0.15-0.32 s for those inside an eigen call, where each product's fresh
intermediate costs page faults; width 12 0.10 s against 0.14-0.24 s.

Threads take contiguous runs of documents with about equal numbers of entries, each adding into
its own (n, width) sum; the sums are added at the end (the caller bounds their memory).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["gram_block_product", "gram_block_product_parallel", "distinct_documents",
           "gram_diagonal", "documents_by_word", "documents_by_word_parallel", "rows_product"]


@njit(cache=True, nogil=True)
def _add_documents(indptr, indices, data, X, docs, copies, first, stop, binary, out):
    """out += S_r^T (S_r X) for the documents r = first .. stop - 1, or, with ``docs`` given
    (not empty), out += copies[r] S_d^T (S_d X) for d = docs[r]: each distinct document once,
    times the number of documents equal to it."""
    width = X.shape[1]
    y = np.empty(width)
    distinct = docs.shape[0] > 0
    for r in range(first, stop):
        d = docs[r] if distinct else r
        lo, hi = indptr[d], indptr[d + 1]
        if lo == hi:
            continue
        y[:] = 0.0
        if binary:
            # every stored entry is 1 (binary weighting): the values are not read
            for p in range(lo, hi):
                j = indices[p]
                for c in range(width):
                    y[c] += X[j, c]
        else:
            for p in range(lo, hi):
                j = indices[p]
                s = data[p]
                for c in range(width):
                    y[c] += s * X[j, c]
        if distinct:
            for c in range(width):
                y[c] *= copies[r]
        if binary:
            for p in range(lo, hi):
                j = indices[p]
                for c in range(width):
                    out[j, c] += y[c]
        else:
            for p in range(lo, hi):
                j = indices[p]
                s = data[p]
                for c in range(width):
                    out[j, c] += s * y[c]


@njit(cache=True, nogil=True)
def gram_block_product(indptr, indices, data, X, binary):
    """A X of A = S^T S (CSR arrays of S, m x n) for a C-ordered block X of shape (n, width),
    on this thread. ``binary``: every stored entry of S is 1 (the values are then not read)."""
    out = np.zeros(X.shape)
    none = np.zeros(0, dtype=np.int64)
    _add_documents(indptr, indices, data, X, none, np.zeros(0), 0, indptr.shape[0] - 1, binary,
                   out)
    return out


@njit(cache=True, parallel=True)
def gram_block_product_parallel(indptr, indices, data, X, docs, copies, cuts, binary, out_t):
    """:func:`gram_block_product` on ``len(cuts) - 1`` threads, thread t taking the documents
    ``cuts[t] .. cuts[t + 1] - 1`` into its own sum; with ``docs`` (not empty) those are
    positions in ``docs``, each document counted ``copies`` times (:func:`distinct_documents`).

    The sums' first ``width`` columns (X's beyond them: padding) are added into ``out_t``, the
    transpose (width, n) of the (n, width) product: a Fortran-ordered product (the eigen step's
    basis, which takes each one in place) is a C-ordered ``out_t``, as is a single column, so
    one compiled kernel serves both. (A C-ordered result cost a copy of the thread sum, a pass
    adding the other and a transposing copy into the basis: 197,316 words, 16 columns, 60 ms a
    product.)"""
    threads = cuts.shape[0] - 1
    sums = np.zeros((threads, X.shape[0], X.shape[1]))
    for t in prange(threads):
        _add_documents(indptr, indices, data, X, docs, copies, cuts[t], cuts[t + 1], binary,
                       sums[t])
    width, n = out_t.shape
    chunks = (n + _ADD_ROWS - 1) // _ADD_ROWS
    for b in prange(chunks):
        lo, hi = b * _ADD_ROWS, min(n, (b + 1) * _ADD_ROWS)
        for c in range(width):  # (a chunk of each sum stays in cache over its columns)
            for i in range(lo, hi):
                total = sums[0, i, c]
                for t in range(1, threads):
                    total += sums[t, i, c]
                out_t[c, i] = total


# Rows of the thread sums added at a time (per thread): 512 rows of a 16-wide block are 64 KB
# of each sum
_ADD_ROWS = 512


@njit(cache=True, nogil=True)
def distinct_documents(indptr, indices, data, binary):
    """``(docs, copies)``: the documents of S (CSR, canonical) that no earlier document equals
    (the same words with the same values), increasing, and how many documents equal each,
    itself included.

    One pass in reading order over an open-addressing table of the distinct documents so far
    (linear probing, at most two thirds full: 12 bytes a slot), keyed by a 64-bit hash of each
    document's words; a document is compared entry by entry with every one of the same hash,
    so a collision of hashes never merges two documents."""
    m = indptr.shape[0] - 1
    size = 1
    while size < m + m // 2:
        size *= 2
    slot_key = np.zeros(size, dtype=np.uint64)
    slot_doc = np.full(size, -1, dtype=np.int32)
    copies = np.zeros(m)
    prime = np.uint64(0x100000001B3)
    mask = np.uint64(size - 1)
    for d in range(m):
        h = np.uint64(0xCBF29CE484222325) ^ np.uint64(indptr[d + 1] - indptr[d])
        for p in range(indptr[d], indptr[d + 1]):
            h = (h ^ np.uint64(indices[p])) * prime
        h ^= h >> np.uint64(29)  # (the low bits pick the slot: mix the high ones in)
        at = np.int64(h & mask)
        while True:
            e = slot_doc[at]
            if e < 0:
                slot_key[at], slot_doc[at] = h, np.int32(d)
                copies[d] = 1.0
                break
            if slot_key[at] == h and _same_document(indptr, indices, data, binary, e, d):
                copies[e] += 1.0
                break
            at = (at + 1) & (size - 1)
    docs = np.flatnonzero(copies)
    return docs, copies[docs]


@njit(cache=True, nogil=True)
def _same_document(indptr, indices, data, binary, a, b):
    length = indptr[a + 1] - indptr[a]
    if indptr[b + 1] - indptr[b] != length:
        return False
    for t in range(length):
        pa, pb = indptr[a] + t, indptr[b] + t
        if indices[pa] != indices[pb] or (not binary and data[pa] != data[pb]):
            return False
    return True


@njit(cache=True, nogil=True)
def gram_diagonal(indices, data, n):
    """diag(A) of A = S^T S: A_jj = sum over the documents of S_dj^2, from the entries of S in
    any order (canonical: no repeated entry). (np.bincount with squared weights casts 17.7M
    int32 indices to int64 and squares into a temporary first: 0.35 s, against one pass here;
    a binary S's diagonal is its column counts, :func:`spca_cli.kernels.counts.word_documents`.)"""
    out = np.zeros(n)
    for p in range(indices.shape[0]):
        out[indices[p]] += data[p] * data[p]
    return out


@njit(cache=True, nogil=True)
def documents_by_word(indptr, indices, data, n, with_data):
    """The CSC form of a CSR matrix S (m x n, no repeated entries): (cindptr, cindices, cdata),
    each column's rows in increasing order, the rows as 32-bit numbers (``cindptr`` int64).
    Without ``with_data`` (a binary S) cdata is empty: every value is 1, and S.data serves.

    A counting sort by column: one pass counts, one places. SciPy's ``csr_tocsc`` took 0.45 s
    over 17.7M entries (1M clustered tweets) and returned 64-bit index arrays that took another
    0.16 s to narrow, each a fresh 70-140 MB allocation."""
    nnz = indices.shape[0]
    cindptr = np.zeros(n + 1, dtype=np.int64)
    for p in range(nnz):
        cindptr[indices[p] + 1] += 1
    for j in range(n):
        cindptr[j + 1] += cindptr[j]
    cindices = np.empty(nnz, dtype=np.int32)
    cdata = np.empty(nnz if with_data else 0)
    fill = cindptr[:-1].copy()
    for row in range(indptr.shape[0] - 1):
        for p in range(indptr[row], indptr[row + 1]):
            j = indices[p]
            at = fill[j]
            cindices[at] = row
            if with_data:
                cdata[at] = data[p]
            fill[j] = at + 1
    return cindptr, cindices, cdata


@njit(cache=True, parallel=True)
def documents_by_word_parallel(indptr, indices, data, n, with_data, threads):
    """:func:`documents_by_word` on ``threads`` threads, each taking a run of rows with about
    equal entries: each counts its run's entries per column, the counts give every thread its
    place in each column (after the runs before it), and each places its run's entries there.
    The same arrays as the serial kernel (each column's rows still increasing): 16.2M entries
    of dupes-1M in about half its time."""
    m = indptr.shape[0] - 1
    nnz = indices.shape[0]
    cuts = np.empty(threads + 1, dtype=np.int64)
    for t in range(threads + 1):
        cuts[t] = np.searchsorted(indptr, (nnz * t) // threads)
    cuts[0], cuts[threads] = 0, m
    counts = np.zeros((threads, n + 1), dtype=np.int64)
    for t in prange(threads):
        for p in range(indptr[cuts[t]], indptr[cuts[t + 1]]):
            counts[t, indices[p]] += 1
    cindptr = np.zeros(n + 1, dtype=np.int64)
    fill = np.empty((threads, n), dtype=np.int64)
    at = 0
    for j in range(n):
        for t in range(threads):
            fill[t, j] = at
            at += counts[t, j]
        cindptr[j + 1] = at
    cindices = np.empty(nnz, dtype=np.int32)
    cdata = np.empty(nnz if with_data else 0)
    for t in prange(threads):
        for row in range(cuts[t], cuts[t + 1]):
            for p in range(indptr[row], indptr[row + 1]):
                j = indices[p]
                place = fill[t, j]
                cindices[place] = row
                if with_data:
                    cdata[place] = data[p]
                fill[t, j] = place + 1
    return cindptr, cindices, cdata


@njit(cache=True, parallel=True)
def rows_product(R, Y):
    """R^T Y for rows R (h, n) of A, float32 or float64, and Y (h, c): shape (n, c), float64.

    Threads take runs of :data:`_ROWS_RUN` words, each summing into its own small block while
    it reads every row's slice of the run (R read once, its zero entries skipped): the first
    eigen step's images of 256 kept columns of 197,316 words (13% nonzero) in 0.14 s, where
    copies into a float64 block 32 columns at a time and a GEMM each took 0.4-0.55 s."""
    h, n = R.shape
    c = Y.shape[1]
    out = np.empty((n, c))
    runs = (n + _ROWS_RUN - 1) // _ROWS_RUN
    for b in prange(runs):
        lo, hi = b * _ROWS_RUN, min(n, (b + 1) * _ROWS_RUN)
        acc = np.zeros((hi - lo, c))
        for q in range(h):
            for i in range(lo, hi):
                a = R[q, i]
                if a != 0.0:
                    for t in range(c):
                        acc[i - lo, t] += a * Y[q, t]
        out[lo:hi] = acc
    return out


# Words of a thread's run in :func:`rows_product` (a 30-wide sum of 512 words: 120 KB)
_ROWS_RUN = 512
