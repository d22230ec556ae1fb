"""The exact rank-d spannogram solver with provably safe feature elimination (2013 paper).

The front end turns the (possibly deflated) operator into the arrays the numba kernels in
:mod:`spca_cli.kernels.spannogram` want, runs Algorithm 3 (elimination) and Algorithm 2
(candidate supports) through them, scores every candidate on the original A', and derives the
certificate OPT <= OPT_d + lambda_{d+1} (Lemma 3).

Why the candidate set is complete (absolute-value mode, any PSD A). OPT_d = max over unit c of
f(c) = sum of the k largest (V c)_i^2, and a support that is a top-k set of |V c| at a maximiser
c* reaches it. Every c* lies in the closure of an open cell where the top-k set I is unique, so
it is enough to produce the set I of every cell. Fix such I and signs s_i = sign(V_i c) inside
the cell; Q = {c : s_i V_i c >= |V_j c| for i in I, j not in I} is a polyhedral cone inside the
closure of the cell, pointed because the rows of V span R^d. An extreme ray of Q has d-1
independent active constraints s_i V_i c = +-V_j c, all at the same level t = k-th largest |V c|:
if t > 0 the tied rows contain d whose star system (V_i1 - b_l V_il) c = 0 has rank d-1 (a star
point), if t = 0 they contain d-1 independent rows orthogonal to c (a zero point). At that ray
I = U + M, with U the curves strictly above t and M a choice of k - |U| tied curves, and the
kernel emits every such choice. Identical rows share every tie, so they are merged into one
class and only the number taken from each class is enumerated.
"""

from __future__ import annotations

import logging
import math
import time

import numba
import numpy as np

from spca_cli.errors import Name, SpcaParameterError
from spca_cli.kernels.spannogram import (STAT_CANDIDATES, STAT_HASHES, STAT_OVERFLOW, STAT_POINTS,
                                          STAT_TRUNCATED, STAT_ZERO_HIT, spannogram_pass)
from spca_cli.seeds import random_state_of
from spca_cli.solvers._base import check_float, check_int, check_k, finish_component
from spca_cli.spectrum import low_rank_factor, top_eigenpairs

__all__ = ["spannogram", "is_nonnegative", "warm_up"]

logger = logging.getLogger(__name__)

_TIE_RTOL = 1e-10  # tie tolerance, relative to the largest row norm of V
_ZERO_RTOL = 1e-12  # rows of V shorter than this (relative) are treated as zero rows
_DUP_RTOL = 1e-9  # rows equal to this (relative) precision are merged into one class
_ENUM_CAP = 1_000_000  # ways to resolve a single tie beyond which the point is skipped
# With the elimination, classes are first formed over this many rows of V, the longest: the
# passes visit a few hundred classes at most, and forming the classes of every row cost 0.15 s
# a call at 197,316 words. Rows left out are taken in only when a pass cannot rule them out.
_CLASSED_ROWS = 4096
_WINDOW = 1e-10  # candidates within this relative distance of the best are re-scored exactly


def is_nonnegative(A):
    """True if the operator A' is provably entrywise nonnegative (:meth:`Gram.is_nonnegative`)."""
    return A.is_nonnegative()


def _n_points(m, d, signed):
    """Intersection points (systems solved) of a pass over m classes."""
    if m < d:
        return 0
    n_sign = 1 if signed else 2 ** (d - 1)
    star = math.comb(m, d) * n_sign
    zero = math.comb(m, d - 1) if d >= 2 else 0
    return star + zero


def _row_classes(keys):
    """For each row of the integer array ``keys``, the number of its distinct value in
    lexicographic order: ``np.unique(keys, axis=0, return_inverse=True)[1]``, by one lexsort
    (np.unique sorts the rows as structured values: 84 against 21 ms on 50,000 x 2 keys)."""
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort(keys.T[::-1])  # the first column primary
    ordered = keys[order]
    new = np.empty(len(order), dtype=bool)
    new[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=new[1:])
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return inverse


