"""Nonnegative k-sparse principal component by the nonnegative spannogram (ICML 2014).

The solver finds a unit vector x >= 0 with at most k positive entries that makes x^T A' x large,
for any symmetric PSD A' (mixed-sign ones included), in two steps:

1. **Candidates on A_d = V V^T** (the rank-d truncation of A'):

   * ``exact`` mode, Algorithm 1: every vertex of the nonnegative spannogram yields the candidate
     supports of the cells around it (Section 4), and on each support the constrained rank-d
     problem (16) is solved exactly (Section 5). The best candidate is the exact optimum OPT_d
     of the rank-d problem (10), in time O(n^(d+1) + n^d k^d).
   * ``epsilon-net`` mode, Algorithm 3: N random unit c in R^d, each followed by the exact
     rank-1 solver on +-V c (Proposition 3.1); near-linear time in n.

2. **Refinement on A' itself.** The best few candidates (by their value on A_d) are refined by a
   nonnegative power iteration, and the one with the largest x^T A' x is kept (see Notes).

Upper bounds follow from A' <= A_d + lambda_{d+1} I: OPT <= OPT_d + lambda_{d+1}, certified in
exact mode and holding with a stated probability in epsilon-net mode, and from the paper's
approximation ratio rho_d (Theorems 1 and 2).
"""

from __future__ import annotations

import logging
import math
import time
import warnings

import numpy as np

from spca_cli.epsilon_net import cap_probability, epsilon_for_samples, samples_for_epsilon
from spca_cli.errors import SpcaParameterError
from spca_cli.kernels.nonneg import epsnet_samples, exact_vertices, pool_new
from spca_cli.seeds import random_state_of
from spca_cli.solvers._base import (ConvergenceWarning, check_float, check_int, check_k,
                                    finish_component)
from spca_cli.spectrum import low_rank_factor

__all__ = ["nonneg", "cap_probability", "samples_for_epsilon", "epsilon_for_samples",
           "exact_candidate_count", "DEFAULT_EPSILON"]

logger = logging.getLogger(__name__)

DEFAULT_EPSILON = 0.1  # the paper's experiments (Section 7) use d = 3, epsilon = 0.1
_POOL = 16  # candidates carried from A_d to the refinement on A'
_MAX_ITER = 200


def exact_candidate_count(m, d):
    """Spannogram vertices the exact mode visits: 2 C(m + 1, d) (both signs of each c).

    Each vertex yields at most 2^d candidate supports (Section 2's bound 2^d C(m + 1, d)), but
    in practice only the few whose tie straddles the k-th largest entry yield any, so the run
    time is set by the vertices, each costing O(m d) at worst.
    """
    return 2 if d <= 1 else 2 * math.comb(m + 1, d)


def _floor_str(p):
    """Probability rounded DOWN to 4 decimals, so a stated confidence is never overstated."""
    return f"{math.floor(p * 1e4) / 1e4:.4f}".rstrip("0").rstrip(".")


# ---------------------------------------------------------------------- refinement helpers
def _topk_positive(y, k):
    """Indices (sorted) of the at most k largest strictly positive entries of y, ties by index."""
    pos = np.flatnonzero(y > 0)
    if pos.size > k:
        order = np.lexsort((pos, -y[pos]))[:k]
        pos = np.sort(pos[order])
    return pos


def _ascend_rank_d(V, idx, w, k):
    """Nonnegative truncated power iteration on A_d = V V^T: x <- I_k^+(A_d x), normalised.

    x^T A_d x never decreases: f(x) = x^T A_d x is convex, so f(y) >= f(x) + 2 (A_d x)^T (y - x),
    and y maximises (A_d x)^T z over nonnegative k-sparse unit z, of which x is one.
    """
    m = V.shape[0]
    x = np.zeros(m)
    x[idx] = w
    g = V.T @ x  # (d,)
    val = float(g @ g)
    for _ in range(_MAX_ITER):
        y = V @ g  # (m,) A_d x
        sup = _topk_positive(y, k)
        if sup.size == 0:
            break
        z = np.zeros(m)
        z[sup] = y[sup] / np.linalg.norm(y[sup])
        gz = V.T @ z
        vz = float(gz @ gz)
        if vz <= val * (1.0 + 1e-13):
            break
        x, g, val = z, gz, vz
    sup = np.flatnonzero(x > 0)
    return sup, x[sup], val


