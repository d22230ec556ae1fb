"""The 2013 paper's tokenising recipe, built on scikit-learn's text tools, and the streaming
vocabulary that turns token lists into a sparse document-word matrix chunk by chunk.

The recipe (SPEC, "Inputs"): lower-case, drop URLs and @mentions, keep hashtag words without
'#' (all three inside the token pattern, see :class:`Tokenizer`), keep tokens of at least
``min_length`` characters that start with a letter (apostrophes inside a word are kept, so
"don't" and "a320's" are one token each), drop stop words, drop words found in fewer than
``min_count`` documents, then weight (binary by default). On the airline tweets this gives
exactly the published ``matrices/airline.mtx`` (less the word 'amp', as we unescape ``&amp;``).

Stop words and ``min_count`` are applied to whole columns once the corpus is read
(:func:`filter_words`); removing a word everywhere gives the same matrix as removing it from
every token list, and costs one pass over the nonzeros instead of one set lookup per token.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer, TfidfTransformer

from spca_cli.errors import SpcaInputError, SpcaParameterError

__all__ = [
    "Tokenizer",
    "make_analyzer",
    "VocabularyBuilder",
    "merge_parts",
    "read_stopwords",
    "filter_words",
    "apply_weighting",
    "WEIGHTINGS",
]

logger = logging.getLogger(__name__)

WEIGHTINGS = ("binary", "count", "tfidf")

# Documents of a chunk are joined with this character and tokenised as one string; the token
# pattern matches it as a token of its own, so each document's tokens stay apart.
SEPARATOR = "\x1e"
# URLs (with or without a scheme) and @mentions are matched by the token pattern *without* a
# capturing group, so they come out as the empty token '' and are dropped; they are consumed
# whole, so no word inside them survives. '#' is not a word character, so the word of a hashtag
# is a token by itself.
_DROPPED = r"(?:https?://|www\.)\S*|@\w+"


def token_pattern(min_length=3):
    """The regular expression of one token: a letter, then letters, digits, '_' or "'".

    The trailing ``\\b`` makes the regex give back a trailing apostrophe ("flights'" -> "flights").
    """
    if min_length < 1:
        raise SpcaParameterError(f"--min-length must be at least 1, got {min_length}")
    return r"(?u)\b[^\W\d_][\w']{%d,}\b" % (min_length - 1)


def _chunk_pattern(min_length):
    word = token_pattern(min_length)[len("(?u)"):]
    return r"(?u)%s|(%s|%s)" % (_DROPPED, SEPARATOR, word)


class Tokenizer:
    """The recipe as a scikit-learn ``CountVectorizer``, applied a chunk of documents at a time.

    Parameters
    ----------
    min_length : int, default=3
        Shortest token kept (characters).

    Notes
    -----
    The vectorizer's preprocessor lower-cases; its token pattern has one capturing group (the
    word, or the document separator), so URLs and @mentions, matched outside the group, become
    empty tokens that are dropped. ``CountVectorizer``'s per-document analyzer costs several
    Python calls per document, most of the ingest time at a million tweets, so its preprocessor
    and tokenizer are applied to a whole chunk joined with :data:`SEPARATOR`: one C-level regex
    pass per chunk. Stop words are not given to the vectorizer; :func:`filter_words` removes them
    as columns.

    Examples
    --------
    >>> Tokenizer(3)("Thanks @united! Don't lose #Bags http://t.co/x")
    ['thanks', "don't", 'lose', 'bags']
    """

    def __init__(self, min_length=3):
        self.min_length = min_length
        self.vectorizer = CountVectorizer(preprocessor=str.lower,
                                          token_pattern=_chunk_pattern(min_length),
                                          lowercase=False, stop_words=None)
        self._preprocess = self.vectorizer.build_preprocessor()
        self._tokenize = self.vectorizer.build_tokenizer()

    def __call__(self, text):
        """The tokens of one document."""
        return [t for t in self._tokenize(self._preprocess(text)) if t and t != SEPARATOR]

    def tokenize_chunk(self, texts):
        """The tokens of all ``texts`` in one list: :data:`SEPARATOR` between documents, and ''
        where a URL or mention was dropped."""
        joined = SEPARATOR.join(texts)
        if joined.count(SEPARATOR) != len(texts) - 1:
            # a document holds the separator itself (a control character, so almost never)
            joined = SEPARATOR.join(t.replace(SEPARATOR, " ") for t in texts)
        return self._tokenize(self._preprocess(joined))


def make_analyzer(min_length=3):
    """A function str -> list of tokens of one document (the recipe's analyzer)."""
    return Tokenizer(min_length)


class VocabularyBuilder:
    """Accumulate tokenised chunks into one CSR matrix of counts.

    Word ids are given in order of first appearance through a ``defaultdict`` whose default
    factory is its own ``__len__`` (the trick scikit-learn's ``CountVectorizer._count_vocab``
    uses), so mapping a whole chunk of tokens to ids is one C-level ``map``. Id 0 is the document
    separator and id 1 the empty token of a dropped URL or mention. Each chunk is turned into
    CSR pieces at once, so memory holds the counts, never the text.
    """

    def __init__(self):
        self._vocab = defaultdict()
        self._vocab.default_factory = self._vocab.__len__
        self._vocab[SEPARATOR]  # id 0
        self._vocab[""]  # id 1
        self._indptr = [np.zeros(1, dtype=np.int64)]
        self._indices = []
        self._data = []
        self._nnz = 0
        self.n_documents = 0

    def add(self, tokens, n_documents):
        """Add one chunk: the tokens of ``n_documents`` documents separated by SEPARATOR."""
        if n_documents == 0:
            return
        ids = np.fromiter(map(self._vocab.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        is_sep = ids == 0
        word = ids > 1
        rows = np.cumsum(is_sep)[word]
        ids = ids[word]
        # int32 counts while reading (half the memory of float64); float64 once, in finish()
        chunk = sp.csr_array((np.ones(len(ids), dtype=np.int32), (rows, ids)),
                             shape=(n_documents, len(self._vocab)))
        chunk.sum_duplicates()  # one entry per (document, word): the count
        self._indptr.append(chunk.indptr[1:].astype(np.int64) + self._nnz)
        self._indices.append(chunk.indices.astype(np.int32))
        self._data.append(chunk.data)
        self._nnz += chunk.nnz
        self.n_documents += n_documents

    def word_id(self, word):
        """Column of ``word`` in the matrix :meth:`finish` returns before sorting, or -1."""
        return self._vocab.get(word, 1) - 2 if word else -1

    def part(self):
        """This builder's counts as plain arrays (picklable, for the parallel ingest):
        ``(words, indptr, indices, data, n_documents)`` with words in id order (ids 0 and 1,
        the separator and the empty token, left out) and int32 ids and counts."""
        words = np.array(list(self._vocab)[2:], dtype=str)
        indices = np.concatenate(self._indices) if self._indices else np.zeros(0, np.int32)
        data = np.concatenate(self._data) if self._data else np.zeros(0, np.int32)
        return words, np.concatenate(self._indptr), indices, data, self.n_documents

    def finish(self):
        """The counts (csr_array, float64) and the vocabulary, sorted alphabetically.

        Sorting (as CountVectorizer does) makes the column order independent of document order.
        """
        return merge_parts([self.part()])


def merge_parts(parts):
    """Stack the counts of several :meth:`VocabularyBuilder.part` results (documents in the
    order given) into one csr_array (float64) over the union of their words, sorted
    alphabetically, as one builder fed all the chunks would give.

    ``parts`` is emptied as it is consumed, so each part's arrays can be freed early.
    """
    parts = list(parts)
    vocabulary, inverse = np.unique(np.concatenate([p[0] for p in parts]) if parts
                                    else np.zeros(0, dtype=str), return_inverse=True)
    n_documents = sum(p[4] for p in parts)
    nnz = sum(len(p[2]) for p in parts)
    # int32 index arrays while they fit (as scipy itself picks), half the memory of int64
    index_dtype = np.int32 if nnz < 2 ** 31 - 1 else np.int64
    indptr = np.zeros(n_documents + 1, dtype=index_dtype)
    indices = np.empty(nnz, dtype=np.int32)
    data = np.empty(nnz, dtype=np.float64)
    row = at = first_word = 0
    while parts:
        words, p_indptr, p_indices, p_data, n_docs = parts.pop(0)
        new_id = np.zeros(len(words) + 2, dtype=np.int32)  # ids 0, 1: separator, empty token
        new_id[2:] = inverse[first_word:first_word + len(words)]
        first_word += len(words)
        indices[at:at + len(p_indices)] = new_id[p_indices]
        data[at:at + len(p_data)] = p_data
        indptr[row + 1:row + n_docs + 1] = p_indptr[1:] + at
        row += n_docs
        at += len(p_indices)
    S = sp.csr_array((data, indices, indptr), shape=(n_documents, len(vocabulary)))
    S.has_sorted_indices = False
    S.sort_indices()
    return S, vocabulary


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
        # a new matrix sharing S's index arrays: only the data is new (S is not modified)
        out = sp.csr_array(((S.data != 0).astype(np.float64), S.indices, S.indptr),
                           shape=S.shape, copy=False)
        out.has_sorted_indices = S.has_sorted_indices
        return out
    if weighting == "tfidf":
        return sp.csr_array(TfidfTransformer().fit_transform(S), dtype=np.float64)
    raise SpcaParameterError(f"--weighting must be one of {', '.join(WEIGHTINGS)}, "
                             f"got {weighting!r}")