def _classes(Vw, words, diag, signed, scale):
    """Merge identical rows of V into classes; return the arrays the kernel wants.

    Returns (Vc, norms, mult, off, word_order, deviation): class rows sorted by decreasing
    norm (ties by the representative's word index), class sizes, offsets into ``word_order``
    (the words of class g are word_order[off[g]:off[g+1]], best A' diagonal first) and the
    largest distance between a member's row and its class row.
    """
    Vn = Vw.copy()
    if not signed:
        # |V c| does not see the sign of a row: flip each row so its largest entry is positive,
        # then rows equal up to sign become equal
        big = np.argmax(np.abs(Vn), axis=1)
        sgn = np.sign(Vn[np.arange(len(Vn)), big])
        sgn[sgn == 0] = 1.0
        Vn *= sgn[:, None]
    q = _DUP_RTOL * scale
    keys = np.round(Vn / q).astype(np.int64)
    inverse = _row_classes(keys)
    # members of a class in priority order: larger diag(A') first, then smaller word index
    order = np.lexsort((words, -diag, inverse))
    inv_sorted = inverse[order]
    starts = np.flatnonzero(np.r_[True, inv_sorted[1:] != inv_sorted[:-1]])
    sizes = np.diff(np.r_[starts, len(order)])
    rep_local = order[starts]  # representative: first member in priority order
    rep_rows = Vn[rep_local]
    norms = np.linalg.norm(rep_rows, axis=1)
    rep_words = words[rep_local]
    cls_order = np.lexsort((rep_words, -norms))
    # inv_sorted[i] is the class of order[i] (classes numbered as starts); every member's
    # distance to its representative at once, and the members regrouped in class order (a
    # stable sort keeps the priority order within a class) -- a loop over 50,000 classes
    # cost 0.2 s a call
    deviation = float(np.max(np.linalg.norm(Vn[order] - rep_rows[inv_sorted], axis=1),
                             initial=0.0))
    rank = np.empty(len(cls_order), dtype=np.int64)
    rank[cls_order] = np.arange(len(cls_order))
    local_order = order[np.argsort(rank[inv_sorted], kind="stable")]
    mult = sizes[cls_order].astype(np.int64)
    off = np.zeros(len(mult) + 1, dtype=np.int64)
    off[1:] = np.cumsum(mult)
    Vc = np.ascontiguousarray(rep_rows[cls_order], dtype=np.float64)
    return (Vc, np.ascontiguousarray(norms[cls_order]), mult, off, words[local_order],
            deviation)


def _prefix_hashes(pos_hash, mult, off):
    """pre[pre_off[g] + j] = XOR of the hashes of the first j members of class g."""
    G = len(mult)
    pre_off = (off[:-1] + np.arange(G)).astype(np.int64)
    cls = np.repeat(np.arange(G), mult)
    cum = np.bitwise_xor.accumulate(pos_hash)
    base = np.zeros(G, dtype=np.uint64)
    base[1:] = cum[off[1:-1] - 1]  # XOR of every earlier class, cancelled out below
    pre = np.zeros(off[-1] + G, dtype=np.uint64)
    pre[np.arange(off[-1]) + cls + 1] = cum ^ base[cls]
    return pre, pre_off


