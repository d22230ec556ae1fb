"""Several sparse components with disjoint supports, jointly, by bipartite matchings (2015 paper).

The problem (eq. 2 of the paper) is

    maximise  Tr(X^T A X) = sum_j x_j^T A x_j
    over      X = [x_1 ... x_K],  ||x_j|| = 1,  ||x_j||_0 = k,  supp(x_i) and supp(x_j) disjoint.

With A_r = U_r L_r U_r^T the rank-r sketch and V = U_r L_r^(1/2) (n x r), Cauchy-Schwarz gives
x^T A_r x = max_{||c|| = 1} <x, V c>^2 (eq. 3), so for a fixed r x K matrix C with unit columns
the best X is a *matching* problem (Algorithm 2): with W = V C (n x K), component j earns
W[i, j]^2 for each word i it takes, and the supports are a maximum-weight matching of words to
K groups of k identical slots; x_j is then W[I_j, j] normalised (eq. 7). Algorithm 1 tries many C
and keeps the best X. We draw C at random (each column uniform on the unit sphere) instead of
walking an epsilon-net: a net of (S^{r-1})^K is astronomically large for K = 8, and the paper's
own experiments also stop at a time budget.

What this module adds to the paper:

* every candidate support is scored on the ORIGINAL A (lambda_max of each A[I_j, I_j], the best
  unit vector on that support), not on the sketch, and the best total wins;
* an exact reduction of each matching to a few hundred words (see :func:`_top_lists`), and a
  pool of the words with the largest ||v_i|| that makes the reduction cheap (see ``_Problem``);
* certified upper bounds on the best achievable total (:func:`spca_cli.bounds.total_bounds`,
  where every bound on a total of disjoint topics lives).
"""

from __future__ import annotations

import contextlib
import math
import numbers
import os
import time
import warnings
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from spca_cli.bounds import total_bounds
from spca_cli.errors import SpcaParameterError
from spca_cli.seeds import random_state_of
from spca_cli.solvers._base import (ConvergenceWarning, JointOutput, check_float, check_int,
                                    check_k, finish_component, leading_eigvec)
from spca_cli.spectrum import low_rank_factor, top_eigenpairs
from spca_cli.threads import one_blas_thread

__all__ = ["bipartite", "match_supports", "DEFAULT_SAMPLES"]

#: Samples of C when ``samples`` is None: about 1.5 s on KOS (K = 8, k = 10) on one free core;
#: with the refinement its total there is within 0.1% of what 20,000 samples reach
#: (206443 vs 206516; 202707 without refinement; see bench/bench_bipartite.py).
DEFAULT_SAMPLES = 2000

#: Local ascent (``_refine``) from the best sample of this many chunks, best first.
DEFAULT_REFINE = 8

# Samples per unit of work. Fixed (never derived from n_jobs) so that every sample is computed
# by exactly the same array operations whatever the number of threads: results are then
# bit-identical for a seed with n_jobs = 1, 2, ...
_CHUNK = 64

# Words kept in the pool: the POOL_FACTOR * K * k words with the largest ||v_i|| (at least
# _POOL_MIN). Samples the pool cannot serve exactly fall back to all words (counted in info).
_POOL_FACTOR = 12
_POOL_MIN = 1024
# The dense A[pool, pool] used to score candidates is formed only up to this many words.
_DENSE_POOL_LIMIT = 4096


