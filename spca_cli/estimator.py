"""``SparseTopics``: the topics pipeline as a scikit-learn style estimator.

It runs exactly what ``spca topics`` runs (:func:`spca_cli.topics.run_topics`, same defaults),
on a list of texts, a pandas text column, or a document-word matrix (sparse or dense, e.g. a
``CountVectorizer``'s output) with its words, and keeps the answer in scikit-learn's fitted
attributes.
"""

from __future__ import annotations

from numbers import Integral, Number, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # scikit-learn 1.4 and 1.5: the estimator's method
    def _validate_data(estimator, X, **kwargs):
        return estimator._validate_data(X, **kwargs)

from spca_cli.corpus.core import Corpus
from spca_cli.corpus.duplicates import every_text
from spca_cli.documents import topic_scores
from spca_cli.errors import SpcaInputError, SpcaParameterError
from spca_cli.params import DEFLATIONS, FitError, check_solver_options
from spca_cli.solvers.registry import solver_names
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
    deflation : {"joint", "remove", "projection"} or None, default=None
        "joint": the best set of disjoint topics searched together; "remove" / "projection":
        one topic at a time. None: "joint" with the auto solver, "remove" with a named one.
    random_state : int, RandomState instance or None, default=0
        Seed for every random choice (eigensolver start, sampling): a fixed int gives the
        same topics at every fit, as ``spca topics --seed``.
    time_limit : float or None, default=None
        Seconds per component.
    solver_options : dict or None, default=None
        The solver's own parameters; its entry in the solver registry lists them with their
        constraints, which fit checks (an unknown name or a bad value is an error naming it).
    feature_names : array-like of str or None, default=None
        For a matrix X: the word of each column (a vectorizer's ``get_feature_names_out()``).
        ``fit(X, feature_names=...)`` gives them for one fit; a pandas DataFrame's column names
        serve when neither is given. Without names the words are ``word0``, ``word1``...
        In a :class:`~sklearn.pipeline.Pipeline` after a vectorizer, which fits the vectorizer
        first and passes only the matrix on, ask for the words after fitting:
        ``pipe[-1].topic_words(pipe[:-1])``.
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
    words_ : ndarray of str, shape (n_words,)
        The word of each column of ``components_``: the vocabulary read from the texts, or a
        matrix's ``feature_names``.
    n_features_in_ : int
        Columns of the document-word matrix (of X, or built from the texts): n_words.
    feature_names_in_ : ndarray of str, shape (n_words,)
        Defined only when X was a DataFrame with str column names (scikit-learn's rule).
    result_ : TopicsResult
        Everything the run reported (bounds' sources, notes, timings).

    Notes
    -----
    Unfitted, ``transform``, ``topic_words`` and ``get_feature_names_out`` raise scikit-learn's
    ``NotFittedError``. Its tags say it takes sparse matrices and texts (str). It passes
    ``sklearn.utils.estimator_checks.check_estimator`` with ``k=1, n_components=1``: the checks
    fit matrices of 1 to 10 columns, fewer than the k * n_components words of disjoint topics
    at the defaults, which fit refuses (a ``FitError`` naming k and X's n_features).

    Examples
    --------
    >>> texts = ["the cat sat on the mat", "a cat and a dog", "dog and cat play",
    ...          "stocks fell on monday", "markets and stocks rally", "monday markets fell"]
    >>> model = SparseTopics(k=2, n_components=2, ingest={"min_count": 1}).fit(texts)
    >>> model.components_.shape, int((model.components_ != 0).sum(axis=1).max())
    ((2, 10), 2)

    In a Pipeline after a vectorizer, the words come from the vectorizer once both are fitted:

    >>> from sklearn.feature_extraction.text import CountVectorizer
    >>> from sklearn.pipeline import make_pipeline
    >>> pipe = make_pipeline(CountVectorizer(stop_words="english"),
    ...                      SparseTopics(k=2, n_components=2)).fit(texts)
    >>> pipe[-1].topic_words(pipe[:-1])
    [['cat', 'dog'], ['fell', 'monday']]
    """

    # scikit-learn's checks of the parameters, made by fit before anything else; the solver
    # names and, in fit, each solver option's constraint come from the solver registry
    _parameter_constraints = {
        "k": [Interval(Integral, 1, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions(set(solver_names()))],
        "rank": [Interval(Integral, 1, None, closed="left")],
        "deflation": [StrOptions(set(DEFLATIONS)), None],
        "random_state": ["random_state"],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "solver_options": [dict, None],
        "feature_names": ["array-like", None],
        "ingest": [dict, None],
    }

    def __init__(self, k=DEFAULTS["k"], n_components=DEFAULTS["n_components"],
                 solver=DEFAULTS["solver"], rank=DEFAULTS["rank"],
                 deflation=DEFAULTS["deflation"], random_state=DEFAULTS["random_state"],
                 time_limit=None, solver_options=None, feature_names=None, ingest=None):
        self.k = k
        self.n_components = n_components
        self.solver = solver
        self.rank = rank
        self.deflation = deflation
        self.random_state = random_state
        self.time_limit = time_limit
        self.solver_options = solver_options
        self.feature_names = feature_names
        self.ingest = ingest

    def __sklearn_is_fitted__(self):
        return hasattr(self, "components_")

    def __sklearn_tags__(self):  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # a sparse document-word matrix
        tags.input_tags.string = True  # texts: a list of str, a pandas text column
        return tags

    def _more_tags(self):  # scikit-learn 1.4 and 1.5
        return {"X_types": ["2darray", "sparse", "string"]}

    # ------------------------------------------------------------------ input
    def _corpus(self, X, feature_names):
        texts = _as_texts(X)
        if texts is not None:
            if feature_names is not None or self.feature_names is not None:
                raise SpcaParameterError("feature_names applies to a matrix X, not to texts "
                                         "(their words are read from them)")
            for name in ("feature_names_in_", "n_features_in_"):  # from a previous fit
                if hasattr(self, name):
                    delattr(self, name)
            corpus = _read_texts(texts, dict(self.ingest or {}))
            self.n_features_in_ = corpus.S.shape[1]
            return corpus
        if self.ingest:
            raise SpcaParameterError("ingest applies to texts, not to a matrix")
        S = _validate_data(self, X, accept_sparse=("csr", "csc", "coo"), dtype=np.float64,
                           reset=True)
        names = _names(feature_names if feature_names is not None else self.feature_names,
                       S.shape[1])
        if names is None:
            names = getattr(self, "feature_names_in_", None)
        if names is None:
            names = np.asarray([f"word{j}" for j in range(S.shape[1])], dtype=object)
        return Corpus(S=sp.csr_array(S), vocabulary=names, kind="matrix", path="<matrix>",
                      paths=["<matrix>"])

    def _vectorize(self, X):
        """S for ``X`` over the fitted vocabulary (texts are tokenised as in fit)."""
        texts = _as_texts(X)
        if texts is None:
            return sp.csr_array(_validate_data(self, X, accept_sparse=("csr", "csc", "coo"),
                                               dtype=np.float64, reset=False))
        # every text is a row: no min_count and no contains (a row filter) here
        ingest = {k: v for k, v in (self.ingest or {}).items() if k != "contains"}
        try:
            corpus = _read_texts(texts, every_text({**ingest, "min_count": 1}))
        except SpcaInputError:  # (with no row filter, the only one: no words at all)
            return sp.csr_array((len(texts), len(self.words_)))
        index = {w: j for j, w in enumerate(self.words_)}
        keep = [(j, index[w]) for j, w in enumerate(corpus.vocabulary) if w in index]
        S = corpus.S.tocsc()
        cols = np.array([a for a, _ in keep], dtype=np.int64)
        target = np.array([b for _, b in keep], dtype=np.int64)
        P = sp.csr_array((np.ones(len(keep)), (cols, target)),
                         shape=(S.shape[1], len(self.words_)))
        return sp.csr_array(S @ P)

    # ------------------------------------------------------------------ estimator
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, feature_names=None):
        """Find the topics of ``X``: a list of texts, a pandas text column, or a
        document-word matrix (documents x words; sparse, dense or a DataFrame) whose words are
        ``feature_names`` (this fit's, else the parameter's, else a DataFrame's columns)."""
        check_solver_options(self.solver, dict(self.solver_options or {}))  # before reading X
        corpus = self._corpus(X, feature_names)
        try:
            self.result_ = run_topics(corpus, solver=self.solver, k=self.k,
                                      n_components=self.n_components, rank=self.rank,
                                      deflation=self.deflation, random_state=self.random_state,
                                      time_limit=self.time_limit,
                                      solver_options=self.solver_options)
        except FitError as exc:  # k, rank or n_components too large for X: say X's width
            if exc.param not in ("k", "rank", "n_components"):
                raise
            what = "X has" if corpus.kind == "matrix" else "the texts give"
            raise FitError(exc.param, [*exc.parts, f" ({what} n_features="
                                                   f"{corpus.S.shape[1]} words)"]) from None
        return self._set_fitted(corpus, self.result_)

    def _set_fitted(self, corpus, result):
        """The fitted attributes of a run ``result`` on ``corpus``; returns self."""
        self.result_ = result
        n_words = corpus.S.shape[1]
        self.n_features_in_ = n_words
        self.words_ = np.asarray(corpus.vocabulary, dtype=object)
        topics = self.result_.components
        self.components_ = np.zeros((len(topics), n_words))
        for row, topic in zip(self.components_, topics):
            row[topic.indices] = topic.weights
        self.explained_variance_ = np.array([t.explained_variance for t in topics])
        self.upper_bound_ = np.array([t.upper_bound for t in topics])
        self.certified_ratio_ = np.array([t.certified_ratio for t in topics])
        return self

    def fit_groups(self, X, groups, *, min_documents=20, n_jobs=None):
        """One fitted estimator per group of the texts ``X``, as ``spca topics --by``: the
        texts read once, each group's topics found on its own documents and words
        (:func:`spca_cli.groups.run_groups`, whose rules apply: groups of fewer than
        ``min_documents`` texts, or with too few words, get none; ``auto``'s groups share one
        fit's proof budget unless ``solver_options`` sets ``budget``).

        ``n_jobs``: processes the groups are solved in (scikit-learn's convention: None is 1,
        -1 every core this process may use, when the groups are large enough to repay starting
        them); the same topics either way. A script that asks for more than one runs its work
        under ``if __name__ == "__main__":`` (each worker imports the script's main module).

        Returns
        -------
        dict
            group name -> fitted :class:`SparseTopics` (a clone of this one's parameters);
            ``groups_`` keeps the whole :class:`~spca_cli.groups.GroupedResult` (groups not
            solved with the reason, the distinctive words).
        """
        from sklearn.base import clone

        from spca_cli.corpus.read import read_texts
        from spca_cli.groups import run_groups

        texts = _as_texts(X)
        if texts is None:
            raise SpcaParameterError("fit_groups takes texts (a list of str or a pandas text "
                                     "column), not a matrix")
        if groups is None or isinstance(groups, str) or not hasattr(groups, "__len__"):
            raise SpcaParameterError("groups must hold one value per text (a list or a pandas "
                                     f"column), got {type(groups).__name__}")
        check_solver_options(self.solver, dict(self.solver_options or {}))
        corpus = read_texts(texts, groups=list(groups), **dict(self.ingest or {}))
        self.groups_ = run_groups(
            corpus, by="groups", solver=self.solver, k=self.k, n_components=self.n_components,
            rank=self.rank, deflation=self.deflation, random_state=self.random_state,
            time_limit=self.time_limit, solver_options=self.solver_options,
            min_documents=min_documents, jobs=_group_jobs(n_jobs))
        return {g.name: clone(self)._set_fitted(g.corpus, g.result)
                for g in self.groups_.groups if g.result is not None}

    def transform(self, X):
        """Document-topic scores s_d . x_j (:func:`spca_cli.documents.topic_scores`), shape
        (n_documents, n_components)."""
        check_is_fitted(self)
        return topic_scores(self._vectorize(X), self.result_.components)

    def get_feature_names_out(self, input_features=None):
        """One name per component: ``topic0`` ... (scikit-learn's convention for outputs)."""
        check_is_fitted(self)
        _check_feature_names_in(self, input_features)
        return np.asarray([f"topic{i}" for i in range(len(self.components_))], dtype=object)

    def topic_words(self, feature_names=None):
        """The words of each topic, by decreasing |weight|.

        Parameters
        ----------
        feature_names : array-like of str, or a fitted transformer, optional
            The words of the matrix's columns, when fit did not have them: an array of
            ``n_features_in_`` names, or the fitted vectorizer (anything with
            ``get_feature_names_out``), e.g. ``pipe[:-1]`` in a Pipeline. Default:
            :attr:`words_`.
        """
        check_is_fitted(self)
        if feature_names is None:
            return [list(t.words) for t in self.result_.components]
        if hasattr(feature_names, "get_feature_names_out"):
            feature_names = feature_names.get_feature_names_out()
        names = _names(feature_names, len(self.words_))
        return [names[t.indices].tolist() for t in self.result_.components]


def _as_texts(X):
    """The texts of ``X`` as a list of str when X is one-dimensional and holds str (a list, a
    tuple, a 1-D array or a pandas Series: anything with ``tolist``), else None (a matrix)."""
    if isinstance(X, str) or X is None:
        got = "None" if X is None else "one str"
        raise SpcaParameterError("X must be a list of texts, a pandas text column or a "
                                 f"document-word matrix, got {got}")
    if sp.issparse(X):
        return None
    ndim = getattr(X, "ndim", None)
    if ndim is not None:
        if ndim != 1:
            return None
        items = X.tolist()
    elif isinstance(X, (list, tuple)):
        items = X
    else:
        return None
    if not any(isinstance(t, str) for t in items):
        if not len(items):
            raise SpcaParameterError("X holds no texts")
        if ndim is None and all(isinstance(t, Number) for t in items):
            # a list of numbers: neither texts nor the rows of a matrix
            raise SpcaParameterError("X must be a list of texts, a pandas text column or a "
                                     "document-word matrix, got a list of "
                                     f"{type(items[0]).__name__}")
        return None  # a 1-D array of numbers: a one-row matrix, which the matrix checks refuse
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise SpcaParameterError(f"X must hold only str texts; X[{i}] is "
                                     f"{type(t).__name__} {t!r} (a missing text? give '')")
    return list(items)


def _names(feature_names, n_words):
    """``feature_names`` as an ndarray of str, checked to be one per column, or None."""
    if feature_names is None:
        return None
    names = np.asarray(feature_names, dtype=object)
    if names.shape != (n_words,):
        raise SpcaParameterError(f"feature_names must have one name per column of X "
                                 f"({n_words}), got {names.size}")
    return names


def _read_texts(texts, ingest):
    """A Corpus of ``texts`` read exactly as ``spca topics FILE.csv`` reads a CSV text column
    (:func:`spca_cli.corpus.read.read_texts`: the readers' text normalisation, tokenizer, word
    filters and weighting; no file written)."""
    from spca_cli.corpus.read import read_texts

    return read_texts(texts, **ingest)


def _group_jobs(n_jobs):
    """run_groups' ``jobs`` for scikit-learn's ``n_jobs`` (None: 1, -1: every core)."""
    if n_jobs is None:
        return 1
    if n_jobs == -1:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise SpcaParameterError(f"n_jobs must be None, -1 or an int >= 1, got {n_jobs!r}")
    return int(n_jobs)