class _Pass:
    """Runs the kernel over the first m classes in chunks (time limit, memory) and merges."""

    def __init__(self, arrays, d, k, signed, tol, gap, nthreads):
        self.arrays = arrays
        self.d, self.k, self.signed, self.tol, self.gap = d, k, signed, tol, gap
        # more workers than threads, handed out one at a time (chunksize 1): a busy or slow core
        # then takes fewer of them instead of holding up the pass
        self.nthreads = 4 * nthreads if nthreads > 1 else 1
        self.cap_c, self.cap_h = 20_000, 200_000

    def run(self, m, deadline=None, t_min=0.0):
        Vc, norms, mult, off, pre, pre_off = self.arrays
        args = (np.ascontiguousarray(Vc[:m]), norms[:m], mult[:m], off[:m + 1], pre, pre_off)
        d, signed = self.d, self.signed
        n_sign = 1 if signed else 2 ** (d - 1)
        work = np.array([math.comb(m - 1 - i, d - 1) * n_sign
                         + (math.comb(m - 1 - i, d - 2) if d >= 2 else 0) for i in range(m)],
                        dtype=np.float64)
        # chunks of about 2M points; under a time limit, chunks of about 0.1 s (measured rate),
        # so the clock is looked at often without paying the call overhead too often
        target = 2e6 if deadline is None else 1e5
        cursor = 0
        todo = []  # chunks to redo after an output buffer overflowed

        def next_chunk():
            nonlocal cursor
            if todo:
                return todo.pop()
            if cursor >= m:
                return None
            stop, acc = cursor, 0.0
            while stop < m and (acc == 0.0 or acc + work[stop] <= target):
                acc += work[stop]
                stop += 1
            chunk = np.arange(cursor, stop, dtype=np.int64)
            cursor = stop
            return chunk

        out = {"pos": [], "hash": [], "val": [], "all_hash": [], "points": 0, "tau": np.inf,
               "zero_hit": False, "truncated": False, "complete": True, "run_max": -np.inf}
        while True:
            if deadline is not None and time.perf_counter() > deadline:
                out["complete"] = False
                break
            firsts = next_chunk()
            if firsts is None:
                break
            t0 = time.perf_counter()
            with numba.parallel_chunksize(1):
                res = spannogram_pass(*args, d, self.k, signed, self.tol, firsts, self.nthreads,
                                      self.gap, self.cap_c, self.cap_h, _ENUM_CAP, t_min)
            if deadline is not None:
                rate = work[firsts].sum() / max(time.perf_counter() - t0, 1e-4)
                target = float(np.clip(0.1 * rate, 1e5, 2e6))
            pos, hsh, val, all_hash, stats, tau = res
            if stats[:, STAT_OVERFLOW].any():  # split the chunk or grow the buffers
                if len(firsts) > 1:
                    half = len(firsts) // 2
                    todo.append(firsts[half:])
                    todo.append(firsts[:half])
                else:
                    self.cap_c *= 4
                    self.cap_h *= 4
                    todo.append(firsts)
                continue
            out["points"] += int(stats[:, STAT_POINTS].sum())
            out["tau"] = min(out["tau"], float(tau.min()))
            out["zero_hit"] |= bool(stats[:, STAT_ZERO_HIT].any())
            out["truncated"] |= bool(stats[:, STAT_TRUNCATED].any())
            for th in range(self.nthreads):
                n_c, n_h = int(stats[th, STAT_CANDIDATES]), int(stats[th, STAT_HASHES])
                out["all_hash"].append(all_hash[th, :n_h].copy())
                if n_c:
                    v = val[th, :n_c]
                    out["run_max"] = max(out["run_max"], float(v.max()))
                    keep = v >= out["run_max"] - self.gap
                    out["pos"].append(pos[th, :n_c][keep].copy())
                    out["hash"].append(hsh[th, :n_c][keep].copy())
                    out["val"].append(v[keep].copy())
        return out


def _fewest_classes(Vc, norms, mult, k, tol, rng, tries=64):
    """A lower bound on the classes the last elimination pass will hold, before any pass.

    tau_G = min over unit c of the k-th largest |V_j c| (all classes) is at most that k-th
    largest at any particular c, so a few directions (the axes and seeded random ones) give
    U >= tau_G >= tau_m for every pass m. The loop stops at an m holding every class with
    norm >= tau_m - 4 tol, hence at least every class with norm >= U - 4 tol: when that many
    classes already cost more intersection points than allowed, the passes cannot finish
    within the budget, and saying so at once saves them (half a minute for rank 5 on a
    300-word full-rank matrix).
    """
    d = Vc.shape[1]
    directions = np.vstack([np.eye(d), rng.standard_normal((tries, d))])
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    if int(mult.sum()) < k:
        return 0  # fewer than k words: nothing to say
    # the classes come by decreasing norm and |V_j c| <= ||V_j||: a direction's k-th largest
    # over the leading classes is its k-th largest over all of them as soon as it is at least
    # the next class's norm; only the other directions look at every class (50,000 classes, 66
    # directions: 0.085 s a call, five calls a topics run, against about 0.01 s)
    head = min(len(mult), max(4 * k, _FEWEST_HEAD))
    kth = _kth_amplitudes(directions, Vc[:head], mult[:head], k)
    if head < len(mult):
        loose = kth < norms[head]
        if np.any(loose):
            kth[loose] = _kth_amplitudes(directions[loose], Vc, mult, k)
    upper = float(kth.min())
    return int(np.sum(norms >= upper - 4.0 * tol))


# classes looked at first by _fewest_classes (at least 4 k, which hold at least k words)
_FEWEST_HEAD = 2048


def _kth_amplitudes(directions, Vc, mult, k):
    """For each direction c: the k-th largest |V_j c| over the words, each class counted with its
    multiplicity (the classes must hold at least k words)."""
    amp = np.abs(directions @ Vc.T)  # (directions, classes): each row contiguous
    # the k-th largest over words is reached within the k largest classes (each holds at least
    # one word): select those, then sort only them
    top = min(k, len(mult))
    idx = np.argpartition(-amp, top - 1, axis=1)[:, :top]
    vals = np.take_along_axis(amp, idx, axis=1)
    order = np.argsort(-vals, axis=1)
    vals = np.take_along_axis(vals, order, axis=1)
    words = np.cumsum(mult[np.take_along_axis(idx, order, axis=1)], axis=1)
    reach = np.argmax(words >= k, axis=1)  # first class where the count of words reaches k
    return vals[np.arange(len(vals)), reach]