# ---------------------------------------------------------------------------------------------
# Algorithm 2: the matching, with an exact reduction
# ---------------------------------------------------------------------------------------------
def _top_lists(W2, T):
    """Rows of the T largest entries of each column of W2 (all rows when T >= n).

    Reduction (why only these words can matter). Let L_j be the T = K*k words with the largest
    W2[., j], so that W2[u, j] >= W2[w, j] for every u in L_j and w not in L_j. Among the
    optimal matchings take one with the most edges (w, j) that have w in L_j, and suppose some
    w not in L_j is matched to j. Words of L_j are matched at most k - 1 times to j (w fills one
    of j's k slots) and at most (K - 1) k times to the other components: at most K k - 1 < T
    of them are used, so some u in L_j is free. Giving w's slot to u keeps the supports
    disjoint, changes the weight by W2[u, j] - W2[w, j] >= 0, and adds an in-list edge, a
    contradiction. So some optimal matching uses only words of the union of the L_j, and a
    matching on those rows (all K columns kept) has the same optimum as on all n words.
    T = K k is needed in general: if all columns of W are equal, the optimum uses that column's
    K k largest words.
    """
    n = W2.shape[0]
    if T >= n:
        return np.arange(n)
    # argpartition puts the T largest of each column in the last T rows (any order among them)
    top = np.argpartition(W2, n - T, axis=0)[n - T:]
    return np.unique(top)


def match_supports(W, k, *, reduce=True):
    """Algorithm 2: the disjoint supports maximising sum_j sum_{i in I_j} W[i, j]^2.

    Parameters
    ----------
    W : ndarray of shape (n_words, K)
        W = U_r L_r^(1/2) C for one auxiliary C.
    k : int
        Words per component (K * k <= n_words).
    reduce : bool, default=True
        Match only the union of each column's K*k heaviest words (exact, see ``_top_lists``).

    Returns
    -------
    supports : ndarray of int64, shape (K, k)
        Row j holds the words of component j (ascending).
    value : float
        The matching weight sum_j ||W[I_j, j]||^2, eq. (7) of the paper.
    """
    W2 = np.square(np.asarray(W, dtype=np.float64))
    K = W2.shape[1]
    rows = _top_lists(W2, K * k) if reduce else np.arange(W2.shape[0])
    return _match(W2[rows], rows, k)


def _match(w2, words, k):
    """Maximum-weight matching of the rows of w2 (u x K) to K groups of k identical slots:
    ``(supports, value)``, the supports' words (``words`` of the rows) ascending.

    :func:`~spca_cli.kernels.matching.assign_groups` solves it on the K groups themselves
    (successive longest augmenting paths): about 20 microseconds on a 200 x 5 problem with
    k = 10, against 0.24 ms for SciPy's ``linear_sum_assignment`` on the K k slot columns
    (whose module also costs 0.2-0.3 s to import) and 0.6 ms for its sparse
    ``min_weight_full_bipartite_matching``; the same maximum on every problem of the tests
    (ties, equal columns, scales from 1e-8 to 1e8), without the GIL for the solver's threads."""
    from spca_cli.kernels.matching import assign_groups

    w2 = np.ascontiguousarray(w2, dtype=np.float64)
    if not np.isfinite(w2).all():
        raise ValueError("matrix contains invalid numeric entries")
    K = w2.shape[1]
    if w2.shape[0] < K * k:
        raise ValueError(f"{w2.shape[0]} words cannot fill {K} groups of {k}")
    group, ok = assign_groups(w2, int(k))
    if not ok:
        # (rare: weights equal up to rounding, see assign_groups) SciPy's assignment on the
        # K k slot columns, imported only here
        from scipy.optimize import linear_sum_assignment

        rows, slots = linear_sum_assignment(np.repeat(w2, k, axis=1), maximize=True)
        group = np.full(w2.shape[0], -1, dtype=np.int64)
        group[rows] = slots // k
    placed = np.flatnonzero(group >= 0)
    value = float(w2[placed, group[placed]].sum())
    order = placed[np.argsort(group[placed], kind="stable")]
    supports = np.sort(words[order].reshape(K, k), axis=1)
    return supports, value


