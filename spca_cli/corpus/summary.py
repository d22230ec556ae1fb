"""What ``spca info`` reports about an input: sizes, date range, frequent words, spectrum."""

from __future__ import annotations

import numpy as np

from spca_cli.corpus.core import Corpus, input_gram
from spca_cli.corpus.times import format_time
from spca_cli.corpus.tokenize import document_frequency
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
    gram, _, sizes = input_gram(data)
    first = last = None
    words = []
    if isinstance(data, Corpus):  # only documents have times and word counts
        if data.times is not None and len(data.times):
            i, j = int(np.argmin(data.times)), int(np.argmax(data.times))
            first = format_time(data.times[i], data.tz_offsets[i])
            last = format_time(data.times[j], data.tz_offsets[j])
        words = top_words(data, top)
    out = {"path": data.path, "kind": data.kind, "documents": sizes["documents"],
           "words": sizes["words"], "nonzeros": sizes["nonzeros"], "first_time": first,
           "last_time": last, "top_words": words}
    values = []
    if n_eigenvalues > 0 and gram.n > 0:
        eigen = top_eigenpairs(gram, n_eigenvalues, method=single_call_method(gram))
        values = [float(v) for v in eigen.values]
    out["eigenvalues"] = values
    out["paths"] = sizes["paths"]
    return out
