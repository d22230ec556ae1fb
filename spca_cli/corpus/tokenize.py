"""The 2013 paper's tokenising recipe, built on scikit-learn's text tools, and the streaming
vocabulary that turns token lists into a sparse document-word matrix chunk by chunk.

The recipe (SPEC, "Inputs"): lower-case, drop URLs and @mentions, keep hashtag words without
'#', keep tokens of at least ``min_length`` characters that start with a letter (apostrophes
inside a word are kept, so "don't" and "a320's" are one token each), drop stop words, drop words
found in fewer than ``min_count`` documents, then weight (binary by default).

Stop words and ``min_count`` are applied to whole columns once the corpus is read
(:func:`filter_words`); removing a word everywhere gives the same matrix as removing it from
every token list, and costs one pass over the nonzeros instead of one set lookup per token.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from itertools import chain
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer, TfidfTransformer

from spca_cli.errors import SpcaInputError, SpcaParameterError

__all__ = [
    "preprocess",
    "make_analyzer",
    "VocabularyBuilder",
    "read_stopwords",
    "filter_words",
    "apply_weighting",
    "WEIGHTINGS",
]

logger = logging.getLogger(__name__)

WEIGHTINGS = ("binary", "count", "tfidf")

# URLs (with or without a scheme) and @mentions go; of a hashtag only the '#' goes.
# They are replaced by a space, not deleted, so the words either side never fuse.
_DROP = re.compile(r"(?:https?://|www\.)\S*|@\w+|#")


def preprocess(text):
    """Lower-case ``text`` and drop URLs, @mentions and the '#' of hashtags.

    Examples
    --------
    >>> preprocess("Thanks @united! #Travel http://t.co/x")
    'thanks  !  travel  '
    """
    return _DROP.sub(" ", text.lower())


def token_pattern(min_length=3):
    """The regular expression of one token: a letter, then letters, digits, '_' or "'".

    The trailing ``\\b`` makes the regex give back a trailing apostrophe ("flights'" -> "flights").
    """
    if min_length < 1:
        raise SpcaParameterError(f"--min-length must be at least 1, got {min_length}")
    return r"(?u)\b[^\W\d_][\w']{%d,}\b" % (min_length - 1)


def make_analyzer(min_length=3):
    """A function str -> list of tokens (CountVectorizer's analyzer with our recipe).

    Stop words are not passed to the vectorizer: :func:`filter_words` removes them as columns.
    """
    vectorizer = CountVectorizer(preprocessor=preprocess, token_pattern=token_pattern(min_length),
                                 lowercase=False, stop_words=None)
    return vectorizer.build_analyzer()


class VocabularyBuilder:
    """Accumulate token lists, chunk by chunk, into one CSR matrix of counts.

    Word ids are given in order of first appearance through a ``defaultdict`` whose default
    factory is its own ``__len__`` (the trick scikit-learn's ``CountVectorizer._count_vocab``
    uses), so mapping a whole chunk of tokens to ids is one C-level ``map``. Each chunk is turned
    into CSR pieces at once, so memory holds the counts, never the text.
    """

    def __init__(self):
        self._vocab = defaultdict()
        self._vocab.default_factory = self._vocab.__len__
        self._indptr = [np.zeros(1, dtype=np.int64)]
        self._indices = []
        self._data = []
        self._nnz = 0
        self.n_documents = 0

    def add(self, token_lists):
        """Add one chunk: a list with the list of tokens of each document."""
        n = len(token_lists)
        lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=n)
        total = int(lengths.sum())
        ids = np.fromiter(map(self._vocab.__getitem__, chain.from_iterable(token_lists)),
                          dtype=np.int64, count=total)
        rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
        chunk = sp.csr_array((np.ones(total, dtype=np.float64), (rows, ids)),
                             shape=(n, max(len(self._vocab), 1)))
        chunk.sum_duplicates()  # one entry per (document, word): the count
        self._indptr.append(chunk.indptr[1:].astype(np.int64) + self._nnz)
        self._indices.append(chunk.indices.astype(np.int32))
        self._data.append(chunk.data)
        self._nnz += chunk.nnz
        self.n_documents += n

    def word_id(self, word):
        """Id of ``word`` or -1 when it never occurred (does not add it)."""
        return self._vocab.get(word, -1)

    def finish(self):
        """The counts (csr_array, float64) and the vocabulary, sorted alphabetically.

        Sorting (as CountVectorizer does) makes the column order independent of document order.
        """
        words = np.array(list(self._vocab), dtype=str) if self._vocab else np.array([], dtype=str)
        order = np.argsort(words, kind="stable")
        new_id = np.empty(len(words), dtype=np.int32)
        new_id[order] = np.arange(len(words), dtype=np.int32)
        indices = np.concatenate(self._indices) if self._indices else np.zeros(0, np.int32)
        S = sp.csr_array(
            (np.concatenate(self._data) if self._data else np.zeros(0),
             new_id[indices] if len(indices) else indices,
             np.concatenate(self._indptr)),
            shape=(self.n_documents, len(words)))
        S.has_sorted_indices = False
        S.sort_indices()
        return S, words[order]


def read_stopwords(stopwords):
    """The stop word set for ``--stopwords english|none|FILE`` (FILE: one word per line)."""
    if stopwords is None or stopwords == "none":
        return frozenset()
    if stopwords == "english":
        return ENGLISH_STOP_WORDS
    path = Path(stopwords)
    if not path.is_file():
        raise SpcaInputError(stopwords, "stop word file not found (use english, none or a FILE)")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SpcaInputError(stopwords, f"not UTF-8 text ({exc.reason})") from None
    return frozenset(w.strip().lower() for w in text.splitlines() if w.strip())


def keep_columns(S, keep):
    """The columns ``keep`` (boolean mask) of the CSR matrix S, without scipy's fancy indexing."""
    keep = np.asarray(keep, dtype=bool)
    if keep.all():
        return S
    new_id = np.cumsum(keep, dtype=np.int64) - 1
    m = keep[S.indices]
    counts = np.concatenate([[0], np.cumsum(m, dtype=np.int64)])
    out = sp.csr_array((S.data[m], new_id[S.indices[m]].astype(np.int32), counts[S.indptr]),
                       shape=(S.shape[0], int(keep.sum())))
    out.has_sorted_indices = True  # order within rows is preserved
    return out


def document_frequency(S):
    """Number of documents (rows) each word (column) occurs in."""
    return np.bincount(S.indices[S.data != 0], minlength=S.shape[1]).astype(np.int64)


def filter_words(S, vocabulary, *, stopwords=frozenset(), min_count=1, min_length=1):
    """Drop stop words, words shorter than ``min_length`` and words in fewer than ``min_count``
    documents; return the smaller (S, vocabulary)."""
    keep = np.ones(len(vocabulary), dtype=bool)
    if stopwords:
        keep &= ~np.isin(vocabulary, np.array(sorted(stopwords), dtype=str))
    if min_length > 1:
        keep &= np.char.str_len(vocabulary) >= min_length if len(vocabulary) else keep
    if min_count > 1:
        keep &= document_frequency(S) >= min_count
    logger.info("keeping %d of %d words", keep.sum(), len(keep))
    return keep_columns(S, keep), vocabulary[keep]


def apply_weighting(S, weighting):
    """Counts -> ``binary`` (1 where a word occurs), ``count`` (as is) or ``tfidf``
    (scikit-learn's TfidfTransformer: smooth idf, rows of unit l2 norm)."""
    if weighting == "count":
        return S
    if weighting == "binary":
        S = S.copy()
        S.data = (S.data != 0).astype(np.float64)
        return S
    if weighting == "tfidf":
        return sp.csr_array(TfidfTransformer().fit_transform(S), dtype=np.float64)
    raise SpcaParameterError(f"--weighting must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")