def _refusal(d, k, words, points, floor=False):
    least = "at least " if floor else ""
    return [f"rank {d} with k={k} leaves {least}{words} words after elimination: {least}"
            f"{points:.1e} candidate supports would not finish; use a smaller ", Name("rank"),
            ", or ", Name("time_limit"), " SECONDS to get the best found in that time"]


def spannogram(A, k, *, eigen, rank=2, eliminate=True, nonnegative=None, time_limit=None,
               max_candidates=50_000_000, random_state=0):
    """Best k-sparse component among the rank-d spannogram candidates, with its certificate.

    Solves max ||V_I^T x||^2 (the sparse PCA problem on A_d = V V^T, V = U_d L_d^(1/2)) exactly
    by enumerating the candidate supports of Algorithm 2 on the words that survive the safe
    elimination of Algorithm 3, then scores every candidate support I on the original A' by
    lambda_max(A'[I, I]) and returns the best (Algorithm 1).

    Parameters
    ----------
    A : Gram
        The (possibly deflated) co-occurrence operator of shape (n_words, n_words); only words
        with ``A.active()`` are ever chosen.
    k : int
        Number of nonzero words.
    eigen : Eigen
        Leading eigenpairs of ``A`` (at least ``rank + 1`` of them; more are computed if not).
    rank : int, default=2
        The rank d of the approximation. Cost grows like C(n_surviving, d); d = 1 is PCA plus
        thresholding.
    eliminate : bool, default=True
        Run the feature elimination first. The result is identical either way (see Notes); it
        only decides how many words the enumeration has to visit.
    nonnegative : bool or None, default=None
        ``None`` detects whether A' is entrywise nonnegative and reports it, but enumerates
        with all 2^(d-1) sign patterns of |V c| (see Notes). ``True`` uses the paper's
        nonnegative reduction (Appendix B: one sign pattern, top-k of V c and of -V c), which is
        exact by Perron-Frobenius on a nonnegative A but cannot be combined with the safe
        elimination, so it visits every word; ``False`` forces the |V c| enumeration.
    time_limit : float or None, default=None
        Seconds. Without it, a run that would visit more than ``max_candidates`` intersection
        points is refused; with it, the best support found when the time is up is returned
        (``exact`` False, no rank-d bound).
    max_candidates : int, default=50_000_000
        Largest number of intersection points (candidate supports) accepted without a time limit.
    random_state : int, RandomState or None, default=0
        Seeds the 64-bit Zobrist hashes used to deduplicate candidate supports; pass an int for
        reproducible results.

    Returns
    -------
    SolverOutput
        ``bounds`` holds ``(OPT_d + lambda_{d+1} + slack, "rank-d spannogram + lambda_{d+1}")``
        when the enumeration was complete. ``info`` has ``rank`` (the d used: requested rank,
        lowered to the number of positive eigenvalues), ``rank_requested``,
        ``surviving_words``, ``candidates`` (distinct supports), ``scored`` (k x k eigenvalue
        solves on A'), ``intersections`` (systems solved, all passes), ``opt_d``,
        ``apriori_ratio`` = max(0, 1 - lambda_{d+1} / value) (Theorem 1), ``nonnegative``,
        ``sign_patterns``; ``exact`` (optimal on A_d) and ``time_limited`` are fields.

    Raises
    ------
    SpcaParameterError
        For invalid parameters, or when the enumeration would exceed ``max_candidates`` and no
        ``time_limit`` was given.

    Notes
    -----
    Ties (exact rule, no perturbation). Words whose rows of V agree to 1e-9 of the largest row
    norm (up to sign for |V c|) form one class, so co-occurring words cost one curve. At every
    intersection point the curves within 1e-10 (relative) of the tie level count as tied, and
    every way of taking the missing k - |U| words from the tied classes is a candidate, so no
    perturbation of V is needed and the candidate set holds the top-k set of every cell of the
    arrangement. Zero rows of V are never candidates unless fewer than k words have nonzero rows.
    The bound's slack covers the merged rows, the dropped zero rows, the eigensolver residuals
    and rounding. Candidate supports are deduplicated by a 64-bit Zobrist hash (XOR of one random
    word per index) without a second check: two of N distinct supports collide with probability
    below N^2 / 2^65 (under 1e-5 for N = 10^7), and a collision could only drop one candidate.

    Elimination (Algorithm 3, made exact). Classes are taken in decreasing order of ||V_i||, the
    amplitude of curve i. For the first m of them, tau_m = min over unit c of the k-th largest
    |V_j c| is computed exactly: it is reached at a star point whose tie straddles the k-th place
    or is 0 (a zero point, or rows spanning less than R^d). Every row with ||V_e|| < tau_m lies
    strictly below k rows of the first m at every c, so it is in no top-k set and no straddling
    tie: the candidate set, hence the result, is the same without it. m grows until no row
    outside the first m reaches tau_m (tau_m only grows with m). The nonnegative reduction looks
    at signed values V c, whose k-th largest can be negative anywhere, so no amplitude test can
    discard a row there; that is why it is not used by default.

    References
    ----------
    .. [1] D. S. Papailiopoulos, A. G. Dimakis and S. Korokythakis, "Sparse PCA through Low-rank
       Approximations", ICML 2013: Algorithm 1 (solver), Algorithm 2 (spannogram candidates),
       Algorithm 3 and Appendix C (feature elimination), Appendix B (nonnegative reduction),
       Lemma 3 and Theorem 1 (bound OPT <= OPT_d + lambda_{d+1}), Appendix E (ties).

    Examples
    --------
    >>> import numpy as np
    >>> from spca_cli.matrix import Gram
    >>> from spca_cli.spectrum import top_eigenpairs
    >>> X = np.random.RandomState(0).randn(40, 12)
    >>> A = Gram.from_dense(X.T @ X)
    >>> out = spannogram(A, 3, eigen=top_eigenpairs(A, 3), rank=2)
    >>> len(out.indices), out.exact
    (3, True)
    >>> bool(out.value <= out.bounds[0][0])
    True
    """
    k = check_k(A, k)
    rank = check_int("rank", rank, 1)
    max_candidates = check_int("max_candidates", max_candidates, 1)
    if time_limit is not None:
        time_limit = check_float("time_limit", time_limit, 0.0, None, low_open=True)
    if nonnegative not in (None, True, False):
        raise SpcaParameterError(f"nonnegative must be None, True or False, got {nonnegative!r}")
    if not isinstance(eliminate, (bool, np.bool_)):
        raise SpcaParameterError(f"eliminate must be True or False, got {eliminate!r}")
    rng = random_state_of(random_state)
    deadline = None if time_limit is None else time.perf_counter() + time_limit

    detected = is_nonnegative(A)
    if nonnegative and not detected:
        raise SpcaParameterError(
            "nonnegative=True needs an entrywise nonnegative matrix (A = S^T S with S >= 0, or a "
            "dense A >= 0, undeflated or with remove deflation)")
    signed = bool(nonnegative)
    eliminate = bool(eliminate) and not signed

    n = A.n
    if len(eigen.values) < min(rank + 1, n):
        eigen = top_eigenpairs(A, rank + 1, random_state=random_state)
    res = eigen.residuals
    lam1 = eigen.value(0)
    d = eigen.effective_rank(rank)
    hashes_all = rng.randint(1, 2 ** 63 - 1, size=n, dtype=np.int64).astype(np.uint64)
    active = A.active()
    diag = A.diagonal()
    facts = {"rank": d, "rank_requested": rank, "nonnegative": detected,
             "sign_patterns": 1 if signed else 2 ** max(d - 1, 0)}

    if d == 0:  # A' vanishes on the active words: every support explains 0
        act = np.flatnonzero(active)
        support = act[np.lexsort((act, -diag[act]))][:k]
        return _output(A, support, facts, surviving=len(act), candidates=1, scored=1,
                       points=0, opt_d=0.0, lam_next=0.0, exact=True)

    V = low_rank_factor(eigen, d)  # (n, d), A_d = V V^T
    lam_next = eigen.value(d)  # lambda_{d+1}, 0 beyond n
    # an upper bound on lambda_max(A - V V^T): lambda_{d+1}'s ceiling (its residual, or more
    # where a copy of a repeated eigenvalue could be missing) and the first-order terms of the
    # first d pairs' residuals
    lam_bound = eigen.tail_ceiling(d) if d < A.n else 0.0
    slack_eig = 2.0 * float(np.sqrt(np.sum(res[:d] ** 2)))
    gap = lam_bound + slack_eig + 1e-9 * lam1  # A'-score <= A_d-score + gap (exact pruning)

    row_norm = np.linalg.norm(V, axis=1)
    row_norm[~active] = 0.0
    scale = float(row_norm.max())
    zero_cut = _ZERO_RTOL * scale
    nz = active & (row_norm > zero_cut)
    dropped = float(row_norm[active & ~nz].max()) if np.any(active & ~nz) else 0.0
    words_nz = np.flatnonzero(nz)

    if len(words_nz) <= k:
        # fewer nonzero rows than k: they all belong in the support, padded with the zero-row
        # words of largest diagonal (any padding has the same rank-d value)
        rest = np.flatnonzero(active & ~nz)
        pad = rest[np.lexsort((rest, -diag[rest]))][:k - len(words_nz)]
        support = np.concatenate([words_nz, pad])
        Vs = V[support]
        opt_d = float(np.linalg.eigvalsh(Vs.T @ Vs)[-1])
        return _output(A, support, facts, surviving=len(support), candidates=1, scored=1,
                       points=0, opt_d=opt_d, lam_next=lam_next, exact=True,
                       bound=_bound(opt_d, lam_bound, slack_eig, k, d, 0.0, dropped))

    tol = _TIE_RTOL * scale
    # (at least twice the k + d words the first pass takes)
    classed, left_out = _longest_rows(
        words_nz, row_norm[words_nz],
        max(_CLASSED_ROWS, 2 * (k + d)) if eliminate and deadline is None else None,
        2.0 * _DUP_RTOL * scale * math.sqrt(d))
    # (the floor's random directions are the same for the classes of every row)
    floor_state = rng.get_state()
    while True:
        Vc, norms, mult, off, word_order, deviation = _classes(
            V[classed], classed, diag[classed], signed, scale)
        pre, pre_off = _prefix_hashes(hashes_all[word_order], mult, off)
        runner = _Pass((Vc, norms, mult, off, pre, pre_off), d, k, signed, tol, gap,
                       nthreads=max(1, min(2, _n_threads())))
        if eliminate and deadline is None and d >= 2:
            rng.set_state(floor_state)
            m_floor = _fewest_classes(Vc, norms, mult, k, tol, rng)
            if m_floor and _n_points(m_floor, d, signed) > max_candidates:
                if left_out > 0.0:
                    # (the rows left out can lower the floor: judged on every row)
                    classed, left_out = words_nz, 0.0
                    continue
                raise SpcaParameterError(_refusal(d, k, int(off[1:][m_floor - 1]),
                                                  _n_points(m_floor, d, signed), floor=True))
        passes = _enumerate(runner, Vc, norms, off[1:], d, k, signed, tol, eliminate, deadline,
                            max_candidates, left_out=left_out)
        if passes is not None:
            break
        # a pass could not rule out the rows left out: every row, as without the cut
        classed, left_out = words_nz, 0.0
    result, m, points, complete = passes
    surviving = int(off[m])
    all_hash = np.concatenate(result["all_hash"]) if result["all_hash"] else np.empty(0, np.uint64)
    n_candidates = int(np.unique(all_hash).size)
    if not result["val"]:
        # time ran out before the first candidate: fall back to the top-k rows by norm
        words = word_order[:k] if len(word_order) >= k else words_nz[:k]
        return _output(A, np.sort(words), facts, surviving=surviving, candidates=0, scored=0,
                       points=points, opt_d=None, lam_next=lam_next, exact=False,
                       time_limited=True)
    support, opt_d, scored = _best_candidate(A, result, word_order, k, gap, lam1)
    if result["truncated"]:
        logger.warning("spannogram: a tie with more than %d resolutions was skipped; result is "
                       "not certified", _ENUM_CAP)
    logger.info("spannogram rank %d: %d surviving words, %d points, %d candidates, %d scored",
                d, surviving, points, n_candidates, scored)
    if not complete:
        return _output(A, support, facts, surviving=surviving, candidates=n_candidates,
                       scored=scored, points=points, opt_d=None, lam_next=lam_next,
                       exact=False, time_limited=not result["truncated"])
    return _output(A, support, facts, surviving=surviving, candidates=n_candidates, scored=scored,
                   points=points, opt_d=opt_d, lam_next=lam_next, exact=True,
                   bound=_bound(opt_d, lam_bound, slack_eig, k, d, deviation, dropped))


