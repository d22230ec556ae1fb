"""Where the products with the undeflated A are computed: the backend behind :class:`~spca_cli.
matrix.Gram`.

A backend answers six questions about A (n x n, PSD), and nothing else reads the data:

* ``matmat(X, out=None)``: A X for a dense block X (eigen steps, projection deflation),
  written into ``out`` when given;
* ``sparse_matvec(idx, w)``: A x for x with weights ``w`` on words ``idx`` (TPower, swaps);
* ``columns(idx)``: A[:, idx] (and ``column_list(idx)``, the same columns one array each, as
  the backend keeps them);
* ``submatrix(idx)``: A[idx, idx];
* ``diagonal()``: diag(A);
* ``is_nonnegative()``: whether A is entrywise nonnegative, provably and cheaply.

:class:`LocalBackend` is the one implementation: A = S^T S for a sparse document-word matrix S
held in memory (numba kernels restricted to the documents of the words asked for), or a dense
PSD matrix given directly. A distributed engine is a second class with the same methods.
"""

from __future__ import annotations

import threading

import numpy as np
import scipy.sparse as sp

__all__ = ["LocalBackend"]

# Memory for columns A[:, j] kept for reuse by every view of one A: the certificate's first
# exact rows (256, then about 350 at 50,000 words) are formed once for all views; each later
# view restricts the last view's rows instead of asking for columns again (bounds.py). Counted
# as float64; columns that float32 holds exactly (integer counts below 2^24) are kept in half
# of it (1M tweets over 197,316 words: 80 MB less at the run's peak).
_COLUMN_CACHE_BYTES = 160 << 20
# Integers up to this are exact in float32
_FLOAT32_EXACT = 1 << 24

# Memory for the threads' own sums of a block product (kernels/products.py): each thread adds
# its documents into an (n, width) array, so the threads used are as many as fit here (two
# 9-wide sums over 50,000 words take 7 MB; a vocabulary of millions of n-grams multiplies on
# one thread, whose sum is the output itself).
_PRODUCT_BYTES = 64 << 20

# Below this many stored entries a block product runs on one thread (a thread team's start-up
# then costs about what it saves). Above it the product runs on the threads numba would use
# (``NUMBA_NUM_THREADS``, one knob for every parallel kernel).
_PARALLEL_PRODUCT_NNZ = 1 << 20
# ... and reads each distinct document once when repeated documents hold this share of S's
# entries (LocalBackend._distinct_documents)
_REPEATED_SHARE = 0.05
# ... and columns of A are formed on those threads from this many on (a swap search's few
# columns stay on one).
_PARALLEL_COLUMNS = 8


def _padded_block(X):
    """X (n, width) as the product kernel takes it: C-ordered float64, with zero columns up to
    a multiple of 4 when width % 4 is 2 or 3 (beyond 4 columns). The kernel's loops over a
    row's columns run 4 at a time and the rest one by one: on 926,752 generated tweets (12M
    distinct entries, two threads) 15 columns took 488 ms and the same padded to 16 422 ms,
    7 323 against 245 ms, 11 399 against 251 ms; a remainder of 1 gained nothing (5, 9, 13)."""
    width = X.shape[1]
    padded = width + (-width) % 4
    if width <= 4 or width % 4 < 2:
        return np.ascontiguousarray(X, dtype=np.float64)
    out = np.zeros((X.shape[0], padded))
    out[:, :width] = X
    return out


def _kernel_arrays(M):
    """(indptr, indices, data) of a CSR or CSC array as the numba kernels take them: 32-bit
    positions viewed as unsigned (:func:`~spca_cli.kernels.unsigned_positions`; the exact-row
    column kernel took 0.88 s instead of 1.23 s CPU for 64 columns of 1M generated tweets)."""
    from spca_cli.kernels import unsigned_positions

    return unsigned_positions(M.indptr), unsigned_positions(M.indices), M.data


