"""Seeded synthetic data for paper reproductions and tests.

* :func:`spiked_covariance` / :func:`spiked_samples`: the spiked covariance model of Section 4.1
  of the 2013 spannogram paper (after Shen & Huang 2008 and Yuan & Zhang 2013): a covariance with
  a few sparse, disjointly supported leading eigenvectors and unit eigenvalues elsewhere.
* :func:`zipf_corpus`: a document-word matrix whose word frequencies follow Zipf's law, with a
  few planted topics (groups of words that occur together) and document times spread over days,
  so every measure of ``spca reproduce`` (including per-day runs) can be exercised without the
  real corpora.
* :func:`write_corpus`: the same kind of corpus written to disk chunk by chunk, as tweets (JSON
  lines) or a UCI docword file, up to millions of documents, for the scale benchmarks
  (``bench/bench_scale.py``) and the hidden ``spca generate`` command.

Every function takes ``random_state`` (None, an int or a ``RandomState``); pass an int for
reproducible results across calls.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field

import numba
import numpy as np
import scipy.sparse as sp

from spca_cli.errors import SpcaParameterError
from spca_cli.seeds import random_state_of
from spca_cli.solvers._base import check_float, check_int

__all__ = ["SpikedModel", "spiked_covariance", "spiked_samples", "empirical_covariance",
           "MatrixData", "CorpusData", "zipf_corpus", "write_corpus", "word_names",
           "GeneratedFile", "KINDS"]


@dataclass(frozen=True)
class SpikedModel:
    """Sigma = sum_i lambda_i v_i v_i^T + noise * (I - sum_i v_i v_i^T).

    Attributes
    ----------
    n : int
        Dimension.
    vectors : ndarray of shape (n, s)
        The s sparse, orthonormal spikes v_i (disjoint supports).
    eigenvalues : ndarray of shape (s,)
        lambda_1 >= lambda_2 >= ... of the spikes.
    noise : float
        The eigenvalue shared by the n - s remaining eigenvectors.
    supports : list of frozenset
        The support of each spike.
    """

    n: int
    vectors: np.ndarray
    eigenvalues: np.ndarray
    noise: float
    supports: list = field(default_factory=list)

    def covariance(self):
        """Sigma as a dense (n, n) array."""
        V = self.vectors
        return self.noise * np.eye(self.n) + (V * (self.eigenvalues - self.noise)) @ V.T

    def sqrt_covariance(self):
        """Sigma^(1/2) as a dense (n, n) array (same eigenvectors, square-rooted eigenvalues)."""
        V = self.vectors
        root = np.sqrt(self.noise)
        return root * np.eye(self.n) + (V * (np.sqrt(self.eigenvalues) - root)) @ V.T


def spiked_covariance(n=500, *, sparsity=10, eigenvalues=(400.0, 300.0), noise=1.0,
                      supports="first", random_state=None):
    """The spiked covariance model of the 2013 paper, Section 4.1.

    Sigma = sum_{i=1}^n lambda_i v_i v_i^T with lambda_1 = 400, lambda_2 = 300 and
    lambda_3 = ... = lambda_n = 1 by default. The spikes v_1, v_2 have ``sparsity`` nonzero
    entries each, equal to 1/sqrt(sparsity), on disjoint supports. Since all remaining
    eigenvalues are equal, the choice of the remaining orthonormal eigenvectors (any basis of the
    null space of [v_1 v_2]) does not change Sigma.

    Parameters
    ----------
    n : int, default=500
        Dimension.
    sparsity : int, default=10
        Nonzero entries per spike.
    eigenvalues : sequence of float, default=(400, 300)
        Eigenvalues of the spikes, each > ``noise``.
    noise : float, default=1.0
        The remaining eigenvalue.
    supports : {'first', 'random'}, default='first'
        ``'first'`` puts spike i on coordinates i*sparsity .. (i+1)*sparsity - 1, as in Yuan and
        Zhang (2013); ``'random'`` draws disjoint supports with ``random_state``.
    random_state : None, int or RandomState
        Only used with ``supports='random'``.

    Returns
    -------
    SpikedModel

    References
    ----------
    Papailiopoulos, Dimakis, Korokythakis, "Sparse PCA through low-rank approximations",
    ICML 2013, Section 4.1 and Table 1.

    Examples
    --------
    >>> model = spiked_covariance(50, sparsity=5)
    >>> sorted(model.supports[0])
    [0, 1, 2, 3, 4]
    >>> round(float(model.covariance()[0, 0]), 3)
    80.8
    """
    n = check_int("n", n, 2)
    sparsity = check_int("sparsity", sparsity, 1)
    noise = check_float("noise", noise, 0.0)
    lam = np.asarray([check_float("eigenvalues", v, noise, low_open=True) for v in eigenvalues])
    s = len(lam)
    if s == 0:
        raise SpcaParameterError("eigenvalues must list at least one spike")
    if s * sparsity > n:
        raise SpcaParameterError(f"spikes * sparsity must be <= n; got {s} * {sparsity} > {n}")
    if supports == "first":
        coords = np.arange(s * sparsity)
    elif supports == "random":
        coords = random_state_of(random_state).permutation(n)[:s * sparsity]
    else:
        raise SpcaParameterError(f"supports must be 'first' or 'random', got {supports!r}")
    V = np.zeros((n, s))
    sets = []
    for i in range(s):
        idx = np.sort(coords[i * sparsity:(i + 1) * sparsity])
        V[idx, i] = 1.0 / np.sqrt(sparsity)
        sets.append(frozenset(int(j) for j in idx))
    return SpikedModel(n=n, vectors=V, eigenvalues=lam, noise=noise, supports=sets)


def spiked_samples(model, m, *, random_state=None):
    """``m`` samples of N(0, Sigma) as the rows of an (m, n) array.

    Parameters
    ----------
    model : SpikedModel
    m : int
        Number of samples.
    random_state : None, int or RandomState

    Returns
    -------
    X : ndarray of shape (m, n)
    """
    m = check_int("m", m, 1)
    rng = random_state_of(random_state)
    Z = rng.standard_normal((m, model.n))  # (m, n), rows ~ N(0, I)
    # X = Z Sigma^(1/2) (symmetric), so rows ~ N(0, Sigma); Sigma^(1/2) = sqrt(noise) I plus a
    # rank-s correction, applied in O(m n s) instead of forming the n x n root
    V = model.vectors  # (n, s)
    root = np.sqrt(model.noise)
    return root * Z + ((Z @ V) * (np.sqrt(model.eigenvalues) - root)) @ V.T


def empirical_covariance(X, *, center=False):
    """A = X^T X / m (or of the centred X), the sample covariance the solvers are given.

    The model's mean is known to be zero, so by default the samples are not centred (centring
    would throw away one of only m samples, which matters for m = 5).
    """
    X = np.asarray(X, dtype=np.float64)
    if center:
        X = X - X.mean(axis=0)
    A = X.T @ X / X.shape[0]
    return 0.5 * (A + A.T)


@dataclass
class MatrixData:
    """A dense PSD matrix input, shaped like what :func:`spca_cli.corpus.load_input` returns."""

    A: np.ndarray
    labels: list
    path: str


@dataclass
class CorpusData:
    """A document-word matrix input, shaped like what :func:`spca_cli.corpus.load_input` returns.

    ``times`` are int64 UTC epoch seconds (one per document) or None.
    """

    S: sp.csr_array
    vocabulary: list
    path: str
    times: np.ndarray | None = None
    tz_offsets: np.ndarray | None = None
    topics: list = field(default_factory=list)


def zipf_corpus(documents=2000, words=1000, *, topics=5, topic_words=10, topic_rate=0.3,
                words_per_document=12, exponent=1.1, days=7, start="2015-02-17",
                utc_offset_minutes=-480, random_state=None):
    """A binary document-word matrix with Zipf word frequencies and planted topics.

    Each document draws ``words_per_document`` background words from a Zipf law
    (P(rank r) proportional to r^-exponent). With probability ``topic_rate`` it is also about one
    topic, chosen uniformly, and then contains each of that topic's ``topic_words`` words with
    probability 0.8. Topic words are named ``topicT_wordJ`` and background words ``wordN``, so a
    test can tell at a glance whether a component found a planted topic. Times are spread
    uniformly over ``days`` local days starting at ``start`` (local time = UTC +
    ``utc_offset_minutes``).

    Parameters
    ----------
    documents, words : int
        Matrix shape (``words`` includes the topic words).
    topics, topic_words : int
        Number of planted topics and words per topic.
    topic_rate : float
        Probability that a document is about a topic.
    words_per_document : int
        Background words drawn per document (repeats collapse).
    exponent : float
        Zipf exponent of the background.
    days : int
        Local days the document times cover.
    start : str
        First local day, YYYY-MM-DD.
    utc_offset_minutes : int
        Local time minus UTC, in minutes (-480 is the airline CSV's -08:00).
    random_state : None, int or RandomState

    Returns
    -------
    CorpusData
        With ``topics`` = the list of planted word-index sets.

    Examples
    --------
    >>> corpus = zipf_corpus(200, 100, topics=2, random_state=0)
    >>> corpus.S.shape
    (200, 100)
    >>> corpus.vocabulary[corpus.topics[0][0]]
    'topic1_word1'
    """
    documents = check_int("documents", documents, 1)
    words = check_int("words", words, 2)
    topics = check_int("topics", topics, 0)
    topic_words = check_int("topic_words", topic_words, 1)
    topic_rate = check_float("topic_rate", topic_rate, 0.0, 1.0)
    words_per_document = check_int("words_per_document", words_per_document, 0)
    exponent = check_float("exponent", exponent, 0.0)
    days = check_int("days", days, 1)
    if topics * topic_words >= words:
        raise SpcaParameterError(f"topics * topic_words must be < words; got "
                                 f"{topics} * {topic_words} >= {words}")
    try:
        first = dt.date.fromisoformat(str(start))
    except ValueError:
        raise SpcaParameterError(f"start must be YYYY-MM-DD, got {start!r}") from None
    rng = random_state_of(random_state)

    # topic words take columns spread through the vocabulary, the rest is Zipf background
    n_topic = topics * topic_words
    topic_cols = np.sort(rng.choice(words, n_topic, replace=False))
    rng.shuffle(topic_cols)
    planted = [np.sort(topic_cols[t * topic_words:(t + 1) * topic_words]) for t in range(topics)]
    background = np.setdiff1d(np.arange(words), topic_cols)
    ranks = np.arange(1, background.size + 1, dtype=np.float64)
    p = ranks ** -exponent
    p /= p.sum()

    rows, cols = [], []
    for d in range(documents):
        chosen = background[rng.choice(background.size, words_per_document, p=p)]
        if topics and rng.random_sample() < topic_rate:
            topic = planted[rng.randint(topics)]
            chosen = np.concatenate([chosen, topic[rng.random_sample(topic.size) < 0.8]])
        chosen = np.unique(chosen)
        rows.append(np.full(chosen.size, d))
        cols.append(chosen)
    rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    cols = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    S = sp.coo_array((np.ones(rows.size), (rows, cols)), shape=(documents, words)).tocsr()

    vocabulary = [f"word{j}" for j in range(words)]
    for t, cols_t in enumerate(planted, start=1):
        for j, col in enumerate(cols_t, start=1):
            vocabulary[int(col)] = f"topic{t}_word{j}"
    offset = dt.timezone(dt.timedelta(minutes=int(utc_offset_minutes)))
    t0 = int(dt.datetime.combine(first, dt.time(0), tzinfo=offset).timestamp())
    times = np.sort(t0 + rng.randint(0, days * 86400, size=documents)).astype(np.int64)
    path = f"zipf_corpus(documents={documents}, words={words}, topics={topics})"
    return CorpusData(S=S, vocabulary=vocabulary, path=path, times=times,
                      tz_offsets=np.full(documents, int(utc_offset_minutes) * 60, dtype=np.int64),
                      topics=[p.tolist() for p in planted])


# ---------------------------------------------------------------------------------------------
# Corpus files for benchmarks: tweets (JSON lines) and UCI docword files, streamed to disk
# ---------------------------------------------------------------------------------------------

_CONSONANTS = "bcdfghjklmnprstvwz"
_VOWELS = "aeiou"
_DAY_NAMES = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                "Dec"]
KINDS = ("jsonl", "uci")


@dataclass(frozen=True)
class GeneratedFile:
    """What :func:`write_corpus` wrote.

    Attributes
    ----------
    path : str
        The corpus file (``.jsonl`` or ``docword.NAME.txt``).
    vocab_path : str or None
        ``vocab.NAME.txt`` of a UCI corpus, else None.
    kind : {'jsonl', 'uci'}
    documents : int
    words : int
        Vocabulary size (background words plus topic words).
    tokens : int
        Words written (a UCI line with count c counts c times).
    nonzeros : int or None
        Distinct (document, word) pairs of a UCI corpus (its header's NNZ), else None.
    topics : list of list of str
        The planted topics, ``topics[t]`` the words of topic t + 1 (``topicT_wordJ``).
    bytes : int
        Size of ``path``.
    """

    path: str
    vocab_path: str | None
    kind: str
    documents: int
    words: int
    tokens: int
    nonzeros: int | None
    topics: list
    bytes: int


def word_names(n):
    """``n`` distinct pronounceable lower-case words (consonant-vowel syllables), none of them an
    English stop word, so every one survives the default tokenising recipe.

    Short names come first, so the most frequent (lowest Zipf rank) words are the shortest, as
    in real text. The list depends on ``n`` only.

    >>> word_names(3)
    ['baba', 'babe', 'babi']
    """
    from itertools import product

    from spca_cli.corpus.stopwords import english_stop_words

    stop_words = english_stop_words()
    n = check_int("n", n, 0)
    syllables = [c + v for c in _CONSONANTS for v in _VOWELS]
    out = []
    length = 2
    while len(out) < n:
        for parts in product(syllables, repeat=length):
            word = "".join(parts)
            if word not in stop_words:
                out.append(word)
                if len(out) == n:
                    break
        length += 1
    return out


class _Plan:
    """The seeded random choices shared by both file kinds, drawn one chunk at a time."""

    def __init__(self, documents, words, words_per_document, topics, topic_words, topic_rate,
                 exponent, seed, offset=0.0, topic_repeat=0.0, topic_skew=0.0, duplicates=0.0):
        self.documents = check_int("documents", documents, 1)
        self.words = check_int("words", words, 2)
        self.words_per_document = check_int("words_per_document", words_per_document, 1)
        self.topics = check_int("topics", topics, 0)
        self.topic_words = check_int("topic_words", topic_words, 1)
        self.topic_rate = check_float("topic_rate", topic_rate, 0.0, 1.0)
        exponent = check_float("exponent", exponent, 0.0)
        offset = check_float("offset", offset, 0.0)
        self.topic_repeat = check_float("topic_repeat", topic_repeat, 0.0)
        self.topic_skew = check_float("topic_skew", topic_skew, 0.0)
        self.duplicates = check_float("duplicates", duplicates, 0.0, 1.0)
        seed = check_int("seed", seed, 0)
        n_topic = self.topics * self.topic_words
        if n_topic >= self.words:
            raise SpcaParameterError(f"topics * topic_words must be < words; got "
                                     f"{self.topics} * {self.topic_words} >= {self.words}")
        self.rng = np.random.Generator(np.random.PCG64(seed))
        # token ids: 0..B-1 background words by Zipf rank, B.. the topic words, topic by topic
        self.background = self.words - n_topic
        self.names = word_names(self.background) + [
            f"topic{t}_word{j}" for t in range(1, self.topics + 1)
            for j in range(1, self.topic_words + 1)]
        ranks = np.arange(1, self.background + 1, dtype=np.float64)
        cdf = np.cumsum((ranks + offset) ** -exponent)
        self.cdf = cdf / cdf[-1]

    @property
    def planted(self):
        B, K = self.background, self.topic_words
        return [self.names[B + t * K:B + (t + 1) * K] for t in range(self.topics)]

    def chunk(self, n):
        """Token ids of ``n`` documents: (doc, token) with doc in 0..n-1, grouped by document.

        Each document draws Poisson(words_per_document) background tokens (at least 1) from the
        Zipf law; with probability ``topic_rate`` it is also about one topic (uniform) and then
        holds each of its words with probability 0.8.
        """
        rng = self.rng
        lengths = np.maximum(rng.poisson(self.words_per_document, size=n), 1)
        bg = np.searchsorted(self.cdf, rng.random(int(lengths.sum())), side="right")
        bg = np.minimum(bg, self.background - 1)
        bg_doc = np.repeat(np.arange(n), lengths)
        if self.topics:
            about = rng.random(n) < self.topic_rate
            if self.topic_skew > 0:  # topic t in proportion to t^-skew: a few strong, many weak
                shares = np.arange(1, self.topics + 1, dtype=np.float64) ** -self.topic_skew
                which = rng.choice(self.topics, size=n, p=shares / shares.sum())
            else:
                which = rng.integers(0, self.topics, size=n)
            present = rng.random((n, self.topic_words)) < 0.8
            present &= about[:, None]
            t_doc, t_j = np.nonzero(present)  # row-major: grouped by document
            if self.topic_repeat > 0:  # bursty topic words: 1 + Poisson(topic_repeat) each
                times = 1 + rng.poisson(self.topic_repeat, size=len(t_doc))
                t_doc, t_j = np.repeat(t_doc, times), np.repeat(t_j, times)
            t_tok = self.background + which[t_doc] * self.topic_words + t_j
            doc = np.concatenate([bg_doc, t_doc])
            tok = np.concatenate([bg, t_tok])
            order = np.argsort(doc, kind="stable")
            return self._copies(n, doc[order], tok[order])
        return self._copies(n, bg_doc, bg)

    def _copies(self, n, doc, tok):
        """With ``duplicates`` > 0, that share of the documents repeat the words of an earlier
        one of the chunk (a repost: its @mention, URL and time are drawn afresh)."""
        if self.duplicates <= 0 or n < 2:
            return doc, tok
        rng = self.rng
        source = np.arange(n)
        copied = np.flatnonzero(rng.random(n) < self.duplicates)
        copied = copied[copied > 0]
        earlier = (rng.random(copied.size) * copied).astype(np.int64)
        for d, e in zip(copied.tolist(), earlier.tolist()):
            source[d] = source[e]
        counts = np.bincount(doc, minlength=n)
        starts = np.cumsum(counts) - counts
        lengths = counts[source]
        new_doc = np.repeat(np.arange(n), lengths)
        offsets = np.cumsum(lengths) - lengths
        index = np.arange(lengths.sum()) - np.repeat(offsets, lengths) \
            + np.repeat(starts[source], lengths)
        return new_doc, tok[index]


def _pool(pieces):
    """Byte strings -> (flat uint8 array, start offsets, lengths)."""
    blob = "".join(pieces).encode("utf-8")
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    starts = np.zeros(len(pieces), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return np.frombuffer(blob, dtype=np.uint8), starts, lengths


def _gather(flat, starts, lengths, ids):
    """The bytes of pieces ``ids`` one after another: one numpy gather, no Python loop."""
    lens = lengths[ids]
    out_start = np.cumsum(lens) - lens
    shift = np.repeat(starts[ids] - out_start, lens)
    return flat[np.arange(len(shift), dtype=np.int64) + shift].tobytes()


def _twitter_times(epochs):
    """Twitter's ``Wed Feb 18 09:41:04 +0000 2015`` for int UTC seconds (vectorised by day)."""
    day, sec = np.divmod(epochs, 86400)
    uniq, inverse = np.unique(day, return_inverse=True)
    heads, years = [], []
    for d in uniq.tolist():
        date = dt.date(1970, 1, 1) + dt.timedelta(days=d)
        heads.append(f"{_DAY_NAMES[date.weekday()]} {_MONTH_NAMES[date.month - 1]} "
                     f"{date.day:02d}")
        years.append(date.year)
    h, rest = np.divmod(sec, 3600)
    m, s = np.divmod(rest, 60)
    return [f"{heads[i]} {hh:02d}:{mm:02d}:{ss:02d} +0000 {years[i]}"
            for i, hh, mm, ss in zip(inverse.tolist(), h.tolist(), m.tolist(), s.tolist())]


def _write_jsonl(f, plan, chunk, days, t0):
    """Tweets as JSON lines, one chunk of documents at a time.

    A line is ``{"id":N,"created_at":"...","text":"..."}``. The text is the document's tokens
    (5% of background tokens as #hashtags), 20% of tweets start with an @mention, 10% with a
    URL and 5% hold ``&amp;``, so the tokeniser meets everything it must drop or unescape.
    """
    rng = plan.rng
    V = len(plan.names)
    mentions = [f"@user{i} " for i in range(1000)]
    urls = [f"http://t.co/{i:x}{i * 7919 % 4093:x} " for i in range(1000)]
    static = ([w + " " for w in plan.names] + ["#" + w + " " for w in plan.names]
              + mentions + urls + ["&amp; ", '"}\n'])
    MENTION, URL, AMP, END = 2 * V, 2 * V + 1000, 2 * V + 2000, 2 * V + 2001
    span = days * 86400
    tokens = 0
    for first in range(0, plan.documents, chunk):
        n = min(chunk, plan.documents - first)
        doc, tok = plan.chunk(n)
        tokens += len(tok)
        tok = tok + V * (rng.random(len(tok)) < 0.05)  # hashtag variant
        extra = rng.random((n, 3)) < np.array([0.2, 0.1, 0.05])  # mention, url, &amp;
        ids = np.concatenate([rng.integers(0, 1000, size=(n, 2)) + [MENTION, URL],
                              np.full((n, 1), AMP)], axis=1)
        # times rise through the file: documents first..first+n-1 fall in their slice of the span
        lo = t0 + span * first // plan.documents
        hi = t0 + span * (first + n) // plan.documents
        epochs = np.sort(rng.integers(lo, max(hi, lo + 1), size=n))
        heads = [f'{{"id":{i},"created_at":"{t}","text":"'
                 for i, t in zip(range(first, first + n), _twitter_times(epochs))]
        # pieces per document: head, the chosen extras, its tokens, END
        n_tok = np.bincount(doc, minlength=n)
        n_extra = extra.sum(axis=1)
        count = 2 + n_extra + n_tok
        start = np.cumsum(count) - count
        pieces = np.empty(int(count.sum()), dtype=np.int64)
        pieces[start] = len(static) + np.arange(n)  # heads come after the static pool
        ex_doc, ex_j = np.nonzero(extra)
        ex_rank = np.arange(len(ex_doc)) - (np.cumsum(n_extra) - n_extra)[ex_doc]
        pieces[start[ex_doc] + 1 + ex_rank] = ids[ex_doc, ex_j]
        tok_rank = np.arange(len(doc)) - (np.cumsum(n_tok) - n_tok)[doc]
        pieces[start[doc] + 1 + n_extra[doc] + tok_rank] = tok
        pieces[start + count - 1] = END
        flat, starts, lengths = _pool(static + heads)
        f.write(_gather(flat, starts, lengths, pieces))
    return tokens


@numba.njit(cache=True)
def _format_lines(doc, word, count, out):
    """Write ``doc word count\\n`` lines into the byte buffer ``out``; return the bytes used."""
    p = 0
    digits = np.empty(20, dtype=np.uint8)
    for i in range(len(doc)):
        for c in range(3):
            v = doc[i] if c == 0 else (word[i] if c == 1 else count[i])
            n = 0
            while True:
                digits[n] = 48 + v % 10
                v //= 10
                n += 1
                if v == 0:
                    break
            for j in range(n - 1, -1, -1):
                out[p] = digits[j]
                p += 1
            out[p] = 32 if c < 2 else 10
            p += 1
    return p


def _write_uci(f, plan, chunk, word_id):
    """UCI ``docword`` body lines, one chunk of documents at a time (sorted by doc, then word).

    A word drawn c times in a document becomes one line with count c, so the counts come from
    the same Zipf draws as the words.
    """
    tokens = nonzeros = 0
    W = len(plan.names)
    for first in range(0, plan.documents, chunk):
        n = min(chunk, plan.documents - first)
        doc, tok = plan.chunk(n)
        tokens += len(tok)
        keys, counts = np.unique(doc * W + word_id[tok], return_counts=True)
        d, w = np.divmod(keys, W)
        width = len(str(first + n)) + len(str(W)) + len(str(int(counts.max()))) + 3
        out = np.empty(len(keys) * width, dtype=np.uint8)
        used = _format_lines(d + first + 1, w + 1, counts.astype(np.int64), out)
        f.write(out[:used].tobytes())
        nonzeros += len(keys)
    return tokens, nonzeros


def write_corpus(path, kind="jsonl", *, documents, words, words_per_document=15, topics=5,
                 topic_words=10, topic_rate=0.3, exponent=1.1, offset=0.0, topic_repeat=0.0,
                 topic_skew=0.0, duplicates=0.0, days=7, start="2015-02-17", seed=0,
                 chunk_documents=None):
    """Write a seeded synthetic corpus with planted topics to disk, a chunk of documents at a
    time (memory holds one chunk, never the whole text).

    Word frequencies follow Zipf's law (P(rank r) proportional to (r + offset)^-exponent, the
    Zipf-Mandelbrot form) over ``words - topics * topic_words`` background words named by
    :func:`word_names`; on top, each document is with probability ``topic_rate`` about one of
    ``topics`` planted topics and then holds each of its ``topic_words`` words
    (``topicT_wordJ``) with probability 0.8, each 1 + Poisson(``topic_repeat``) times.

    Background tokens are drawn independently, so with raw counts (a UCI file) the Poisson noise
    of the most frequent words dominates A = S^T S unless the head is flattened (``offset``)
    and topic words are bursty (``topic_repeat``), as real text is: on KOS, rank-3 elimination
    keeps 120-280 words, on pure Zipf counts thousands.

    Parameters
    ----------
    path : str
        ``NAME.jsonl`` for ``kind='jsonl'``; ``docword.NAME.txt`` for ``kind='uci'`` (the
        vocabulary goes to ``vocab.NAME.txt`` beside it).
    kind : {'jsonl', 'uci'}
        Tweets as JSON lines with Twitter-format ``created_at``, spread evenly over ``days``
        from ``start`` (UTC) in file order; or a UCI bag of words (vocabulary in alphabetical
        order, like the published corpora, so word ids are not frequency ranks).
    documents, words : int
        Number of documents and vocabulary size (up to millions and 100,000s).
    words_per_document : int, default=15
        Mean background tokens per document (Poisson, at least 1). In a UCI file repeated
        tokens become counts, so its nonzeros per document are fewer.
    topics, topic_words, topic_rate, exponent, offset, topic_repeat : see above.
    topic_skew : float, default=0.0
        Topic t is chosen in proportion to t^-topic_skew (0: all equally often).
    duplicates : float in [0, 1), default=0.0
        The share of documents that repeat the words of an earlier document of their chunk
        (reposts; a tweet's @mention, URL and time are drawn afresh, as a retweet's would be).
    days : int, default=7
    start : str, default='2015-02-17'
    seed : int, default=0
        Same arguments and seed, same bytes.
    chunk_documents : int, optional
        Documents generated per chunk (memory); default 50,000 (jsonl) or 10,000 (uci). The
        output depends on it, so keep the default for reproducible files.

    Returns
    -------
    GeneratedFile

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> out = write_corpus(os.path.join(folder, "t.jsonl"), documents=3, words=50, topics=1)
    >>> out.documents, out.topics[0][:2]
    (3, ['topic1_word1', 'topic1_word2'])
    """
    if kind not in KINDS:
        raise SpcaParameterError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    days = check_int("days", days, 1)
    try:
        first_day = dt.date.fromisoformat(str(start))
    except ValueError:
        raise SpcaParameterError(f"start must be YYYY-MM-DD, got {start!r}") from None
    plan = _Plan(documents, words, words_per_document, topics, topic_words, topic_rate,
                 exponent, seed, offset=offset, topic_repeat=topic_repeat, topic_skew=topic_skew,
                 duplicates=duplicates)
    chunk = check_int("chunk_documents", chunk_documents or (50_000 if kind == "jsonl"
                                                             else 10_000), 1)
    path = str(path)
    vocab_path = None
    if kind == "uci":
        from spca_cli.corpus.uci import vocab_path_for

        vocab_path = vocab_path_for(path)
        if vocab_path is None:
            raise SpcaParameterError(f"a UCI corpus is written to docword.NAME.txt (the "
                                     f"vocabulary goes to vocab.NAME.txt beside it), got {path}")
    nonzeros = None
    # written under a temporary name and renamed, so an interrupted run leaves no partial file
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        if kind == "jsonl":
            t0 = int(dt.datetime.combine(first_day, dt.time(0), tzinfo=dt.timezone.utc)
                     .timestamp())
            tokens = _write_jsonl(f, plan, chunk, days, t0)
        else:
            names = np.array(plan.names)
            order = np.argsort(names, kind="stable")
            word_id = np.empty(len(names), dtype=np.int64)
            word_id[order] = np.arange(len(names))
            # NNZ (distinct pairs) is known only at the end: the header reserves a fixed-width
            # line for it, padded with trailing spaces, and is rewritten in place
            header = f"{plan.documents}\n{len(names)}\n"
            f.write((header + " " * 20 + "\n").encode("ascii"))
            tokens, nonzeros = _write_uci(f, plan, chunk, word_id)
            f.seek(len(header))
            f.write(f"{nonzeros:<20d}".encode("ascii"))
            with open(vocab_path + ".part", "w", encoding="utf-8") as v:
                v.write("\n".join(names[order].tolist()) + "\n")
    if vocab_path is not None:
        os.replace(vocab_path + ".part", vocab_path)
    os.replace(tmp, path)
    return GeneratedFile(path=path, vocab_path=vocab_path, kind=kind, documents=plan.documents,
                         words=len(plan.names), tokens=int(tokens), nonzeros=nonzeros,
                         topics=plan.planted, bytes=os.path.getsize(path))