def _longest_rows(words, norms, count, gap):
    """``(words, left_out)``: the words of the ``count`` longest rows of V or a few more, and the
    largest norm of a row left out (0 when none is); every word when ``count`` is None or not
    below their number.

    The cut falls where the norms drop by more than ``gap`` (twice the widest class: rows merged
    into one class by :func:`_classes` differ by less than _DUP_RTOL scale sqrt(d)), so no class
    is split between the rows kept and those left out; the next ``count`` rows are searched for
    such a drop, and every word is kept when none has one."""
    if count is None or words.size <= count:
        return words, 0.0
    top = min(words.size, 2 * count)
    longest = np.sort(norms[np.argpartition(-norms, top - 1)[:top]])[::-1]
    drops = np.flatnonzero(longest[count - 1:-1] - longest[count:] > gap)
    if drops.size == 0:
        return words, 0.0
    kept = norms >= longest[count - 1 + drops[0]]
    return words[kept], float(norms[~kept].max(initial=0.0))


def _enumerate(runner, Vc, norms, cum_words, d, k, signed, tol, eliminate, deadline,
               max_candidates, left_out=0.0):
    """The passes of Algorithm 3 (made exact): grow the classes visited until none left out
    can be a candidate. Returns (last pass's result, classes visited, points, complete), or
    None when the classes are those of the longest rows only and a row left out of them (the
    longest of norm ``left_out``) is not ruled out, or the run would be refused (the classes
    of every row then say by how much)."""
    G = len(norms)
    total_points = 0
    t_min = 0.0  # proven lower bound on the k-th largest |V_j c| over the classes so far
    tau_prev = 0.0
    m = int(min(G, np.searchsorted(cum_words, k + d) + 1)) if eliminate else G
    while True:
        pts = _n_points(m, d, signed)
        if pts > max_candidates and deadline is None:
            if left_out > 0.0:
                return None  # (a refusal names what every row needs)
            raise SpcaParameterError(_refusal(d, k, int(cum_words[m - 1]), pts))
        result = runner.run(m, deadline, t_min)
        total_points += result["points"]
        if not result["complete"]:
            return result, m, total_points, False
        if not eliminate or (m == G and left_out == 0.0):
            break
        tau = result["tau"]
        if result["zero_hit"] or _rank_deficient(Vc[:m], d):
            tau = 0.0  # some unit c has fewer than k nonzero |V_j c|: nothing can go
        threshold = tau - 4.0 * tol
        m_need = int(np.sum(norms >= threshold)) if threshold > 0 else G
        m_need = max(m_need, m)
        # a row left out of the classes may reach the threshold (then so does every class)
        beyond = left_out > 0.0 and left_out >= threshold
        # g_m(c) = k-th largest |V_j c| over the first m classes only grows with m, so tau_m
        # bounds it below for every later pass: ties lower than that need not be solved
        settled = tau <= 1.05 * tau_prev
        tau_prev = tau
        t_min = max(t_min, tau - 4.0 * tol)
        if m_need == m and not beyond:
            break  # every class beyond m has ||V_e|| < tau_m: provably never a candidate
        # grow by half while tau still rises; once it has settled, go straight to the m_need
        # classes it cannot rule out (that pass is the last one: tau can only grow further)
        grow = m_need if settled else max(m + 1, int(math.ceil(1.5 * m)))
        if beyond and (settled or grow > G):
            return None  # the next pass takes rows left out
        m_next = min(m_need, grow)
        if _n_points(m_next, d, signed) > max_candidates and deadline is None:
            if left_out > 0.0:
                return None
            raise SpcaParameterError(_refusal(d, k, int(cum_words[m_need - 1]),
                                              _n_points(m_need, d, signed)))
        m = m_next
    return result, m, total_points, not result["truncated"]