def _project_power_on_support(B, w):
    """max w^T B w over w >= 0, ||w|| = 1 on a fixed support, by w <- (B w)_+ / ||(B w)_+||.

    The same convexity argument as :func:`_ascend_rank_d` shows the value never decreases;
    entries that go to zero stay allowed to come back. Returns (w, value).
    """
    val = float(w @ B @ w)
    for _ in range(_MAX_ITER):
        y = np.maximum(B @ w, 0.0)
        ny = np.linalg.norm(y)
        if ny == 0.0:
            break
        y /= ny
        vy = float(y @ B @ y)
        if vy <= val * (1.0 + 1e-13):
            break
        w, val = y, vy
    return w, val


def _polish_on_A(A, active, x, k):
    """Nonnegative truncated power iteration on A' itself (one product A' x per step).

    x <- I_k^+(A' x) / ||.||, restricted to active words; never decreases x^T A' x (convexity,
    as above). Returns (x, value, A' x).
    """
    y = A.matvec(x)
    val = float(x @ y)
    for _ in range(_MAX_ITER):
        yy = np.where(active, y, 0.0)
        sup = _topk_positive(yy, k)
        if sup.size == 0:
            break
        z = np.zeros_like(x)
        z[sup] = yy[sup] / np.linalg.norm(yy[sup])
        yz = A.matvec(z)
        vz = float(z @ yz)
        if vz <= val * (1.0 + 1e-13):
            break
        x, y, val = z, yz, vz
    return x, val, y


# ---------------------------------------------------------------------- the solver
#: With ``exact=None``, the exact enumeration is chosen only up to this many vertices (about
#: 2-3 s on 2 cores); beyond it the epsilon-net runs unless ``exact=True`` asks otherwise.
AUTO_EXACT_VERTICES = 5_000_000


