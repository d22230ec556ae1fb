"""What ``spca info`` reports about an input: sizes, date range, frequent words, spectrum."""

from __future__ import annotations

import numpy as np

from spca_cli.corpus.core import Corpus, input_gram
from spca_cli.corpus.times import format_time
from spca_cli.corpus.tokenize import document_frequency
from spca_cli.report import DUPLICATES_SET_ASIDE
from spca_cli.spectrum import single_call_method, top_eigenpairs

__all__ = ["summarize", "top_words"]


def top_words(corpus, n):
    """The ``n`` words found in most documents, as [{"word", "documents"}], most first
    (ties in vocabulary order, so the list is deterministic)."""
    if hasattr(corpus, "document_frequency"):  # a distributed corpus sums its blocks' counts
        df = corpus.document_frequency()
    else:
        df = document_frequency(corpus.S)
    order = np.argsort(-df, kind="stable")[:n]
    return [{"word": str(corpus.vocabulary[i]), "documents": int(df[i])} for i in order]


def _time_span(corpus):
    """(first, last) document time as text, or (None, None) without times."""
    if hasattr(corpus, "time_span"):  # a distributed corpus knows it from its blocks
        return corpus.time_span()
    if corpus.times is None or not len(corpus.times):
        return None, None
    i, j = int(np.argmin(corpus.times)), int(np.argmax(corpus.times))
    return (format_time(corpus.times[i], corpus.tz_offsets[i]),
            format_time(corpus.times[j], corpus.tz_offsets[j]))


def summarize(data, *, top=10, n_eigenvalues=5):
    """The dict of ``spca info --format json`` (SPEC names, in SPEC order).

    Parameters
    ----------
    data : Corpus, MatrixInput or DistributedCorpus
    top : int
        Number of most frequent words.
    n_eigenvalues : int
        Number of leading eigenvalues of A = S^T S (or of the matrix given), largest first.
    """
    gram, _, sizes = input_gram(data)
    first = last = None
    words = []
    if isinstance(data, Corpus) or hasattr(data, "backend"):  # documents: times, word counts
        first, last = _time_span(data)
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
    out[DUPLICATES_SET_ASIDE] = sizes[DUPLICATES_SET_ASIDE]
    return out
