"""The documents behind each topic: scores, coverage, top documents and assignments.

A topic is a unit vector x with k nonzero words; a document's **score** for it is s_d . x,
s_d the document's row of S (after weighting: with the default binary weighting, the sum of the
weights of the topic's words the document contains). The scores of every document for every
topic come from one sparse product, ``S[:, support] @ W`` (W the topics' weights on the union of
their supports), and :func:`topic_scores` is what a ``transform`` of new documents would call.

* ``coverage`` of a topic: the documents that contain at least one of its words of nonzero
  weight, as a count and a share of all documents.
* ``top_documents``: the N documents with the largest positive score, ties broken by row
  (smaller first), so the listing is the same on every run. A score of 0 means the document
  contains none of the topic's words, and it is never listed, so every listed document
  contains at least one of them. A text is listed once: a document whose text has the key
  of one listed above it (:func:`~spca_cli.corpus.duplicates.normalise`: a copy, a retweet,
  the same words to another @handle) is passed over for the next.
* ``row`` (in both): the document's position among those read, which is its row of S unless
  duplicates were set aside (``Corpus.rows`` then keeps the positions).
* assignments: per document, the topic with the largest positive score (the smaller topic
  number on a tie), empty when the document contains none of any topic's words.
"""

from __future__ import annotations

import csv

import numpy as np
import scipy.sparse as sp

from spca_cli.corpus.duplicates import normalise
from spca_cli.corpus.times import format_time
from spca_cli.errors import SpcaParameterError
from spca_cli.files import atomic_output

__all__ = ["topic_scores", "coverage_counts", "top_rows", "distinct_top_rows",
           "document_record", "add_documents",
           "best_topics", "write_assignments", "DEFAULT_DOCUMENTS"]

DEFAULT_DOCUMENTS = 3
_ASSIGNMENT_BLOCK = 50_000


def _support(component):
    """(indices, weights) of a Topic or of a component of the JSON document."""
    if isinstance(component, dict):
        return (np.asarray(component["indices"], dtype=np.int64),
                np.asarray(component["weights"], dtype=np.float64))
    return (np.asarray(component.indices, dtype=np.int64),
            np.asarray(component.weights, dtype=np.float64))


def _topic_matrix(components, n_words):
    """(columns, W): the union of the supports and the weights on it, one column per topic."""
    supports = [_support(c) for c in components]
    columns = np.unique(np.concatenate([i for i, _ in supports] or [np.zeros(0, np.int64)]))
    if len(columns) and (columns[0] < 0 or columns[-1] >= n_words):
        raise SpcaParameterError(f"topic word indices must be in [0, {n_words})")
    W = np.zeros((len(columns), len(supports)))
    for j, (indices, weights) in enumerate(supports):
        W[np.searchsorted(columns, indices), j] = weights
    return columns, W


def topic_scores(S, components):
    """Scores s_d . x of every document (rows of ``S``) for every topic.

    Parameters
    ----------
    S : sparse matrix of shape (n_documents, n_words)
        The corpus's document-word matrix (``Corpus.S``), as weighted when built.
    components : list of Topic or of dicts with ``indices`` and ``weights``

    Returns
    -------
    ndarray of shape (n_documents, n_components), float64
    """
    columns, W = _topic_matrix(components, S.shape[1])
    if not len(columns):
        return np.zeros((S.shape[0], len(components)))
    return np.asarray(sp.csr_array(S)[:, columns] @ W)


def coverage_counts(S, components):
    """How many documents contain at least one word of nonzero weight of each topic."""
    columns, W = _topic_matrix(components, S.shape[1])
    if not len(columns):
        return np.zeros(len(components), dtype=np.int64)
    present = sp.csr_array(S)[:, columns]
    present.data = (present.data != 0).astype(np.float64)
    hits = present @ (W != 0).astype(np.float64)  # words of the topic each document contains
    return (hits > 0).sum(axis=0).astype(np.int64)


def top_rows(scores, n):
    """Rows of the ``n`` largest positive ``scores``: score descending, then row ascending."""
    positive = np.flatnonzero(scores > 0)
    if n <= 0 or not len(positive):
        return np.zeros(0, dtype=np.int64)
    values = scores[positive]
    if len(positive) > n:
        # keep everything tied with the n-th largest, then order exactly
        cut = np.partition(values, len(values) - n)[len(values) - n]
        keep = values >= cut
        positive, values = positive[keep], values[keep]
    order = np.lexsort((positive, -values))
    return positive[order[:n]].astype(np.int64)