# ---------------------------------------------------------------------------------------------
# The sampling loop
# ---------------------------------------------------------------------------------------------
class _Problem:
    """Everything the workers share (read-only): V on the word pool, the dense A on the pool.

    Pool: the active words sorted by decreasing ||v_i||^2 (ties by index), first m of them.
    Since |W[i, j]| = |<v_i, c_j>| <= ||v_i|| for a unit c_j, a word outside the pool weighs at
    most ``outside`` = the largest ||v_i||^2 outside it. If the T-th largest pool weight of each
    column is >= ``outside``, the pool's top-T lists are top-T lists of all words (every word
    outside weighs no more), so the reduction above is still exact; otherwise the sample is
    redone on all active words.
    """

    def __init__(self, A, V, k, K):
        self.A, self.k, self.K, self.T = A, k, K, K * k
        words = np.flatnonzero(A.active())
        norm2 = np.einsum("ij,ij->i", V[words], V[words])
        order = np.lexsort((words, -norm2))
        words, norm2 = words[order], norm2[order]
        m = min(words.size, max(_POOL_FACTOR * self.T, _POOL_MIN))
        self.words_all = words  # (n_active,) active words, heaviest first
        self.V_all = np.ascontiguousarray(V[words])  # (n_active, r)
        self.pool = words[:m]  # (m,)
        self.V_pool = self.V_all[:m]  # (m, r)
        # 1e-12: |<v, c>|^2 may exceed ||v||^2 ||c||^2 by rounding; keep the test on the safe side
        self.outside = float(norm2[m]) * (1.0 + 1e-12) if m < words.size else -1.0
        self.pos = np.full(A.n, -1, dtype=np.int64)  # word -> row of A_pool, or -1
        self.A_pool = None
        if m <= _DENSE_POOL_LIMIT:
            self.A_pool = A.submatrix(self.pool)  # (m, m)
            self.pos[self.pool] = np.arange(m)

    def lambda_block(self, support):
        """A[I, I] for one support I."""
        local = self.pos[support]
        if np.all(local >= 0):
            return self.A_pool[np.ix_(local, local)]
        return self.A.submatrix(support)

    def lambda_max(self, supports):
        """lambda_max(A[I, I]) for each row I of ``supports`` (N, k)."""
        vals = np.empty(supports.shape[0])
        local = self.pos[supports]
        inside = np.all(local >= 0, axis=1)
        if inside.any():
            li = local[inside]
            blocks = self.A_pool[li[:, :, None], li[:, None, :]]  # (N_in, k, k)
            vals[inside] = np.linalg.eigvalsh(blocks)[:, -1]
        for i in np.flatnonzero(~inside):
            vals[i] = leading_eigvec(self.A.submatrix(supports[i]))[0]
        return vals


def _run_chunk(prob, start, C, deadline):
    """Algorithms 2 + scoring on A for the samples C (B, r, K) numbered start, start+1, ..."""
    B, r, K = C.shape
    k, T = prob.k, prob.T
    m = prob.V_pool.shape[0]
    # one row per column c_j of every sample (B K, m): partitioning along contiguous rows is
    # several times faster than along axis 0 of the (m, B K) product
    W2 = np.square(C.transpose(0, 2, 1).reshape(B * K, r) @ prob.V_pool.T)
    if T < m:
        top = np.argpartition(W2, m - T, axis=1)[:, m - T:]  # (B K, T): each row's T largest
        tau = np.take_along_axis(W2, top, axis=1).min(axis=1)
        exact = np.all((tau >= prob.outside).reshape(B, K), axis=1)
    else:
        top, exact = None, np.ones(B, dtype=bool)
    supports = np.empty((B, K, k), dtype=np.int64)
    sketch = np.empty(B)
    done = 0
    for b in range(B):
        if deadline is not None and (start + b) > 0 and time.perf_counter() > deadline:
            break
        if exact[b]:
            cols = slice(b * K, (b + 1) * K)
            rows = np.arange(m) if top is None else np.unique(top[cols])
            supports[b], sketch[b] = _match(W2[cols, rows].T, prob.pool[rows], k)
        else:  # the pool cannot certify this sample's top lists: use every active word
            w2 = np.square(prob.V_all @ C[b])
            rows = _top_lists(w2, T)
            supports[b], sketch[b] = _match(w2[rows], prob.words_all[rows], k)
        done += 1
    supports, sketch = supports[:done], sketch[:done]
    if done == 0:
        return {"done": 0, "fallbacks": 0}
    # score on A: lambda_max of each distinct component support, once
    flat = supports.reshape(done * K, k)
    uniq, inverse = np.unique(flat, axis=0, return_inverse=True)
    totals = prob.lambda_max(uniq)[inverse.ravel()].reshape(done, K).sum(axis=1)
    b = int(np.argmax(totals))  # first maximum: ties go to the lowest sample number
    return {"done": done, "fallbacks": int(np.count_nonzero(~exact[:done])),
            "total": float(totals[b]), "index": start + b, "supports": supports[b],
            "sketch": float(sketch.max()), "distinct": int(uniq.shape[0])}