def nonneg(A, k, *, eigen, rank=2, exact=None, samples=None, epsilon=None, time_limit=None,
           max_candidates=50_000_000, random_state=0):
    """Nonnegative k-sparse principal component of a PSD matrix (Algorithms 1 and 3).

    Parameters
    ----------
    A : Gram
        The (possibly deflated) operator A' of shape (n_words, n_words); any symmetric PSD
        matrix, entrywise nonnegative or not.
    k : int
        Number of words reported (at most k of them with positive weight, see Notes).
    eigen : Eigen
        Leading eigenpairs of ``A``: at least ``rank``, and ``rank + 1`` for the
        "+ lambda_{d+1}" bounds.
    rank : int, default=2
        d, the rank of the approximation A_d = V V^T the candidates are computed on.
    exact : bool or None, default=None
        True: Algorithm 1 (refused when its candidate count exceeds ``max_candidates`` and no
        ``time_limit`` is given). False: Algorithm 3. None: exact when ``samples`` and
        ``epsilon`` are both None and the count is within both ``max_candidates`` and
        ``AUTO_EXACT_VERTICES`` (5,000,000: a few seconds), else Algorithm 3.
    samples : int, optional
        Number of random directions for Algorithm 3 (chooses that mode).
    epsilon : float in (0, 1], optional
        Accuracy of Algorithm 3 (chooses that mode): with probability at least 1 - delta the
        best sample reaches (1 - epsilon) OPT_d on A_d, delta = min(0.01, 1/n). Without
        ``samples`` the number of samples follows from epsilon; without ``epsilon`` it follows
        from ``samples``; with neither, Algorithm 3 uses epsilon = 0.1.
    time_limit : float, optional
        Seconds after which candidate generation stops (checked between chunks); the result is
        then not certified and ``time_limited`` is True.
    max_candidates : int, default=50_000_000
        Largest number of spannogram vertices, 2 C(n + 1, d), the exact mode accepts without a
        time limit (about 20 s for n = 6906, d = 2 on one core).
    random_state : int, RandomState instance or None, default=0
        Seeds the random directions of Algorithm 3. Pass an int for reproducible results
        across multiple function calls.

    Returns
    -------
    SolverOutput
        ``indices`` (k words), nonnegative unit ``weights``, ``value`` = x^T A' x, ``bounds``
        (upper bounds on the best nonnegative k-sparse x^T A' x, each with its source) and
        ``info`` with keys ``rank``, ``mode`` ("exact" or "epsilon-net"), ``candidates``,
        ``samples``, ``epsilon``, ``opt_d`` (certified OPT_d, else None), ``value_d`` (best
        x^T A_d x found), ``vertices``, ``confidence``, ``nonzeros``; ``exact`` (OPT_d
        certified) and ``time_limited`` are fields of the output.

    Raises
    ------
    SpcaParameterError
        Bad parameter values, ``exact=True`` together with ``samples``/``epsilon``, or exact mode
        whose candidate count exceeds ``max_candidates`` without a ``time_limit``.

    Notes
    -----
    *Refinement.* Each of the best 16 candidates on A_d is first improved on A_d by a
    nonnegative truncated power iteration, then re-weighted on its own support of A' by the
    projected power iteration w <- (A'_II w)_+ / ||.||, and the candidate with the largest
    x^T A' x is finally polished by the nonnegative truncated power iteration on A'. On a
    mixed-sign A' the leading eigenvector of A'_II need not be nonnegative, so it is never used
    as the weights. Every step maximises a linear lower bound of the convex x^T A' x over a set
    containing the current x, so none can lower the value: the output explains at least what
    Algorithm 1 (or 3) would, and Theorems 1 and 2 still apply to it.

    *Zero weights.* Exactly k indices are reported. When the best vector found has fewer than
    k positive entries (on a mixed-sign A' adding any further word can only lower the value),
    the remaining positions are filled with the active words of largest (A' x)_j, with weight
    exactly 0; ``info["nonzeros"]`` counts the positive weights.

    *Bounds.* With lambda_{d+1} and the residuals r_i = ||A' u_i - lambda_i u_i|| of ``eigen``,
    x^T A' x <= x^T A_d x + lambda_{d+1} + r_{d+1} + 2 ||(r_1, ..., r_d)|| for unit x, hence
    OPT <= OPT_d + lambda_{d+1} + (residual terms); in epsilon-net mode OPT_d is replaced by
    value_d / (1 - epsilon), which holds with the stated probability. The ratio bound divides
    the attained value by rho_d = max{k/(2n), 1/(1 + 2 (n/k) lambda_{d+1}/lambda_1)} (and by
    1 - epsilon for Algorithm 3). Here n counts the words still available. The signed bounds
    lambda_1 and the sum of the k largest diagonal entries also bound the nonnegative problem
    (its feasible set is a subset of the signed one); the pipeline adds those.

    References
    ----------
    .. [1] M. Asteris, D. S. Papailiopoulos and A. G. Dimakis, "Nonnegative Sparse PCA with
       Provable Guarantees", ICML 2014: Algorithm 1, Section 4 (nonnegative spannogram),
       Section 5 (problem (16)), Algorithm 3, Theorems 1 and 2.

    Examples
    --------
    >>> import numpy as np
    >>> from spca_cli.matrix import Gram
    >>> from spca_cli.spectrum import top_eigenpairs
    >>> from spca_cli.solvers.nonneg import nonneg
    >>> B = np.array([[2.0, 0.0], [1.5, 0.5], [1.0, -1.0], [-1.0, 1.0], [0.2, 1.0]])
    >>> A = Gram.from_dense(B @ B.T)  # rank 2, mixed signs
    >>> out = nonneg(A, 2, eigen=top_eigenpairs(A, 3), rank=2)
    >>> out.indices.tolist(), bool(np.all(out.weights >= 0)), out.exact
    ([0, 1], True, True)
    >>> round(out.value, 6) == round(out.info["opt_d"], 6)
    True
    """
    k = check_k(A, k)
    rank = check_int("rank", rank, 1)
    max_candidates = check_int("max_candidates", max_candidates, 1)
    if samples is not None:
        samples = check_int("samples", samples, 1)
    if epsilon is not None:
        epsilon = check_float("epsilon", epsilon, 0.0, 1.0, low_open=True)
    if time_limit is not None:
        time_limit = check_float("time_limit", time_limit, 0.0, None, low_open=True)
    if exact not in (None, True, False):
        raise SpcaParameterError(f"exact must be True, False or None, got {exact!r}")
    if exact is True and (samples is not None or epsilon is not None):
        raise SpcaParameterError("exact=True cannot be combined with samples or epsilon "
                                 "(those choose the epsilon-net mode); give one or the other")
    rng = random_state_of(random_state)
    t0 = time.perf_counter()

    active_mask = A.active()
    active = np.flatnonzero(active_mask)  # (m,) words a solver may still choose
    m = active.size
    lam = np.asarray(eigen.values, dtype=np.float64)
    res = np.asarray(eigen.residuals, dtype=np.float64)
    d = eigen.effective_rank(min(rank, m))
    m_rows = int(np.count_nonzero(np.einsum("ij,ij->i", eigen.vectors[active, :d],
                                            eigen.vectors[active, :d]))) if d else m
    n_bound = exact_candidate_count(m_rows, max(d, 1))

    if d == 0:  # A' vanishes on the active words: every unit vector is optimal
        info = dict(rank=0, mode="exact", candidates=0, samples=None, epsilon=None, opt_d=0.0,
                    value_d=0.0, vertices=0, confidence=1.0, nonzeros=k)
        return finish_component(A, active[:k], weights=np.full(k, 1.0 / math.sqrt(k)),
                                exact=True, info=info)

    use_exact = _use_exact(d, exact, samples is not None or epsilon is not None, n_bound,
                           m_rows, max_candidates, time_limit)
    V = low_rank_factor(eigen, d)[active]  # (m, d) rows of the words still available
    rn2 = np.einsum("ij,ij->i", V, V)  # (m,) squared row norms
    # visit heavy rows first, so a time-limited exact run has seen the vertices that matter most;
    # a zero row (a word outside the range of V) only copies the spannogram's zero curve
    order = np.argsort(-rn2, kind="stable")
    order = order[rn2[order] > 0.0]
    Vs = np.ascontiguousarray(V[order])
    rn2s = np.ascontiguousarray(rn2[order])
    pool = pool_new(_POOL, k)
    # seed the pool with the rank-1 solutions along each eigen-direction (cheap, deterministic)
    epsnet_samples(Vs, np.eye(d), k, *pool)
    deadline = None if time_limit is None else t0 + time_limit
    if use_exact:
        found = _exact_search(Vs, rn2s, d, k, m, pool, deadline, n_bound)
    else:
        found = _net_search(Vs, d, k, m, pool, deadline, samples, epsilon, rng)
    support, weights, value, value_d = _refine(A, active_mask, active, order, Vs, pool, k)

    certified = found["certified"]
    # lambda_{d+1}'s ceiling (0 when A_d holds every eigenvalue of the active part)
    lam_next = eigen.tail_ceiling(d) if d < m else 0.0
    bounds = _bounds(lam, res, lam_next, d, m, k, value, value_d, certified, found["mode"],
                     found["epsilon"], found["confidence"])
    info = dict(rank=d, mode=found["mode"], candidates=int(found["candidates"]),
                samples=found["samples"], epsilon=found["epsilon"],
                opt_d=value_d if certified else None, value_d=value_d,
                vertices=found["vertices"], confidence=found["confidence"],
                nonzeros=int(np.sum(weights > 0)))
    logger.info("nonneg %s rank %d: %d candidates, value_d %.6g, value %.6g",
                found["mode"], d, found["candidates"], value_d, value)
    return finish_component(A, support, weights=weights, bounds=bounds, exact=bool(certified),
                            time_limited=found["time_limited"], info=info)


