"""What ``spca info`` reports about an input: sizes, date range, frequent words, spectrum."""

from __future__ import annotations

import numpy as np

from spca_cli.corpus.core import Corpus
from spca_cli.corpus.times import format_time
from spca_cli.corpus.tokenize import document_frequency
from spca_cli.matrix import Gram
from spca_cli.spectrum import single_call_method, top_eigenpairs

__all__ = ["summarize", "top_words"]


def top_words(corpus, n):
    """The ``n`` words found in most documents, as [{"word", "documents"}], most first
    (ties in vocabulary order, so the list is deterministic)."""
    df = document_frequency(corpus.S)
    order = np.argsort(-df, kind="stable")[:n]
    return [{"word": str(corpus.vocabulary[i]), "documents": int(df[i])} for i in order]


def summarize(data, *, top=10, n_eigenvalues=5):
    """The dict of ``spca info --format json`` (SPEC names, in SPEC order).

    Parameters
    ----------
    data : Corpus or MatrixInput
    top : int
        Number of most frequent words.
    n_eigenvalues : int
        Number of leading eigenvalues of A = S^T S (or of the matrix given), largest first.
    """
    if isinstance(data, Corpus):
        gram = Gram.from_documents(data.S)
        first = last = None
        if data.times is not None and len(data.times):
            i, j = int(np.argmin(data.times)), int(np.argmax(data.times))
            first = format_time(data.times[i], data.tz_offsets[i])
            last = format_time(data.times[j], data.tz_offsets[j])
        out = {"path": data.path, "kind": data.kind, "documents": data.n_documents,
               "words": data.n_words, "nonzeros": data.nnz, "first_time": first,
               "last_time": last, "top_words": top_words(data, top)}
    else:
        gram = Gram.from_dense(data.A)
        out = {"path": data.path, "kind": data.kind, "documents": None, "words": data.n_words,
               "nonzeros": int(np.count_nonzero(data.A)), "first_time": None, "last_time": None,
               "top_words": []}
    values = []
    if n_eigenvalues > 0 and gram.n > 0:
        eigen = top_eigenpairs(gram, n_eigenvalues, method=single_call_method(gram))
        values = [float(v) for v in eigen.values]
    out["eigenvalues"] = values
    out["paths"] = list(data.paths) or [str(data.path)]
    return out