def _refine(prob, V, supports, total, deadline, max_steps=50):
    """Local ascent from one candidate: C <- the best C for X, then X <- Algorithm 2 for C.

    For fixed X the best column c_j is V^T x_j / ||V^T x_j|| (equality in eq. 3); for fixed C
    the best X is the matching. x_j is the leading eigenvector of A[I_j, I_j] (what we score).
    Stops when the total on A stops growing, so it can only improve the candidate.
    """
    steps = 0
    while steps < max_steps and (deadline is None or time.perf_counter() <= deadline):
        X = []
        for s in supports:
            _, w = leading_eigvec(prob.lambda_block(s))
            X.append(V[s].T @ w)
        C = np.column_stack(X)  # (r, K)
        C /= np.maximum(np.linalg.norm(C, axis=0), np.finfo(np.float64).tiny)
        w2 = np.square(prob.V_all @ C)
        rows = _top_lists(w2, prob.T)
        new, _ = _match(w2[rows], prob.words_all[rows], prob.k)
        new_total = float(prob.lambda_max(new).sum())
        steps += 1
        if not new_total > total * (1.0 + 1e-12):
            break
        supports, total = new, new_total
    return total, supports, steps


def _draw(rng, B, r, K):
    """B auxiliary matrices C (B, r, K), each column uniform on the unit sphere S^{r-1}."""
    C = rng.standard_normal((B, r, K))
    norms = np.linalg.norm(C, axis=1, keepdims=True)
    return C / np.maximum(norms, np.finfo(np.float64).tiny)


def _check_n_jobs(n_jobs):
    n_jobs = check_int("n_jobs", n_jobs, -1)
    if n_jobs == 0:
        raise SpcaParameterError("n_jobs must be >= 1, or -1 for every core, got 0")
    return (os.cpu_count() or 1) if n_jobs == -1 else n_jobs


