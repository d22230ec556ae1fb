"""The truncated power method (TPower, Yuan and Zhang 2013), with several starts and a swap check.

Algorithm 1 of the paper: x <- A x, keep the k largest |entries|, normalise, repeat. Each run
only ever multiplies A by a k-sparse vector, so on A = S^T S a step costs two sparse products
restricted to the documents that contain one of the k words (:func:`sparse_matvec`); the
n x n matrix is never formed. Different starts reach different fixed points on real corpora,
so the default tries several and keeps the best.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from spca_cli.errors import SpcaParameterError
from spca_cli.kernels.greedy import bordered_lmax
from spca_cli.seeds import random_state_of
from spca_cli.solvers._base import (ConvergenceWarning, check_float, check_int, check_k,
                                    finish_component, leading_eigvec)
from spca_cli.solvers._choices import INITS

__all__ = ["tpower", "sparse_matvec", "INITS"]

# A swap must raise lambda_max by more than this relative amount to be taken: below it, the
# "gain" is rounding in the secular root and taking it could cycle.
_SWAP_RTOL = 1e-10

def sparse_matvec(A, indices, weights):
    """A' x for a sparse x, without forming A' and without touching unrelated documents.

    Parameters
    ----------
    A : Gram
        The (possibly deflated) operator of shape (n_words, n_words).
    indices : array-like of int, shape (k,)
        Words where x is nonzero.
    weights : array-like of float, shape (k,)
        The nonzero entries of x.

    Returns
    -------
    ndarray of shape (n_words,)
        A' x. On A = S^T S and its ``remove`` views this costs S[:, I] @ w and S^T of that,
        restricted to the documents holding a word of I; projection views use ``A.matvec``.

    Examples
    --------
    >>> import numpy as np
    >>> from spca_cli.matrix import Gram
    >>> A = Gram.from_documents(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]))
    >>> sparse_matvec(A, [1], [1.0]).tolist()
    [1.0, 2.0, 1.0]
    """
    return A.sparse_products().matvec(indices, weights)


def _top_k(z, active, k, forced=None):
    """Sorted indices of the k largest |z| among active words; ties go to the lower index.
    The ``forced`` words (included words, all active) are always kept."""
    score = np.where(active, np.abs(z), -np.inf)
    if forced is not None:
        score[forced] = np.inf
    n = score.shape[0]
    kth = np.partition(score, n - k)[n - k]  # k-th largest score
    cand = np.flatnonzero(score >= kth)
    # lexsort: last key is primary, so by decreasing score, then increasing index
    keep = cand[np.lexsort((cand, -score[cand]))[:k]]
    return np.sort(keep)


def _run(ops, idx, w, k, max_iter, tol, forced=None):
    """Algorithm 1 from x0 = (idx, w); returns (support, weights, iterations, converged).

    Once an iteration returns the same support, the plain iteration would just be the power
    method on A'[I, I] from then on; we jump to its limit (the leading eigenvector of A'[I, I])
    and let the next product confirm it is a fixed point of truncation. This changes no fixed
    point, only skips the O(1 / gap) tail of iterations on a settled support.
    """
    idx = np.asarray(idx, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    order = np.argsort(idx)
    idx, w = idx[order], w[order]
    w = w / np.linalg.norm(w)
    for it in range(1, max_iter + 1):
        z = ops.matvec(idx, w)  # (n,) A' x
        new = _top_k(z, ops.active, k, forced)
        zn = z[new]
        norm = np.linalg.norm(zn)
        if norm == 0.0:  # A' x = 0 on the active words: every k-sparse x here is as good
            return new, np.full(k, 1.0 / np.sqrt(k)), it, True
        w_new = zn / norm
        if new.shape == idx.shape and np.array_equal(new, idx):
            if np.linalg.norm(w_new - w) < tol:
                return new, w_new, it, True
            _, v = leading_eigvec(ops.submatrix(new))
            w_new = v if v @ w_new >= 0 else -v
        idx, w = new, w_new
    return idx, w, max_iter, False


def _value(ops, idx):
    return float(np.linalg.eigvalsh(ops.submatrix(idx))[-1])


def _best_swap(ops, idx, lam, forced=None):
    """The single swap (one word out, one in) that most raises lambda_max, or None; a ``forced``
    word never leaves.

    Exact for every pair: for each word a leaving, B = A'[I-a, I-a] is eigen-decomposed once
    and lambda_max of every bordered matrix A'[I-a+j, I-a+j] is the largest root of its secular
    equation (:func:`spca_cli.kernels.greedy.bordered_lmax`), for all words j at once.
    """
    k = idx.size
    C = ops.columns(idx)  # (n, k) A'[:, I]
    diag = ops.diagonal()
    free = ops.active.copy()
    free[idx] = False
    rows = np.flatnonzero(free)
    if rows.size == 0:
        return None
    best_val, best = lam * (1.0 + _SWAP_RTOL), None
    for a in range(k):
        if forced is not None and idx[a] in forced:
            continue
        keep = np.delete(np.arange(k), a)
        B = C[idx[keep]][:, keep]
        mu, Q = np.linalg.eigh(0.5 * (B + B.T))
        # pruned: words that cannot beat the best swap so far come back as -inf
        vals = bordered_lmax(mu, np.ascontiguousarray(Q), C, keep, diag, rows, best_val, True)
        t = int(np.argmax(vals))  # first maximum: lowest word index among ties
        if vals[t] > best_val:
            best_val, best = float(vals[t]), (a, int(rows[t]))
    return best


def _tpower_local(ops, idx, w, k, max_iter, tol, local_search, memo, forced=None):
    """TPower from (idx, w), then alternate exact best swaps and TPower until neither moves.

    ``memo`` maps a converged TPower support to what the swap phase made of it: starts that
    land on the same fixed point (common) share one swap phase, which is deterministic.
    """
    idx, w, iters, converged = _run(ops, idx, w, k, max_iter, tol, forced)
    key = (tuple(idx.tolist()), converged)
    if key in memo:
        idx, w, lam, more, converged, swaps = memo[key]
        return idx, w, lam, iters + more, converged, swaps
    lam = _value(ops, idx)
    swaps, iters0 = 0, iters
    while local_search:
        swap = _best_swap(ops, idx, lam, forced)
        if swap is None:
            break
        a, j = swap
        cand = np.sort(np.append(np.delete(idx, a), j))
        lam_c = _value(ops, cand)
        if lam_c <= lam * (1.0 + _SWAP_RTOL):  # the secular root overstated a rounding-level gain
            break
        swaps += 1
        _, v = leading_eigvec(ops.submatrix(cand))
        idx2, w2, it2, conv2 = _run(ops, cand, v, k, max_iter, tol, forced)
        iters += it2
        lam2 = _value(ops, idx2)
        if lam2 < lam_c:  # cannot happen for PSD A' (TPower is monotone); keep the better one
            idx2, w2, lam2, conv2 = cand, v, lam_c, True
        idx, w, lam, converged = idx2, w2, lam2, conv2
    memo[key] = (idx, w, lam, iters - iters0, converged, swaps)
    return idx, w, lam, iters, converged, swaps


def _check_warm_start(warm_start, n):
    if warm_start is None:
        raise SpcaParameterError(
            "init='spannogram' needs warm_start=(indices, weights), the spannogram's component; "
            "got warm_start=None")
    if hasattr(warm_start, "indices") and hasattr(warm_start, "weights"):
        idx, w = warm_start.indices, warm_start.weights
    else:
        idx, w = warm_start
    idx = np.asarray(idx, dtype=np.int64).ravel()
    w = np.asarray(w, dtype=np.float64).ravel()
    if idx.size == 0 or idx.shape != w.shape:
        raise SpcaParameterError(
            f"warm_start must be (indices, weights) of the same nonzero length; got "
            f"{idx.size} indices and {w.size} weights")
    if idx.min() < 0 or idx.max() >= n:
        raise SpcaParameterError(f"warm_start indices must be in [0, {n - 1}]")
    if not np.all(np.isfinite(w)) or np.linalg.norm(w) == 0.0:
        raise SpcaParameterError("warm_start weights must be finite and not all zero")
    return idx, w


def tpower(A, k, *, eigen=None, init="auto", max_iter=200, tol=1e-8, n_starts=0,
           warm_start=None, random_state=0, local_search=True, time_limit=None, forced=None):
    """Sparse PCA by the truncated power method (TPower), best of several starts.

    Each run is Algorithm 1 of Yuan and Zhang (2013): x <- A' x, keep the k largest |entries|
    among the words still active in A', normalise; it stops when the support repeats and
    ||x_t - x_{t-1}|| < ``tol``. With ``local_search`` the fixed point is then checked against
    every single swap (one word out, one in, scored exactly), the best improving swap is taken
    and TPower restarted, until no swap helps: the result is both a fixed point of truncation
    and 1-swap optimal. Reported weights are the leading eigenvector of A'[I, I] on the final
    support I (:func:`~spca_cli.solvers._base.finish_component`), which is also the fixed point.

    ``init="auto"`` (the default) runs these starts and keeps the one with the largest value
    x^T A' x (ties go to the earlier start in this list):

    1. ``"top-variance"``: e_j at the largest diagonal entry of A' (Section 4.1.2, scheme 1);
    2. ``"top-k-variance"``: the indicator of the k largest diagonal entries, normalised;
    3. ``"warm-start"``: the two-stage scheme (Section 4.1.2, scheme 2): TPower with
       cardinality min(4k, active words) from the indicator of the 4k largest variances, whose
       fixed point starts the run with k (a third 2k stage found nothing better on KOS and the
       airline tweets and costs more products);
    4. ``"eigenvector"``: the k largest |entries| of the leading eigenvector of A' (the
       ``threshold`` solver's answer);
    5. ``"spannogram"``: ``warm_start``, when one is given;
    6. ``"random-1"`` ... ``"random-<n_starts>"``: the indicator of k words drawn uniformly from
       the 4k highest-variance active words (only when ``n_starts`` > 0).

    Parameters
    ----------
    A : Gram
        The (possibly deflated) co-occurrence operator of shape (n_words, n_words).
    k : int
        Number of nonzero words.
    eigen : Eigen, optional
        Leading eigenpairs of ``A``; used by the ``"eigenvector"`` start. Computed when None
        and needed.
    init : {'auto', 'top-variance', 'top-k-variance', 'warm-start', 'eigenvector', \
'spannogram'}, default='auto'
        Start(s) to use; see above.
    max_iter : int, default=200
        Iteration limit of each TPower run (one iteration = one product A' x).
    tol : float, default=1e-8
        Convergence threshold on ||x_t - x_{t-1}|| once the support is stable.
    n_starts : int, default=0
        Extra random starts added to ``init="auto"``.
    warm_start : (indices, weights) or SolverOutput, optional
        Start vector for ``init="spannogram"`` (the pipeline passes the rank-d spannogram's
        component); also tried by ``"auto"`` when given.
    random_state : int, RandomState or None, default=0
        Seeds the random starts; pass an int for reproducible results across calls.
    local_search : bool, default=True
        Follow each run with the exact single-swap check; False gives plain Algorithm 1.
    time_limit : float, optional
        Seconds; checked between starts (the first start always finishes). Starts not run
        are reported by a ConvergenceWarning and ``time_limited``.
    forced : array-like of int, optional
        Words every support must hold (``include``, at most k, all active): truncation keeps
        them and the k - |forced| largest other |entries|, and the swap search never swaps
        them out (:mod:`spca_cli.constraints`).

    Returns
    -------
    SolverOutput
        ``info`` holds ``init`` (the start that won), ``iterations`` (products A' x of that
        start, all stages and restarts included), ``converged``, ``swaps`` (improving swaps
        taken) and ``starts`` ({start name: value reached}).

    Raises
    ------
    SpcaParameterError
        For a bad ``k``, ``init``, ``max_iter``, ``tol`` or ``n_starts``, or
        ``init="spannogram"`` without ``warm_start``.

    Warns
    -----
    ConvergenceWarning
        When a run stops at ``max_iter`` before converging.

    See Also
    --------
    spca_cli.solvers.greedy.greedy : forward selection, another cheap single-component solver.

    Notes
    -----
    Every product is with a k-sparse x (:func:`sparse_matvec`), so A = S^T S is never formed;
    ``remove`` views only mask the result, projection views fall back to ``A.matvec``. Once a
    support repeats, the iterate jumps to the leading eigenvector of A'[I, I], the limit of the
    power method the iteration has become; the next product confirms the fixed point. The swap
    check scores all k (n - k) swaps exactly with the secular equation of
    :func:`spca_cli.kernels.greedy.bordered_lmax`. Starts that reach the same fixed point share
    one swap phase. Deterministic: no randomness unless ``n_starts`` > 0, ties go to the lower
    word index, and the same input gives byte-identical output.

    References
    ----------
    .. [1] X.-T. Yuan and T. Zhang, "Truncated power method for sparse eigenvalue problems",
       JMLR 14, 2013: Algorithm 1 (TPower), Section 4.1.2 (initialisation).

    Examples
    --------
    >>> import numpy as np
    >>> from spca_cli.matrix import Gram
    >>> from spca_cli.spectrum import top_eigenpairs
    >>> u = np.zeros(8); u[[1, 4, 6]] = 1 / np.sqrt(3)
    >>> A = Gram.from_dense(10 * np.outer(u, u) + np.eye(8))
    >>> out = tpower(A, 3, eigen=top_eigenpairs(A, 1))
    >>> sorted(out.indices.tolist()), round(out.value, 6), out.info["converged"]
    ([1, 4, 6], 11.0, True)
    """
    k = check_k(A, k)
    if init not in INITS:
        raise SpcaParameterError(f"init must be one of {', '.join(INITS)}; got {init!r}")
    max_iter = check_int("max_iter", max_iter, 1)
    tol = check_float("tol", tol, 0.0, np.inf, low_open=True)
    n_starts = check_int("n_starts", n_starts, 0)
    if init == "spannogram" or (init == "auto" and warm_start is not None):
        warm = _check_warm_start(warm_start, A.n)

    if forced is not None:
        forced = np.asarray(forced, dtype=np.int64)
    ops = A.sparse_products()
    active = ops.active
    n_active = int(active.sum())
    diag = np.where(active, ops.diagonal(), -np.inf)  # inactive words are never chosen
    by_variance = np.lexsort((np.arange(A.n), -diag))  # decreasing diagonal, ties by index

    # each start gives (indices, weights, products already spent, converged so far)
    def top_variance():
        return by_variance[:1], np.ones(1), 0, True

    def top_k_variance():
        return by_variance[:k], np.ones(k), 0, True

    def two_stage():  # cardinality 4k first, then k from its fixed point
        big = min(n_active, 4 * k)
        if big == k:
            return by_variance[:k], np.ones(k), 0, True
        return _run(ops, by_variance[:big], np.ones(big), big, max_iter, tol, forced)

    def eigenvector():
        nonlocal eigen
        if eigen is None:
            from spca_cli.spectrum import top_eigenpairs
            eigen = top_eigenpairs(A, 1, random_state=random_state)
        v1 = eigen.vectors[:, 0]
        support = _top_k(v1, active, k, forced)
        w = v1[support]
        return support, (w if np.linalg.norm(w) > 0 else np.ones(k)), 0, True

    starts = {}  # name -> callable giving the start
    if init in ("auto", "top-variance"):
        starts["top-variance"] = top_variance
    if init in ("auto", "top-k-variance"):
        starts["top-k-variance"] = top_k_variance
    if init in ("auto", "warm-start"):
        starts["warm-start"] = two_stage
    if init in ("auto", "eigenvector"):
        starts["eigenvector"] = eigenvector
    if init == "spannogram" or (init == "auto" and warm_start is not None):
        starts["spannogram"] = lambda: (*warm, 0, True)
    if init == "auto" and n_starts > 0:
        rng = random_state_of(random_state)
        pool = by_variance[:min(n_active, 4 * k)]
        for s in range(n_starts):
            chosen = np.sort(rng.choice(pool, size=k, replace=False))
            starts[f"random-{s + 1}"] = lambda chosen=chosen: (chosen, np.ones(k), 0, True)

    results = {}  # name -> (support, value, products, converged, swaps)
    unconverged = []
    memo = {}
    # the time limit is checked between starts: the first start always runs to the end
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    for name, make in starts.items():
        if results and deadline is not None and time.perf_counter() > deadline:
            warnings.warn(f"TPower stopped at the time limit after {len(results)} of "
                          f"{len(starts)} starts; the best of those is returned",
                          ConvergenceWarning, stacklevel=2)
            break
        idx, w, pre_iters, pre_ok = make()
        idx, w, lam, iters, ok, swaps = _tpower_local(ops, idx, w, k, max_iter, tol,
                                                      local_search, memo, forced)
        results[name] = (idx, lam, pre_iters + iters, ok and pre_ok, swaps)
        if not (ok and pre_ok):
            unconverged.append(name)

    best = max(results, key=lambda name: results[name][1])  # first maximum wins ties
    idx, lam, iters, ok, swaps = results[best]
    if unconverged:
        warnings.warn(
            f"TPower stopped at the iteration limit {max_iter} before converging; a higher "
            f"limit may find more (start{'s' if len(unconverged) > 1 else ''}: "
            f"{', '.join(unconverged)})",
            ConvergenceWarning, stacklevel=2)
    info = {"init": best, "iterations": int(iters), "converged": bool(ok), "swaps": int(swaps),
            "starts": {name: float(r[1]) for name, r in results.items()}}
    return finish_component(A, idx, time_limited=len(results) < len(starts), info=info)
