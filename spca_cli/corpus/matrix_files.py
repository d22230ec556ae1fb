"""Matrix inputs: a dense PSD matrix (``.npy``) and a document-word matrix (MatrixMarket ``.mtx``).

A ``.mtx`` file holds S (rows documents, columns words), not A: the published comparison matrices
(``airline.mtx``, ``kos.mtx``) are stored that way, so A = S^T S as for any corpus. Its column
names come from ``--labels FILE``, else ``NAME.vocab.txt`` beside ``NAME.mtx``, else "0".."n-1".
"""

from __future__ import annotations

import logging
import os

import numpy as np
import scipy.io
import scipy.linalg
import scipy.sparse as sp

from spca_cli.corpus._io import check_file
from spca_cli.corpus.core import MatrixInput
from spca_cli.corpus.uci import read_vocabulary
from spca_cli.errors import SpcaInputError
from spca_cli.matrix import check_psd_matrix

__all__ = ["read_npy", "read_mtx", "read_labels", "PSD_CHECK_LIMIT"]

logger = logging.getLogger(__name__)

PSD_CHECK_LIMIT = 5000  # a dense eigvalsh beyond this takes too long for an input check


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
        A = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise SpcaInputError(path, f"not a NumPy .npy array ({exc})") from None
    try:
        A = check_psd_matrix(A)
    except ValueError as exc:
        raise SpcaInputError(path, str(exc)) from None
    n = A.shape[0]
    if n <= PSD_CHECK_LIMIT:
        w = scipy.linalg.eigvalsh(A)  # ascending
        if w[0] < -1e-8 * max(abs(w[-1]), np.finfo(float).tiny):
            raise SpcaInputError(path, f"matrix is not positive semidefinite (smallest eigenvalue "
                                       f"{w[0]:.6g}, largest {w[-1]:.6g})")
    else:
        logger.info("%s: n = %d > %d, positive semidefiniteness not checked", path, n,
                    PSD_CHECK_LIMIT)
    names = (read_labels(labels, n, matrix_path=path) if labels
             else np.array([str(i) for i in range(n)], dtype=str))
    return MatrixInput(A=A, labels=names, path=str(path))


def _beside(path):
    base = str(path)
    for ext in (".mtx.gz", ".mtx"):
        if base.endswith(ext):
            candidate = base[: -len(ext)] + ".vocab.txt"
            return candidate if os.path.exists(candidate) else None
    return None


def read_mtx(path, labels=None):
    """A document-word matrix S from MatrixMarket; returns (S, vocabulary, vocabulary file)."""
    check_file(path)
    try:
        M = scipy.io.mmread(path)
    except (ValueError, OSError, IndexError, TypeError) as exc:
        raise SpcaInputError(path, f"not a MatrixMarket file ({exc})") from None
    if not sp.issparse(M):
        M = sp.coo_array(np.asarray(M))
    S = sp.csr_array(M, dtype=np.float64)
    S.sum_duplicates()
    if S.nnz and not np.all(np.isfinite(S.data)):
        raise SpcaInputError(path, "matrix holds NaN or infinity")
    n = S.shape[1]
    source = labels or _beside(path)
    if source:
        vocabulary = read_labels(source, n, matrix_path=path)
    else:
        vocabulary = np.array([str(i) for i in range(n)], dtype=str)
    return S, vocabulary, source
