"""Kernels of the nonnegative spannogram (Asteris, Papailiopoulos and Dimakis, ICML 2014).

Everything works on the low-rank factor V (m x d) of A_d = V V^T, restricted to the words a
solver may still choose, and keeps a small pool of the best candidates found so far:

* ``pool_vals`` (M,)     value x^T A_d x = ||V^T x||^2 of each pooled candidate (-1 = empty slot),
* ``pool_sets`` (M, k)   its support, sorted ascending, padded with -1,
* ``pool_w``    (M, k)   its nonnegative unit weights on that support (0 on the padding).

Candidates enter the pool only if they beat its weakest member, so that member's value is also
the pruning threshold. The front end (:mod:`spca_cli.solvers.nonneg`) draws all random numbers
and passes them in; nothing here seeds itself.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spca_cli.kernels._combinations import next_combination

__all__ = ["pool_new", "pool_insert", "topk_positive", "constrained_top", "orth_complement",
           "exact_vertices", "epsnet_samples"]


def pool_new(M, k):
    """An empty candidate pool of ``M`` slots for supports of size ``k``."""
    return (np.full(M, -1.0), np.full((M, k), -1, dtype=np.int64), np.zeros((M, k)))


@njit(cache=True)
def pool_insert(pool_vals, pool_sets, pool_w, value, idx, w, cnt):
    """Put candidate (idx[:cnt], w[:cnt]) with ``value`` into the pool unless it is weaker than
    every member or already there. ``idx`` must be sorted ascending. Returns True if inserted."""
    M = pool_vals.shape[0]
    k = pool_sets.shape[1]
    worst = 0
    for t in range(1, M):
        if pool_vals[t] < pool_vals[worst]:
            worst = t
    if value <= pool_vals[worst]:
        return False
    for t in range(M):  # same support already pooled: keep the better weights
        if pool_vals[t] < 0.0:
            continue
        same = True
        for q in range(k):
            a = idx[q] if q < cnt else -1
            if pool_sets[t, q] != a:
                same = False
                break
        if same:
            if value > pool_vals[t]:
                pool_vals[t] = value
                for q in range(k):
                    pool_w[t, q] = w[q] if q < cnt else 0.0
            return False
    pool_vals[worst] = value
    for q in range(k):
        pool_sets[worst, q] = idx[q] if q < cnt else -1
        pool_w[worst, q] = w[q] if q < cnt else 0.0
    return True


@njit(cache=True)
def topk_positive(a, k, out):
    """Indices of the (at most) k largest strictly positive entries of ``a`` (Def. 1, I_k^+).

    Writes them to ``out`` sorted ascending and returns how many there are. Ties are broken
    toward the smaller index. A min-heap of size k keeps this O(m log k).
    """
    heap_v = np.empty(k)
    heap_i = np.empty(k, dtype=np.int64)
    size = 0
    for i in range(a.shape[0]):
        v = a[i]
        if v <= 0.0:
            continue
        if size < k:
            # sift up
            pos = size
            size += 1
            while pos > 0:
                par = (pos - 1) // 2
                if heap_v[par] > v or (heap_v[par] == v and heap_i[par] < i):
                    heap_v[pos] = heap_v[par]
                    heap_i[pos] = heap_i[par]
                    pos = par
                else:
                    break
            heap_v[pos] = v
            heap_i[pos] = i
        elif v > heap_v[0]:
            # replace the root (smallest) and sift down
            pos = 0
            while True:
                ch = 2 * pos + 1
                if ch >= size:
                    break
                if ch + 1 < size and (heap_v[ch + 1] < heap_v[ch] or
                                      (heap_v[ch + 1] == heap_v[ch] and heap_i[ch + 1] > heap_i[ch])):
                    ch += 1
                if heap_v[ch] < v or (heap_v[ch] == v and heap_i[ch] > i):
                    heap_v[pos] = heap_v[ch]
                    heap_i[pos] = heap_i[ch]
                    pos = ch
                else:
                    break
            heap_v[pos] = v
            heap_i[pos] = i
    for t in range(size):
        out[t] = heap_i[t]
    out[:size].sort()
    return size


@njit(cache=True)
def orth_complement(R, d):
    """Orthonormal basis (d x (d - r)) of the complement of the rows of R (r x d).

    Returns an empty (d x 0) array when the rows of R are (numerically) dependent: the
    caller then skips that case, which is covered by a smaller set of rows.
    """
    r = R.shape[0]
    B = np.zeros((d, d))  # rows: an orthonormal basis of span(R^T), then of its complement
    scale = 0.0
    for i in range(r):
        for j in range(d):
            scale = max(scale, abs(R[i, j]))
    if scale == 0.0 and r > 0:
        return np.zeros((d, 0))
    nb = 0
    v = np.empty(d)
    for i in range(r + d):
        if nb == d:
            break
        if i < r:
            v[:] = R[i]
        else:
            v[:] = 0.0
            v[i - r] = 1.0
        for _ in range(2):  # Gram-Schmidt twice: "twice is enough" for orthogonality
            for b in range(nb):
                v -= (v @ B[b]) * B[b]
        nv = np.sqrt(v @ v)
        if i < r:
            if nv <= 1e-10 * scale:
                return np.zeros((d, 0))
        elif nv <= 0.5 / np.sqrt(d):
            continue  # a unit vector nearly inside the span; some e_j is always far enough
        B[nb] = v / nv
        nb += 1
    return np.ascontiguousarray(B[r:].T)


@njit(cache=True, inline="always")
def _row_dot(V, i, c):
    # hand-written: numba sends 1-D ``@`` to BLAS, whose call overhead dwarfs a length-d dot
    s = 0.0
    for q in range(V.shape[1]):
        s += V[i, q] * c[q]
    return s


@njit(cache=True)
def _feasible_sign(W, c, tol):
    """+1 if W c >= -tol, -1 if W c <= tol, 0 if neither (mixed signs)."""
    pos = True
    neg = True
    for i in range(W.shape[0]):
        s = _row_dot(W, i, c)
        if s < -tol:
            pos = False
        if s > tol:
            neg = False
    if pos:
        return 1
    if neg:
        return -1
    return 0


@njit(cache=True)
def constrained_top(W, thresh, c_out):
    """Solve max ||W c||^2 subject to ||c|| = 1 and W c >= 0 (problem (16), Section 5).

    W is V_I (s x d). The optimum lies in the relative interior of some face of the cone
    {W c >= 0}: a set T of constraints is active (W_T c = 0), and there c is a local, hence the
    global, maximiser of the Rayleigh quotient of G = W^T W on the complement of W_T, i.e. its
    leading eigenvector. Trying every T with |T| < d (O(s^(d-1)) small eigenproblems, the
    recursion of Section 5 unrolled) and keeping the best feasible one is exact. Sets T whose
    rows are dependent are skipped: a smaller T spans the same subspace.

    Returns the optimum (writing its c to ``c_out``), or -1.0 when it cannot beat ``thresh``.
    """
    s, d = W.shape
    G = W.T @ W  # (d, d)
    lam, U = np.linalg.eigh(G)  # ascending
    if lam[d - 1] <= thresh:
        return -1.0
    tol = 0.0
    for i in range(s):
        tol = max(tol, np.sqrt(W[i] @ W[i]))
    tol *= 1e-10
    c = np.ascontiguousarray(U[:, d - 1])
    sg = _feasible_sign(W, c, tol)
    if sg != 0:  # the unconstrained optimum is feasible (up to sign): done
        c_out[:] = sg * c
        return lam[d - 1]
    best = thresh
    found = False
    for size in range(1, min(d, s + 1)):
        comb = np.arange(size)
        while True:
            R = np.empty((size, d))
            for t in range(size):
                R[t] = W[comb[t]]
            Q = orth_complement(R, d)  # (d, d - size)
            if Q.shape[1] == d - size:
                H = Q.T @ G @ Q
                mu, Y = np.linalg.eigh(H)
                if mu[d - size - 1] > best:
                    c = Q @ Y[:, d - size - 1]
                    sg = _feasible_sign(W, c, tol)
                    if sg != 0:
                        best = mu[d - size - 1]
                        c_out[:] = sg * c
                        found = True
            if not next_combination(comb, comb.shape[0], s):
                break
    return best if found else -1.0


@njit(cache=True)
def _evaluate_support(V, rn2, I, cnt, pool_vals, pool_sets, pool_w, counts):
    """Solve (16) on support I[:cnt] and pool the resulting nonnegative x. counts: [cands, solved]."""
    counts[0] += 1
    thresh = pool_vals.min()
    tr = 0.0
    for t in range(cnt):
        tr += rn2[I[t]]
    if tr <= thresh:  # lambda_max(V_I^T V_I) <= trace: cannot enter the pool
        return
    d = V.shape[1]
    W = np.empty((cnt, d))
    for t in range(cnt):
        W[t] = V[I[t]]
    c = np.zeros(d)
    val = constrained_top(W, thresh, c)
    counts[1] += 1
    if val < 0.0:
        return
    x = W @ c
    nrm = 0.0
    for t in range(cnt):
        if x[t] < 0.0:  # rounding on an active constraint
            x[t] = 0.0
        nrm += x[t] * x[t]
    if nrm == 0.0:
        return
    x /= np.sqrt(nrm)
    # keep only the positive entries as the support; the value on A_d is ||V_I^T x||^2 >= val
    idx = np.empty(cnt, dtype=np.int64)
    w = np.empty(cnt)
    p = 0
    for t in range(cnt):
        if x[t] > 0.0:
            idx[p] = I[t]
            w[p] = x[t]
            p += 1
    y = W.T @ x
    pool_insert(pool_vals, pool_sets, pool_w, y @ y, idx, w, p)


@njit(cache=True)
def exact_vertices(V, rn2, J, k, max_vertices, pool_vals, pool_sets, pool_w, counts):
    """Candidate supports of the nonnegative spannogram at up to ``max_vertices`` vertices.

    V (m x d, d >= 2) gets an implicit zero row m (Section 4: the zero curve turns sign changes
    into intersections). A vertex is a unit c where d curves J = (j1 < ... < jd) meet: c spans
    the null space of the d - 1 differences V_{j_l} - V_{j_1}. At c and at -c, with tie value
    tau and ``a`` curves strictly above it, the supports of the cells touching the vertex are
    Above + S for the subsets S of the tied curves that put the k-th boundary inside the tie
    (|S| = k - a when tau > 0; any |S| <= k - a of the nonzero curves when the zero curve is
    tied). Each is solved exactly by :func:`constrained_top`. The paper assumes general
    position; curves that meet the tie by accident (duplicate rows of V, common in word counts)
    join the tie group, up to 10 of them. Rows of V must be nonzero (a zero row is a copy of the
    zero curve: the caller leaves such words out).

    ``J`` (int64, d) is the first combination of range(m + 1) to visit, in lexicographic order;
    it is advanced in place, so calling again resumes where this call stopped.
    counts (int64, 3): [vertices, candidate supports, supports solved] accumulate.
    Returns False once every combination has been visited.
    """
    m, d = V.shape
    R = np.empty((d - 1, d))
    inJ = np.zeros(m + 1, dtype=np.bool_)
    above = np.empty(k, dtype=np.int64)
    I = np.empty(k, dtype=np.int64)
    tie = np.empty(d + 10, dtype=np.int64)  # at most 10 extra tied curves are enumerated
    scale = np.sqrt(rn2.max())
    tol0 = 1e-12 * scale
    done = 0
    while done < max_vertices:
        done += 1
        j1 = J[0]
        zero_in = J[d - 1] == m
        for t in range(1, d):
            for q in range(d):
                R[t - 1, q] = (V[J[t], q] if J[t] < m else 0.0) - V[j1, q]
        Q = orth_complement(R, d)
        if Q.shape[1] == 1:
            c0 = np.ascontiguousarray(Q[:, 0])
            for t in range(d):
                inJ[J[t]] = True
            for sgn in (1.0, -1.0):
                counts[0] += 1
                c = sgn * c0
                tau = 0.0 if zero_in else _row_dot(V, j1, c)
                if not zero_in and tau <= tol0:
                    continue  # the boundary of I_k^+ cannot sit in a tie of nonpositive curves
                level = 0.0 if zero_in else tau
                # the tie group: J itself (without the zero row) plus any curve that meets it at
                # c too, e.g. a word whose row of V duplicates one in J (not general position)
                ntie = 0
                for t in range(d):
                    if J[t] < m:
                        tie[ntie] = J[t]
                        ntie += 1
                a = 0
                for i in range(m):
                    if inJ[i]:
                        continue
                    vi = _row_dot(V, i, c)
                    if abs(vi - level) <= tol0:
                        if ntie < tie.shape[0]:
                            tie[ntie] = i
                            ntie += 1
                    elif vi > level:
                        if a == k:
                            a += 1
                            break
                        above[a] = i
                        a += 1
                if a >= k:
                    continue
                need = k - a
                if not zero_in and need > ntie:
                    continue  # the k-th boundary lies below the tie
                start = 1 if a == 0 else 0
                for mask in range(start, 1 << ntie):
                    pc = 0
                    for t in range(ntie):
                        if (mask >> t) & 1:
                            pc += 1
                    if zero_in:
                        if pc > need:
                            continue
                    elif pc != need:
                        continue
                    cnt = 0
                    for t in range(a):
                        I[cnt] = above[t]
                        cnt += 1
                    for t in range(ntie):
                        if (mask >> t) & 1:
                            I[cnt] = tie[t]
                            cnt += 1
                    I[:cnt].sort()
                    _evaluate_support(V, rn2, I, cnt, pool_vals, pool_sets, pool_w, counts[1:])
            for t in range(d):
                inJ[J[t]] = False
        if not next_combination(J, J.shape[0], m + 1):
            return False
    return True


@njit(cache=True)
def epsnet_samples(V, C, k, pool_vals, pool_sets, pool_w):
    """Algorithm 3, lines 4-8: for each random unit c (rows of C), the rank-1 solver on +-V c.

    The rank-1 nonnegative k-sparse problem max (a^T x)^2 is solved by x = a_I / ||a_I|| with
    I = I_k^+(a) or I_k^+(-a) (Proposition 3.1); both signs are tried. Each x is pooled with
    its value ||V^T x||^2 on A_d. Returns the number of candidates formed.
    """
    m, d = V.shape
    out = np.empty(k, dtype=np.int64)
    w = np.empty(k)
    a = np.empty(m)
    n_cand = 0
    for s in range(C.shape[0]):
        c = C[s]
        for i in range(m):
            a[i] = _row_dot(V, i, c)
        for sgn in (1.0, -1.0):
            if sgn < 0.0:
                a *= -1.0
            cnt = topk_positive(a, k, out)
            if cnt == 0:
                continue
            n_cand += 1
            nrm = 0.0
            for t in range(cnt):
                w[t] = a[out[t]]
                nrm += w[t] * w[t]
            nrm = np.sqrt(nrm)
            y = np.zeros(d)
            for t in range(cnt):
                w[t] /= nrm
                for q in range(d):
                    y[q] += w[t] * V[out[t], q]
            val = 0.0
            for q in range(d):
                val += y[q] * y[q]
            pool_insert(pool_vals, pool_sets, pool_w, val, out, w, cnt)
    return n_cand
