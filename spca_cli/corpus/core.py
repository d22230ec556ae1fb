"""The two things an input becomes: a :class:`Corpus` (document-word matrix S) or a
:class:`MatrixInput` (a PSD matrix A given directly); :func:`input_gram` is the one place that
tells them apart for the commands: the operator A, the word labels and the input's summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from spca_cli.matrix import Gram
from spca_cli.report import DUPLICATES_SET_ASIDE

__all__ = ["Corpus", "MatrixInput", "InputGram", "input_gram"]


@dataclass
class Corpus:
    """A document-word matrix with its vocabulary and document times.

    Attributes
    ----------
    S : csr_array of shape (n_documents, n_words), float64
        After filtering and weighting; A = S^T S is the word co-occurrence matrix.
    vocabulary : ndarray of shape (n_words,), str
    times : ndarray of shape (n_documents,), int64, or None
        UTC seconds since 1970-01-01; None when the input has no times.
    tz_offsets : ndarray of shape (n_documents,), int32, or None
        UTC offset in seconds as written in the input, for display.
    kind : {'uci', 'csv', 'jsonl', 'text', 'mtx', 'corpus'}
    path : str
        The input path as given (the first one if several).
    options : dict
        The ingest options it was built with, JSON-ready.
    paths : list of str
        Every file read, in order (``-`` for standard input); ``path`` names the inputs as
        they were given (several joined with ', ').
    texts : Strings or None
        The text of each document (tweets, lines, UCI titles from ``--titles``); None when the
        input has none (UCI without titles, .mtx). See :mod:`spca_cli.corpus.texts`.
    ids : Strings or None
        The id of each document as the input gives it (tweet id, UCI docID), or None.
    rows : ndarray of shape (n_documents,), int64, or None
        When duplicates were set aside: each row's position among the documents read (0-based,
        after the time and language filters), the row the reports show; None when row i is
        the i-th document read.
    groups : ndarray of shape (n_documents,), object (str), or None
        Each document's group when the read was asked for one (``spca topics --by``): a CSV
        column's or JSON field's value, or a line of a UCI groups file; "" when empty.
    """

    S: sp.csr_array
    vocabulary: np.ndarray
    times: np.ndarray | None = None
    tz_offsets: np.ndarray | None = None
    kind: str = "text"
    path: str = ""
    options: dict = field(default_factory=dict)
    paths: list = field(default_factory=list)
    texts: object = None
    ids: object = None
    rows: object = None
    groups: object = None

    @property
    def duplicates(self):
        """Documents set aside as duplicates, ``{"exact": n, "near": m}``, or None when the
        read set none aside by design (``keep_duplicates``, or an input without texts)."""
        return self.options.get("duplicates_set_aside")

    def row_number(self, row):
        """The position among the documents read of row ``row`` of S."""
        return int(row if self.rows is None else self.rows[row])

    @property
    def n_documents(self):
        return int(self.S.shape[0])

    @property
    def n_words(self):
        return int(self.S.shape[1])

    @property
    def nnz(self):
        return int(self.S.nnz)


@dataclass
class MatrixInput:
    """A dense symmetric PSD matrix (``.npy``); solvers run on it directly.

    Attributes
    ----------
    A : ndarray of shape (n, n), float64
    labels : ndarray of shape (n,), str
        From ``--labels FILE``, else "0" .. "n-1".
    path : str
    kind : str, default='npy'
    paths : list of str
        The file read (as for :class:`Corpus`).
    psd_margin : float or None
        eps >= 0 with A + eps I PSD (:meth:`~spca_cli.matrix.Gram.from_dense`); None: measured
        when the Gram operator is made.
    """

    A: np.ndarray
    labels: np.ndarray
    path: str
    kind: str = "npy"
    paths: list = field(default_factory=list)
    psd_margin: float | None = None

    @property
    def n_words(self):
        return int(self.A.shape[0])


class InputGram(NamedTuple):
    """What the pipeline needs of an input (:func:`input_gram`)."""

    gram: Gram
    #: the name of each word (column of S, row of A), an object array
    labels: np.ndarray
    #: path, documents (None for a matrix given as A), words, nonzeros (of S, or of A) and
    #: paths, as the topics JSON reports the input
    summary: dict


def input_gram(data):
    """The operator A, the word labels and the summary of a :class:`Corpus` (A = S^T S) or a
    :class:`MatrixInput` (A as given), or of an object shaped like one of them (``S`` and
    ``vocabulary``, or ``A`` and ``labels``; ``path``, optionally ``paths``), or of a
    :class:`~spca_cli.distributed.corpus.DistributedCorpus` (its products on the workers).

    Returns
    -------
    InputGram
    """
    if getattr(data, "backend", None) is not None:  # row blocks of S on a Dask cluster
        gram, labels = Gram.from_backend(data.backend), data.vocabulary
        documents, nonzeros = int(data.n_documents), int(data.nnz)
    elif getattr(data, "S", None) is not None:
        gram, labels = Gram.from_documents(data.S), data.vocabulary
        documents, nonzeros = int(data.S.shape[0]), int(data.S.nnz)
    else:
        gram = Gram.from_dense(data.A, psd_margin=getattr(data, "psd_margin", None))
        labels = data.labels
        documents, nonzeros = None, int(np.count_nonzero(data.A))
    path = str(data.path)
    summary = {"path": path, "documents": documents, "words": int(gram.n), "nonzeros": nonzeros,
               "paths": list(getattr(data, "paths", None) or [path]),
               DUPLICATES_SET_ASIDE: getattr(data, "duplicates", None)}
    return InputGram(gram, np.asarray(labels, dtype=object), summary)
