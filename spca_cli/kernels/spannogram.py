"""Numba kernels of the spannogram solver: intersection points of d curves -> candidate supports.

Everything here works on *classes* of words: rows of V (n x d) that are identical (up to sign in
the absolute-value mode) are merged into one class with a multiplicity, so a group of words that
always occur together costs one curve instead of many (see the front end,
:mod:`spca_cli.solvers.spannogram`). Classes are sorted by decreasing row norm, which lets every
scan stop early: a curve whose amplitude ||V_b|| is below the current level can be neither above
nor tied with it.

Point types (Papailiopoulos et al. 2013, Algorithm 2 and Appendix A):

* star points: for a d-subset (i_1 < ... < i_d) and signs b, c spans the nullspace of the
  (d-1) x d system (V_{i_1} - b_l V_{i_{l+1}}) c = 0, so d curves are tied at the level t;
* zero points: c spans the nullspace of d-1 rows, so d-1 curves are tied at the level 0. They
  are the cone vertices where fewer than k curves are nonzero; the paper's enumeration misses
  them, which only matters when the k-th largest |V c| can be 0 (k close to the number of rows),
  but the elimination test needs them to prove that its threshold is positive.

At each point the classes strictly above the level (U) and tied with it (T) are counted with
multiplicity; when the tie straddles the k-th place (|U| < k <= |U| + |T|) every way of taking
k - |U| words from the tie is emitted (counts per tied class; inside a class the members are
taken in the front end's priority order, which is exact for A_d since they share one row).

Random numbers (the Zobrist hash of each word) are drawn by the front end and passed in.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from spca_cli.kernels._combinations import next_combination

__all__ = ["spannogram_pass", "lambda_max_gram", "STAT_CANDIDATES", "STAT_HASHES", "STAT_POINTS",
           "STAT_OVERFLOW", "STAT_TRUNCATED", "STAT_ZERO_HIT"]

_EMPTY = np.uint64(0)

# Columns of the per-thread ``stats`` row a pass returns (numba reads them as constants).
STAT_CANDIDATES = 0  # candidates written to the output buffers
STAT_HASHES = 1  # distinct support hashes written
STAT_POINTS = 2  # intersection points visited
STAT_OVERFLOW = 3  # an output buffer was full: the pass must be repeated with more room
STAT_TRUNCATED = 4  # a tie had more than enum_cap resolutions and was skipped
STAT_ZERO_HIT = 5  # a zero point straddled the k-th place
_N_STATS = 6


@njit(cache=True)
def _det(M, n):
    """Determinant of the n x n scratch matrix M (destroyed), Gaussian elimination with pivoting."""
    det = 1.0
    for j in range(n):
        p = j
        best = abs(M[j, j])
        for i in range(j + 1, n):
            if abs(M[i, j]) > best:
                best = abs(M[i, j])
                p = i
        if best == 0.0:
            return 0.0
        if p != j:
            for q in range(n):
                tmp = M[j, q]
                M[j, q] = M[p, q]
                M[p, q] = tmp
            det = -det
        det *= M[j, j]
        for i in range(j + 1, n):
            f = M[i, j] / M[j, j]
            for q in range(j, n):
                M[i, q] -= f * M[j, q]
    return det


@njit(cache=True)
def _nullvec(N, d, c, minor):
    """c <- unit vector spanning the nullspace of the (d-1) x d matrix N; False if N is singular.

    Generalised cross product: c_j = (-1)^j det(N without column j). The system counts as
    singular when |c| <= 1e-13 prod_i |N_i| (Hadamard's bound is |c| <= prod_i |N_i|).
    """
    if d == 1:
        c[0] = 1.0
        return True
    scale = 1.0
    for i in range(d - 1):
        s = 0.0
        for j in range(d):
            s += N[i, j] * N[i, j]
        scale *= np.sqrt(s)
    if d == 2:
        c[0] = -N[0, 1]
        c[1] = N[0, 0]
    elif d == 3:
        c[0] = N[0, 1] * N[1, 2] - N[0, 2] * N[1, 1]
        c[1] = N[0, 2] * N[1, 0] - N[0, 0] * N[1, 2]
        c[2] = N[0, 0] * N[1, 1] - N[0, 1] * N[1, 0]
    else:
        for j in range(d):
            for i in range(d - 1):
                q = 0
                for col in range(d):
                    if col != j:
                        minor[i, q] = N[i, col]
                        q += 1
            sgn = 1.0 if j % 2 == 0 else -1.0
            c[j] = sgn * _det(minor, d - 1)
    nc = 0.0
    for j in range(d):
        nc += c[j] * c[j]
    nc = np.sqrt(nc)
    if nc == 0.0 or nc <= 1e-13 * scale:
        return False
    for j in range(d):
        c[j] /= nc
    return True


@njit(cache=True)
def lambda_max_gram(M, d):
    """Largest eigenvalue of the small symmetric PSD d x d matrix M (= V_I^T V_I)."""
    if d == 1:
        return M[0, 0]
    if d == 2:
        a = M[0, 0]
        b = M[0, 1]
        e = M[1, 1]
        return 0.5 * (a + e) + np.sqrt(0.25 * (a - e) * (a - e) + b * b)
    return np.linalg.eigvalsh(M)[d - 1]


@njit(cache=True)
def _table_insert(table, h):
    """Insert h into the open-addressing set; True if it was new."""
    mask = np.uint64(table.shape[0] - 1)
    pos = h & mask
    while True:
        cur = table[pos]
        if cur == _EMPTY:
            table[pos] = h
            return True
        if cur == h:
            return False
        pos = (pos + np.uint64(1)) & mask


@njit(cache=True)
def _output_disabled(out_pos):
    """Candidate output is switched off by passing a zero-capacity buffer (threshold passes)."""
    return out_pos.shape[0] == 0


@njit(cache=True)
def _worker(th, nthreads, V, norms, mult, off, pre, pre_off, d, k, signed, tol, firsts, gap,
            enum_cap, t_min, out_pos, out_hash, out_val, all_hash, stats, tau_out):
    """Process the first indices firsts[th::nthreads]; see :func:`spannogram_pass`."""
    G = V.shape[0]
    n_orient = 2 if signed else 1
    n_sign = 1 if signed else 1 << (d - 1)
    cap_c = out_pos.shape[0]
    cap_h = all_hash.shape[0]

    table = np.zeros(1 << 16, dtype=np.uint64)
    table_fill = 0
    N = np.empty((max(d - 1, 1), d))
    minor = np.empty((max(d - 1, 1), max(d - 1, 1)))
    c0 = np.empty(d)
    c = np.empty(d)
    idx = np.empty(max(d - 1, 1), dtype=np.int64)
    forced = np.empty(d, dtype=np.int64)
    is_forced = np.zeros(G, dtype=np.bool_)
    Ubuf = np.empty(k, dtype=np.int64)
    Tbuf = np.empty(G, dtype=np.int64)
    cnt = np.empty(G, dtype=np.int64)
    ub = np.empty(G, dtype=np.int64)
    GU = np.empty((d, d))
    GM = np.empty((d, d))

    n_c = 0
    n_h = 0
    n_points = 0
    overflow = 0
    truncated = 0
    run_max = -np.inf
    tau = np.inf
    zero_hit = 0

    for fi in range(th, firsts.shape[0], nthreads):
        i1 = firsts[fi]
        if overflow:
            break
        # kind 0: star points (d-subsets, i1 first); kind 1: zero points ((d-1)-subsets)
        for kind in range(2):
            if kind == 0:
                r = d - 1
            else:
                if d == 1:
                    continue
                r = d - 2
            if i1 + r >= G:
                continue
            for j in range(r):
                idx[j] = i1 + 1 + j
            more = True
            while more:
                n_s = n_sign if kind == 0 else 1
                # a tie at level t = |V_i c| <= ||V_i|| below t_min cannot straddle the k-th place
                skip = False
                if kind == 1:
                    skip = t_min > tol
                elif r > 0 and norms[idx[r - 1]] < t_min - tol:
                    skip = True
                elif r == 0 and norms[i1] < t_min - tol:
                    skip = True
                if skip:
                    n_s = 0
                for s in range(n_s):
                    # ---- the linear system and its nullspace c0
                    if kind == 0:
                        for l in range(d - 1):
                            b = -1.0 if (s >> l) & 1 else 1.0
                            for j in range(d):
                                N[l, j] = V[i1, j] - b * V[idx[l], j]
                        nf = d
                        forced[0] = i1
                        for l in range(d - 1):
                            forced[l + 1] = idx[l]
                    else:
                        for j in range(d):
                            N[0, j] = V[i1, j]
                        for l in range(r):
                            for j in range(d):
                                N[l + 1, j] = V[idx[l], j]
                        nf = d - 1
                        forced[0] = i1
                        for l in range(r):
                            forced[l + 1] = idx[l]
                    if not _nullvec(N, d, c0, minor):
                        continue
                    n_points += 1
                    for o in range(n_orient):
                        sg = 1.0 if o == 0 else -1.0
                        for j in range(d):
                            c[j] = sg * c0[j]
                        # ---- level of the tie
                        if kind == 0:
                            t = 0.0
                            for j in range(d):
                                t += V[i1, j] * c[j]
                            if not signed:
                                t = abs(t)
                            elif t < -tol:
                                continue  # signed mode needs only levels >= 0 (P^+ cones)
                            if t < t_min - tol:
                                continue
                        else:
                            t = 0.0
                        # ---- classify every other curve against t (sorted by norm: stop early)
                        nU = 0
                        cntU = 0
                        nT = 0
                        cntT = 0
                        rejected = False
                        for q in range(nf):
                            is_forced[forced[q]] = True
                        lo = t - tol
                        hi = t + tol
                        for b in range(G):
                            if norms[b] < lo:
                                break
                            if is_forced[b]:
                                continue
                            if d == 3:
                                w = V[b, 0] * c[0] + V[b, 1] * c[1] + V[b, 2] * c[2]
                            elif d == 2:
                                w = V[b, 0] * c[0] + V[b, 1] * c[1]
                            else:
                                w = 0.0
                                for j in range(d):
                                    w += V[b, j] * c[j]
                            if not signed:
                                w = abs(w)
                            if w > hi:
                                cntU += mult[b]
                                if cntU >= k:
                                    rejected = True
                                    break
                                Ubuf[nU] = b
                                nU += 1
                            elif w >= lo:
                                Tbuf[nT] = b
                                nT += 1
                                cntT += mult[b]
                        for q in range(nf):
                            is_forced[forced[q]] = False
                        if rejected:
                            continue
                        for q in range(nf):
                            Tbuf[nT] = forced[q]
                            nT += 1
                            cntT += mult[forced[q]]
                        fill = False
                        if cntU + cntT >= k:
                            # the tie straddles the k-th place: a vertex of a top-k cell
                            if kind == 0:
                                if t < tau:
                                    tau = t
                            else:
                                zero_hit = 1
                        elif signed and kind == 1:
                            fill = True  # fewer than k curves >= 0: any superset will do
                        else:
                            continue
                        if _output_disabled(out_pos):
                            continue
                        # ---- Gram matrix of the classes above the tie
                        for a in range(d):
                            for e in range(d):
                                GU[a, e] = 0.0
                        hU = np.uint64(0)
                        for q in range(nU):
                            g = Ubuf[q]
                            hU ^= pre[pre_off[g] + mult[g]]
                            for a in range(d):
                                for e in range(d):
                                    GU[a, e] += mult[g] * V[g, a] * V[g, e]
                        if fill:
                            # take the whole tie, then the largest remaining classes
                            need = k - cntU - cntT
                            for q in range(nT):
                                cnt[q] = mult[Tbuf[q]]
                            nT0 = nT
                            for g in range(G):
                                if need == 0:
                                    break
                                seen = False
                                for q in range(nU):
                                    if Ubuf[q] == g:
                                        seen = True
                                        break
                                if not seen:
                                    for q in range(nT0):
                                        if Tbuf[q] == g:
                                            seen = True
                                            break
                                if seen:
                                    continue
                                take = mult[g] if mult[g] < need else need
                                Tbuf[nT] = g
                                cnt[nT] = take
                                nT += 1
                                need -= take
                            n_emit = 1
                        else:
                            rr = k - cntU
                            total = 1.0
                            for q in range(nT - 1):
                                m_q = mult[Tbuf[q]]
                                ub[q] = m_q if m_q < rr else rr
                                total *= ub[q] + 1
                            if total > enum_cap:
                                truncated = 1
                                continue
                            for q in range(nT):
                                cnt[q] = 0
                            n_emit = -1  # odometer below
                        # ---- emit every count vector over the tied classes
                        while True:
                            ok = True
                            if not fill:
                                ssum = 0
                                for q in range(nT - 1):
                                    ssum += cnt[q]
                                last = (k - cntU) - ssum
                                m_last = mult[Tbuf[nT - 1]]
                                ok = last >= 0 and last <= m_last
                                cnt[nT - 1] = last
                            if ok:
                                h = hU
                                for q in range(nT):
                                    g = Tbuf[q]
                                    h ^= pre[pre_off[g] + cnt[q]]
                                if h == _EMPTY:
                                    h = np.uint64(0x9E3779B97F4A7C15)
                                if table_fill * 2 > table.shape[0]:
                                    table[:] = 0  # forget old entries; duplicates are re-merged later
                                    table_fill = 0
                                if _table_insert(table, h):
                                    table_fill += 1
                                    if n_h >= cap_h:
                                        overflow = 1
                                        break
                                    all_hash[n_h] = h
                                    n_h += 1
                                    for a in range(d):
                                        for e in range(d):
                                            GM[a, e] = GU[a, e]
                                    for q in range(nT):
                                        g = Tbuf[q]
                                        if cnt[q] > 0:
                                            for a in range(d):
                                                for e in range(d):
                                                    GM[a, e] += cnt[q] * V[g, a] * V[g, e]
                                    val = lambda_max_gram(GM, d)
                                    if val >= run_max - gap:
                                        if n_c >= cap_c:
                                            overflow = 1
                                            break
                                        p = 0
                                        for q in range(nU):
                                            g = Ubuf[q]
                                            for j in range(mult[g]):
                                                out_pos[n_c, p] = off[g] + j
                                                p += 1
                                        for q in range(nT):
                                            g = Tbuf[q]
                                            for j in range(cnt[q]):
                                                out_pos[n_c, p] = off[g] + j
                                                p += 1
                                        out_hash[n_c] = h
                                        out_val[n_c] = val
                                        n_c += 1
                                        if val > run_max:
                                            run_max = val
                            if n_emit == 1:
                                break
                            # odometer over the first nT-1 counts
                            q = 0
                            while q < nT - 1:
                                if cnt[q] < ub[q]:
                                    cnt[q] += 1
                                    break
                                cnt[q] = 0
                                q += 1
                            if q >= nT - 1:
                                break
                        if overflow:
                            break
                    if overflow:
                        break
                if overflow:
                    break
                if r == 0:
                    more = False
                else:
                    more = next_combination(idx, r, G)
            if overflow:
                break

    stats[STAT_CANDIDATES] = n_c
    stats[STAT_HASHES] = n_h
    stats[STAT_POINTS] = n_points
    stats[STAT_OVERFLOW] = overflow
    stats[STAT_TRUNCATED] = truncated
    stats[STAT_ZERO_HIT] = zero_hit
    tau_out[0] = tau


# parallel=True with cache=True: pynndescent marks its parallel kernels cache=False (older numba
# could not cache them); numba 0.68 writes and reloads the cache of this kernel (checked: a fresh
# process loads it in ~0.2 s instead of compiling for ~30 s), so we keep both. The work is split
# by hand into ``nthreads`` prange iterations, each with its own buffers and hash table.
@njit(cache=True, parallel=True)
def spannogram_pass(V, norms, mult, off, pre, pre_off, d, k, signed, tol, firsts, nthreads,
                    gap, cap_c, cap_h, enum_cap, t_min):
    """One pass over the intersection points whose first curve is in ``firsts``.

    Parameters
    ----------
    V : ndarray of shape (G, d), float64, C order
        One row per class of identical words, sorted by decreasing norm.
    norms, mult : ndarray of shape (G,)
        Row norms (float64) and class sizes (int64).
    off : ndarray of shape (G + 1,), int64
        Class g owns the word positions off[g] .. off[g+1]-1 (members in priority order).
    pre, pre_off : ndarray, uint64 and int64
        pre[pre_off[g] + j] is the XOR of the Zobrist hashes of the first j members of class g.
    d, k : int
        Rank and sparsity.
    signed : bool
        False: top-k of |V c| with all 2^(d-1) sign patterns (any PSD A). True: top-k of V c and
        of -V c with the single pattern b = +1 (entrywise nonnegative A, Appendix B).
    tol : float
        Absolute tie tolerance on the values (V c)_b, |c| = 1.
    firsts : ndarray of int64
        First (smallest) class index of the subsets this call enumerates.
    nthreads : int
        Work split: thread th takes firsts[th::nthreads].
    gap : float
        Candidates whose rank-d value is below (running max - gap) are counted but not returned.
    cap_c, cap_h : int
        Output capacities per thread (candidates returned, distinct hashes); 0 disables output.
    enum_cap : int
        Largest number of ways to resolve one tie; bigger ties are skipped and flagged.
    t_min : float
        A lower bound on the k-th largest |V_j c| over all unit c (0 if unknown): points whose
        tie level is below it cannot straddle the k-th place and are skipped unsolved.

    Returns
    -------
    out_pos : (nthreads, cap_c, k) int64, out_hash : (nthreads, cap_c) uint64,
    out_val : (nthreads, cap_c) float64, all_hash : (nthreads, cap_h) uint64,
    stats : (nthreads, 6) int64, columns named by the ``STAT_*`` constants above, tau : (nthreads,) float64 = smallest straddling star-point level seen.
    """
    out_pos = np.empty((nthreads, cap_c, k), dtype=np.int64)
    out_hash = np.empty((nthreads, cap_c), dtype=np.uint64)
    out_val = np.empty((nthreads, cap_c))
    all_hash = np.empty((nthreads, cap_h), dtype=np.uint64)
    stats = np.zeros((nthreads, _N_STATS), dtype=np.int64)
    tau = np.empty(nthreads)
    for th in prange(nthreads):
        # (numba types the loop's index int64 where it checks the loop and uint64 in the
        # parallel loop it makes: passed on as int64, _worker compiles for one type, 9 s each)
        _worker(np.int64(th), nthreads, V, norms, mult, off, pre, pre_off, d, k, signed, tol,
                firsts, gap, enum_cap, t_min, out_pos[th], out_hash[th], out_val[th],
                all_hash[th], stats[th], tau[th:th + 1])
    return out_pos, out_hash, out_val, all_hash, stats, tau
