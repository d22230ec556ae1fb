"""The word co-occurrence matrix A = S^T S as an operator, and its deflated views.

A corpus of m documents over n words is a sparse matrix S (m x n). Its co-occurrence matrix
A = S^T S is n x n and, for a real vocabulary, far too dense to form: every solver here only
needs products A X, small principal submatrices A[J, J] and the diagonal, all of which cost a
couple of sparse products with S. :class:`Gram` provides exactly those, for A = S^T S or for a
dense PSD matrix given directly (``.npy`` input).

Deflation between components is a *view* of the same operator (nothing n x n is ever formed):

* ``remove``: A' = M A M, with M the diagonal 0/1 mask of words not yet used (2015 paper);
* ``projection``: A' = Q^T (M A M) Q with Q = P_1 P_2 ... P_t, P_i = I - x_i x_i^T (Mackey 2008).
  Q is kept in the compact form Q = I - X R X^T (X n x t, R t x t upper triangular), so a
  product with A' costs one product with A plus O(n t) work.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import LinearOperator

from spca_cli.backend import LocalBackend, stacked_columns, written_into

__all__ = ["Gram", "SparseProducts", "check_psd_matrix"]


#: Kept columns of A copied into one float64 block at a time by :meth:`Gram.columns_product`
_COLUMN_CHUNK = 32


class Gram:
    """A = S^T S (or a dense PSD A), optionally deflated.

    Parameters
    ----------
    S : sparse matrix of shape (n_documents, n_words), optional
        Document-word matrix; A = S^T S is never formed densely.
    dense : ndarray of shape (n_words, n_words), optional
        A PSD matrix given directly. Exactly one of ``S`` and ``dense`` is given.

    Notes
    -----
    Instances are immutable: :meth:`remove` and :meth:`project_out` return new views that share
    the underlying data, so the original A stays available for reporting explained variance.
    """

    def __init__(self, S=None, dense=None, *, psd_margin=0.0, _mask=None, _X=None, _R=None,
                 _backend=None):
        self.backend = (_backend if _backend is not None
                        else LocalBackend(S=S, dense=dense, psd_margin=psd_margin))
        self.n = self.backend.n
        self.mask = _mask  # (n,) float 0/1, or None for "all words active"
        self.X = _X  # (n, t) unit vectors projected out, or None
        self.R = _R  # (t, t) so that Q = I - X R X^T
        self._diag_cache = None
        self._MX_cache = None

    @property
    def S(self):
        """The document-word matrix of A = S^T S (None for a dense A)."""
        return self.backend.S

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_documents(cls, S):
        """A = S^T S for a document-word matrix S of shape (n_documents, n_words)."""
        return cls(S=S)

    @classmethod
    def from_dense(cls, A, *, psd_margin=None):
        """A dense symmetric (nearly) PSD matrix of shape (n, n), used as is.

        ``psd_margin``: an eps >= 0 with A + eps I PSD, e.g. minus the smallest eigenvalue of a
        matrix that is PSD up to rounding (``read_npy`` measures it); computed here when not
        given. The bounds that hold only for PSD matrices (a trace bounds lambda_max,
        |A_ij| <= sqrt(A_ii A_jj)) hold for A + eps I, and x^T A x = x^T (A + eps I) x - eps
        for unit x carries them back (:attr:`psd_margin`)."""
        A = np.ascontiguousarray(A, dtype=np.float64)
        if psd_margin is None:
            psd_margin = negative_part(A)
        return cls(dense=A, psd_margin=psd_margin)

    @property
    def psd_margin(self):
        """eps >= 0 with A + eps I PSD, for A and every view of it (a principal submatrix or a
        compression of A + eps I is PSD): 0 for S^T S."""
        return getattr(self.backend, "psd_margin", 0.0)

    @classmethod
    def from_backend(cls, backend):
        """A held by ``backend`` (an object with the methods of
        :class:`~spca_cli.backend.LocalBackend`, e.g. the Dask engine's
        :class:`~spca_cli.distributed.backend.DaskBackend`)."""
        return cls(_backend=backend)

    @property
    def shape(self):
        return (self.n, self.n)

    @property
    def is_deflated(self):
        return self.mask is not None or self.X is not None

    def original(self):
        """The undeflated A this view was made from."""
        return Gram(_backend=self.backend)

    def _view(self, mask, X, R):
        return Gram(_mask=mask, _X=X, _R=R, _backend=self.backend)

    def base_diagonal(self):
        """diag(A) of the undeflated A, shared by all views."""
        return self.backend.diagonal()

    def _base_matmat(self, X, out=None):
        return self.backend.matmat(X, out=out)

    def _masked_X(self):
        if self._MX_cache is None:
            self._MX_cache = self.X if self.mask is None else self.X * self.mask[:, None]
        return self._MX_cache

    # ------------------------------------------------------------------ products with A'
    def matmat(self, V, out=None):
        """A' V for V of shape (n, p) (or (n,)), without forming A'. ``out``: an array of
        shape (n, p) (any layout) to write it into, returned."""
        V = np.asarray(V, dtype=np.float64)
        one_d = V.ndim == 1
        if one_d:
            V = V[:, None]
        if self.X is not None:
            V = V - self.X @ (self.R @ (self.X.T @ V))  # Q V
        if self.mask is not None:
            V = V * self.mask[:, None]
        if out is not None:
            target = out.reshape(V.shape)
            W = written_into(self._base_matmat(V, target), target)
        else:
            W = self._base_matmat(V)
            if W is V:  # (a backend that hands back its input: W is changed in place below)
                W = W.copy()
        # (in place: W is the product's own array, and a copy of n x p costs a pass and fresh
        # memory, 24 MB a block product at 197,316 words)
        if self.mask is not None:
            W *= self.mask[:, None]
        if self.X is not None:
            W -= self.X @ (self.R.T @ (self.X.T @ W))  # Q^T W
        if out is not None:
            return out
        return W[:, 0] if one_d else W

    def matvec(self, v):
        return self.matmat(np.asarray(v, dtype=np.float64).ravel())

    def quadratic(self, x):
        """x^T A' x for a dense vector x of length n."""
        x = np.asarray(x, dtype=np.float64)
        return float(x @ self.matvec(x))

    def sparse_quadratic(self, indices, weights):
        """x^T A' x for x with ``weights`` on ``indices`` (cheap on the undeflated A)."""
        indices = np.asarray(indices, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        sub = self.submatrix(indices)
        return float(weights @ sub @ weights)

    def as_linear_operator(self):
        return LinearOperator(self.shape, matvec=self.matvec, matmat=self.matmat,
                              rmatvec=self.matvec, dtype=np.float64)

    # ------------------------------------------------------------------ entries of A'
    def submatrix(self, idx):
        """The dense principal submatrix A'[idx, idx] of shape (len(idx), len(idx)).

        With projection deflation B = M Q E_J = M E_J - (M X) Z^T with Z = X_J R^T, so
        B^T A B needs only A_JJ, C = A (M X) (one block product) and small dense algebra.
        """
        idx = np.asarray(idx, dtype=np.int64)
        sub = self.backend.submatrix(idx)
        m = None if self.mask is None else self.mask[idx]
        if m is not None:
            sub = sub * np.outer(m, m)
        if self.X is not None:
            MX = self._masked_X()
            C = self._base_matmat(MX)  # (n, t)
            Z = self.X[idx] @ self.R.T  # (|J|, t)
            CJ = C[idx] if m is None else C[idx] * m[:, None]
            cross = CJ @ Z.T  # E_J^T M A (M X) Z^T
            sub = sub - cross - cross.T + Z @ (MX.T @ C) @ Z.T
        return 0.5 * (sub + sub.T)

    def base_columns(self, idx):
        """The columns A[:, idx] of the undeflated A, shape (n, len(idx)) (cached by the
        backend for every view of this A)."""
        return self.backend.columns(np.asarray(idx, dtype=np.int64))

    def base_column_list(self, idx):
        """The columns A[:, j] of the undeflated A for j in ``idx``, each a length-n array as the
        backend keeps it (float32 where exact; read only)."""
        return self.backend.column_list(np.asarray(idx, dtype=np.int64))

    def keep_columns(self, idx):
        """Form the columns A[:, idx] of the undeflated A once, as one block kept by the
        backend for every view (past its room: the caller's certificate keeps them anyway):
        :meth:`submatrix`, :meth:`columns_product` and the certificates' exact rows then read
        them instead of passes over S."""
        self.backend.column_list(np.asarray(idx, dtype=np.int64), beyond_room=True)

    def kept_block(self, idx):
        """The kept columns A[:, idx] of the undeflated A as one (len(idx), n) array when the
        backend formed and keeps exactly these, in this order, as one block (read only; no
        copy); else None."""
        kept = getattr(self.backend, "kept_block", None)
        return None if kept is None else kept(np.asarray(idx, dtype=np.int64))

    def columns_product(self, idx, Y):
        """A'[:, idx] Y for Y of shape (len(idx), c), shape (n, c). On an undeflated A from
        the backend's kept columns: read in place when they are one kept block
        (:func:`~spca_cli.kernels.products.rows_product`), else :data:`_COLUMN_CHUNK` of them
        at a time in one float64 block (the first eigen step's 256 columns of 197,316 words: a
        50 MB block written 8 times instead of the 404 MB of :meth:`columns`, whose fresh
        memory took 0.3-1.4 s to fault in)."""
        idx = np.asarray(idx, dtype=np.int64)
        Y = np.asarray(Y, dtype=np.float64)
        if self.is_deflated:
            return self.columns(idx) @ Y
        block = self.kept_block(idx)
        if block is not None:
            from spca_cli.kernels.products import rows_product

            return rows_product(block, np.ascontiguousarray(Y))
        columns = self.base_column_list(idx)
        out = np.zeros((self.n, Y.shape[1]))
        block = np.empty((self.n, min(_COLUMN_CHUNK, len(columns))), order="F")
        for lo in range(0, len(columns), _COLUMN_CHUNK):
            part = columns[lo:lo + _COLUMN_CHUNK]
            out += stacked_columns(part, self.n, out=block[:, :len(part)]) @ Y[lo:lo + len(part)]
        return out

    def exact_columns(self):
        """True when every base column A[:, j] is exactly the same numbers whichever kernel,
        thread or order forms it: A dense as given, or S with integer entries whose products
        A holds exactly (the backend's ``exact_columns``). A step beside the run may then form
        columns the run reads meanwhile (:meth:`~spca_cli.bounds.SharedRows.ahead`)."""
        exact = getattr(self.backend, "exact_columns", None)
        return exact is not None and bool(exact())

    def column_room(self):
        """How many more base columns A[:, j], once formed, are kept for every view of this A
        (by the backend's column cache), so that a second use costs no pass over S."""
        room = getattr(self.backend, "column_room", None)
        return 0 if room is None else int(room())

    def columns(self, idx):
        """The columns A'[:, idx] of this view, shape (n, len(idx)), without forming A'.

        With projection deflation A' E_J = Q^T M A B for B = M Q E_J = M E_J - (M X) Z^T,
        Z = X_J R^T (see :meth:`submatrix`): the base columns A[:, J], C = A (M X) and small
        dense algebra.
        """
        idx = np.asarray(idx, dtype=np.int64)
        cols = self.base_columns(idx)
        m = None if self.mask is None else self.mask
        if m is not None:
            cols = cols * m[:, None] * m[idx][None, :]
        if self.X is not None:
            MX = self._masked_X()
            C = self._base_matmat(MX)  # (n, t)
            Z = self.X[idx] @ self.R.T  # (|J|, t)
            W = cols - (C if m is None else C * m[:, None]) @ Z.T  # M A B
            cols = W - self.X @ (self.R.T @ (self.X.T @ W))  # Q^T W
        return cols

    def diagonal(self):
        """diag(A') of length n (cached: a view never changes)."""
        if self._diag_cache is None:
            d = self.base_diagonal()
            if self.mask is not None:
                d = d * self.mask
            if self.X is not None:
                MX = self._masked_X()
                C = self._base_matmat(MX)
                Zall = self.X @ self.R.T  # (n, t)
                mC = C if self.mask is None else C * self.mask[:, None]
                d = d - 2.0 * np.einsum("ij,ij->i", mC, Zall)
                d = d + np.einsum("ij,ij->i", Zall @ (MX.T @ C), Zall)
            self._diag_cache = np.maximum(d, 0.0)
        return self._diag_cache

    def is_nonnegative(self):
        """True if A' is provably entrywise nonnegative (cheap, conservative).

        A = S^T S with S >= 0 is nonnegative, and so is a dense A with no negative entry; a
        ``remove`` view (M A M, M a 0/1 mask) keeps that. A projection-deflated view mixes
        signs in general, so it is reported as not nonnegative without looking.
        """
        return self.X is None and self.backend.is_nonnegative()

    def sparse_products(self):
        """A workspace of exact products of this view with k-sparse vectors, for one solve
        (TPower's iterations and swap search, greedy's columns): see :class:`SparseProducts`."""
        return SparseProducts(self)

    def to_dense(self):
        """A' as a dense (n, n) array; only for small n (tests, tiny matrices)."""
        return self.submatrix(np.arange(self.n))

    # ------------------------------------------------------------------ deflation views
    def active(self):
        """Boolean mask of words a solver may still choose."""
        if self.mask is None:
            return np.ones(self.n, dtype=bool)
        return self.mask > 0

    def carried(self, source, V, AV):
        """``(M V, A' M V)`` for this view from vectors ``V`` (n x c) of the view ``source`` and
        their images ``AV`` = A_source V, when this view is ``source`` with more words removed
        (``remove`` deflation, no projection); None otherwise.

        With M and M_s the two masks (M <= M_s) and D = M_s - M the words removed since,
        A' M V = M A M V = M A M_s V - M A D V = M (A_s V) - M A[:, D] V[D, :], as M A M_s
        = M M_s A M_s: the images cost the base columns of the few words removed (cached for
        the certificate) and no product with S.
        """
        if source.backend is not self.backend or self.X is not None or source.X is not None:
            return None
        now, before = self.active(), source.active()
        if np.any(now & ~before):
            return None
        removed = np.flatnonzero(before & ~now)
        images = AV - self.base_columns(removed) @ V[removed] if removed.size else AV.copy()
        if self.mask is not None:
            images *= self.mask[:, None]
            return V * self.mask[:, None], images
        return V.copy(), images

    def remove(self, indices):
        """A' = M A M with the words ``indices`` masked out as well (disjoint supports)."""
        mask = np.ones(self.n) if self.mask is None else self.mask.copy()
        mask[np.asarray(indices, dtype=np.int64)] = 0.0
        return self._view(mask, self.X, self.R)

    def project_out(self, x):
        """A' = P A P with P = I - x x^T for the unit vector x (dense, length n).

        Q_new = Q P = I - [X x] R_new [X x]^T with R_new = [[R, -R X^T x], [0, 1]].
        """
        x = np.asarray(x, dtype=np.float64).ravel()
        x = x / np.linalg.norm(x)
        if self.X is None:
            X_new, R_new = x[:, None], np.ones((1, 1))
        else:
            t = self.X.shape[1]
            R_new = np.zeros((t + 1, t + 1))
            R_new[:t, :t] = self.R
            R_new[:t, t] = -self.R @ (self.X.T @ x)
            R_new[t, t] = 1.0
            X_new = np.column_stack([self.X, x])
        return self._view(self.mask, X_new, R_new)


class SparseProducts:
    """Exact products of a view A' with k-sparse vectors, by the cheapest path for that view.

    * undeflated or ``remove``-deflated A: the backend's k-sparse product (on S only the
      documents of the k words), the mask applied after;
    * projection-deflated views: :meth:`Gram.matmat` on the dense vector.

    Columns asked for are kept (about 64 MB) for reuse within one solve: a swap search computes
    the columns of the support, and the next product with that support costs only n k work.
    """

    def __init__(self, A):
        self.A = A
        self.n = A.n
        self.active = A.active()  # (n,) bool
        self._mask = A.mask
        self._columns = {}
        self._projected = A.X is not None
        if not self._projected:
            self._diag = A.base_diagonal()
            if self._mask is not None:
                self._diag = self._diag * self._mask

    def _masked(self, z):
        return z if self._mask is None else z * self._mask

    def matvec(self, idx, w):
        """A' x for x with weights ``w`` on words ``idx``; dense result of shape (n,)."""
        idx = np.asarray(idx, dtype=np.int64)
        w = np.asarray(w, dtype=np.float64)
        if self._mask is not None:
            w = w * self._mask[idx]
        missing = sum(1 for j in idx.tolist() if j not in self._columns)
        if missing <= 1 and idx.size > 1:
            # the columns are at hand (a swap search just computed them): n k work, no S pass
            return self.columns(idx) @ w
        if not self._projected:
            return self._masked(self.A.backend.sparse_matvec(idx, w))
        x = np.zeros(self.n)
        x[idx] = w
        return self.A.matvec(x)

    def columns(self, idx):
        """A'[:, idx] of shape (n, len(idx))."""
        idx = np.asarray(idx, dtype=np.int64)
        missing = np.array([j for j in idx.tolist() if j not in self._columns], dtype=np.int64)
        if missing.size:
            # keep at most ~64 MB of columns (and always the ones asked for now)
            limit = max(idx.size, (64 << 20) // (8 * self.n))
            if len(self._columns) + missing.size > limit:
                wanted = set(idx.tolist())
                self._columns = {j: c for j, c in self._columns.items() if j in wanted}
            if not self._projected:
                block = self.A.backend.columns(missing)
                if self._mask is not None:
                    block = block * self._mask[:, None] * self._mask[missing]
            else:
                E = np.zeros((self.n, missing.size))
                E[missing, np.arange(missing.size)] = 1.0
                block = self.A.matmat(E)
            for t, j in enumerate(missing.tolist()):
                self._columns[j] = np.ascontiguousarray(block[:, t])
        if idx.size == 0:
            return np.zeros((self.n, 0))
        return np.column_stack([self._columns[j] for j in idx.tolist()])

    def submatrix(self, idx):
        """A'[idx, idx], symmetrised, shape (len(idx), len(idx))."""
        return self.A.submatrix(idx)

    def diagonal(self):
        """diag(A') of shape (n,)."""
        if not self._projected:
            return self._diag
        return self.A.diagonal()


# Largest order whose extreme eigenvalues :func:`negative_part` asks of LAPACK (all of them, a
# second or two at 2,000); beyond it Lanczos finds the smallest.
_LAPACK_ORDER = 2000


def negative_part(A, smallest=None, largest=None):
    """An eps >= 0 with A + eps I PSD for the symmetric dense ``A``: minus its smallest
    eigenvalue, plus what rounding may have hidden of it (8 n eps |lambda_max| for LAPACK's
    backward-stable values; 1e-9 |lambda_max| for Lanczos, accurate to about 1e-10 there), 0 when
    the smallest is clearly positive. ``smallest`` and ``largest``, when known, save the
    eigenvalue computation."""
    n = A.shape[0]
    if n == 0:
        return 0.0
    if smallest is None or largest is None:
        if n <= _LAPACK_ORDER:
            w = scipy.linalg.eigvalsh(A, check_finite=False)
            smallest, largest = float(w[0]), float(w[-1])
        else:
            from scipy.sparse.linalg import eigsh

            largest = float(np.abs(A).sum(axis=1).max())  # Gershgorin: >= |lambda| for all
            smallest = float(eigsh(A, k=1, which="SA", tol=1e-10, maxiter=5000,
                                   return_eigenvectors=False)[0])
    rel = 8.0 * n * np.finfo(float).eps if n <= _LAPACK_ORDER else 1e-9
    return float(max(0.0, rel * abs(largest) - smallest))


def check_psd_matrix(A, *, tol=1e-8):
    """Check that A is a finite, square, symmetric matrix; return it as float64.

    Raises ``ValueError`` with a sentence a user can act on (the CLI adds the file name).
    Symmetry is checked relative to the largest entry; tiny asymmetry is averaged away.
    """
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"matrix must be 2-dimensional and square, got shape {A.shape}")
    if A.shape[0] == 0:
        raise ValueError("matrix is empty")
    if not np.issubdtype(A.dtype, np.number):
        raise ValueError(f"matrix must hold numbers, got dtype {A.dtype}")
    A = A.astype(np.float64)
    if not np.all(np.isfinite(A)):
        bad = np.argwhere(~np.isfinite(A))[0]
        raise ValueError(f"matrix holds NaN or infinity (first at row {bad[0]}, column {bad[1]})")
    scale = max(np.abs(A).max(), 1.0)
    asym = np.abs(A - A.T).max()
    if asym > tol * scale:
        i, j = np.unravel_index(np.argmax(np.abs(A - A.T)), A.shape)
        raise ValueError(f"matrix is not symmetric (A[{i},{j}] = {A[i, j]:g} but A[{j},{i}] = {A[j, i]:g})")
    return 0.5 * (A + A.T)