def _sample(prob, V, r, K, samples, refine, n_jobs, rng, deadline):
    """Algorithm 1: draw ``samples`` matrices C (in chunks, threads over chunks), keep the best
    matching; then Algorithm 2's refinement from the best sample of ``refine`` chunks."""
    n_chunks = math.ceil(samples / _CHUNK)
    best, done, fallbacks, sketch, submitted = None, 0, 0, -np.inf, 0
    starts = []  # (total, sample number, supports) of each chunk's best sample
    timed_out = False
    executor = ThreadPoolExecutor(n_jobs) if n_jobs > 1 else None
    pending = deque()
    # Every BLAS call here is tiny (inner dimension r): OpenBLAS's own threads only add
    # overhead, and on a busy machine made the (B K x r) @ (r x m) product ~40x slower; the
    # parallelism is ours (threads over chunks), so BLAS runs single-threaded meanwhile.
    blas = contextlib.ExitStack()
    blas.enter_context(one_blas_thread())
    try:
        while (submitted < n_chunks and not timed_out) or pending:
            # keep a few chunks in flight; C is drawn here, in chunk order, from the one rng
            while (submitted < n_chunks and len(pending) < 2 * n_jobs and not timed_out):
                B = min(_CHUNK, samples - submitted * _CHUNK)
                C = _draw(rng, B, r, K)
                args = (prob, submitted * _CHUNK, C, deadline)
                pending.append(executor.submit(_run_chunk, *args) if executor
                               else _Immediate(_run_chunk(*args)))
                submitted += 1
            res = pending.popleft().result()
            done += res["done"]
            fallbacks += res["fallbacks"]
            if res["done"]:
                sketch = max(sketch, res["sketch"])
                starts.append((res["total"], res["index"], res["supports"]))
                # chunks are merged in sample order and only a strictly larger total wins,
                # so the winner is the lowest-numbered best sample whatever n_jobs is
                if best is None or res["total"] > best["total"]:
                    best = res
            if deadline is not None and time.perf_counter() > deadline:
                timed_out = True

        refined = 0
        best_supports, best_total = best["supports"], best["total"]
        if refine:
            starts.sort(key=lambda s: (-s[0], s[1]))
            for total, _, supports in starts[:refine]:
                if deadline is not None and time.perf_counter() > deadline:
                    break
                total, supports, steps = _refine(prob, V, supports, total, deadline)
                refined += steps
                if total > best_total:
                    best_total, best_supports = total, supports
    finally:
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        blas.close()
    return {"best": best, "supports": best_supports, "done": done, "fallbacks": fallbacks,
            "sketch": sketch, "refined": refined}


