"""Kernels of the weighted row-sum bound (:mod:`spca_cli.bounds`, :mod:`spca_cli.solvers.exact`).

For an entrywise nonnegative B (here |A'|) and positive weights w, every k-word support I has
lambda_max(A'_I) <= max_{i in I} sum_{j in I} B_ij w_j / w_i, and the inner sum is at most
B_ii w_i plus the k-1 largest of {B_ij w_j : j != i}. These kernels compute those "largest
off-diagonal" sums for every word, and the branch-and-bound node version of the same bound.

The matrix is given in the compact form the bounds module keeps for large vocabularies:

* ``CT`` (h, n): exact rows |A'[H_p, :]| for the h words H of largest diagonal;
* ``hpos`` (n,): p when word i is H_p, else -1; ``hrow`` (h,): the word of H_p;
* ``sqd`` (n,): sqrt(A'_ii). A pair of words both outside H gets sqrt(A'_ii A'_jj) >= |A'_ij|
  (Cauchy-Schwarz on the PSD A'), so every sum here stays an upper bound.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

__all__ = ["heap_offer_at", "heap_sum", "gather_rows", "offdiag_top_sums", "outside_columns", "top_square_sums",
           "restrict_outside_columns", "row_prefixes", "perron_weights", "star_descent", "star_rescale", "star_rows", "star_values", "STAR_PREFIX", "prefix_values", "restrict_prefixes", "PREFIX", "node_bound",
           "branch_and_bound", "branch_and_bound_prefixed"]


@njit(cache=True)
def heap_offer_at(heaps, idx, row, size, value, word):
    """Offer ``value`` to the min-heap ``heaps[row]``, which keeps the ``heaps.shape[1]``
    largest values offered, and keep beside each value the word it came from in ``idx`` (the
    same shape; an array without rows keeps none), so a sum's terms can be read back
    (:func:`offdiag_top_sums`' ``terms``); returns the heap's new size. (A row index, not a
    row view: a view per call costs more than the sift itself.)"""
    keep = idx.shape[0] > 0
    cap = heaps.shape[1]
    if cap == 0:
        return 0
    if size < cap:
        pos = size
        heaps[row, pos] = value
        if keep:
            idx[row, pos] = word
        while pos > 0:
            parent = (pos - 1) >> 1
            if heaps[row, parent] <= heaps[row, pos]:
                break
            heaps[row, parent], heaps[row, pos] = heaps[row, pos], heaps[row, parent]
            if keep:
                idx[row, parent], idx[row, pos] = idx[row, pos], idx[row, parent]
            pos = parent
        return size + 1
    if value <= heaps[row, 0]:
        return size
    heaps[row, 0] = value
    if keep:
        idx[row, 0] = word
    pos = 0
    while True:
        left = 2 * pos + 1
        if left >= cap:
            break
        small = left
        if left + 1 < cap and heaps[row, left + 1] < heaps[row, left]:
            small = left + 1
        if heaps[row, pos] <= heaps[row, small]:
            break
        heaps[row, pos], heaps[row, small] = heaps[row, small], heaps[row, pos]
        if keep:
            idx[row, pos], idx[row, small] = idx[row, small], idx[row, pos]
        pos = small
    return size


@njit(cache=True)
def _emit(heaps, idx, r, size, i, v, out, sel, coef):
    """Row i's sum from heap r into ``out``, and when they are wanted (``sel`` has rows) its
    terms: each word j of positive weight in ``sel`` and its entry, the term over v_j, in
    ``coef`` (word -1: no term)."""
    out[i] = heap_sum(heaps, r, size)
    if sel.shape[0] > 0:
        for t in range(sel.shape[1]):
            sel[i, t] = -1
            coef[i, t] = 0.0
            if t < size:
                j = idx[r, t]
                if v[j] > 0.0:
                    sel[i, t] = j
                    coef[i, t] = heaps[r, t] / v[j]


@njit(cache=True)
def heap_sum(heaps, row, size):
    total = 0.0
    for t in range(size):
        total += heaps[row, t]
    return total


# Entries of an exact row computed per vectorised pass (below).
_CHUNK = 256
# Entries a row reads from its own largest entries before the largest weights join them
# (:func:`_row_by_threshold`): the rows of a model whose weights follow its entries (a first
# certificate, a --by group's exact rows) mostly end within them, and a weight read beside
# each of their entries would cost more than it saves; a view's rows whose weights sit
# elsewhere read thousands.
_LAZY = 128


@njit(cache=True)
def _top_sums_rows(CT, hpos, hrow, sqd, v, count, g, top, order, lengths, rest, vmax, lo, hi,
                   out, cptr, cq, cval, vmax_h, pvals, vorder, vrank, vcut, horder, hrank, sel,
                   coef, active):
    """:func:`offdiag_top_sums` for the rows lo..hi-1 (a block of one thread); with ``active``
    (not empty) only the rows where it is True (the others' sums stay 0).

    Each pass first computes a run of values and counts those above their heap's floor with no
    branch (so the compiler vectorises it), and offers them only when one is: after the first
    few runs the heaps are full and most runs offer nothing. On 1M generated tweets (354 exact
    rows, 50,000 words) the rows outside H take 0.040 s per call this way, 0.096 s offering every
    value, one thread.
    A row outside H takes its Cauchy-Schwarz values first: they are the large ones (bounds on
    the pairs of frequent words), so its floor starts high and few exact values pass (one
    clustered 1M-tweet call on 335 exact rows: 50 ms on one thread and 34 ms on two, against 97
    and 48 ms with the exact values first; only the order of the sum of the same values
    changes).
    """
    n = hpos.shape[0]
    h = CT.shape[0]
    B = hi - lo
    heaps = np.empty((B, count))
    idx = np.empty((B, count), dtype=np.int64)  # the word of each heap value
    sizes = np.zeros(B, dtype=np.int64)
    # heaps[r, 0] once heap r is full: smaller values skip. Rows of H have their own pass below.
    floor = np.full(B, -np.inf)
    outside = B
    masked = active.shape[0] > 0
    for r in range(B):
        i = lo + r
        if hpos[i] >= 0:
            floor[r] = np.inf
            outside -= 1
            continue
        if masked and not active[i]:
            floor[r] = np.inf  # (no value offered: its sum is not asked for)
            continue
        # ``top`` is in decreasing order: written from the heap's end backwards its values are
        # in increasing order, which is a min-heap without a sift (the offers took half of a
        # weight step on the fortunes' views, 14,000 rows of 9)
        taken = 0
        for t in range(top.shape[0]):
            j = top[t]
            if j == i or hpos[j] >= 0:
                continue
            if taken == count:
                break
            heaps[r, count - 1 - taken] = sqd[i] * g[j]
            idx[r, count - 1 - taken] = j
            taken += 1
        if taken < count:
            for u in range(taken):
                heaps[r, u] = heaps[r, count - taken + u]
                idx[r, u] = idx[r, count - taken + u]
        sizes[r] = taken
        if sizes[r] == count:
            floor[r] = heaps[r, 0]
    values = np.empty(max(B, _CHUNK))
    read = 0  # entries of CT read (what auto's work budget counts)
    if cptr.shape[0] > 0:
        # rows outside H from their nonzero exact entries, largest first (:func:`
        # outside_columns`), read beside the words of H by decreasing weight (``horder``), as
        # the rows of H below: an entry not read has |A'_iq| at most the last entry read and
        # a weight at most the last weight read, so once the heap is full and their product
        # is at or below its floor the row ends. The entries' list holds every nonzero, so at
        # its end the rest are 0. (KOS: 7 entries a row instead of 46; the weights' list reads
        # a column of the exact rows, CT[q, i], the same q for the block's consecutive rows.)
        hdepth = horder.shape[0]
        htaken = np.full(hdepth, -1, dtype=np.int64)
        for r in range(B):
            i = lo + r
            if hpos[i] >= 0 or (masked and not active[i]):
                continue
            f = floor[r]
            t, end = cptr[i], cptr[i + 1]
            s = 0
            vlevel = vmax_h
            while True:
                if t < end:
                    q = cq[t]
                    c = cval[t]
                    if hrank[q] >= s:  # (hrank[q] < s: the weights' list offered it)
                        read += 1
                        htaken[hrank[q]] = i
                        x = c * v[hrow[q]]
                        if x > f:
                            sizes[r] = heap_offer_at(heaps, idx, r, sizes[r], x, hrow[q])
                            if sizes[r] == count:
                                f = heaps[r, 0]
                    t += 1
                    if masked:
                        # the entries of exact rows off the view (weight 0) add nothing: passed
                        # over here, not one outer step (and one weight) each
                        while t < end and v[hrow[cq[t]]] == 0.0:
                            t += 1
                    clevel = c if t < end else 0.0
                else:
                    clevel = 0.0
                if clevel == 0.0 or vlevel == 0.0 or (sizes[r] == count
                                                      and clevel * vlevel <= f):
                    break
                if sizes[r] == count:
                    if s >= hdepth:
                        break  # (every weight read: no entry is left)
                    q = horder[s]
                    vlevel = v[hrow[q]]
                    if htaken[s] != i:
                        read += 1
                        x = CT[q, i] * vlevel
                        if x > f:
                            sizes[r] = heap_offer_at(heaps, idx, r, sizes[r], x, hrow[q])
                            if sizes[r] == count:
                                f = heaps[r, 0]
                    s += 1
                    if vlevel == 0.0 or clevel * vlevel <= f:
                        break
            floor[r] = f
        outside = 0
    # rows outside H: their exact entries are the columns H, read row by row of CT (none when
    # every row is exact, as for a small vocabulary: then no pass at all)
    read += h * outside if outside else 0
    for q in range(h if outside else 0):
        vq = v[hrow[q]]
        passing = 0
        for r in range(B):
            x = CT[q, lo + r] * vq
            values[r] = x
            passing += x > floor[r]
        if passing:
            for r in range(B):
                if values[r] > floor[r]:
                    sizes[r] = heap_offer_at(heaps, idx, r, sizes[r], values[r], hrow[q])
                    if sizes[r] == count:
                        floor[r] = heaps[r, 0]
    prefixes = order.shape[1] > 0
    stored = pvals.shape[1] > 0
    depth = vorder.shape[0]
    # taken[q] == i: the word vorder[q] entered row i's heap from the row's prefix
    taken = np.full(depth, -1, dtype=np.int64)
    for i in range(lo, hi):
        r = i - lo
        p = hpos[i]
        if masked and not active[i]:
            continue
        if p >= 0 and prefixes:
            # the prefix alone for its first _LAZY entries (all of them without a weights'
            # list), then beside the largest weights
            done, count_read = _row_by_prefix(CT, p, i, r, v, count, order, lengths, rest,
                                              pvals, stored, vmax, heaps, idx, sizes,
                                              _LAZY if depth else lengths[p])
            read += count_read
            if not done and depth and _LAZY < lengths[p]:
                done, count_read = _row_by_threshold(CT, p, i, r, v, count, order, lengths, rest,
                                                     pvals, stored, vmax, heaps, idx, sizes, vorder,
                                                     vrank, vcut, taken, _LAZY)
                read += count_read
            if done:
                _emit(heaps, idx, r, sizes[r], i, v, out, sel, coef)
                continue
            sizes[r] = 0  # undecided: the whole row, as below
        if p >= 0:
            f = -np.inf
            read += n
            for c0 in range(0, n, _CHUNK):
                c1 = min(n, c0 + _CHUNK)
                passing = 0
                for j in range(c0, c1):
                    x = CT[p, j] * v[j]
                    values[j - c0] = x
                    passing += x > f
                if passing:
                    for j in range(c0, c1):
                        x = values[j - c0]
                        if x > f and j != i:
                            sizes[r] = heap_offer_at(heaps, idx, r, sizes[r], x, j)
                            if sizes[r] == count:
                                f = heaps[r, 0]
        _emit(heaps, idx, r, sizes[r], i, v, out, sel, coef)
    return read


@njit(cache=True)
def _row_by_prefix(CT, p, i, r, v, count, order, lengths, rest, pvals, stored, vmax, heaps,
                   idx, sizes, limit):
    """Row i (exact row p) of :func:`_top_sums_rows` from its largest entries (``order``), at
    most ``limit`` of them: once the heap is full, an entry times the largest weight at or below
    its floor ends the row, since every entry after it is smaller. Returns (decided, entries
    read); undecided with fewer than the prefix's entries read, the row goes on from there."""
    f = -np.inf
    read = 0
    length = lengths[p]
    for t in range(min(length, limit)):
        j = order[p, t]
        read += 1
        # the prefix's values in order (``pvals``): read in sequence, not scattered over a
        # row of the exact block
        c = pvals[p, t] if stored else CT[p, j]
        x = c * v[j]
        if x > f and j != i:
            sizes[r] = heap_offer_at(heaps, idx, r, sizes[r], x, j)
            if sizes[r] == count:
                f = heaps[r, 0]
        if sizes[r] == count and c * vmax <= f:
            return True, read
    if limit < length:
        return False, read
    # the entries past the prefix are at most rest[p] (0: all zero)
    return rest[p] == 0.0 or (sizes[r] == count and rest[p] * vmax <= f), read


@njit(cache=True)
def _row_by_threshold(CT, p, i, r, v, count, order, lengths, rest, pvals, stored, vmax, heaps,
                      idx, sizes, vorder, vrank, vcut, taken, start):
    """Row i (exact row p) of :func:`_top_sums_rows` from two lists read side by side (Fagin's
    threshold algorithm): the row's largest entries (``order``, t of them read) and the
    largest weights (``vorder``, the same for every row, s of them read). An entry not read
    has |A'_ij| at most the last entry read from the prefix and v_j at most the last weight
    read, so when the heap is full and their product is at or below its floor no entry left
    can enter the sum. It goes on from the prefix's first ``start`` entries, read and offered
    by :func:`_row_by_prefix` (a row they decide reads no weight), a step of each list in turn
    once the heap is full. Each word is
    offered once: one the prefix reaches after the weights did is skipped, one the weights
    reach after the prefix did is marked in ``taken``. Returns (decided, entries read)."""
    depth = vorder.shape[0]
    f = heaps[r, 0] if sizes[r] == count else -np.inf
    read = 0
    length = lengths[p]
    vlevel = vmax
    for t in range(start):  # (offered by the prefix's first pass)
        q = vrank[order[p, t]]
        if q < depth:
            taken[q] = i
    t = start
    s = 0
    while True:
        if t < length:
            j = order[p, t]
            c = pvals[p, t] if stored else CT[p, j]
            q = vrank[j]
            if q >= s:  # (q < s: the weights' list offered it)
                read += 1
                if q < depth:
                    taken[q] = i
                x = c * v[j]
                if x > f and j != i:
                    sizes[r] = heap_offer_at(heaps, idx, r, sizes[r], x, j)
                    if sizes[r] == count:
                        f = heaps[r, 0]
            t += 1
            # (past the prefix's end the entries are at most rest[p])
            clevel = c if t < length else rest[p]
        else:
            clevel = rest[p]  # (the largest entry past the prefix; 0: all zero)
        if clevel == 0.0 or vlevel == 0.0 or (sizes[r] == count and clevel * vlevel <= f):
            return True, read
        if sizes[r] == count or t >= length:
            if s < depth:
                j = vorder[s]
                vlevel = v[j]
                if taken[s] != i:
                    read += 1
                    x = CT[p, j] * vlevel
                    if x > f and j != i:
                        sizes[r] = heap_offer_at(heaps, idx, r, sizes[r], x, j)
                        if sizes[r] == count:
                            f = heaps[r, 0]
                s += 1
                if s == depth:
                    vlevel = vcut  # (every weight above it read)
                if vlevel == 0.0 or (sizes[r] == count and clevel * vlevel <= f):
                    return True, read
            elif t >= length:
                return False, read  # both lists read to their end: the whole row


@njit(cache=True)
def _kth_largest(x, m):
    """The m-th largest entry of x (1 <= m <= x.size), the value np.partition(x, x.size - m)
    places at x.size - m: :func:`_select` on a copy. numba's np.partition costs 10 s of
    compilation in every fresh process without a cache (a first run, each test worker); this
    well under one."""
    a = x.copy()
    return _select(a, a.size - m)


@njit(cache=True)
def _select(a, target):
    """Reorder ``a`` so that its entry of rank ``target`` (0: the least) is in place, every one
    before it at most it and every one after at least it, and return that entry: a quickselect
    (Hoare's partition about a median of three, which splits runs of equal entries evenly)."""
    lo, hi = 0, a.size - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < a[lo]:
            a[mid], a[lo] = a[lo], a[mid]
        if a[hi] < a[lo]:
            a[hi], a[lo] = a[lo], a[hi]
        if a[hi] < a[mid]:
            a[hi], a[mid] = a[mid], a[hi]
        pivot = a[mid]
        i, j = lo, hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        # a[lo..j] <= pivot <= a[i..hi], and the entries between equal the pivot
        if target <= j:
            hi = j
        elif target >= i:
            lo = i
        else:
            break  # (a[target] is the pivot, in its place)
    return a[target]


@njit(cache=True)
def _cauchy_schwarz_top(hpos, sqd, v, count):
    """g_j = sqd_j v_j for words outside H (-1 in H), and the count + 1 largest of them."""
    n = hpos.shape[0]
    g = np.full(n, -1.0)
    for j in range(n):
        if hpos[j] < 0:
            g[j] = sqd[j] * v[j]
    c = min(count + 1, n)
    if c == 0:
        return g, np.zeros(0, dtype=np.int64)
    # the c largest by a partition, then only they sorted (a full argsort of 50,000 words took
    # 5 ms of every weight step)
    threshold = _kth_largest(g, c)
    candidates = np.flatnonzero(g >= threshold)
    order = np.argsort(-g[candidates], kind="mergesort")
    return g, candidates[order][:c]


@njit(cache=True)
def _max_on(v, hrow):
    out = 0.0
    for q in range(hrow.shape[0]):
        if v[hrow[q]] > out:
            out = v[hrow[q]]
    return out


@njit(cache=True, parallel=True, nogil=True)
def _top_sums_parallel(CT, hpos, hrow, sqd, v, count, order, lengths, rest, block, cptr, cq,
                       cval, pvals, sel, coef, active):
    n = hpos.shape[0]
    out = np.zeros(n)
    g, top = _cauchy_schwarz_top(hpos, sqd, v, count)
    vmax = np.max(v) if n else 0.0
    vmax_h = _max_on(v, hrow)
    vorder, vrank, vcut = _weight_order(v, order.shape[1])
    horder, hrank = _h_order(v, hrow, cptr.shape[0] > 0)
    n_blocks = (n + block - 1) // block
    reads = np.zeros(n_blocks)
    for b in prange(n_blocks):
        reads[b] = _top_sums_rows(CT, hpos, hrow, sqd, v, count, g, top, order, lengths, rest,
                                  vmax, b * block, min(n, (b + 1) * block), out, cptr, cq, cval,
                                  vmax_h, pvals, vorder, vrank, vcut, horder, hrank, sel, coef,
                                  active)
    return out, np.sum(reads)


@njit(cache=True, nogil=True)
def _top_sums_serial(CT, hpos, hrow, sqd, v, count, order, lengths, rest, cptr, cq, cval,
                     pvals, sel, coef, active):
    n = hpos.shape[0]
    out = np.zeros(n)
    g, top = _cauchy_schwarz_top(hpos, sqd, v, count)
    vmax = np.max(v) if n else 0.0
    # (no weights' list: the serial kernel's small models, a --by group's, end on their prefixes)
    vorder, vrank, vcut = _weight_order(v, 0)
    horder, hrank = _h_order(v, hrow, cptr.shape[0] > 0)
    read = _top_sums_rows(CT, hpos, hrow, sqd, v, count, g, top, order, lengths, rest, vmax, 0, n,
                          out, cptr, cq, cval, _max_on(v, hrow), pvals, vorder, vrank, vcut,
                          horder, hrank, sel, coef, active)
    return out, float(read)


@njit(cache=True)
def _h_order(v, hrow, wanted):
    """``(horder, hrank)``: the positions in H by decreasing weight of their word, and each
    position's place in that order (both empty unless ``wanted``: rows outside H read from
    their columns)."""
    if not wanted:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    h = hrow.shape[0]
    weights = np.empty(h)
    for q in range(h):
        weights[q] = v[hrow[q]]
    horder = np.argsort(-weights, kind="mergesort")
    hrank = np.empty(h, dtype=np.int64)
    for s in range(h):
        hrank[horder[s]] = s
    return horder, hrank


@njit(cache=True)
def _weight_order(v, depth):
    """``(vorder, vrank, vcut)``: the ``depth`` largest weights' words, largest first, each
    word's place among them (``depth`` when not among them), and the largest weight left out
    (0 when none is); with ``depth`` 0 (no list: rows read their prefixes alone) both arrays
    are empty and every weight is left out."""
    n = v.shape[0]
    depth = min(depth, n)
    if depth == 0:  # (no list: nothing reads the ranks)
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.max(v) if n else 0.0
    vrank = np.full(n, depth, dtype=np.int64)
    if depth < n:
        threshold = _kth_largest(v, depth)
        candidates = np.flatnonzero(v >= threshold)
    else:
        candidates = np.arange(n)
    vorder = candidates[np.argsort(-v[candidates], kind="mergesort")][:depth]
    for q in range(depth):
        vrank[vorder[q]] = q
    vcut = 0.0
    if depth < n:
        for j in range(n):
            if vrank[j] == depth and v[j] > vcut:
                vcut = v[j]
    return vorder, vrank, vcut


def outside_columns(CT, hpos):
    """``(indptr, rows, values)``: for every word outside H (``hpos`` -1), its nonzero exact
    entries CT[q, i] (the pairs with the words of H), largest first, with the exact row q of
    each, in compressed rows (a word of H has none). :func:`offdiag_top_sums` then reads a row
    outside H until no later entry can enter its sum instead of all h entries: on the fortunes
    (14,500 words, 1,150 exact rows) the certificate's weight steps read 15M entries a step
    for those rows."""
    return _outside_columns(CT, hpos, _OUTSIDE_BLOCK)


# Words per block of :func:`_outside_columns`, the threads' unit of work: a block's slice of
# every exact row is read in turn and its words' output lies together, where a pass over each
# row's whole length would spread its writes over all of the output (256 x 197,316 exact
# entries of a 1M-tweet corpus: 0.55-0.6 s on two threads)
_OUTSIDE_BLOCK = 256


@njit(cache=True, parallel=True, nogil=True)
def _outside_columns(CT, hpos, block):
    h, n = CT.shape
    n_blocks = (n + block - 1) // block
    counts = np.zeros(n, dtype=np.int64)
    for b in prange(n_blocks):
        lo, hi = b * block, min(n, (b + 1) * block)
        for q in range(h):
            for j in range(lo, hi):
                if hpos[j] < 0 and CT[q, j] != 0:
                    counts[j] += 1
    indptr = np.zeros(n + 1, dtype=np.int64)
    for j in range(n):
        indptr[j + 1] = indptr[j] + counts[j]
    rows = np.empty(indptr[n], dtype=np.int32)
    values = np.empty(indptr[n], dtype=CT.dtype)
    for b in prange(n_blocks):
        lo, hi = b * block, min(n, (b + 1) * block)
        fill = indptr[lo:hi].copy()
        for q in range(h):  # (each word's entries by increasing q: ties stay in that order)
            for j in range(lo, hi):
                if hpos[j] < 0 and CT[q, j] != 0:
                    rows[fill[j - lo]] = q
                    values[fill[j - lo]] = CT[q, j]
                    fill[j - lo] += 1
        for j in range(lo, hi):
            first, stop = indptr[j], indptr[j + 1]
            if stop - first > 1:
                keys = np.empty(stop - first)
                for t in range(first, stop):
                    keys[t - first] = -values[t]
                sort = np.argsort(keys, kind="mergesort")
                q_old = rows[first:stop].copy()
                v_old = values[first:stop].copy()
                for t in range(stop - first):
                    rows[first + t] = q_old[sort[t]]
                    values[first + t] = v_old[sort[t]]
    return indptr, rows, values


def restrict_outside_columns(columns, rows, keep, *, in_place=False):
    """:func:`outside_columns` of a model restricted to the exact rows ``rows`` (old positions,
    in their new order) and the words where ``keep`` is True: the entries of dropped rows and
    words left out, the rest renumbered, still largest first. ``in_place``: written over the
    old arrays' memory (each entry moves to a position at or before its own, in order), which
    are then garbage."""
    indptr, q, values = columns
    keep = np.ascontiguousarray(keep, dtype=np.bool_)
    rows = np.asarray(rows, dtype=np.int64)
    new_q = np.full(max(int(q.max(initial=-1)), int(rows.max(initial=-1))) + 1, -1,
                    dtype=np.int32)
    new_q[rows] = np.arange(rows.size, dtype=np.int32)
    words = np.flatnonzero(keep)
    counts = np.zeros(words.size + 1, dtype=np.int64)
    _count_restricted(indptr, q, new_q, words, counts)
    new_ptr = np.zeros(words.size + 1, dtype=np.int64)
    np.cumsum(counts[:words.size], out=new_ptr[1:])
    if in_place:
        out_q, out_v = q, values
    else:
        out_q = np.empty(int(new_ptr[-1]), dtype=np.int32)
        out_v = np.empty(int(new_ptr[-1]), dtype=values.dtype)
    _fill_restricted(indptr, q, values, new_q, words, new_ptr, out_q, out_v)
    return new_ptr, out_q[:int(new_ptr[-1])], out_v[:int(new_ptr[-1])]


@njit(cache=True)
def _count_restricted(indptr, q, new_q, words, counts):
    for a in range(words.shape[0]):
        j = words[a]
        for t in range(indptr[j], indptr[j + 1]):
            if new_q[q[t]] >= 0:
                counts[a] += 1


@njit(cache=True)
def _fill_restricted(indptr, q, values, new_q, words, new_ptr, out_q, out_v):
    for a in range(words.shape[0]):
        j = words[a]
        pos = new_ptr[a]
        for t in range(indptr[j], indptr[j + 1]):
            nq = new_q[q[t]]
            if nq >= 0:
                out_q[pos] = nq
                out_v[pos] = values[t]
                pos += 1


#: Entries of each exact row kept in decreasing order (:func:`row_prefixes`). On the airline
#: tweets' certificate (5,277 words) the heap of a row's k - 1 = 9 largest products settled
#: after a median of 429 entries (90% within 679): 1,024 decide nearly every row from the
#: prefix alone, and the rest take the whole row.
PREFIX = 1024


def row_prefixes(CT, length=PREFIX):
    """``(order, lengths, rest)`` for the exact rows ``CT`` (h, n): each row's ``length`` largest
    entries' positions, largest first (int32), how many of them a row reads (its nonzeros when
    they fit, every entry after them then 0; else ``length``), and an upper bound on the
    entries after the first ``lengths[p]`` (the largest left out; 0 when they are all zero, and
    then a row read to its prefix's end is read in full)."""
    h, n = CT.shape
    length = min(int(length), n)
    order = np.empty((h, length), dtype=np.int32)
    lengths = np.zeros(h, dtype=np.int32)
    rest = np.zeros(h)
    if h and length:
        _prefix_rows(CT, order, lengths, rest)
    return order, lengths, rest


@njit(cache=True, parallel=True, nogil=True)
def _prefix_rows(CT, order, lengths, rest):
    """Each row's ``order.shape[1]`` largest entries in order and how many of them are nonzero
    (CT >= 0: |A'|): a row's nonzero entries gathered in one pass, all sorted when they fit (a
    co-occurrence row of short texts holds a few percent of nonzeros), else partitioned for
    the threshold and only the prefix sorted; the positions after a row's nonzeros are filled
    with zero entries' positions (the branch and bound reads ``order`` to its end). (Selecting
    among the nonzeros alone, in the rows' own type: 256 rows of 197,316 words, 13% nonzero,
    0.13 s where partitions of whole float64 copies took 0.5 s.)"""
    h, n = CT.shape
    length = order.shape[1]
    for p in prange(h):
        positions = np.empty(n, dtype=np.int64)
        values = np.empty(n, dtype=CT.dtype)
        nonzero = 0
        for j in range(n):
            x = CT[p, j]
            if x != 0.0:
                positions[nonzero] = j
                values[nonzero] = x
                nonzero += 1
        chosen = np.empty(length, dtype=np.int64)
        count = 0
        if nonzero <= length:
            chosen[:nonzero] = positions[:nonzero]
            count = nonzero
            lengths[p] = nonzero
            rest[p] = 0.0
        else:
            threshold, below = _two_largest_ranks(values[:nonzero].copy(), length)
            rest[p] = below  # (the largest left out)
            # the entries above the threshold, then those equal to it until the prefix is full
            for t in range(nonzero):
                if values[t] > threshold:
                    chosen[count] = positions[t]
                    count += 1
            for t in range(nonzero):
                if count == length:
                    break
                if values[t] == threshold:
                    chosen[count] = positions[t]
                    count += 1
            lengths[p] = length
        keys = np.empty(count)
        for t in range(count):
            keys[t] = -CT[p, chosen[t]]
        sort = np.argsort(keys, kind="mergesort")
        for t in range(count):
            order[p, t] = chosen[sort[t]]
        filled = count
        for j in range(n):
            if filled == length:
                break
            if CT[p, j] == 0.0:
                order[p, filled] = j
                filled += 1


@njit(cache=True)
def _two_largest_ranks(a, m):
    """(the m-th largest entry of ``a``, the (m+1)-th) for 1 <= m < a.size, reordering ``a``:
    after :func:`_select` every entry before the m-th largest's place is at most it, and the
    largest of them is the (m+1)-th."""
    target = a.size - m
    kth = _select(a, target)
    below = a[0]
    for t in range(1, target):
        if a[t] > below:
            below = a[t]
    return kth, below


def gather_rows(CT, rows, columns, *, in_place=False):
    """``CT[rows][:, columns]`` formed row by row into its own array (no (len(rows), n)
    intermediate): the exact rows of a restricted model.

    ``in_place`` (``rows`` and ``columns`` increasing, CT C-contiguous): written over CT's own
    memory from its start, which a later read never needs (every entry goes to a position at
    or before the one it is read from, in the order they are read); CT is then garbage and the
    result a view of its memory."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    columns = np.ascontiguousarray(columns, dtype=np.int64)
    if in_place and CT.flags.c_contiguous and CT.size:
        flat = CT.reshape(-1)
        if rows.size and columns.size:
            _gather_rows_in_place(flat, CT.shape[1], rows, columns)
        return flat[:rows.size * columns.size].reshape(rows.size, columns.size)
    out = np.empty((rows.size, columns.size), dtype=CT.dtype)
    if rows.size and columns.size:
        _gather_rows(CT, rows, columns, out)
    return out


@njit(cache=True)
def _gather_rows_in_place(flat, n, rows, columns):
    m = columns.shape[0]
    for q in range(rows.shape[0]):
        base = rows[q] * n
        out = q * m
        for t in range(m):
            flat[out + t] = flat[base + columns[t]]


@njit(cache=True)
def _gather_rows(CT, rows, columns, out):
    for q in range(rows.shape[0]):
        p = rows[q]
        for t in range(columns.shape[0]):
            out[q, t] = CT[p, columns[t]]


def prefix_values(CT, order, lengths=None):
    """CT[p, order[p, t]] for t < lengths[p] (all of ``order``'s columns by default; 0 after):
    each exact row's prefix values in order, which the kernels then read in sequence (scattered
    over a 20 KB row of a 100 MB block, every entry was a cache miss)."""
    if lengths is None:
        lengths = np.full(order.shape[0], order.shape[1], dtype=np.int32)
    out = np.zeros(order.shape, dtype=CT.dtype)
    _prefix_values(CT, order, lengths, out)
    return out


@njit(cache=True, nogil=True)
def _prefix_values(CT, order, lengths, out):
    for p in range(order.shape[0]):
        for t in range(lengths[p]):
            out[p, t] = CT[p, order[p, t]]


def restrict_prefixes(prefixes, rows, keep):
    """The prefixes of a model restricted to the exact rows ``rows`` (old positions, in their
    new order) and the words where ``keep`` is True: each prefix without the words dropped,
    renumbered, still largest first; the bound on what follows a prefix still holds (fewer
    entries follow it)."""
    order, lengths, rest = prefixes
    keep = np.ascontiguousarray(keep, dtype=np.bool_)
    new_pos = (np.cumsum(keep) - 1).astype(np.int32)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    new_order = np.empty((rows.size, order.shape[1]), dtype=np.int32)
    new_lengths = np.empty(rows.size, dtype=np.int32)
    _restrict_rows(order, lengths, rows, keep, new_pos, new_order, new_lengths)
    return new_order, new_lengths, rest[rows].copy()


@njit(cache=True)
def _restrict_rows(order, lengths, rows, keep, new_pos, new_order, new_lengths):
    for q in range(rows.size):
        p = rows[q]
        count = 0
        for t in range(lengths[p]):
            j = order[p, t]
            if keep[j]:
                new_order[q, count] = new_pos[j]
                count += 1
        new_lengths[q] = count


def top_square_sums(CT, hpos, hrow, d, count, prefixes=None, columns=None):
    """For every word i: the sum of the ``count`` largest A'_ij^2 over j != i, bounded as the
    row sums are: exact where i or j is in H, else d_i d_j >= A'_ij^2 (Cauchy-Schwarz, ``d``
    the diagonal plus the PSD margin). With ``prefixes`` and ``columns`` (:func:`row_prefixes`,
    :func:`outside_columns`) a row reads its largest entries only. Shape (n,)."""
    n = hpos.shape[0]
    if count <= 0 or n == 0:
        return np.zeros(n)
    h = CT.shape[0]
    if prefixes is None:
        prefixes = (np.zeros((h, 0), dtype=np.int32), np.zeros(h, dtype=np.int32),
                    np.zeros(h))
    if columns is None:
        columns = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32),
                   np.zeros(0, dtype=CT.dtype))
    order, lengths, rest = prefixes[:3]
    cptr, _, cval = columns
    g = np.where(hpos < 0, d, -1.0)
    c = min(count + 1, n)
    top = np.argsort(-g, kind="mergesort")[:c].astype(np.int64)
    out = np.zeros(n)
    _square_sums(CT, hpos, d, g, top, count, order, lengths, rest, cptr, cval, out)
    return out


@njit(cache=True, parallel=True)
def _square_sums(CT, hpos, d, g, top, count, order, lengths, rest, cptr, cval, out):
    n = hpos.shape[0]
    h = CT.shape[0]
    no_words = np.empty((0, 0), dtype=np.int64)  # (never written: no words kept)
    for i in prange(n):
        heap = np.empty((1, count))
        size = 0
        p = hpos[i]
        if p >= 0:
            done = False
            if order.shape[1] > 0:
                # largest first: the first count entries (without i) are the largest squares
                for t in range(lengths[p]):
                    j = order[p, t]
                    if j != i:
                        # (squared in float64: a float32 entry squared in float32 rounds, down
                        # as often as up, and 4097^2 came out below the bound's true value)
                        x = np.float64(CT[p, j])
                        size = heap_offer_at(heap, no_words, 0, size, x * x, -1)
                        if size == count:
                            done = True
                            break
                if not done and rest[p] == 0.0:
                    done = True  # every entry after the prefix is 0
                if not done:
                    size = 0
            if not done:
                for j in range(n):
                    if j != i:
                        x = np.float64(CT[p, j])
                        size = heap_offer_at(heap, no_words, 0, size, x * x, -1)
        else:
            taken = 0
            for t in range(top.shape[0]):
                j = top[t]
                if j == i or g[j] < 0:
                    continue
                if taken == count:
                    break
                size = heap_offer_at(heap, no_words, 0, size, d[i] * d[j], -1)
                taken += 1
            if cptr.shape[0] > 0:
                for t in range(cptr[i], cptr[i + 1]):
                    x = np.float64(cval[t])
                    if size == count and x * x <= heap[0, 0]:
                        break  # the entries after it are smaller
                    size = heap_offer_at(heap, no_words, 0, size, x * x, -1)
            else:
                for q in range(h):
                    x = np.float64(CT[q, i])
                    size = heap_offer_at(heap, no_words, 0, size, x * x, -1)
        out[i] = heap_sum(heap, 0, size)


# Below this many entries (an upper estimate of those read) per call a thread team costs more
# than it saves. Measured on a quiet 2-core machine, the best of three default runs: from 2^24
# down to 2^16 the fortunes' certificates went from 3.23 to 2.28 s (views of 14,503 words and
# 1,156 exact rows, about 6M entries a step, had run on one thread), KOS's from 0.60 to 0.45 s,
# the KOS sample's from 0.32 to 0.25 s, the airline tweets' within noise. On a machine busy
# with other work the threads wait for each other's cores (the airline tweets' certificate at
# load 4: 1.2 and 7.9 ms a call on one thread, 20 and 27 ms on two).
_PARALLEL_WORK = 1 << 16


def offdiag_top_sums(CT, hpos, hrow, sqd, v, count, prefixes=None, columns=None, visited=None,
                     terms=None, active=None):
    """For every word i: the sum of the ``count`` largest of {|A'_ij| v_j : j != i}.

    Entries with i or j in H are exact; the others are replaced by sqd_i sqd_j >= |A'_ij|
    (a row outside H takes them from the ``count`` + 1 largest sqd_j v_j outside H, one of
    which may be the row itself). ``v`` must be nonnegative. ``prefixes``, the exact rows'
    :func:`row_prefixes`, let a row of H stop as soon as no later entry can enter its sum (the
    same values: only the order of their sum may differ). ``columns``, the rows outside H's
    :func:`outside_columns`, lets each of them stop likewise. ``visited``, an array of one
    float, gains the number of entries of CT read. ``terms``, a pair of (n, count) arrays
    (int64, float64), receives each sum's terms of positive weight: the word j and |A'_ij|
    (sqd_i sqd_j for a Cauchy-Schwarz pair; word -1: no term). ``active``, a boolean array:
    only the rows where it is True (the others' sums 0 and terms not written; a view read
    through a mask, whose other words weigh 0). Shape (n,).
    """
    if count <= 0:
        return np.zeros(hpos.shape[0])
    active = np.zeros(0, dtype=np.bool_) if active is None else active
    if terms is None:
        terms = (np.zeros((0, count), dtype=np.int64), np.zeros((0, count)))
    if prefixes is None:
        prefixes = (np.zeros((CT.shape[0], 0), dtype=np.int32),
                    np.zeros(CT.shape[0], dtype=np.int32), np.zeros(CT.shape[0]))
    order, lengths, rest = prefixes[:3]
    # (a fourth member: the prefixes' values, :func:`prefix_values`)
    pvals = prefixes[3] if len(prefixes) > 3 else np.zeros((CT.shape[0], 0), dtype=CT.dtype)
    h, n = CT.shape
    if columns is None:
        columns = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32),
                   np.zeros(0, dtype=CT.dtype))
    cptr, cq, cval = columns
    # rows outside H read h entries each (their nonzero ones with ``columns``); a row of H its
    # prefix, or all n when it has none
    outside = cval.size if cptr.size else (n - h) * h
    work = outside + h * (order.shape[1] if order.shape[1] else n)
    if work < _PARALLEL_WORK or numba.get_num_threads() == 1:
        # (on one thread the team's launch is all the parallel kernel adds: a --by group's
        # calls took 1 ms there against 0.1 ms here)
        out, read = _top_sums_serial(CT, hpos, hrow, sqd, v, count, order, lengths, rest, cptr,
                                     cq, cval, pvals, *terms, active)
    else:
        out, read = _top_sums_parallel(CT, hpos, hrow, sqd, v, count, order, lengths, rest, 256,
                                       cptr, cq, cval, pvals, *terms, active)
    if visited is not None:
        visited[0] += read
    return out


@njit(cache=True)
def node_bound(B, F, R, slots, w, n_iter, stop_below):
    """The weighted row bound of a branch-and-bound node, improving ``w`` in place.

    Every support F + J with J a subset of R, |J| = ``slots``, has lambda_max <= max over its
    rows of (sum_{j in F+J} B_ij w_j) / w_i, and that row sum is at most
    ``sum_{j in F} B_ij w_j`` plus the ``slots`` largest B_ij w_j over R (rows in F), or
    ``B_ii w_i`` plus the ``slots - 1`` largest over R without i (rows in R). Returns the smallest
    such bound over up to ``n_iter`` steps of w <- T(w) / max T(w) (stopping early once it is
    below ``stop_below``), and leaves in ``w`` the weights that gave it.
    """
    visited = np.zeros(1)
    return _node_bound(B, F, R, slots, w, n_iter, stop_below,
                       np.zeros((B.shape[0], 0), dtype=np.int32), np.zeros(B.shape[0]), visited,
                       np.zeros((B.shape[0], 0)), False)


#: Rows of a branch-and-bound node per block of :func:`_node_rows`, the parallel threads' unit
#: (a node of fewer rows is read on the calling thread: a launch of the team costs more)
_NODE_BLOCK = 256

#: ``parallel=`` for a kernel whose only parallel loops are its ``prange``: numba's other
#: conversions (array expressions, allocations, slices set) would launch the threads for
#: each small array operation of its serial parts
_PRANGE_ONLY = {"prange": True, "comprehension": False, "reduction": False,
                "inplace_binop": False, "setitem": False, "numpy": False, "stencil": False,
                "fusion": False}


@njit(cache=True, inline="always")
def _node_bound(B, F, R, slots, w, n_iter, stop_below, order, rest, visited, pvals,
                rows_in_parallel):
    """:func:`node_bound` with the rows' prefixes ``order``, ``rest`` (:func:`row_prefixes` of
    B, their values ``pvals``; zero columns: none). A row is read from two lists side by
    side (Fagin's threshold algorithm): its prefix, largest entry first, and the words of R by
    decreasing weight (sorted once a step, the same list for every row). An entry not read yet
    is at most the last prefix entry read (``rest`` past the prefix) times the next weight of
    the list, so the row stops once its heap of the largest products is full and that product
    is at or below the heap's floor, or once the list is read to its end (every word of R
    then read). The sums are those of whole rows (only the order of their additions may
    differ). The weights of a node concentrate on a few words: on a flat tf-idf matrix of
    14,344 words a row stops after tens of entries, where the largest weight alone (times the
    row's next entry) bounds almost no row short of its end. Adds the entries of B read to
    ``visited[0]``.

    Inlined into its callers (numba's ``inline="always"``): in :func:`branch_and_bound_prefixed`,
    a parallel kernel, with ``rows_in_parallel`` the blocks of :data:`_NODE_BLOCK` rows of a
    larger node run on the parallel threads (the KOS sample's re-solved topic: 17 nodes of about
    920 words in 31 ms against 55 on one thread); elsewhere, or without it (one thread: the launch
    alone would cost), they run in turn, with the same sums. (Not a ``parallel=True`` kernel of
    its own: a cached kernel that calls one does not load reliably from numba's cache.)"""
    nF = F.shape[0]
    nR = R.shape[0]
    nA = nF + nR
    best = np.inf
    T = np.empty(nA)
    best_w = np.empty(nA)
    read = 0.0
    keys = np.empty(nR)
    vorder = np.empty(nR, dtype=np.int64)  # R by decreasing weight
    vrank = np.full(B.shape[0], nR, dtype=np.int64)  # a word's place in it (nR: not in R)
    for it in range(n_iter):
        for b in range(nR):
            keys[b] = -w[R[b]]
        by_weight = np.argsort(keys, kind="mergesort")
        for s in range(nR):
            vorder[s] = R[by_weight[s]]
            vrank[vorder[s]] = s
        n_blocks = (nA + _NODE_BLOCK - 1) // _NODE_BLOCK
        if n_blocks == 1 or not rows_in_parallel:
            read += _node_rows(B, F, R, slots, w, order, rest, pvals, vorder, vrank, T, 0, nA)
        else:
            reads = np.zeros(n_blocks)
            for block in prange(n_blocks):
                reads[block] = _node_rows(B, F, R, slots, w, order, rest, pvals, vorder, vrank,
                                          T, block * _NODE_BLOCK,
                                          min(nA, (block + 1) * _NODE_BLOCK))
            read += np.sum(reads)
        U = 0.0
        for a in range(nA):
            i = F[a] if a < nF else R[a - nF]
            ratio = T[a] / w[i]
            if ratio > U:
                U = ratio
        if U < best:
            best = U
            for a in range(nA):
                best_w[a] = w[F[a]] if a < nF else w[R[a - nF]]
        if best < stop_below:
            break
        tmax = 0.0
        for a in range(nA):
            if T[a] > tmax:
                tmax = T[a]
        if tmax <= 0.0:
            break
        for a in range(nA):
            i = F[a] if a < nF else R[a - nF]
            w[i] = max(T[a] / tmax, 1e-300)
    for a in range(nA):
        w[F[a] if a < nF else R[a - nF]] = best_w[a]
    visited[0] += read
    return best


@njit(cache=True)
def _node_rows(B, F, R, slots, w, order, rest, pvals, vorder, vrank, T, lo, hi):
    """T[a] for the rows lo..hi-1 of the node (F's rows first, then R's; see
    :func:`_node_bound`): the fixed words' sum plus the heap of the largest products over R,
    read from the row's prefix and the weights' list ``vorder`` (``vrank``: each word's place
    in it, len(R) off R). Returns the entries read."""
    nF = F.shape[0]
    nR = R.shape[0]
    length = order.shape[1]
    taken = np.full(nR, -1, dtype=np.int64)  # the row that read the word at place q first
    heap = np.empty((1, max(slots, 1)))
    no_words = np.empty((0, 0), dtype=np.int64)
    read = 0
    for a in range(lo, hi):
        i = F[a] if a < nF else R[a - nF]
        fixed = 0.0
        for b in range(nF):
            fixed += B[i, F[b]] * w[F[b]]
        read += nF
        if a < nF:
            cap = slots
        else:
            cap = slots - 1
            fixed += B[i, i] * w[i]
        if cap > 0:
            hp = heap[:, :cap]
            size = 0
            f = -np.inf
            t = 0  # prefix entries read
            s = 0  # list entries read
            clevel = np.inf if length == 0 else pvals[i, 0]
            vlevel = w[vorder[0]] if nR > 0 else 0.0
            while s < nR:
                if t < length:
                    j = order[i, t]
                    c = pvals[i, t]
                    t += 1
                    read += 1
                    clevel = c if t < length else rest[i]
                    q = vrank[j]
                    if q >= s and q < nR and j != i:  # (q < s: the list offered it)
                        taken[q] = i
                        x = c * w[j]
                        if x > f:
                            size = heap_offer_at(hp, no_words, 0, size, x, -1)
                            if size == cap:
                                f = hp[0, 0]
                    if clevel == 0.0 or (size == cap and clevel * vlevel <= f):
                        break
                j = vorder[s]
                s += 1
                if taken[s - 1] != i and j != i:
                    read += 1
                    x = B[i, j] * w[j]
                    if x > f:
                        size = heap_offer_at(hp, no_words, 0, size, x, -1)
                        if size == cap:
                            f = hp[0, 0]
                vlevel = w[vorder[s]] if s < nR else 0.0
                if size == cap and clevel * vlevel <= f:
                    break
            fixed += heap_sum(hp, 0, size)
        T[a] = fixed
    return float(read)


@njit(cache=True)
def _lambda_max(A, idx):
    k = idx.shape[0]
    sub = np.empty((k, k))
    for a in range(k):
        for b in range(k):
            sub[a, b] = A[idx[a], idx[b]]
    return np.linalg.eigvalsh(sub)[k - 1]


def branch_and_bound(A, B, k, stack_in, stack_out, stack_w, stack_ub, depth, best_set,
                     best_value, floor, max_nodes, n_iter, slack):
    """Depth-first branch and bound for max over |I| = k of lambda_max(A[I, I]); resumable.

    ``B`` = |A| (m x m) drives the bounds, ``A`` scores the leaves exactly. A node is a pair of
    0/1 rows ``stack_in`` (fixed in) and ``stack_out`` (excluded); the rest is free. Nodes are
    popped from the stack (``depth`` entries), bounded with :func:`node_bound` (warm-started from
    ``stack_w``, the parent's weights), pruned when the bound is <= max(``best_value``,
    ``floor``) * (1 + ``slack``), else split on the free word of largest weight, the "include"
    child on top. ``stack_ub`` holds each open node's parent bound, so max(best_value, floor,
    stack_ub[:depth]) is an upper bound on the optimum at any time. With ``floor`` = 0 the search
    finds the optimum; with ``floor`` = theta > best_value it proves "nothing above theta" (or
    finds a support above it), which is much cheaper. Stops after ``max_nodes`` nodes (the caller checks the clock and
    calls again) or when the stack is empty.

    Returns ``(depth, best_value, nodes)``; ``best_set`` (k,) is updated in place. (A Python
    function over the parallel kernel: a cached kernel that calls one does not load reliably.)
    """
    visited = np.zeros(1)
    return branch_and_bound_prefixed(A, B, k, stack_in, stack_out, stack_w, stack_ub, depth,
                                     best_set, best_value, floor, max_nodes, n_iter, slack,
                                     np.zeros((B.shape[0], 0), dtype=np.int32),
                                     np.zeros(B.shape[0]), visited, np.zeros((B.shape[0], 0)),
                                     numba.get_num_threads() > 1)


@njit(cache=True, nogil=True, parallel=_PRANGE_ONLY)
def branch_and_bound_prefixed(A, B, k, stack_in, stack_out, stack_w, stack_ub, depth, best_set,
                              best_value, floor, max_nodes, n_iter, slack, order, rest, visited,
                              pvals, rows_in_parallel):
    """:func:`branch_and_bound` with the rows of ``B`` read through their prefixes ``order``,
    ``rest`` (:func:`row_prefixes`; see :func:`_node_bound`), adding the entries of B its node
    bounds read to ``visited[0]`` (what auto's work budget counts). With ``rows_in_parallel``
    (more than one thread), a node's rows are read on the parallel threads
    (:func:`_node_bound`)."""
    m = A.shape[0]
    nodes = 0
    while depth > 0 and nodes < max_nodes:
        depth -= 1
        nodes += 1
        parent_ub = stack_ub[depth]
        prune = max(best_value, floor) * (1.0 + slack)
        if parent_ub <= prune:
            continue
        nF = 0
        nR = 0
        for i in range(m):
            if stack_in[depth, i]:
                nF += 1
            elif not stack_out[depth, i]:
                nR += 1
        if nF + min(nR, k - nF) < k:
            continue
        F = np.empty(nF, dtype=np.int64)
        R = np.empty(nR, dtype=np.int64)
        a = 0
        b = 0
        for i in range(m):
            if stack_in[depth, i]:
                F[a] = i
                a += 1
            elif not stack_out[depth, i]:
                R[b] = i
                b += 1
        if nF == k or nF + nR == k:  # a leaf: one support left
            leaf = F if nF == k else np.concatenate((F, R))
            value = _lambda_max(A, leaf)
            if value > best_value:
                best_value = value
                best_set[:] = leaf
            continue
        w = stack_w[depth].copy()
        visited[0] += m  # (the node's rows of flags, read above)
        ub = _node_bound(B, F, R, k - nF, w, n_iter, prune, order, rest, visited, pvals,
                         rows_in_parallel)
        if ub <= prune:
            continue
        # branch on the free word of largest weight: it carries the most of the bound
        pick = R[0]
        for b in range(1, nR):
            if w[R[b]] > w[pick]:
                pick = R[b]
        row_in = stack_in[depth].copy()
        row_out = stack_out[depth].copy()
        # exclude child first (below), include child on top (explored first)
        stack_in[depth] = row_in
        stack_out[depth] = row_out
        stack_out[depth, pick] = True
        stack_w[depth] = w
        stack_ub[depth] = ub
        depth += 1
        stack_in[depth] = row_in
        stack_in[depth, pick] = True
        stack_out[depth] = row_out
        stack_w[depth] = w
        stack_ub[depth] = ub
        depth += 1
    return depth, best_value, nodes


@njit(cache=True)
def _insert_largest(vals, idx, size, x, j):
    """Insert ``x`` (from ``j``) into the descending ``vals[:size]`` of capacity vals.size,
    dropping the smallest when full; returns the new size."""
    cap = vals.shape[0]
    if size < cap:
        pos = size
        size += 1
    elif x > vals[cap - 1]:
        pos = cap - 1
    else:
        return size
    while pos > 0 and vals[pos - 1] < x:
        vals[pos] = vals[pos - 1]
        idx[pos] = idx[pos - 1]
        pos -= 1
    vals[pos] = x
    idx[pos] = j
    return size


#: Entries of each candidate's row :func:`star_rows` sorts first (the rest follow unsorted)
STAR_PREFIX = 64


#: Candidates from which :func:`star_values` reads its rows on the parallel threads: below,
#: starting the threads costs more than the rows (and, where other processes hold the cores,
#: a wait for one at every step of :func:`star_descent`)
STAR_PARALLEL_ROWS = 256


@njit(cache=True, nogil=True)
def star_values(near_idx, near_val, lengths, heads, far_top, pi, base, take, scale, values,
                partners, gains):
    """The priced stars of :func:`~spca_cli.bounds.star_total_bound`: for each candidate row a,
    ``values[a]`` = base[a] - pi[a] + the ``take`` largest positive among P_ab s_b / s_a -
    pi[b] (the candidates b of row a of ``near_*``, which hold the positive P_ab alone:
    :func:`star_rows`) and far_top[a, :] / s_a (partners without a price), where s =
    ``scale`` rescales the candidates' weights (all 1: the weights the rows were read at);
    ``partners[a]`` the candidates among them (-1 for a partner without a price, or none) and
    ``gains[a]`` their terms before the price (0 for none).

    A row's sorted head is read until its next P_ab max(s) / s_a is at most the smallest of
    ``take`` terms held (a price only lowers an entry, and no rescaled entry exceeds that, so
    no later one can enter), and the unsorted rest, all below the head, only when the head's
    last entry could still enter: a step reads about ``take`` entries a row where the whole
    row held up to every candidate. From :data:`STAR_PARALLEL_ROWS` rows, on the parallel
    threads."""
    top = 0.0
    for a in range(scale.shape[0]):
        top = max(top, scale[a])
    if lengths.shape[0] >= STAR_PARALLEL_ROWS:
        _star_rows_parallel(near_idx, near_val, lengths, heads, far_top, pi, base, take, scale,
                            top, values, partners, gains)
    else:
        for a in range(lengths.shape[0]):
            _star_value(a, near_idx, near_val, lengths, heads, far_top, pi, base, take, scale,
                        top, values, partners, gains)


@njit(cache=True, parallel=True)
def _star_rows_parallel(near_idx, near_val, lengths, heads, far_top, pi, base, take, scale, top,
                        values, partners, gains):
    """:func:`_star_value` of every row, on the parallel threads."""
    for a in prange(lengths.shape[0]):
        _star_value(a, near_idx, near_val, lengths, heads, far_top, pi, base, take, scale, top,
                    values, partners, gains)


@njit(cache=True)
def _star_value(a, near_idx, near_val, lengths, heads, far_top, pi, base, take, scale, top,
                values, partners, gains):
    """Row a of :func:`star_values` (``top``: the largest of ``scale``). The row's largest
    terms are kept in its own ``gains[a]`` and ``partners[a]`` as they are found: two scratch
    arrays a row and step would cost 12-35% of the stars' steps on the KOS sample."""
    vals = gains[a, :take]
    idx = partners[a, :take]
    size = 0
    own = scale[a]
    reach = top / own
    if take > 0:
        for t in range(far_top.shape[1]):
            x = far_top[a, t] / own
            if x > 0.0:
                size = _insert_largest(vals, idx, size, x, -1)
        head, n = heads[a], lengths[a]
        settled = False
        for t in range(head):
            raw = near_val[a, t]
            if size == take and raw * reach <= vals[take - 1]:
                settled = True
                break
            b = near_idx[a, t]
            x = raw * scale[b] / own - pi[b]
            if x > 0.0:
                size = _insert_largest(vals, idx, size, x, b)
        if not settled and head < n and not (size == take and near_val[a, head - 1] * reach
                                             <= vals[take - 1]):
            for t in range(head, n):
                b = near_idx[a, t]
                x = near_val[a, t] * scale[b] / own - pi[b]
                if x > 0.0 and not (size == take and x <= vals[take - 1]):
                    size = _insert_largest(vals, idx, size, x, b)
    total = 0.0
    for t in range(size):
        total += vals[t]
        if idx[t] >= 0:  # (a term before its partner's price)
            vals[t] += pi[idx[t]]
    for t in range(size, partners.shape[1]):
        partners[a, t] = -1
        gains[a, t] = 0.0
    values[a] = base[a] - pi[a] + total


@njit(cache=True, nogil=True)
def star_descent(near_idx, near_val, lengths, heads, far_top, base, take, K, slack, lower,
                 out_values, out_terms, out_slots, pi, log_scale, tilt, first, steps, patience,
                 gain, best_pi, best_scale):
    """``steps`` joint subgradient steps of :func:`~spca_cli.bounds.star_total_bound` on the
    candidates' prices ``pi`` and log-weights ``log_scale`` (both updated in place), the
    ``first``-th step of the descent first (the log-weights' step: tilt / sqrt(step + 1)).

    L at each step: the K largest of the candidates' :func:`star_values` and of the ratios
    outside them, ``out_values`` + the sum of ``out_terms`` * (s_l - 1) over their candidate
    partners ``out_slots`` (-1: a word outside, whose weight stays), plus the prices, times
    ``slack``. Returns ``(best, done)``: the smallest L seen (its point in ``best_pi``,
    ``best_scale``) and the steps taken: fewer when L met ``lower`` or when ``patience`` steps
    in a row did not lower the smallest L by a share ``gain``."""
    count = pi.shape[0]
    n_out = out_values.shape[0]
    values = np.empty(count)
    partners = np.empty((count, max(take, 1)), dtype=np.int64)
    gains = np.empty((count, max(take, 1)))
    cut = np.empty(n_out)
    top = np.empty(K)
    who = np.empty(K, dtype=np.int64)
    g = np.empty(count)
    g_log = np.empty(count)
    best = np.inf
    since = 0
    for s in range(steps):
        scale = np.exp(log_scale)
        star_values(near_idx, near_val, lengths, heads, far_top, pi, base, take, scale, values,
                    partners, gains)
        for t in range(n_out):
            x = out_values[t]
            for r in range(out_terms.shape[1]):
                if out_slots[t, r] >= 0:
                    x += out_terms[t, r] * (scale[out_slots[t, r]] - 1.0)
            cut[t] = x
        size = 0
        for a in range(count):
            size = _insert_largest(top, who, size, values[a], a)
        for t in range(n_out):
            size = _insert_largest(top, who, size, cut[t], count + t)
        total = 0.0
        for a in range(count):
            total += pi[a]
        for t in range(size):
            total += top[t]
        total *= slack
        since = 0 if total < best * (1.0 - gain) else since + 1
        if total < best:
            best = total
            best_pi[:] = pi
            best_scale[:] = scale
        gap = total - lower
        if gap <= 0.0 or since >= patience:
            return best, s + 1
        # subgradients: on a price, 1 - the uses of its word in the chosen stars; on a
        # log-weight, the chosen terms it multiplies less those it divides
        g[:] = 1.0
        g_log[:] = 0.0
        for c in range(size):
            a = who[c]
            if a < count:
                g[a] -= 1.0
                for r in range(take):
                    b = partners[a, r]
                    if b >= 0:
                        g[b] -= 1.0
                        g_log[b] += gains[a, r]
                    g_log[a] -= gains[a, r]
            else:
                t = a - count
                for r in range(out_terms.shape[1]):
                    b = out_slots[t, r]
                    if b >= 0:
                        g_log[b] += out_terms[t, r] * scale[b]
        norm2 = 0.0
        length = 0.0
        for a in range(count):
            if g[a] < 0.0 or pi[a] > 0.0:
                norm2 += g[a] * g[a]
            length += g_log[a] * g_log[a]
        if norm2 > 0.0:
            for a in range(count):
                pi[a] = max(pi[a] - gap / norm2 * g[a], 0.0)
        if length > 0.0:
            move = tilt / np.sqrt(first + s + 1.0) / np.sqrt(length)
            for a in range(count):
                log_scale[a] -= move * g_log[a]
    return best, steps


@njit(cache=True, parallel=True, nogil=True)
def star_rescale(near_idx, near_val, lengths, heads, far_top, scale, prefix):
    """The rows of :func:`star_rows` at the candidates' weights multiplied by ``scale`` (the
    other words' kept): P_ab s_b / s_a, far_top[a] / s_a, each head sorted again."""
    for a in prange(lengths.shape[0]):
        own = scale[a]
        for t in range(lengths[a]):
            near_val[a, t] = near_val[a, t] * scale[near_idx[a, t]] / own
        for t in range(far_top.shape[1]):
            far_top[a, t] = far_top[a, t] / own
        heads[a] = _sort_head(near_idx[a], near_val[a], lengths[a], prefix)


@njit(cache=True, parallel=True, nogil=True)
def star_rows(CT, hpos, sqd, w, cand, slot, prefix, near_idx, near_val, lengths, heads,
              far_top, h_far, cs_far):
    """The rows of the candidates ``cand`` for :func:`star_values`, with P_il = |A'_il| w_l /
    w_i from the model (exact where i or l has exact entries, Cauchy-Schwarz sqd_i sqd_l
    elsewhere): row a's positive P_{cand[a], cand[b]} (b != a) in ``near_idx[a]``,
    ``near_val[a]`` (``lengths[a]`` of them), its ``heads[a]`` largest first, largest first
    (equal ones in candidate order), then its smaller ones in candidate order (``heads[a]`` is
    at least min(``prefix``, ``lengths[a]``) and takes in every entry equal to the last of
    them); far_top[a] the far_top.shape[1] largest P over the words l outside the candidates
    (``slot[l]`` -1; the others' slot is their candidate index), largest first, 0 past the
    row's words.

    A row without exact entries reads the candidates, the exact rows outside them (``h_far``)
    and, of the other words, only ``cs_far``: the words of largest sqd_l w_l, a few more than
    far_top holds (their P_il = sqd_i sqd_l w_l / w_i is that order scaled by sqd_i / w_i), not
    every word of the model."""
    m = hpos.shape[0]
    take = far_top.shape[1]
    for a in prange(cand.shape[0]):
        i = cand[a]
        p = hpos[i]
        vals = np.zeros(max(take, 1))[:take]
        heap = np.empty(max(take, 1), dtype=np.int64)[:take]
        size = 0
        n = 0
        if p >= 0:
            for l in range(m):
                if l == i:
                    continue
                x = np.float64(CT[p, l]) * w[l] / w[i]
                b = slot[l]
                if b >= 0:
                    if x > 0.0:
                        near_idx[a, n] = b
                        near_val[a, n] = x
                        n += 1
                elif take > 0:
                    size = _insert_largest(vals, heap, size, x, l)
        else:
            for b in range(cand.shape[0]):
                l = cand[b]
                if l == i:
                    continue
                if hpos[l] >= 0:
                    c = np.float64(CT[hpos[l], i])
                else:
                    c = sqd[i] * sqd[l]
                x = c * w[l] / w[i]
                if x > 0.0:
                    near_idx[a, n] = b
                    near_val[a, n] = x
                    n += 1
            if take > 0:
                for t in range(h_far.shape[0]):
                    l = h_far[t]
                    size = _insert_largest(vals, heap, size,
                                           np.float64(CT[hpos[l], i]) * w[l] / w[i], l)
                for t in range(cs_far.shape[0]):
                    l = cs_far[t]
                    size = _insert_largest(vals, heap, size, sqd[i] * sqd[l] * w[l] / w[i], l)
        for r in range(take):
            far_top[a, r] = vals[r] if r < size else 0.0
        lengths[a] = n
        heads[a] = _sort_head(near_idx[a], near_val[a], n, prefix)


@njit(cache=True)
def _sort_head(idx, val, n, prefix):
    """Reorder ``idx[:n]``, ``val[:n]`` in place as :func:`star_rows` leaves a row; returns
    the head's length."""
    row = val[:n].copy()
    cols = idx[:n].copy()
    cut = -np.inf
    if n > prefix:
        cut = _kth_largest(row, prefix)
    head = 0
    for t in range(n):
        if row[t] >= cut:
            head += 1
    top = np.empty(head)
    top_cols = np.empty(head, dtype=np.int64)
    h, r = 0, head
    for t in range(n):
        if row[t] >= cut:
            top[h] = -row[t]
            top_cols[h] = cols[t]
            h += 1
        else:
            idx[r] = cols[t]
            val[r] = row[t]
            r += 1
    order = np.argsort(top, kind="mergesort")
    for t in range(head):
        idx[t] = top_cols[order[t]]
        val[t] = -top[order[t]]
    return head


@njit(cache=True, nogil=True)
def perron_weights(sel, coef, diag, w, rows, rtol, max_steps):
    """``(w, steps)``: the power iteration w <- M w / max(M w) on the words ``rows`` of the
    nonnegative matrix M with M_ii = ``diag`` and M_ij = ``coef[i, t]`` at j = ``sel[i, t]``
    (-1: no term), from ``w``, until the ratios (M w)_i / w_i lie within ``rtol`` of their
    largest or after ``max_steps`` steps. Weights off ``rows`` stay as given (terms name rows'
    words only). M is the weighted row-sum map with each row's terms held fixed (a linear
    map), so a step is a pass over n (count + 1) entries instead of a search of each row for
    its largest terms. Weights stay >= 1e-300. (One thread: at 197,316 words two threads took
    3.5 ms a step against 4.2, at 14,503 0.24 ms against 0.17.)"""
    w = w.copy()
    y = np.empty(rows.size)
    steps = 0
    for steps in range(1, max_steps + 1):
        high, low, top = 0.0, np.inf, 0.0
        for q in range(rows.size):
            i = rows[q]
            s = diag[i] * w[i]
            for t in range(sel.shape[1]):
                j = sel[i, t]
                if j >= 0:
                    s += coef[i, t] * w[j]
            y[q] = s
            ratio = s / w[i]
            high = max(high, ratio)
            low = min(low, ratio)
            top = max(top, s)
        if top <= 0.0:
            break
        for q in range(rows.size):
            w[rows[q]] = max(y[q] / top, 1e-300)
        if high - low <= rtol * high:
            break
    return w, steps