def cache_room(cache, n, budget=_COLUMN_CACHE_BYTES):
    """How many more columns of ``n`` words a column cache holding ``cache`` keeps within
    ``budget`` bytes."""
    return budget // (8 * max(n, 1)) - len(cache)


def stacked_columns(columns, n, out=None):
    """The length-n ``columns`` side by side, shape (n, len(columns)), in Fortran order: each
    column is one contiguous copy (``np.column_stack`` writes C order, every column strided
    across all rows: 64 cached columns of 50,000 words take 52 ms that way, 6 ms this way), and
    the transpose, the rows the certificate keeps, is then C-contiguous without a copy.
    ``out``: an (n, len(columns)) array to write them into, returned."""
    if out is None:
        out = np.empty((n, len(columns)), order="F")
    for t, column in enumerate(columns):
        out[:, t] = column
    return out


def written_into(result, out):
    """``result`` written into ``out`` (an array of its shape) and ``out`` returned; ``result``
    itself when ``out`` is None or is ``result`` (a product a backend wrote where asked)."""
    if out is None or result is out:
        return result
    out[...] = result
    return out


def _narrow_positions(S):
    """S (CSR) with 32-bit positions when its 64-bit ones fit (SciPy makes them 64-bit for some
    inputs and operations): one copy of the positions here, the kernels then take the types of
    every other S (each other type is one more compilation of each kernel, 5-20 s a parallel
    one in a fresh checkout). S itself is left as it is."""
    if S.indices.dtype == np.int32 and S.indptr.dtype == np.int32:
        return S
    if S.nnz >= 2**31 or max(S.shape) >= 2**31:
        return S
    return sp.csr_array((S.data, S.indices.astype(np.int32), S.indptr.astype(np.int32)),
                        shape=S.shape)


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

    def __init__(self, S=None, dense=None, *, threads=None, psd_margin=0.0):
        if (S is None) == (dense is None):
            raise ValueError("give exactly one of S and dense")
        # eps >= 0 with A + eps I PSD: S^T S is PSD (0); a dense A given as PSD may be only
        # nearly so (rounding), and the bounds that need PSD add what eps costs them
        self.psd_margin = float(psd_margin)
        if S is not None:
            if not (isinstance(S, sp.csr_array) and S.dtype == np.float64):
                S = sp.csr_array(S, dtype=np.float64)
            if not S.has_canonical_format:  # repeated (document, word) entries add up
                S = S.copy()
                S.sum_duplicates()
            S = _narrow_positions(S)
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
        self._distinct = None
        self._copies_by_row = None  # (_row_copies)
        self._cuts = {}  # threads -> where their runs of documents start (_document_cuts)
        self._columns = {}
        self._blocks = []  # (words, block): the kept columns formed together (kept_block)
        self._column_dtype = None
        # columns missing from the cache are formed by one thread at a time: a step run beside
        # the run (threads.beside) may ask for the same ones, which are then formed once
        self._forming = threading.Lock()

    def __getstate__(self):
        """Everything but the lock, which no pickle holds: a Dask worker may send its shard's
        backend to another worker, or spill it to disk."""
        state = self.__dict__.copy()
        state.pop("_forming", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._forming = threading.Lock()

    def _documents_by_word(self):
        """The CSC arrays of S (indptr, indices, data) as the kernels take them, made once
        (kernels/products.py: ``documents_by_word``).

        Column access (the documents of a word) is what k-sparse products and submatrices need;
        slicing columns of the CSR S would cost a pass over all of S each time. A binary S's
        values are all 1, so S's own value array (as long, all 1) serves as the CSC's: 140 MB
        less for 17.7M stored entries (1M clustered tweets).
        """
        if self._csc is None:
            from spca_cli.kernels import unsigned_positions
            from spca_cli.kernels.products import documents_by_word, documents_by_word_parallel

            indptr, indices, data = _kernel_arrays(self.S)
            binary = self._is_binary()
            threads = self._product_threads()
            if threads > 1 and self.S.nnz >= _PARALLEL_PRODUCT_NNZ:
                # (a smaller S is sorted in milliseconds on one thread)
                cindptr, cindices, cdata = documents_by_word_parallel(
                    indptr, indices, data, self.n, not binary, threads)
            else:
                cindptr, cindices, cdata = documents_by_word(indptr, indices, data, self.n,
                                                             not binary)
            # (unsigned positions, as _kernel_arrays gives them)
            self._csc = (cindptr, unsigned_positions(cindices), data if binary else cdata)
        return self._csc

    def documents_of(self, idx):
        """``(indptr, rows)``: the documents (rows of S) holding each word of ``idx`` (a nonzero
        entry), word q's at ``rows[indptr[q]:indptr[q + 1]]``, from the column form made once
        (no pass over S)."""
        cindptr, cindices, cdata = self._documents_by_word()
        idx = np.asarray(idx, dtype=np.int64)
        pieces = []
        for j in idx.tolist():
            lo, hi = cindptr[j], cindptr[j + 1]
            rows = cindices[lo:hi]
            if not self._is_binary():  # (explicit zeros are no documents)
                rows = rows[cdata[lo:hi] != 0]
            pieces.append(rows)
        indptr = np.zeros(idx.size + 1, dtype=np.int64)
        np.cumsum([p.size for p in pieces], out=indptr[1:])
        rows = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.uint32)
        return indptr, rows

    def diagonal(self):
        """diag(A), computed once."""
        if self._diag is None:
            if self.S is not None:
                from spca_cli.kernels.counts import word_documents
                from spca_cli.kernels.products import gram_diagonal

                # the CSR's column indices give j directly (S is in canonical form); a binary
                # S's squares are all 1: its diagonal counts each word's documents
                indices = _kernel_arrays(self.S)[1]
                self._diag = (word_documents(indices, self.n).astype(np.float64)
                              if self._is_binary()
                              else gram_diagonal(indices, self.S.data, self.n))
            else:
                self._diag = np.diag(self.dense).copy()
        return self._diag

    def matmat(self, X, out=None):
        """A X for a dense X of shape (n, width) or (n,): one pass over S (kernels/products.py),
        the documents split between the product threads. ``out``: an (n, width) array (any
        layout) to write it into, returned."""
        if self.S is None:
            return written_into(self.dense @ X, out)
        from spca_cli.kernels.products import gram_block_product, gram_block_product_parallel

        one_d = X.ndim == 1
        if X.ndim not in (1, 2) or X.shape[0] != self.n:
            # (the kernel does not check its indices: a block of other rows would be read and
            # written out of bounds, where SciPy's product said so)
            raise ValueError(f"matmat: X of shape {X.shape} for A of shape ({self.n}, {self.n})")
        X = X.reshape(-1, 1) if one_d else X
        width = X.shape[1]
        X = _padded_block(X)
        arrays = _kernel_arrays(self.S)
        threads = min(self._product_threads(), self.S.shape[0],
                      max(1, _PRODUCT_BYTES // max(1, 8 * X.size)))
        if threads > 1:
            docs, copies = self._distinct_documents()
            if threads not in self._cuts:  # (every product of the run splits them alike)
                self._cuts[threads] = self._document_cuts(threads, docs)
            # (Fortran order, as an eigen step's basis takes it: its transpose is C-ordered,
            # as a single column's is, one compiled kernel for both)
            result = (np.empty((self.n, width), order="F") if out is None
                      else out.reshape(self.n, width))
            gram_block_product_parallel(*arrays, X, docs, copies, self._cuts[threads],
                                        self._is_binary(), result.T)
        else:
            result = written_into(gram_block_product(*arrays, X, self._is_binary())[:, :width],
                                  None if out is None else out.reshape(self.n, width))
        if out is not None:
            return out
        return result[:, 0] if one_d else result

    def _product_threads(self):
        if self.threads is not None:
            return self.threads
        if self.S.nnz < _PARALLEL_PRODUCT_NNZ:
            return 1
        import numba

        return numba.get_num_threads()

    def _distinct_documents(self):
        """``(docs, copies)`` of :func:`~spca_cli.kernels.products.distinct_documents` when the
        documents equal to an earlier one hold at least :data:`_REPEATED_SHARE` of S's entries
        (a block product then reads each distinct document once, times its copies), else two
        empty arrays (every document read). Found once, on the first parallel product.

        Texts set aside as duplicates at ingest differ in their words; documents that keep the
        same words after stop words and the vocabulary's cut are still many among tweets: of
        926,752 generated tweets with heavy repetition, 226,844 repeat an earlier row (25% of
        the entries): a 9-wide block product 0.43 -> 0.35 s, for 0.14-0.18 s once to find
        them. On the real corpora (0-3% of the entries) the product reads every document."""
        if self._distinct is None:
            from spca_cli.kernels.products import distinct_documents

            indptr, indices, data = _kernel_arrays(self.S)
            docs, copies = distinct_documents(indptr, indices, data, self._is_binary())
            kept = int(np.sum(indptr[docs + 1].astype(np.int64) - indptr[docs]))
            if kept > (1.0 - _REPEATED_SHARE) * self.S.nnz:
                docs, copies = np.zeros(0, dtype=np.int64), np.zeros(0)
            self._distinct = docs, copies
        return self._distinct

    def _document_cuts(self, threads, docs):
        """Where ``threads`` runs of documents with about equal numbers of entries start (and
        the last ends): ``threads + 1`` increasing positions from 0 to m, or, with ``docs`` (not
        empty), positions in ``docs`` from 0 to its length."""
        indptr = self.S.indptr
        if docs.size:
            indptr = np.concatenate([[0], np.cumsum(indptr[docs + 1] - indptr[docs])])
        targets = np.linspace(0, indptr[-1], threads + 1)[1:-1]
        inner = np.searchsorted(indptr, targets, side="left")
        return np.concatenate([[0], inner, [indptr.size - 1]]).astype(np.int64)

    def sparse_matvec(self, idx, w):
        """A x for x with weights ``w`` on words ``idx``; on S only the documents holding one of
        those words are touched."""
        if self.S is None:
            return self.dense[:, idx] @ w
        from spca_cli.kernels.tpower import gram_sparse_matvec

        # (contiguous arrays of one type: each other layout is one more compiled version for
        # numba to load from its cache, 6 ms a run)
        return gram_sparse_matvec(*_kernel_arrays(self.S),
                                  *self._documents_by_word(),
                                  np.ascontiguousarray(idx, dtype=np.int64),
                                  np.ascontiguousarray(w, dtype=np.float64),
                                  self.n, self.S.shape[0])

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
            sub = np.stack([cache[j][idx] for j in words], axis=1).astype(np.float64)
            return 0.5 * (sub + sub.T)  # (summed in another order than A[b, a]: weighted S)
        from spca_cli.kernels.tpower import gram_submatrix, gram_submatrix_by_documents

        C = self._documents_by_word()
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
        return stacked_columns(self.column_list(idx), self.n)

    def column_list(self, idx, *, beyond_room=False):
        """A[:, j] for each j of ``idx``, as the column cache holds them (length-n arrays,
        float32 where that is exact): for a caller that copies them where it needs them (a
        certificate's exact rows), without the (n, len(idx)) float64 block of :meth:`columns`
        (101 MB for 64 columns of 197,316 words). Read only: cached arrays are shared.
        ``beyond_room``: kept even past the cache's room (columns a caller keeps anyway: the
        first certificate's exact rows, :meth:`kept_block`)."""
        idx = np.asarray(idx, dtype=np.int64)
        if self.S is None:
            return [self.dense[:, j] for j in idx.tolist()]
        cache = self._columns
        fresh = {}
        with self._forming:
            missing = np.array([j for j in idx.tolist() if j not in cache], dtype=np.int64)
            if missing.size:
                if not beyond_room and cache_room(cache, self.n) < missing.size:
                    fresh = dict(zip(missing.tolist(), self.rows(missing)))
                else:
                    # formed in the cache's type (float32 holds every partial sum exactly: each
                    # is at most sum_d |S_di S_dj| <= sqrt(A_ii A_jj) < 2^24), each column a
                    # row of the block: no float64 block of twice the size, no copy
                    # (dupes-1M's first 256 columns: 404 MB less written)
                    block = self.rows(missing, dtype=self._cache_dtype())
                    cache.update(zip(missing.tolist(), block))
                    self._blocks.append((missing, block))
        return [cache[j] if j in cache else fresh[j] for j in idx.tolist()]

    def kept_block(self, idx):
        """The kept columns A[:, idx] as the one (len(idx), n) block they were formed in, when
        ``idx`` is exactly that block's words in order (read only); else None."""
        for words, block in self._blocks:
            if np.array_equal(words, idx):
                return block
        return None

    def _cache_dtype(self):
        """float32 when it holds every entry of A exactly (S's values are integers and the
        largest entry of A, on its diagonal, is below 2^24: |A_ij| <= sqrt(A_ii A_jj)), else
        float64; found once."""
        if self._column_dtype is None:
            data = self.S.data
            # (a binary S, known once for the product kernels, needs no pass of its own: a
            # rounded copy of 16M entries took 0.15 s)
            integral = self._is_binary() or bool(np.all(data == np.round(data)))
            small = float(self.diagonal().max(initial=0.0)) < _FLOAT32_EXACT
            self._column_dtype = np.float32 if integral and small else np.float64
        return self._column_dtype

    def exact_columns(self):
        """True when every column of A, and every sum of its entries a kernel forms, is exact
        (a dense A is read as given; S's integer entries whose co-occurrences float32 holds
        exactly, :meth:`_cache_dtype`): any kernel, in any order, gives the same numbers."""
        return self.S is None or self._cache_dtype() == np.float32

    def column_room(self):
        """How many more columns A[:, j], once formed, stay in the column cache for every view
        (all of them for a dense A, whose columns cost nothing to read)."""
        return self.n if self.S is None else max(0, cache_room(self._columns, self.n))

    def rows(self, idx, dtype=np.float64):
        """A[idx, :] of A = S^T S (the columns, transposed), shape (len(idx), n), not cached:
        one pass of the column kernel over the documents of each word of idx, on the product
        threads when there are several columns (the certificate's first 256: 2.3 s on one
        thread for 1,000,000 clustered tweets). ``dtype`` float32 only where it holds every
        entry and partial sum exactly (:meth:`_cache_dtype`)."""
        from spca_cli.kernels.tpower import gram_columns, gram_columns_parallel

        # (contiguous: a strided idx is another type to the kernels, another compilation)
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        arrays = (*_kernel_arrays(self.S), *self._documents_by_word())
        threads = self._product_threads()
        # a large S (the products' threads) reads each distinct document once, as its products
        # do: 926,752 generated tweets with heavy repetition, 256 columns in 0.55 s where
        # reading every row takes 0.67-0.79 s
        copies = self._row_copies() if threads > 1 else np.zeros(0)
        out = np.empty((idx.size, self.n), dtype=dtype)
        if threads > 1 and idx.size >= _PARALLEL_COLUMNS:
            return gram_columns_parallel(*arrays, idx, threads, self._is_binary(), copies,
                                         out)
        return gram_columns(*arrays, idx, self._is_binary(), copies, out)

    def _row_copies(self):
        """How many times each row of S counts when each distinct document is read once
        (:meth:`_distinct_documents`): its copies at its first row, 0 at the rows repeating it;
        empty when every document is read."""
        docs, copies = self._distinct_documents()
        if not docs.size:
            return np.zeros(0)
        if self._copies_by_row is None:
            self._copies_by_row = np.zeros(self.S.shape[0])
            self._copies_by_row[docs] = copies
        return self._copies_by_row

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