def _window_floor(value):
    """The least value within ``_WINDOW`` of ``value``, below it whatever its sign: a view made
    zero by projection scores its candidates at rounding's size, some below zero, where
    ``value * (1 - _WINDOW)`` lies above ``value`` and left no candidate to return."""
    return value * (1 - _WINDOW) if value >= 0 else value * (1 + _WINDOW)


def _best_candidate(A, result, word_order, k, gap, lam1):
    """Score the candidates that can still win on A' itself (Algorithm 1's last step).

    Returns (support, opt_d = best rank-d value, number of k x k eigenvalue solves)."""
    pos = np.concatenate(result["pos"])
    hsh = np.concatenate(result["hash"])
    val = np.concatenate(result["val"])
    _, first = np.unique(hsh, return_index=True)
    pos, val = pos[first], val[first]
    opt_d = float(val.max())
    keep = val >= _window_floor(opt_d - 1e-9 * abs(opt_d)) - gap
    pos, val = pos[keep], val[keep]
    order = np.argsort(-val, kind="stable")
    pos, val = pos[order], val[order]
    # A' once, on the words of the candidates that can still win (a few dozen in practice)
    used = np.unique(pos)
    dense = A.submatrix(word_order[used])
    pos = np.searchsorted(used, pos)
    best = -np.inf
    scores = np.full(len(val), -np.inf)
    scored = 0
    batch = 512
    for s0 in range(0, len(val), batch):
        if val[s0] + gap < _window_floor(best) - 1e-12 * lam1:
            break  # sorted: no later candidate can come within the window of the best
        P = pos[s0:s0 + batch]
        sub = dense[P[:, :, None], P[:, None, :]]
        sc = np.linalg.eigvalsh(sub)[:, -1]
        scores[s0:s0 + len(P)] = sc
        scored += len(P)
        best = max(best, float(sc.max()))
    finalists = np.flatnonzero(scores >= _window_floor(best) - 1e-12 * lam1)
    # re-score the finalists on A'[I, I] in sorted word order, so the winner does not depend on
    # how the surviving block was laid out (elimination on or off)
    best_key = None
    for f in finalists:
        cand = np.sort(word_order[used[pos[f]]])
        lam = float(np.linalg.eigvalsh(A.submatrix(cand))[-1])
        key = (-lam, tuple(cand.tolist()))
        if best_key is None or key < best_key:
            best_key = key
    return np.array(best_key[1], dtype=np.int64), opt_d, scored


