"""What every solver returns, the shared parameter checks, and the one sign rule.

A single-component solver is a plain function

    solver(A, k, *, eigen, rank=..., random_state=None, time_limit=None, **options) -> SolverOutput

where ``A`` is a :class:`~spca_cli.matrix.Gram` (possibly a deflated view) and ``eigen`` the
leading eigenpairs of that same view (computed once by the pipeline and shared with the bounds).
The pipeline in :mod:`spca_cli.topics` runs the deflation loop and reports every component on
the original A. A joint solver (``bipartite``) returns all components at once instead.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np

from spca_cli.errors import ConvergenceWarning, SpcaParameterError

__all__ = ["SolverOutput", "JointOutput", "check_int", "check_float", "check_k", "finish_component",
           "leading_eigvec", "with_notes", "ConvergenceWarning"]


@dataclass
class SolverOutput:
    """One sparse component found on the solver's (possibly deflated) matrix A'.

    Attributes
    ----------
    indices : ndarray of int64, shape (k,)
        Chosen words, ordered by decreasing |weight|.
    weights : ndarray of float64, shape (k,)
        Unit-norm weights on ``indices``; the largest-|weight| entry is positive.
    value : float
        x^T A' x on the solver's matrix.
    bounds : list of (float, str)
        Upper bounds on the best k-sparse x^T A' x that only this solver can give (for example
        ``(OPT_d + lambda_{d+1}, "rank-3 spannogram + lambda_4")``); the pipeline adds the
        general ones (lambda_1, top-k diagonal) and reports the smallest.
    exact : bool or None
        True when the solver proved its answer optimal for the problem it solves exactly (the
        registry entry's ``exact_on``: A_d for the spannogram and nonneg, A' itself for
        ``exact``/``auto``); False when it could have but did not (time limit, sampling);
        None for heuristics that never claim it (tpower, greedy, threshold).
    time_limited : bool
        The solver stopped at its time limit and returned its best so far.
    info : dict
        JSON-ready facts about the run that only this solver has (surviving words, candidates,
        iterations...). Timings are measured by the pipeline, never by a solver.
    notes : list of str
        What the user should know about this run (filled by :func:`with_notes` from the
        solver's :class:`ConvergenceWarning` messages).
    """

    indices: np.ndarray
    weights: np.ndarray
    value: float
    bounds: list = field(default_factory=list)
    exact: bool | None = None
    time_limited: bool = False
    info: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


@dataclass
class JointOutput:
    """Several components computed jointly (disjoint supports), e.g. by the bipartite solver.

    Attributes
    ----------
    components : list of SolverOutput
        One per component, each finished with :func:`finish_component` on the undeflated A.
    bounds : list of (float, str)
        Upper bounds on the best achievable TOTAL sum_j x_j^T A x_j over disjoint k-sparse unit
        vectors, with the inequality that gave each; the pipeline reports the smallest.
    time_limited : bool
        The solver stopped at its time limit (then every component is its best so far).
    info : dict
        JSON-ready facts (samples drawn, sketch rank, ...), shared by every component.
    notes : list of str
        As for :class:`SolverOutput`.
    """

    components: list
    bounds: list = field(default_factory=list)
    time_limited: bool = False
    info: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


def with_notes(call):
    """``call()`` (a solver's run), with the ConvergenceWarnings it raised moved into the
    result's ``notes`` (other warnings pass through unchanged)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call()
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            out.notes.append(str(w.message))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return out


def check_int(name, value, low=None, high=None):
    """Return ``value`` as an int, or raise a message naming the parameter and what is allowed."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise SpcaParameterError(f"{name} must be an int, got {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise SpcaParameterError(f"{name} must be an int in the range [{lo}, {hi}], got {value}")
    return value


def check_float(name, value, low=None, high=None, *, low_open=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise SpcaParameterError(f"{name} must be a number, got {value!r}")
    value = float(value)
    bad_low = low is not None and (value <= low if low_open else value < low)
    if bad_low or (high is not None and value > high) or not np.isfinite(value):
        left = "(" if low_open else "["
        raise SpcaParameterError(f"{name} must be in the range {left}{low}, {high}], got {value}")
    return value


def check_k(A, k):
    """k must be >= 1 and no more than the words a solver may still choose."""
    k = check_int("k", k, 1)
    available = int(A.active().sum())
    if k > available:
        raise SpcaParameterError(
            f"k must be <= the number of words still available; got k={k} > {available}")
    return k


def leading_eigvec(sub):
    """Largest eigenvalue and unit eigenvector of a small dense symmetric matrix."""
    vals, vecs = np.linalg.eigh(sub)
    return float(vals[-1]), vecs[:, -1]


def finish_component(A, indices, weights=None, *, bounds=(), exact=None, time_limited=False,
                     info=None):
    """Build a :class:`SolverOutput` from a support, applying the one sign and order rule.

    If ``weights`` is None the weights are the leading eigenvector of A'[indices, indices],
    which is the best unit vector on that support (Lemma 2 of the 2013 paper).
    """
    indices = np.asarray(indices, dtype=np.int64)
    sub = A.submatrix(indices)
    if weights is None:
        _, weights = leading_eigvec(sub)
    weights = np.asarray(weights, dtype=np.float64)
    weights = weights / np.linalg.norm(weights)
    order = np.lexsort((indices, -np.abs(weights)))  # by |weight| desc, ties by index
    indices, weights = indices[order], weights[order]
    if weights[0] < 0:  # sign rule: the largest-|weight| entry is positive
        weights = -weights
    value = float(weights @ sub[np.ix_(order, order)] @ weights)  # no second submatrix
    return SolverOutput(indices=indices, weights=weights, value=value, bounds=list(bounds),
                        exact=exact, time_limited=bool(time_limited), info=dict(info or {}))
