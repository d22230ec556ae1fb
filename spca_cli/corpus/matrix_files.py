"""Matrix inputs: a dense PSD matrix (``.npy``) and a document-word matrix (MatrixMarket ``.mtx``).

A ``.mtx`` file holds S (rows documents, columns words), not A: the published comparison matrices
(``airline.mtx``, ``kos.mtx``) are stored that way, so A = S^T S as for any corpus. Its column
names come from ``--labels FILE``, else ``NAME.vocab.txt`` beside ``NAME.mtx``, else "0".."n-1".
"""

from __future__ import annotations

import os

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from spca_cli.corpus._io import check_file
from spca_cli.corpus.core import MatrixInput
from spca_cli.corpus.uci import read_vocabulary
from spca_cli.errors import SpcaInputError, SpcaParameterError
from spca_cli.limits import MAX_GRAM_TRACE, check_memory
from spca_cli.matrix import check_psd_matrix, negative_part

__all__ = ["read_npy", "read_mtx", "read_labels", "extreme_eigenvalues", "check_gram_range",
           "PSD_CHECK_LIMIT"]


PSD_CHECK_LIMIT = 2000  # all eigenvalues by LAPACK up to this order; Lanczos beyond
PSD_TOLERANCE = 1e-8  # smallest eigenvalue allowed: -1e-8 lambda_max (rounding of a PSD matrix)


def extreme_eigenvalues(A):
    """(smallest, largest) eigenvalue of the symmetric dense matrix ``A``.

    Up to ``PSD_CHECK_LIMIT`` rows LAPACK computes them all. Beyond, Lanczos (ARPACK) finds
    the largest, then the largest of lambda_max I - A, which is lambda_max - lambda_min: both
    are extreme eigenvalues, which Lanczos finds in a few dozen products with A, accurate to
    about 1e-10 lambda_max, so the PSD check costs seconds at any size instead of O(n^3).
    """
    n = A.shape[0]
    if n <= PSD_CHECK_LIMIT:
        w = scipy.linalg.eigvalsh(A)  # ascending
        return float(w[0]), float(w[-1])
    start = np.ones(n) / np.sqrt(n)  # deterministic, and never orthogonal to everything
    largest = float(_top_eigenvalue(lambda x: A @ x, n, start))
    if largest <= 0:
        # no positive eigenvalue: the matrix is PSD only if it is 0, and then max abs is 0
        return float(-np.abs(A).max()), largest
    spread = float(_top_eigenvalue(lambda x: largest * x - A @ x, n, start))
    return largest - spread, largest


def _top_eigenvalue(matvec, n, start):
    from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

    op = LinearOperator((n, n), matvec=matvec, dtype=np.float64)
    try:
        return eigsh(op, k=1, which="LA", v0=start, tol=1e-10, maxiter=5000,
                     return_eigenvectors=False)[0]
    except ArpackNoConvergence as exc:
        if len(exc.eigenvalues):
            return exc.eigenvalues[0]
        raise SpcaParameterError("the positive-semidefiniteness check did not converge") from None


def read_labels(path, n, *, matrix_path):
    """Labels from ``path`` (one per line); their number must be ``n``."""
    words = read_vocabulary(path)
    if len(words) != n:
        raise SpcaInputError(path, f"has {len(words)} labels but {matrix_path} has {n} "
                                   f"{'columns' if str(matrix_path).endswith('.mtx') else 'rows'}")
    return words