def _output(A, support, facts, *, surviving, candidates, scored, points, opt_d, lam_next,
            exact, bound=None, time_limited=False):
    """The one place a spannogram result is assembled (``exact``: optimal on A_d, the
    enumeration finished; ``bound``: OPT_d + lambda_{d+1} when there is one)."""
    out = finish_component(
        A, support, bounds=[] if bound is None else [
            (bound, f"rank-{facts['rank']} spannogram + lambda_{facts['rank'] + 1}")],
        exact=exact, time_limited=time_limited,
        info={**facts, "surviving_words": int(surviving), "candidates": int(candidates),
              "scored": int(scored), "intersections": int(points),
              "opt_d": opt_d if exact else None})
    out.info["apriori_ratio"] = _apriori(lam_next, out.value)
    return out


def _bound(opt_d, lam_bound, slack_eig, k, d, deviation, dropped):
    """OPT <= OPT_d + lambda_{d+1} (Lemma 3), with slack for what the enumeration simplified;
    ``lam_bound`` is lambda_{d+1}'s ceiling (:meth:`~spca_cli.spectrum.Eigen.tail_ceiling`).

    Rows merged into a class differ from its row by at most ``deviation`` and dropped zero rows
    have norm at most ``dropped``; for any k rows ||V_I - W_I||_2 <= sqrt(k) (deviation + dropped)
    =: delta, so the true OPT_d is at most (sqrt(opt_d) + delta)^2. lambda_max(A - V V^T) <=
    lambda_{d+1} + slack_eig to first order in the eigenpair residuals, and 1e-12 covers rounding.
    """
    delta = math.sqrt(k) * (deviation + dropped)
    opt_true = (math.sqrt(max(opt_d, 0.0)) + delta) ** 2
    total = opt_true + lam_bound + slack_eig
    return float(total + 1e-12 * total)


def _apriori(lam_next, value):
    return float(max(0.0, 1.0 - lam_next / value)) if value > 0 else 0.0


def _rank_deficient(Vm, d):
    if Vm.shape[0] < d:
        return True
    sv = np.linalg.svd(Vm, compute_uv=False)
    return bool(sv[-1] <= 1e-10 * sv[0])


def _n_threads():
    return numba.get_num_threads()


def warm_up():
    """Compile the kernels on a tiny input (first calls compile; the cache makes later runs fast)."""
    from spca_cli.matrix import Gram

    X = np.random.RandomState(0).rand(20, 8)
    A = Gram.from_dense(X.T @ X)
    eig = top_eigenpairs(A, 4)
    for d in (1, 2, 3):
        spannogram(A, 3, eigen=eig, rank=d)
    spannogram(A, 3, eigen=eig, rank=2, nonnegative=True)
