"""``SparseTopics``: the topics pipeline as a scikit-learn style estimator.

It runs exactly what ``spca topics`` runs (:func:`spca_cli.topics.run_topics`, same defaults),
on a list of texts, a pandas text column, or a document-word matrix with its
``feature_names``, and keeps the answer in scikit-learn's fitted attributes.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

from spca_cli.corpus.core import Corpus
from spca_cli.documents import topic_scores
from spca_cli.errors import SpcaParameterError
from spca_cli.topics import DEFAULTS, run_topics

__all__ = ["SparseTopics"]


class SparseTopics(TransformerMixin, BaseEstimator):
    """Sparse topics: ``n_components`` topics of exactly ``k`` words, each with a certified
    upper bound on the variance any k-word topic could explain.

    Parameters
    ----------
    k : int, default=10
        Words per topic.
    n_components : int, default=5
        Number of topics.
    solver : str, default="auto"
        A name of :data:`spca_cli.solvers.registry.REGISTRY`.
    rank : int, default=2
        d of the rank-d approximation (spannogram, nonneg, auto) or of the sketch (bipartite).
    deflation : {"remove", "projection"}, default="remove"
    random_state : int or None, default=0
    time_limit : float or None, default=None
        Seconds per component.
    solver_options : dict or None, default=None
        The solver's own parameters (its registry entry lists them).
    ingest : dict or None, default=None
        For texts: the reading options of :func:`spca_cli.corpus.read.read_texts`
        (``min_count``, ``min_length``, ``stopwords``, ``weighting``, ``ngrams``, ``contains``),
        as ``spca topics`` takes them. Texts are read as ``spca topics`` reads a CSV file's
        text column (HTML entities decoded, same tokenizer and defaults): the same texts give
        the same topics.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_words)
        Unit-norm topics, exactly ``k`` nonzeros per row.
    explained_variance_ : ndarray of shape (n_components,)
        x_i^T A x_i on the original A = S^T S.
    upper_bound_ : ndarray of shape (n_components,)
        Certified upper bound on each component's problem (SPEC.md).
    certified_ratio_ : ndarray of shape (n_components,)
    feature_names_in_ : ndarray of str, shape (n_words,)
    result_ : TopicsResult
        Everything the run reported (bounds' sources, notes, timings).

    Examples
    --------
    >>> texts = ["the cat sat on the mat", "a cat and a dog", "dog and cat play",
    ...          "stocks fell on monday", "markets and stocks rally", "monday markets fell"]
    >>> model = SparseTopics(k=2, n_components=2, ingest={"min_count": 1}).fit(texts)
    >>> model.components_.shape, int((model.components_ != 0).sum(axis=1).max())
    ((2, 10), 2)
    """

    def __init__(self, k=DEFAULTS["k"], n_components=DEFAULTS["n_components"],
                 solver=DEFAULTS["solver"], rank=DEFAULTS["rank"],
                 deflation=DEFAULTS["deflation"], random_state=DEFAULTS["random_state"],
                 time_limit=None, solver_options=None, ingest=None):
        self.k = k
        self.n_components = n_components
        self.solver = solver
        self.rank = rank
        self.deflation = deflation
        self.random_state = random_state
        self.time_limit = time_limit
        self.solver_options = solver_options
        self.ingest = ingest

    # ------------------------------------------------------------------ input
    def _corpus(self, X, feature_names):
        if sp.issparse(X):
            if feature_names is None:
                feature_names = [f"word{j}" for j in range(X.shape[1])]
            names = np.asarray(feature_names, dtype=object)
            if names.shape != (X.shape[1],):
                raise SpcaParameterError(f"feature_names must have one name per column of X "
                                         f"({X.shape[1]}), got {names.size}")
            if self.ingest:
                raise SpcaParameterError("ingest applies to texts, not to a matrix")
            return Corpus(S=sp.csr_array(X, dtype=np.float64), vocabulary=names, kind="matrix",
                          path="<matrix>", paths=["<matrix>"])
        if feature_names is not None:
            raise SpcaParameterError("feature_names applies to a sparse matrix X, not to texts")
        texts = _texts(X)
        return _read_texts(texts, dict(self.ingest or {}))

    def _vectorize(self, X):
        """S for ``X`` over the fitted vocabulary (texts are tokenised as in fit)."""
        if sp.issparse(X):
            if X.shape[1] != len(self.feature_names_in_):
                raise SpcaParameterError(f"X has {X.shape[1]} columns; the model was fitted on "
                                         f"{len(self.feature_names_in_)} words")
            return sp.csr_array(X, dtype=np.float64)
        corpus = _read_texts(_texts(X), {**(self.ingest or {}), "min_count": 1})
        index = {w: j for j, w in enumerate(self.feature_names_in_)}
        keep = [(j, index[w]) for j, w in enumerate(corpus.vocabulary) if w in index]
        S = corpus.S.tocsc()
        cols = np.array([a for a, _ in keep], dtype=np.int64)
        target = np.array([b for _, b in keep], dtype=np.int64)
        P = sp.csr_array((np.ones(len(keep)), (cols, target)),
                         shape=(S.shape[1], len(self.feature_names_in_)))
        return sp.csr_array(S @ P)

    # ------------------------------------------------------------------ estimator
    def fit(self, X, y=None, feature_names=None):
        """Find the topics of ``X``: a list of texts, a pandas text column, or a sparse
        document-word matrix (documents x words) with ``feature_names``."""
        corpus = self._corpus(X, feature_names)
        self.result_ = run_topics(corpus, solver=self.solver, k=self.k,
                                  n_components=self.n_components, rank=self.rank,
                                  deflation=self.deflation, random_state=self.random_state,
                                  time_limit=self.time_limit,
                                  solver_options=self.solver_options)
        n_words = corpus.S.shape[1]
        self.feature_names_in_ = np.asarray(corpus.vocabulary, dtype=object)
        self.n_features_in_ = n_words
        topics = self.result_.components
        self.components_ = np.zeros((len(topics), n_words))
        for row, topic in zip(self.components_, topics):
            row[topic.indices] = topic.weights
        self.explained_variance_ = np.array([t.explained_variance for t in topics])
        self.upper_bound_ = np.array([t.upper_bound for t in topics])
        self.certified_ratio_ = np.array([t.certified_ratio for t in topics])
        return self

    def transform(self, X):
        """Document-topic scores s_d . x_j (:func:`spca_cli.documents.topic_scores`), shape
        (n_documents, n_components)."""
        if not hasattr(self, "components_"):
            raise SpcaParameterError("this SparseTopics is not fitted yet; call fit first")
        return topic_scores(self._vectorize(X), self.result_.components)

    def get_feature_names_out(self, input_features=None):
        """One name per component: ``topic0`` ... (scikit-learn's convention for outputs)."""
        return np.asarray([f"topic{i}" for i in range(len(self.components_))], dtype=object)

    def topic_words(self):
        """The words of each topic, by decreasing |weight|."""
        return [list(t.words) for t in self.result_.components]


def _texts(X):
    """A list of str from a list/tuple/array of str or a pandas Series (without importing
    pandas: anything with ``tolist``)."""
    items = X.tolist() if hasattr(X, "tolist") else X
    if isinstance(items, str) or not isinstance(items, (list, tuple)):
        raise SpcaParameterError("X must be a list of texts, a pandas text column or a sparse "
                                 f"document-word matrix, got {type(X).__name__}")
    if not all(isinstance(t, str) for t in items):
        raise SpcaParameterError("X must hold only str texts")
    if not items:
        raise SpcaParameterError("X holds no texts")
    return items


def _read_texts(texts, ingest):
    """A Corpus of ``texts`` read exactly as ``spca topics FILE.csv`` reads a CSV text column
    (:func:`spca_cli.corpus.read.read_texts`: the readers' text normalisation, tokenizer, word
    filters and weighting; no file written)."""
    from spca_cli.corpus.read import read_texts

    return read_texts(texts, **ingest)
