"""Seeded synthetic data for paper reproductions and tests.

* :func:`spiked_covariance` / :func:`spiked_samples`: the spiked covariance model of Section 4.1
  of the 2013 spannogram paper (after Shen & Huang 2008 and Yuan & Zhang 2013): a covariance with
  a few sparse, disjointly supported leading eigenvectors and unit eigenvalues elsewhere.
* :func:`zipf_corpus`: a document-word matrix whose word frequencies follow Zipf's law, with a
  few planted topics (groups of words that occur together) and document times spread over days,
  so every measure of ``spca reproduce`` (including per-day runs) can be exercised without the
  real corpora.

Every function takes ``random_state`` (None, an int or a ``RandomState``); pass an int for
reproducible results across calls.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from spca_cli.errors import SpcaParameterError
from spca_cli.solvers._base import check_float, check_int

__all__ = ["SpikedModel", "spiked_covariance", "spiked_samples", "empirical_covariance",
           "MatrixData", "CorpusData", "zipf_corpus"]


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
        coords = check_random_state(random_state).permutation(n)[:s * sparsity]
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
    rng = check_random_state(random_state)
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
    rng = check_random_state(random_state)

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