def bipartite(A, k, n_components, *, eigen, rank=4, samples=None, time_limit=None,
              random_state=0, n_jobs=1, refine=DEFAULT_REFINE):
    """K sparse components with disjoint supports, jointly, by bipartite matchings.

    Maximises the total explained variance sum_j x_j^T A x_j over K unit vectors with exactly
    ``k`` nonzeros each and pairwise disjoint supports (the paper's eq. 2). Each sample draws an
    r x K matrix C with unit columns, solves the matching problem of Algorithm 2 for
    W = U_r L_r^(1/2) C on the rank-r sketch, and scores the resulting supports on the original
    A (the leading eigenvector of each A[I_j, I_j]); the best total over all samples is kept,
    after a short local ascent from the best few samples (``refine``).

    Parameters
    ----------
    A : Gram
        The co-occurrence operator of shape (n_words, n_words); only its active words are used.
    k : int
        Words per component (the paper's s).
    n_components : int
        Number of components K; ``n_components * k`` must not exceed the active words.
    eigen : Eigen
        Leading eigenpairs of ``A``; at least ``max(rank, n_components) + 1`` are used (more
        are computed when fewer are given).
    rank : int, default=4
        Rank r of the sketch A_r (the paper's experiments use 4).
    samples : int or None, default=None
        How many matrices C to try; None means ``DEFAULT_SAMPLES`` (2000).
    time_limit : float or None, default=None
        Seconds for the sampling loop; when reached, the best result so far is returned with
        ``time_limited`` True and a :class:`ConvergenceWarning`.
    random_state : int, RandomState or None, default=0
        Seeds the draws of C. Pass an int for reproducible results across multiple function
        calls; results do not depend on ``n_jobs`` (unless the time limit is reached).
    n_jobs : int, default=1
        Threads for the matchings (their kernel releases the GIL); -1 for all cores.
    refine : int, default=8
        After sampling, alternate "best C for X" and "best X for C" (Algorithm 2) from the best
        sample of this many chunks of 64 samples; every step is scored on A and kept only if the
        total grows, so this never hurts. 0 gives the paper's Algorithm 1 alone.

    Returns
    -------
    JointOutput
        ``components``: K :class:`SolverOutput` by decreasing explained variance, each the
        leading eigenvector of A on its support; ``bounds``: upper bounds on the best total
        (:func:`spca_cli.bounds.total_bounds`); ``time_limited``; ``info``: ``samples``
        (drawn), ``rank``, ``sketch_value`` (the best matching weight, eq. 7, over all
        samples: a lower bound on the sketch optimum), ``total_value``, ``sampled_value`` (the
        best total before refinement),
        ``best_sample``, ``refine_steps``, ``polish_steps`` (components improved by the polish)
        and ``start`` (``"sampling"`` or ``"deflation"``: which polished start won),
        ``pool_words``, ``pool_fallbacks``, ``n_jobs``.

    Raises
    ------
    SpcaParameterError
        A parameter out of range, or ``n_components * k`` larger than the active words.

    See Also
    --------
    spca_cli.solvers.threshold : one component at a time (deflation by word removal).

    References
    ----------
    .. [1] M. Asteris, D. Papailiopoulos, A. Kyrillidis, A. G. Dimakis, "Sparse PCA via
       Bipartite Matchings", NIPS 2015. Algorithms 1-3, eq. (2)-(7), Lemma 9.3 / Remark 9.2.

    Examples
    --------
    >>> import numpy as np
    >>> from spca_cli.matrix import Gram
    >>> from spca_cli.spectrum import top_eigenpairs
    >>> rng = np.random.default_rng(0)
    >>> V = np.zeros((12, 2)); V[:3, 0] = 3.0; V[3:6, 1] = 2.0
    >>> A = Gram.from_dense(V @ V.T + 0.01 * np.eye(12))
    >>> out = bipartite(A, 3, 2, eigen=top_eigenpairs(A, 3), rank=2, samples=50)
    >>> [sorted(c.indices.tolist()) for c in out.components]
    [[0, 1, 2], [3, 4, 5]]
    >>> round(sum(c.value for c in out.components), 2)
    39.02
    """
    K = check_int("n_components", n_components, 1)
    k = check_k(A, k)
    n_active = int(A.active().sum())
    if K * k > n_active:
        raise SpcaParameterError(
            f"n_components * k must be <= the number of words still available; "
            f"got {K} * {k} = {K * k} > {n_active}")
    rank = check_int("rank", rank, 1, A.n)
    samples = DEFAULT_SAMPLES if samples is None else check_int("samples", samples, 1)
    if time_limit is not None:
        time_limit = check_float("time_limit", time_limit, 0.0, None, low_open=True)
    n_jobs = _check_n_jobs(n_jobs)
    refine = check_int("refine", refine, 0)
    rng = random_state_of(random_state)

    need = min(max(rank, K) + 1, A.n)
    if len(eigen.values) < need:
        seed = random_state if isinstance(random_state, numbers.Integral) else 0
        eigen = top_eigenpairs(A, need, random_state=seed)
    V = low_rank_factor(eigen, rank)  # (n, r): A_r = V V^T
    r = V.shape[1]
    V = V * A.active()[:, None]  # inactive words never enter (their rows are ~0 anyway)
    prob = _Problem(A, V, k, K)

    deadline = None if time_limit is None else time.perf_counter() + time_limit
    sampled = _sample(prob, V, r, K, samples, refine, n_jobs, rng, deadline)
    best, best_supports = sampled["best"], sampled["supports"]
    time_limited = sampled["done"] < samples

    # the polish: one component at a time, on A without the other components' words, from
    # the sampled supports and from one-by-one deflation; the better total is kept, so the
    # result is never below what deflation reaches
    sampled_supports = [np.asarray(s, dtype=np.int64) for s in best_supports]
    polished, polish_steps = _polish(A, sampled_supports, k, deadline, random_state)
    start, deflation_steps = "sampling", 0
    deflated = _deflation_supports(A, k, K, random_state, deadline)
    if deflated is not None:
        from_deflation, deflation_steps = _polish(A, deflated, k, deadline, random_state)
        if sum(from_deflation[1]) > sum(polished[1]) * (1.0 + 1e-12):
            polished, start = from_deflation, "deflation"
    best_supports = polished[0]

    components = [finish_component(A, s) for s in best_supports]
    order = sorted(range(K), key=lambda j: (-components[j].value, int(components[j].indices.min())))
    components = [components[j] for j in order]
    info = {"samples": int(sampled["done"]), "rank": int(r),
            "sketch_value": float(sampled["sketch"]),
            "total_value": float(sum(c.value for c in components)),
            "sampled_value": float(best["total"]), "best_sample": int(best["index"]),
            "refine_steps": int(sampled["refined"]),
            "polish_steps": int(polish_steps + deflation_steps),
            "start": start,
            "pool_words": int(prob.pool.size), "pool_fallbacks": int(sampled["fallbacks"]),
            "n_jobs": n_jobs}
    if time_limited:
        warnings.warn(f"bipartite: time limit of {time_limit:g} s reached after "
                      f"{sampled['done']} of {samples} samples; a longer time limit would try "
                      "them all.",
                      ConvergenceWarning, stacklevel=2)
    return JointOutput(components=components, bounds=total_bounds(A, k, K, eigen),
                       time_limited=bool(time_limited), info=info)


