"""Kernels for products with A = S^T S when the vector is k-sparse (TPower, greedy, swap search).

A x with ||x||_0 = k never needs all of S: y = S[:, I] x_I only touches the documents that
contain one of the k words, and z = S^T y only the rows of those documents. Both kernels take
the CSR pieces of S (for rows) and the CSC pieces (for columns) as plain arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["gram_sparse_matvec", "gram_columns", "gram_columns_parallel", "gram_submatrix",
           "gram_submatrix_by_documents"]


@njit(cache=True)
def gram_sparse_matvec(indptr, indices, data, cindptr, cindices, cdata, idx, w, n, m):
    """z = S^T (S[:, idx] @ w), of shape (n,), touching only documents that hold a word of idx.

    Parameters
    ----------
    indptr, indices, data : ndarray
        CSR arrays of S, shape (m, n).
    cindptr, cindices, cdata : ndarray
        CSC arrays of the same S.
    idx : ndarray of int64, shape (k,)
        Columns (words) where x is nonzero.
    w : ndarray of float64, shape (k,)
        The nonzero entries of x.
    n, m : int
        Number of words (columns) and of documents (rows).
    """
    y = np.zeros(m)  # (m,) S x, nonzero only on touched documents
    touched = np.zeros(m, dtype=np.bool_)
    rows = np.empty(m, dtype=np.int64)
    n_rows = 0
    for t in range(idx.shape[0]):
        j = idx[t]
        wt = w[t]
        for p in range(cindptr[j], cindptr[j + 1]):
            r = cindices[p]
            if not touched[r]:
                touched[r] = True
                rows[n_rows] = r
                n_rows += 1
            y[r] += cdata[p] * wt
    z = np.zeros(n)  # (n,) S^T y
    for q in range(n_rows):
        r = rows[q]
        yr = y[r]
        if yr == 0.0:
            continue
        for p in range(indptr[r], indptr[r + 1]):
            z[indices[p]] += data[p] * yr
    return z


@njit(cache=True)
def _add_column(indptr, indices, data, cindptr, cindices, cdata, binary, copies, j, out_row):
    # column j of S^T S: the rows of S that contain word j, weighted by S[r, j]; a ``binary``
    # S (every entry 1, the default weighting) has its values left unread: 335 columns of 1M
    # clustered tweets take 1.82 s on one thread, 2.69 s reading the values. With ``copies``
    # (not empty) row r counts copies[r] times: a repeated document is read once, at its first
    # row, and skipped at the others (copies 0)
    weighted = copies.shape[0] > 0
    for p in range(cindptr[j], cindptr[j + 1]):
        r = cindices[p]
        c = copies[r] if weighted else 1.0
        if c == 0.0:
            continue
        if binary:
            for q in range(indptr[r], indptr[r + 1]):
                out_row[indices[q]] += c
        else:
            s = cdata[p] * c
            for q in range(indptr[r], indptr[r + 1]):
                out_row[indices[q]] += data[q] * s


@njit(cache=True, nogil=True)
def gram_columns(indptr, indices, data, cindptr, cindices, cdata, idx, binary, copies, out):
    """The columns A[:, idx] of A = S^T S, transposed, into ``out`` (shape (len(idx), n), any
    contents: zeroed here; float32 where that holds every partial sum exactly), returned.

    Column j is S^T S[:, j]: a sum of the rows of S that contain word j, weighted by S[r, j].
    ``binary``: every stored entry of S is 1 (the values are then not read). ``copies``, one
    per row of S (or empty: each row once): how many times row r counts, 0 for a row equal to
    an earlier one that counts for it (:meth:`~spca_cli.backend.LocalBackend.
    _distinct_documents`).
    """
    for t in range(idx.shape[0]):
        out[t, :] = 0.0
        _add_column(indptr, indices, data, cindptr, cindices, cdata, binary, copies, idx[t],
                    out[t])
    return out


@njit(cache=True, parallel=True, nogil=True)
def gram_columns_parallel(indptr, indices, data, cindptr, cindices, cdata, idx, nthreads,
                          binary, copies, out):
    """:func:`gram_columns` on ``nthreads`` threads, thread th taking columns th, th +
    nthreads, ...: callers list words by frequency, so contiguous chunks would give one
    thread all the long columns."""
    for th in prange(nthreads):
        for t in range(th, idx.shape[0], nthreads):
            out[t, :] = 0.0
            _add_column(indptr, indices, data, cindptr, cindices, cdata, binary, copies, idx[t],
                        out[t])
    return out


@njit(cache=True)
def gram_submatrix(cindptr, cindices, cdata, idx, m):
    """The principal submatrix A[idx, idx] of A = S^T S from the CSC arrays of S (m rows).

    Column i is scattered into a dense buffer of length m once, then dotted with every later
    column: k passes over the k columns, never over the rest of S.
    """
    k = idx.shape[0]
    out = np.zeros((k, k))
    buf = np.zeros(m)
    for a in range(k):
        ja = idx[a]
        for p in range(cindptr[ja], cindptr[ja + 1]):
            buf[cindices[p]] += cdata[p]  # += : correct even with duplicate entries
        for b in range(a, k):
            jb = idx[b]
            s = 0.0
            for p in range(cindptr[jb], cindptr[jb + 1]):
                s += buf[cindices[p]] * cdata[p]
            out[a, b] = s
            out[b, a] = s
        for p in range(cindptr[ja], cindptr[ja + 1]):
            buf[cindices[p]] = 0.0
    return out


@njit(cache=True)
def gram_submatrix_by_documents(indptr, indices, data, cindptr, cindices, idx, n, m):
    """A[idx, idx] of A = S^T S, one document at a time: each document holding a word of idx
    adds the outer product of its entries on idx, once (work: those documents' lengths plus
    the squares of their counts of idx words, against about len(idx) / 2 passes over the
    documents of idx for :func:`gram_submatrix`; the same numbers, exactly symmetric).
    """
    k = idx.shape[0]
    position = np.full(n, -1, dtype=np.int64)
    for a in range(k):
        position[idx[a]] = a
    seen = np.zeros(m, dtype=np.bool_)
    out = np.zeros((k, k))
    where = np.empty(k, dtype=np.int64)
    value = np.empty(k)
    for a in range(k):
        j = idx[a]
        for p in range(cindptr[j], cindptr[j + 1]):
            r = cindices[p]
            if seen[r]:
                continue
            seen[r] = True
            c = 0
            for q in range(indptr[r], indptr[r + 1]):
                b = position[indices[q]]
                if b >= 0:
                    where[c] = b
                    value[c] = data[q]
                    c += 1
            for u in range(c):
                wu = where[u]
                vu = value[u]
                for v in range(c):
                    out[wu, where[v]] += vu * value[v]
    return out
