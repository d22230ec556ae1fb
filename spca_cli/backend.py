"""Where the products with the undeflated A are computed: the backend behind :class:`~spca_cli.
matrix.Gram`.

A backend answers six questions about A (n x n, PSD), and nothing else reads the data:

* ``matmat(X)``: A X for a dense block X (eigen steps, projection deflation);
* ``sparse_matvec(idx, w)``: A x for x with weights ``w`` on words ``idx`` (TPower, swaps);
* ``columns(idx)``: A[:, idx];
* ``submatrix(idx)``: A[idx, idx];
* ``diagonal()``: diag(A);
* ``is_nonnegative()``: whether A is entrywise nonnegative, provably and cheaply.

:class:`LocalBackend` is the one implementation: A = S^T S for a sparse document-word matrix S
held in memory (numba kernels restricted to the documents of the words asked for), or a dense
PSD matrix given directly. A distributed engine is a second class with the same methods.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

__all__ = ["LocalBackend"]

# Memory for columns A[:, j] kept for reuse by every view of one A: the certificate's first
# exact rows (256, then about 350 at 50,000 words) are formed once for all views; each later
# view restricts the last view's rows instead of asking for columns again (bounds.py).
_COLUMN_CACHE_BYTES = 160 << 20

# Largest intermediate S X of a block product: beyond it the documents are taken in slices and
# the slices' S_r^T (S_r X) added up. A 28-wide block (a cluster of 20 equal topics) over
# 1,000,000 documents would make a 224 MB intermediate; slices of 64 MB keep that bounded at
# a cost measured within noise (200,000 documents, 28 columns: 0.50 s sliced in 65,536 rows
# against 0.56 s whole, load 8 on 2 cores).
_PRODUCT_BYTES = 64 << 20

# Below this many stored entries a block product runs on one thread (a thread team's start-up
# then costs about what it saves). Above it the document slices are multiplied on the threads
# numba would use (``NUMBA_NUM_THREADS``, one knob for every parallel kernel): SciPy's sparse
# products release the GIL, and each thread adds its slices into its own (n, width) sum.
# Measured on 1,000,000 clustered tweets (17.7M entries), 2 cores, seconds per product, one
# thread / two: width 6 0.41-0.44 / 0.29-0.30, width 10 0.59-0.63 / 0.43-0.44, width 28
# 1.5-1.8 / 0.75-0.81. A fused numba kernel (one pass over S per document, no S X
# intermediate) was no faster on one thread (0.68 s at width 10) and equal on two.
_PARALLEL_PRODUCT_NNZ = 1 << 20
# ... and columns of A are formed on those threads from this many on (a swap search's few
# columns stay on one).
_PARALLEL_COLUMNS = 8


def _kernel_arrays(M):
    """(indptr, indices, data) of a CSR or CSC array as the numba kernels take them: 32-bit
    positions viewed as unsigned (no copy). Numba guards every signed index against negative
    (wrap-around) values; unsigned ones need no guard, and a plain gather over the 15.3M entries
    of 1M generated tweets took 0.047 s instead of 0.071 s, the exact-row column kernel 0.88 s
    instead of 1.23 s CPU for 64 columns."""
    def view(a):
        return a.view(np.uint32) if a.dtype == np.int32 else a

    return view(M.indptr), view(M.indices), M.data


def stacked_columns(columns, n):
    """The length-n ``columns`` side by side, shape (n, len(columns)), in Fortran order: each
    column is one contiguous copy (``np.column_stack`` writes C order, every column strided
    across all rows: 64 cached columns of 50,000 words 52 -> 6 ms), and the transpose, the rows
    the certificate keeps, is then C-contiguous without a copy."""
    out = np.empty((n, len(columns)), order="F")
    for t, column in enumerate(columns):
        out[:, t] = column
    return out


class LocalBackend:
    """A = S^T S (``S`` sparse, documents x words) or a dense PSD ``A``, in this process.

    Parameters
    ----------
    S : sparse matrix of shape (n_documents, n_words), optional
    dense : ndarray of shape (n_words, n_words), optional
        Exactly one of them.
    threads : int, optional
        Threads of a block product (default: ``numba.get_num_threads()``); the Dask engine's
        shards pass 1, the engine itself runs them side by side.
    """

    def __init__(self, S=None, dense=None, *, threads=None):
        if (S is None) == (dense is None):
            raise ValueError("give exactly one of S and dense")
        if S is not None:
            if not (isinstance(S, sp.csr_array) and S.dtype == np.float64):
                S = sp.csr_array(S, dtype=np.float64)
            if not S.has_canonical_format:  # repeated (document, word) entries add up
                S = S.copy()
                S.sum_duplicates()
            self.n = S.shape[1]
        else:
            dense = np.ascontiguousarray(dense, dtype=np.float64)
            self.n = dense.shape[0]
        self.S = S
        self.dense = dense
        self.threads = threads
        self._diag = None
        self._csc = None
        self._binary = None
        self._columns = {}

    def _documents_by_word(self):
        """S in CSC form (duplicates summed), made once.

        Column access (the documents of a word) is what k-sparse products and submatrices need;
        slicing columns of the CSR S would cost a pass over all of S each time.
        """
        if self._csc is None:
            csc = sp.csc_array(self.S, copy=True)
            csc.sum_duplicates()
            if csc.nnz < np.iinfo(np.int32).max:
                # 32-bit positions: 70 MB less for 17.7M stored entries (1M clustered tweets)
                csc.indices = csc.indices.astype(np.int32)
                csc.indptr = csc.indptr.astype(np.int32)
            self._csc = csc
        return self._csc

    def diagonal(self):
        """diag(A), computed once."""
        if self._diag is None:
            if self.S is not None:
                # A_jj = sum_i S_ij^2; the CSR's column indices give j directly (S is in
                # canonical form: no repeated entries)
                self._diag = np.bincount(self.S.indices, weights=self.S.data ** 2,
                                         minlength=self.n)
            else:
                self._diag = np.diag(self.dense).copy()
        return self._diag

    def matmat(self, X):
        if self.S is None:
            return self.dense @ X
        S = self.S
        m = S.shape[0]
        width = X.shape[1] if X.ndim == 2 else 1
        rows = max(1, _PRODUCT_BYTES // (8 * width))
        threads = self._product_threads()
        if threads > 1:
            rows = min(rows, -(-m // threads))
        if m <= rows:
            return np.asarray(S.T @ (S @ X))
        cuts = list(range(0, m, rows)) + [m]
        spans = list(zip(cuts[:-1], cuts[1:]))

        def partial_sum(first):
            # slices first, first + threads, ...: S_r^T (S_r X) added up in one array
            out = None
            for lo, hi in spans[first::threads]:
                part = self._document_slice(lo, hi)
                term = np.asarray(part.T @ (part @ X))
                if out is None:
                    out = term
                else:
                    out += term
            return out

        if threads == 1:
            return partial_sum(0)
        with ThreadPoolExecutor(threads) as pool:
            sums = list(pool.map(partial_sum, range(min(threads, len(spans)))))
        out = sums[0]
        for term in sums[1:]:
            out += term
        return out

    def _product_threads(self):
        if self.threads is not None:
            return self.threads
        if self.S.nnz < _PARALLEL_PRODUCT_NNZ:
            return 1
        import numba

        return numba.get_num_threads()

    def _document_slice(self, lo, hi):
        """Rows lo..hi-1 of S as a CSR array sharing S's data and indices (no copy of them)."""
        S = self.S
        a, b = S.indptr[lo], S.indptr[hi]
        return sp.csr_array((S.data[a:b], S.indices[a:b], S.indptr[lo:hi + 1] - a),
                            shape=(hi - lo, S.shape[1]), copy=False)

    def sparse_matvec(self, idx, w):
        """A x for x with weights ``w`` on words ``idx``; on S only the documents holding one of
        those words are touched."""
        if self.S is None:
            return self.dense[:, idx] @ w
        from spca_cli.kernels.tpower import gram_sparse_matvec

        return gram_sparse_matvec(*_kernel_arrays(self.S),
                                  *_kernel_arrays(self._documents_by_word()),
                                  idx, w, self.n, self.S.shape[0])

    def submatrix(self, idx):
        """A[idx, idx]; on S only the documents of those words are read.

        Two kernels, the same numbers: column pairs cost about len(idx) / 2 passes over the
        documents of idx, documents one by one cost one pass plus each document's length, so
        the second wins from about twice the mean document length (measured on 1M generated
        tweets, 15 words each: 20 frequent words 0.15 s against 0.18 s, 100 words 1.4 s against
        0.27 s, 300 words 6.0 s against 0.44 s)."""
        if self.S is None:
            return self.dense[np.ix_(idx, idx)].copy()
        cache = self._columns
        words = idx.tolist()
        if words and all(j in cache for j in words):
            # every column already formed (the certificate's exact rows hold the words a
            # solver scores after the first topic): read, not a pass over their documents
            # (1M generated tweets: 15 calls 0.02-0.17 s each -> under a millisecond)
            sub = np.stack([cache[j][idx] for j in words], axis=1)
            return 0.5 * (sub + sub.T)  # (summed in another order than A[b, a]: weighted S)
        from spca_cli.kernels.tpower import gram_submatrix, gram_submatrix_by_documents

        C = _kernel_arrays(self._documents_by_word())
        m = self.S.shape[0]
        if idx.size > 2 * self.S.nnz / max(m, 1):
            return gram_submatrix_by_documents(*_kernel_arrays(self.S), C[0], C[1], idx, self.n, m)
        return gram_submatrix(*C, idx, m)

    def columns(self, idx):
        """A[:, idx], shape (n, len(idx)).

        On A = S^T S each column is S^T S[:, j]: one pass over the documents that hold word j
        (numba kernel), never a product with all of S. Columns are cached for every view of
        this A (the certificate of each component asks for nearly the same words again), up to
        _COLUMN_CACHE_BYTES.
        """
        if self.S is None:
            return self.dense[:, idx].copy()
        cache = self._columns
        missing = np.array([j for j in idx.tolist() if j not in cache], dtype=np.int64)
        if missing.size:
            block = self.rows(missing)
            room = _COLUMN_CACHE_BYTES // (8 * self.n) - len(cache)
            if room < missing.size:
                fresh = dict(zip(missing.tolist(), block))
                return stacked_columns([cache[j] if j in cache else fresh[j]
                                        for j in idx.tolist()], self.n)
            cache.update(zip(missing.tolist(), block))
        return stacked_columns([cache[j] for j in idx.tolist()], self.n)

    def rows(self, idx):
        """A[idx, :] of A = S^T S (the columns, transposed), shape (len(idx), n), not cached:
        one pass of the column kernel over the documents of each word of idx, on the product
        threads when there are several columns (the certificate's first 256: 2.3 s on one
        thread for 1,000,000 clustered tweets)."""
        from spca_cli.kernels.tpower import gram_columns, gram_columns_parallel

        idx = np.asarray(idx, dtype=np.int64)
        arrays = (*_kernel_arrays(self.S), *_kernel_arrays(self._documents_by_word()))
        threads = self._product_threads()
        if threads > 1 and idx.size >= _PARALLEL_COLUMNS:
            return gram_columns_parallel(*arrays, idx, self.n, threads, self._is_binary())
        return gram_columns(*arrays, idx, self.n, self._is_binary())

    def _is_binary(self):
        """True when every stored entry of S is 1 (binary weighting), found once."""
        if self._binary is None:
            data = self.S.data
            self._binary = bool(data.size == 0 or (data.min() == 1.0 and data.max() == 1.0))
        return self._binary

    def is_nonnegative(self):
        """True when every entry of A is >= 0: S >= 0 gives S^T S >= 0."""
        if self.S is not None:
            return bool(self.S.data.size == 0 or self.S.data.min() >= 0)
        return bool(self.dense.min() >= 0)