def sketch_supports(A, k, n_components, *, eigen, rank, samples, refine, random_state=0):
    """The best K disjoint supports of k words that Algorithms 1-2 find on the rank-``rank``
    sketch of ``A`` in ``samples`` draws (no polish): a start for
    :func:`~spca_cli.solvers.setsearch.improve_set`. ``eigen`` must hold at least ``rank``
    pairs of ``A``."""
    V = low_rank_factor(eigen, rank) * A.active()[:, None]
    prob = _Problem(A, V, k, n_components)
    sampled = _sample(prob, V, V.shape[1], n_components, samples, refine, 1,
                      random_state_of(random_state), None)
    return [np.asarray(s, dtype=np.int64) for s in sampled["supports"]]


def _best_single(A, k, random_state):
    """The better of TPower and greedy on the view ``A`` (one component)."""
    from spca_cli.solvers.greedy import greedy
    from spca_cli.solvers.tpower import tpower

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        found = [tpower(A, k, random_state=random_state), greedy(A, k)]
    return max(found, key=lambda out: out.value)


def _deflation_supports(A, k, K, random_state, deadline):
    """K disjoint supports, one at a time, each word set removed before the next (None when
    ``deadline`` passes first)."""
    supports, view = [], A
    for _ in range(K):
        if deadline is not None and time.perf_counter() > deadline:
            return None
        out = _best_single(view, k, random_state)
        supports.append(out.indices)
        view = view.remove(out.indices)
    return supports


def _polish(A, supports, k, deadline, random_state, max_rounds=3):
    """Re-solve each component on A without the others' words; keep only improvements.

    Returns ``((supports, values), steps)``: no value ever decreases, so the total only grows.
    """
    supports = [np.asarray(s, dtype=np.int64) for s in supports]
    values = [float(np.linalg.eigvalsh(A.submatrix(s))[-1]) for s in supports]
    steps = 0
    for _ in range(max_rounds):
        changed = False
        for j in range(len(supports)):
            if deadline is not None and time.perf_counter() > deadline:
                return (supports, values), steps
            others = np.concatenate([np.zeros(0, dtype=np.int64)]  # none when K = 1
                                    + [s for i, s in enumerate(supports) if i != j])
            out = _best_single(A.remove(others), k, random_state)
            if out.value > values[j] * (1.0 + 1e-10):
                supports[j], values[j] = out.indices, float(out.value)
                changed, steps = True, steps + 1
        if not changed:
            break
    return (supports, values), steps


class _Immediate:
    """A finished 'future' for the single-threaded path (same loop, no executor)."""

    def __init__(self, value):
        self._value = value

    def result(self):
        return self._value