def _use_exact(d, exact, wants_net, n_bound, m_rows, max_candidates, time_limit):
    """Exact vertex enumeration or the epsilon-net, as asked or (auto) by its cost."""
    if d == 1:
        return True  # the rank-1 solver (Proposition 3.1) is exact and O(n)
    if exact is True:
        if n_bound > max_candidates and time_limit is None:
            raise SpcaParameterError(
                f"nonneg exact mode would visit {n_bound:,} spannogram vertices (2 C(n+1, d) "
                f"for rank d={d}, n={m_rows:,} words) > max_candidates={max_candidates:,}; give a "
                f"time limit, a smaller rank, or use the epsilon-net mode (samples or epsilon)")
        return True
    if exact is False or wants_net:
        return False
    # auto: exact while it is quick (a few seconds), else the epsilon-net, whose bound still
    # certifies the answer with a stated probability
    return n_bound <= min(max_candidates, AUTO_EXACT_VERTICES)


def _exact_search(Vs, rn2s, d, k, m, pool, deadline, n_bound):
    """Every spannogram vertex of the nonnegative problem on A_d (Algorithm 2) into ``pool``."""
    time_limited = False
    counts = np.zeros(3, dtype=np.int64)
    if d >= 2:
        J = np.arange(d, dtype=np.int64)
        chunk = max(1, int(2e7 // max(m, 1)))  # ~ 2e7 row products per kernel call
        more = True
        while more:
            if deadline is not None and time.perf_counter() > deadline:
                time_limited = True
                break
            more = exact_vertices(Vs, rn2s, J, k, chunk, *pool, counts)
    vertices = int(counts[0])
    if time_limited:
        warnings.warn(
            f"nonneg exact mode stopped at the time limit after {vertices:,} of {n_bound:,} "
            f"spannogram vertices; the result is not certified optimal for rank {d}. "
            f"Increase time_limit or use the epsilon-net mode.", ConvergenceWarning,
            stacklevel=3)
    return {"mode": "exact", "candidates": int(counts[1]) + 2 * d, "vertices": vertices,
            "samples": None, "epsilon": None, "confidence": 1.0,
            "certified": not time_limited, "time_limited": time_limited}


def _net_search(Vs, d, k, m, pool, deadline, samples, epsilon, rng):
    """The epsilon-net of Algorithm 3: ``samples`` random directions (or enough for
    ``epsilon``) into ``pool``; its guarantee holds with the reported confidence."""
    delta = min(0.01, 1.0 / m)
    eps_used = DEFAULT_EPSILON if (epsilon is None and samples is None) else epsilon
    if samples is None:
        n_samples = samples_for_epsilon(eps_used, d, delta)
    else:
        n_samples = samples
        if eps_used is None:
            eps_used = epsilon_for_samples(n_samples, d, delta)
    C = rng.standard_normal((n_samples, d))  # (N, d) uniform directions after normalising
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    candidates = 2 * d
    drawn = 0
    time_limited = False
    step = max(1, int(2e7 // max(m * d, 1)))
    while drawn < n_samples:
        if deadline is not None and time.perf_counter() > deadline:
            time_limited = True
            break
        stop = min(n_samples, drawn + step)
        candidates += epsnet_samples(Vs, np.ascontiguousarray(C[drawn:stop]), k, *pool)
        drawn = stop
    p = cap_probability(eps_used, d)
    confidence = 1.0 - (1.0 - p) ** drawn if p < 1.0 else 1.0
    if time_limited:
        warnings.warn(
            f"nonneg epsilon-net stopped at the time limit after {drawn:,} of {n_samples:,} "
            f"samples; its guarantee now holds with probability {_floor_str(confidence)}. "
            f"Increase time_limit or epsilon.", ConvergenceWarning, stacklevel=3)
    return {"mode": "epsilon-net", "candidates": candidates, "vertices": 0, "samples": drawn,
            "epsilon": eps_used, "confidence": confidence, "certified": False,
            "time_limited": time_limited}


def _refine(A, active_mask, active, order, Vs, pool, k):
    """The pool's supports ascended on A_d, then on A' itself; the best, padded to k words.

    Returns (support, weights, value on A', best value on A_d)."""
    pool_vals, pool_sets, pool_w = pool
    value_d = float(pool_vals.max())
    best_x, best_val = None, -np.inf
    seen = set()
    for t in np.argsort(-pool_vals, kind="stable"):
        if pool_vals[t] < 0:
            continue
        cnt = int(np.sum(pool_sets[t] >= 0))
        sup, w, vd = _ascend_rank_d(Vs, pool_sets[t, :cnt], pool_w[t, :cnt], k)
        value_d = max(value_d, vd)
        key = tuple(sup.tolist())
        if key in seen or sup.size == 0:
            continue
        seen.add(key)
        gidx = active[order[sup]]
        w, val = _project_power_on_support(A.submatrix(gidx), w)
        if val > best_val:
            best_val = val
            best_x = np.zeros(A.n)
            best_x[gidx] = w
    if best_x is None:  # no direction gave a positive entry (cannot happen for V != 0)
        best_x = np.zeros(A.n)
        best_x[active[0]] = 1.0
    x, value, Ax = _polish_on_A(A, active_mask, best_x, k)

    support = np.flatnonzero(x > 0)
    weights = x[support]
    if support.size < k:  # pad with the least harmful words, weight exactly 0 (see Notes)
        rest = np.setdiff1d(active, support)
        pad = rest[np.lexsort((rest, -Ax[rest]))[: k - support.size]]
        support = np.concatenate([support, pad])
        weights = np.concatenate([weights, np.zeros(pad.size)])
    return support, weights, value, value_d


def _bounds(lam, res, lam_next, d, m, k, value, value_d, certified, mode, eps, confidence):
    """Upper bounds (value, source) on the best nonnegative k-sparse x^T A' x; see nonneg Notes.
    ``lam_next``: an upper bound on lambda_{d+1} (:meth:`~spca_cli.spectrum.Eigen.
    tail_ceiling`)."""
    out = []
    cross = 2.0 * float(np.sqrt(np.sum(res[:d] ** 2)))  # A_d from approximate eigenpairs
    lam1 = float(lam[0] - res[0])
    if lam1 > 0:
        rho = max(k / (2.0 * m), 1.0 / (1.0 + 2.0 * (m / k) * lam_next / lam1))
    else:
        rho = k / (2.0 * m)
    slack = 1e-12 * max(value_d, value, 0.0)  # rounding in OPT_d and in the reported value
    if mode == "exact":
        if not certified:
            return out  # a time-limited run certifies nothing beyond the general bounds
        out.append((value_d + lam_next + cross + slack,
                    f"rank-{d} nonneg spannogram + lambda_{d + 1}"))
        out.append(((value + cross) / rho + slack, f"Theorem 1 ratio (rank {d})"))
    else:
        if eps >= 1.0 or confidence <= 0.0:
            return out
        wp = f"w.p. >= {_floor_str(confidence)}"
        out.append((value_d / (1.0 - eps) + lam_next + cross + slack,
                    f"eps-net rank-{d} + lambda_{d + 1} ({wp})"))
        out.append(((value + cross) / ((1.0 - eps) * rho) + slack,
                    f"Theorem 2 ratio (rank {d}, eps {eps:g}, {wp})"))
    return out