def distinct_top_rows(scores, n, texts):
    """:func:`top_rows`, passing over a row whose text (its :func:`normalise` key) is one
    listed already; ``texts`` None: :func:`top_rows` itself."""
    if texts is None:
        return top_rows(scores, n)
    wanted = n
    while True:
        rows = top_rows(scores, wanted)
        out, seen = [], set()
        for row in rows.tolist():
            key = normalise(texts[row])
            if key not in seen:
                seen.add(key)
                out.append(row)
                if len(out) == n:
                    return np.array(out, dtype=np.int64)
        if len(rows) < wanted:  # every document of positive score was looked at
            return np.array(out, dtype=np.int64)
        wanted *= 4


def _row_numbers(corpus):
    """The positions among the documents read of the rows of S (None: the rows themselves)."""
    return getattr(corpus, "rows", None)


def document_record(corpus, row, score):
    """``{row, score, time, id, text}`` of one document (None where the input has no such
    field); ``row`` is the document's position among those read."""
    row = int(row)
    time = None
    if corpus.times is not None:
        time = format_time(corpus.times[row], corpus.tz_offsets[row])
    ids = getattr(corpus, "ids", None)
    texts = getattr(corpus, "texts", None)
    rows = _row_numbers(corpus)
    return {"row": row if rows is None else int(rows[row]), "score": float(score), "time": time,
            "id": None if ids is None else ids[row],
            "text": None if texts is None else texts[row]}


def add_documents(doc, corpus, n_documents=DEFAULT_DOCUMENTS):
    """Add ``coverage`` and (when ``n_documents`` > 0) ``top_documents`` to every component of
    the JSON document ``doc`` of a run on ``corpus``; returns ``doc``.

    Nothing is added for a matrix input, which has no documents.
    """
    if getattr(corpus, "backend", None) is not None:  # rows on a Dask cluster: ask them there
        return corpus.add_documents(doc, n_documents)
    S = getattr(corpus, "S", None)
    comps = doc.get("components", [])
    if S is None or not comps:
        return doc
    m = int(S.shape[0])
    counts = coverage_counts(S, comps)
    scores = topic_scores(S, comps) if n_documents > 0 else None
    for j, comp in enumerate(comps):
        comp["coverage"] = {"documents": int(counts[j]),
                            "share": float(counts[j] / m) if m else 0.0}
        if scores is not None:
            comp["top_documents"] = [document_record(corpus, row, scores[row, j])
                                     for row in distinct_top_rows(
                                         scores[:, j], n_documents,
                                         getattr(corpus, "texts", None))]
    return doc


def best_topics(scores):
    """Per document, the 1-based topic with the largest positive score (the smaller number on
    a tie), 0 when no score is positive."""
    if scores.shape[1] == 0:
        return np.zeros(scores.shape[0], dtype=np.int64)
    best = np.argmax(scores, axis=1)  # argmax returns the first of equal maxima
    top = scores[np.arange(scores.shape[0]), best]
    return np.where(top > 0, best + 1, 0).astype(np.int64)


def write_assignments(path, corpus, components):
    """Write ``path`` (CSV, atomically): one row per document with ``row, id, time,
    best_topic, score_1 .. score_C``. ``best_topic`` is empty for a document that contains
    none of the topics' words; ``id`` and ``time`` are empty when the input has none.

    Returns the number of documents written.
    """
    if getattr(corpus, "backend", None) is not None:  # rows on a Dask cluster
        return corpus.write_assignments(path, components)
    S = corpus.S
    scores = topic_scores(S, components)
    best = best_topics(scores)
    m, n_topics = scores.shape
    ids = getattr(corpus, "ids", None)
    numbers = _row_numbers(corpus)
    header = ["row", "id", "time", "best_topic"] + [f"score_{j}" for j in range(1, n_topics + 1)]
    with atomic_output(path, "w") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        for start in range(0, m, _ASSIGNMENT_BLOCK):
            stop = min(m, start + _ASSIGNMENT_BLOCK)
            rows = []
            for r in range(start, stop):
                time = ("" if corpus.times is None
                        else format_time(corpus.times[r], corpus.tz_offsets[r]))
                rows.append([r if numbers is None else int(numbers[r]),
                             "" if ids is None else ids[r], time, best[r] or "",
                             *map(repr, scores[r].tolist())])
            writer.writerows(rows)
    return m