def read_npy(path, labels=None):
    """A dense symmetric PSD matrix from ``.npy`` as a :class:`MatrixInput`.

    Raises
    ------
    SpcaInputError
        When the file is not a numeric square symmetric PSD matrix (the message says which).
    """
    check_file(path)
    try:
        # memory-mapped first: the header's shape is checked against the file's size before
        # anything is allocated, so a truncated or lying file is an error, not a huge allocation
        A = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise SpcaInputError(path, f"not a NumPy .npy array ({exc})") from None
    if not isinstance(A, np.ndarray):
        raise SpcaInputError(path, "not a NumPy .npy array (an .npz archive?)")
    if np.iscomplexobj(A):
        raise SpcaInputError(path, f"matrix holds complex numbers ({A.dtype}); spca needs a real "
                                   "symmetric matrix")
    if A.ndim == 2:
        check_memory(3 * 8 * A.size, f"a {A.shape[0]:,} x {A.shape[1]:,} matrix")
    try:
        A = check_psd_matrix(np.array(A))
    except ValueError as exc:
        raise SpcaInputError(path, str(exc)) from None
    n = A.shape[0]
    smallest, largest = extreme_eigenvalues(A)
    if smallest < -PSD_TOLERANCE * max(abs(largest), np.finfo(float).tiny):
        raise SpcaInputError(path, f"matrix is not positive semidefinite (smallest eigenvalue "
                                   f"{smallest:.6g}, largest {largest:.6g})")
    names = (read_labels(labels, n, matrix_path=path) if labels
             else np.array([str(i) for i in range(n)], dtype=str))
    return MatrixInput(A=A, labels=names, path=str(path),
                       psd_margin=negative_part(A, smallest, largest))


def _beside(path):
    base = str(path)
    for ext in (".mtx.gz", ".mtx"):
        if base.endswith(ext):
            candidate = base[: -len(ext)] + ".vocab.txt"
            return candidate if os.path.exists(candidate) else None
    return None


def check_gram_range(path, values):
    """Refuse a matrix whose entries ``values`` (of S) make A = S^T S too large for float64.

    The values are refused, not scaled: a scaled matrix would report every explained variance,
    bound and eigenvalue in other units than the file's, which reads as a silently wrong answer.
    The test is trace(A) = the sum of the squared values against
    :data:`~spca_cli.limits.MAX_GRAM_TRACE`, computed in logarithms so that it never overflows
    itself. It applies to the values as read, whatever ``--weighting`` makes of them later.

    Raises
    ------
    SpcaInputError
        ``values too large: S^T S overflows float64 (...)``.
    """
    values = np.abs(np.asarray(values, dtype=np.float64))
    largest = float(values.max()) if values.size else 0.0
    if largest == 0.0:
        return
    # log10 of sum(v^2) = 2 log10(max) + log10(sum((v / max)^2)), each factor finite
    log_trace = 2 * np.log10(largest) + np.log10(float(np.sum((values / largest) ** 2)))
    if log_trace > np.log10(MAX_GRAM_TRACE):
        raise SpcaInputError(path, f"values too large: S^T S overflows float64 (its trace, the "
                                   f"sum of the squared entries, is about 1e{log_trace:.0f}; "
                                   f"products of its entries stay finite up to "
                                   f"1e{np.log10(MAX_GRAM_TRACE):.0f})")


def read_mtx(path, labels=None):
    """A document-word matrix S from MatrixMarket; returns (S, vocabulary, vocabulary file).

    A complex matrix is refused (as a complex ``.npy`` is), and so are values whose A = S^T S
    would overflow float64 (:func:`check_gram_range`).
    """
    check_file(path)
    import scipy.io  # (here: 23 ms of every run's start otherwise, and only MatrixMarket needs it)

    try:
        M = scipy.io.mmread(path)
    except (ValueError, OSError, IndexError, TypeError) as exc:
        raise SpcaInputError(path, f"not a MatrixMarket file ({exc})") from None
    if np.iscomplexobj(M):  # casting to float64 would drop the imaginary parts silently
        raise SpcaInputError(path, f"matrix holds complex numbers ({M.dtype}); spca needs a real "
                                   "matrix")
    if not sp.issparse(M):
        M = sp.coo_array(np.asarray(M))
    S = sp.csr_array(M, dtype=np.float64)
    S.sum_duplicates()
    if S.nnz and not np.all(np.isfinite(S.data)):
        raise SpcaInputError(path, "matrix holds NaN or infinity")
    check_gram_range(path, S.data)
    n = S.shape[1]
    source = labels or _beside(path)
    if source:
        vocabulary = read_labels(source, n, matrix_path=path)
    else:
        vocabulary = np.array([str(i) for i in range(n)], dtype=str)
    return S, vocabulary, source
