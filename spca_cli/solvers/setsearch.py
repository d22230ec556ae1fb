"""The best set of topics, not only the best first one: local search over disjoint supports.

Remove deflation makes each topic the best given the topics BEFORE it; the set it returns is
not the best set. A frequent word that adds a little to the first topic may be what anchors a
later one (on KOS the words of a set searched jointly explain 33-35% more than deflation's).
:func:`improve_set` maximises the set's total sum_j lambda_max(A[T_j, T_j]) over K disjoint
supports of k words by moves that keep every support at k words:

* **replace**: word u of topic j leaves, a word v no topic holds comes in;
* **swap**: u of topic j and v of topic l change places.

Every move is screened by a lower bound on its gain, for every (u, v) at once: with x the
leading eigenvector of A_T (eigenvalue lambda, z = A x) and y = x - x_u e_u, the best unit
vector in span{y, e_v} has Rayleigh quotient

    mu = (a + c) / 2 + sqrt(((a - c) / 2)^2 + b^2),   a = y^T A y / |y|^2,
    b = (A y)_v / |y| = (z_v - A_vu x_u) / |y|,       c = A_vv,

and lambda_max(A[T - u + v]) >= mu, since that vector is supported on T - u + v. So a move
whose mu-gain is positive always improves the total; the few best by mu-gain are then
measured exactly (a k x k eigenproblem each) and the best exact gain is taken. A swap's gain
is the sum of two such replacements. The search stops when no measured move gains: a local
optimum for these moves, never below its start.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spca_cli.coherence import npmi_pairs
from spca_cli.kernels.setsearch import replaced_lmax, replacement_gains

__all__ = ["SetState", "improve_set", "set_total", "with_first", "polish_coherence"]

#: moves screened per kind (replace, swap) and measured exactly per step
SCREENED = 24
#: a move must gain at least this share of the total (rounding is not a gain)
MIN_GAIN = 1e-9
#: words per topic measured exactly (in every position) in each step of
#: :func:`polish_coherence`, of each kind (best NPMI, cheapest variance)
COHERENCE_CANDIDATES = 24


def _leading(A, support):
    """lambda_max(A[T, T]) and its unit eigenvector (largest entry positive)."""
    values, vectors = np.linalg.eigh(A.submatrix(support))
    x = vectors[:, -1]
    if x[np.argmax(np.abs(x))] < 0:
        x = -x
    return float(values[-1]), x


def set_total(A, supports):
    """sum_j lambda_max(A[T_j, T_j]): what a set of disjoint supports explains together."""
    return float(sum(_leading(A, np.asarray(s, dtype=np.int64))[0] for s in supports if len(s)))


def _mu(a, b, c):
    """The larger eigenvalue of [[a, b], [b, c]] (elementwise)."""
    half = 0.5 * (a - c)
    return 0.5 * (a + c) + np.sqrt(half * half + b * b)


class SetState:
    """K disjoint supports of k words with what the screening needs of each: its leading
    eigenpair, the columns A[:, T_j] and z_j = A x_j (kept in step as words move)."""

    def __init__(self, A, supports):
        self.A = A
        self.supports = [np.asarray(s, dtype=np.int64).copy() for s in supports]
        self.k = len(self.supports[0])
        self.diag = A.diagonal()
        self.allowed = A.active()
        # (C-ordered, as the gains' kernel reads them: not copied at every step)
        self.columns = [np.ascontiguousarray(A.columns(s)) for s in self.supports]
        self.pairs = [_leading(A, s) for s in self.supports]
        # per topic, (position, word) -> lambda_max with that replacement, while its words stay
        # (a step of the search measures the same moves of the topics it did not change again)
        self._replaced = [{} for _ in self.supports]
        self._borders = [None] * len(self.supports)  # per topic, _bordered's decompositions

    @property
    def values(self):
        return [value for value, _ in self.pairs]

    @property
    def total(self):
        return float(sum(self.values))

    def used(self):
        mask = np.zeros(self.A.n, dtype=bool)
        for s in self.supports:
            mask[s] = True
        return mask

    def gains(self, topics=None, out=None):
        """mu-gain G[v, q] of putting word v in place of the q-th word of the set (topic
        q // k, position q % k), for every word v (an (n, K k) array); with ``topics``, only
        their columns are made (into ``out``, the rest kept)."""
        n, k = self.A.n, self.k
        G = np.empty((n, len(self.supports) * k)) if out is None else out
        for j in range(len(self.supports)) if topics is None else topics:
            support, cols, (value, x) = self.supports[j], self.columns[j], self.pairs[j]
            z = cols @ x
            rest = np.maximum(1.0 - x * x, 0.0)  # |y|^2 for each word u leaving
            a = (value - 2.0 * x * z[support] + self.diag[support] * x * x)
            with np.errstate(divide="ignore", invalid="ignore"):
                a = np.where(rest > 1e-12, a / rest, -np.inf)
            # (one layout for the kernel: each other one is a signature numba loads, 3-5 ms)
            replacement_gains(cols, np.ascontiguousarray(x), z, a,
                              np.sqrt(rest), self.diag, value, G, j * k)
        return G

    def blocks(self, j, words, positions):
        """A[T', T'] for each T' = T_j with its ``positions[c]``-th word replaced by
        ``words[c]``, from the columns A[:, T_j] kept (no pass over S): an (m, k, k) array."""
        cols, support = self.columns[j], self.supports[j]
        words = np.asarray(words, dtype=np.int64)
        positions = np.asarray(positions, dtype=np.int64)
        out = np.repeat(cols[support][None, :, :], words.size, axis=0)
        rows = cols[words]  # A[v, T_j]
        pick = np.arange(words.size)
        out[pick, positions, :] = rows
        out[pick, :, positions] = rows
        out[pick, positions, positions] = self.diag[words]
        return out

    def replaced_values(self, j, words, positions):
        """lambda_max(A[T', T']) for each T' = T_j with its ``positions[c]``-th word replaced by
        ``words[c]``: those not measured since T_j last changed, in one batch, each from the
        block of T_j's other words (:meth:`_bordered`) and its secular equation."""
        known = self._replaced[j]
        keys = list(zip(np.asarray(positions).tolist(), np.asarray(words).tolist()))
        new = list(dict.fromkeys(key for key in keys if key not in known))
        if new:
            ps, vs = (np.array(column, dtype=np.int64) for column in zip(*new))
            mu, Q, rest = self._bordered(j)
            values = replaced_lmax(mu, Q, self.columns[j], rest, self.diag, ps, vs,
                                   np.empty(ps.size))
            for key, value in zip(new, values):
                known[key] = value
        return np.array([known[key] for key in keys], dtype=np.float64)

    def _bordered(self, j):
        """``(mu, Q, rest)`` of topic j for :func:`~spca_cli.kernels.setsearch.replaced_lmax`:
        for each position p, the other positions ``rest[p]`` and the eigenpairs of their block
        (the lower triangle, as NumPy's ``eigh`` reads it), in one batch per support."""
        if self._borders[j] is None:
            k = self.k
            rest = np.array([np.delete(np.arange(k), p) for p in range(k)], dtype=np.int64)
            if k == 1:
                mu, Q = np.zeros((1, 0)), np.zeros((1, 0, 0))
            else:
                block = self.columns[j][self.supports[j]]  # A[T, T]: row a is A[T_a, T]
                mu, Q = np.linalg.eigh(block[rest[:, :, None], rest[:, None, :]])
            self._borders[j] = (mu, np.ascontiguousarray(Q), rest)
        return self._borders[j]

    def moved(self, changes):
        """The supports after ``changes`` ({topic: new support}, each one word away from the
        topic's), measured exactly: the new pairs and the total gain."""
        pairs = {}
        for j, support in changes.items():
            p = int(np.flatnonzero(support != self.supports[j])[0])
            values, vectors = np.linalg.eigh(self.blocks(j, [support[p]], [p])[0])
            x = vectors[:, -1]
            pairs[j] = (float(values[-1]), -x if x[np.argmax(np.abs(x))] < 0 else x)
        gain = sum(pairs[j][0] - self.pairs[j][0] for j in changes)
        return pairs, gain

    def apply(self, changes, pairs):
        for j, support in changes.items():
            old_pos = {int(w): p for p, w in enumerate(self.supports[j])}
            # the kept words' columns gathered in one pass over the rows (a column at a time
            # of these (n, k) arrays took 1.7 ms a move on the fortunes), then the new ones
            at = [old_pos.get(int(w), 0) for w in support]
            cols = np.take(self.columns[j], at, axis=1)  # (C-ordered)
            new = [p for p, w in enumerate(support) if int(w) not in old_pos]
            if new:
                cols[:, new] = self.A.columns(support[new])
            self.supports[j], self.columns[j], self.pairs[j] = support, cols, pairs[j]
            self._replaced[j] = {}
            self._borders[j] = None


def _largest(M, count, rows_ok=None, columns_ok=None):
    """The ``count`` largest finite entries of the 2-D array ``M``: (value, (row, column)).
    With ``rows_ok`` / ``columns_ok`` (boolean masks), those of M with every other entry taken
    as -inf, without that masked copy of M (on the fortunes a 14,543 x 50 array a step).

    They lie in the ``count`` rows of largest maximum (a row holding one of them has fewer
    than ``count`` rows of larger maximum, each holding a larger entry), so only those rows
    are partitioned: on the fortunes (14,543 x 50) a fifth of the time of the whole array."""
    n, width = M.shape
    count = min(count, M.size)
    if count == 0:
        return []
    columns = None if columns_ok is None or columns_ok.all() else columns_ok
    rows = np.arange(n)
    if count < n:
        if columns is None:
            row_max = M.max(axis=1)
        else:
            row_max = M[:, columns].max(axis=1) if columns.any() else np.full(n, -np.inf)
        if rows_ok is not None:
            row_max[~rows_ok] = -np.inf
        rows = np.sort(np.argpartition(-row_max, count - 1)[:count])
    mask = None if rows_ok is None else rows_ok[rows][:, None]
    if columns is not None:
        mask = columns[None, :] if mask is None else mask & columns[None, :]
    block = M[rows]
    flat = (block if mask is None else np.where(mask, block, -np.inf)).ravel()
    return [(flat[idx], (int(rows[idx // width]), int(idx % width)))
            for idx in np.argpartition(-flat, count - 1)[:count] if np.isfinite(flat[idx])]


def _row_max(M):
    """M.max(axis=1) for a narrow M (a topic's k columns): a pass per column, where NumPy's
    reduction along rows of 10 entries took 0.66 ms for 14,543 of them against 0.18 ms."""
    out = M[:, 0].copy()
    for c in range(1, M.shape[1]):
        np.maximum(out, M[:, c], out=out)
    return out


def _move_masks(K, k, frozen):
    """``(free, blocked)`` of a search with the topics ``frozen``: which of the K k positions
    may change, and which swaps (q, r) are never made (within a topic, of a frozen position,
    or r <= q: each pair once)."""
    topic = np.repeat(np.arange(K), k)
    free = ~np.isin(topic, list(frozen))
    blocked = (topic[:, None] == topic[None, :]) | ~free[:, None] | ~free[None, :]
    blocked[np.tril_indices(K * k)] = True
    return free, blocked


def _candidate_moves(state, G, masks, screened):
    """The ``screened`` best replacements and swaps by mu-gain, best first, as (gain, steps):
    each step ``(topic, position, word)`` puts the word in that position of the topic.
    ``masks``: :func:`_move_masks`."""
    k, K = state.k, len(state.supports)
    free, blocked = masks
    words = np.concatenate(state.supports)
    moves = []
    # replace: v from the words no topic holds
    outside = ~state.used() & state.allowed
    for gain, (v, q) in _largest(G, screened, rows_ok=outside, columns_ok=free):
        moves.append((gain, (divmod(q, k) + (v,),)))
    # swap: q of topic j and r of topic l change places; G[words[r], q] + G[words[q], r]
    if K > 1:
        Gu = G[words]  # Gu[r, q]: words[r] in place of the q-th word
        W = Gu + Gu.T
        W[blocked] = -np.inf
        for gain, (q, r) in _largest(W, screened):
            moves.append((gain, (divmod(q, k) + (int(words[r]),),
                                 divmod(r, k) + (int(words[q]),))))
    moves.sort(key=lambda move: -move[0])
    return moves


def _changes(state, steps):
    """{topic: its support after ``steps``} (:func:`_candidate_moves`)."""
    changes = {}
    for j, p, v in steps:
        if j not in changes:
            changes[j] = state.supports[j].copy()
        changes[j][p] = v
    return changes


def improve_set(A, supports, *, frozen=(), max_moves=1000, screened=SCREENED):
    """Local search from ``supports`` (K disjoint arrays of k words of the view ``A``).

    Parameters
    ----------
    A : Gram
    supports : list of array of int
        The start; every support must have the same number of words, all distinct.
    frozen : iterable of int
        Topics that keep their words (their words are not offered to the others either).
    max_moves : int
        Moves taken at most (each raises the total).
    screened : int
        Moves of each kind measured exactly per step, the best by mu-gain.

    Returns
    -------
    SetState
        The supports reached, their leading eigenpairs on ``A``, ``moves`` taken and
        ``start_total``; its total is never below the start's.
    """
    state = SetState(A, supports)
    frozen = set(int(j) for j in frozen)
    state.moves, state.start_total = 0, state.total
    G = state.gains()
    masks = _move_masks(len(state.supports), state.k, frozen)
    while state.moves < max_moves:
        moves = [steps for _, steps in _candidate_moves(state, G, masks, screened)]
        gains = _exact_gains(state, moves)
        threshold = MIN_GAIN * max(state.total, 1e-300)
        if not gains.size or gains.max() <= threshold:
            break
        changes = _changes(state, moves[int(np.argmax(gains))])
        pairs, _ = state.moved(changes)
        state.apply(changes, pairs)
        state.gains(list(changes), out=G)  # (a topic's gains depend on its own words only)
        state.moves += 1
    return state


def _exact_gains(state, moves):
    """The exact gain of every move (steps of :func:`_candidate_moves`), the k x k eigenvalue
    problems of each topic solved in one batch."""
    wanted = {}  # topic -> [(move, word, position)]
    for m, steps in enumerate(moves):
        for j, p, v in steps:
            wanted.setdefault(j, []).append((m, v, p))
    gains = np.zeros(len(moves))
    for j, items in wanted.items():
        index, words, positions = (np.array(column) for column in zip(*items))
        values = state.replaced_values(j, words, positions)
        np.add.at(gains, index, values - state.pairs[j][0])
    return gains


def _fill(A, support, k, taken):
    """``support`` grown to k words, each time by the word that raises lambda_max(A_T) most
    by the mu screening (T + v: a = lambda, b = z_v, c = A_vv), among the active words not in
    ``taken`` (a boolean mask, updated)."""
    support = [int(w) for w in support]
    diag, allowed = A.diagonal(), A.active()
    while len(support) < k:
        free = allowed & ~taken
        if support:
            value, x = _leading(A, np.asarray(support, dtype=np.int64))
            z = A.columns(np.asarray(support, dtype=np.int64)) @ x
            gain = np.where(free, _mu(value, z, diag), -np.inf)
        else:
            gain = np.where(free, diag, -np.inf)
        v = int(np.argmax(gain))
        support.append(v)
        taken[v] = True
    return np.asarray(support, dtype=np.int64)


def with_first(A, supports, first):
    """A set of the same size that holds ``first`` as its topic 0: the support that shares
    most words with it gives way (the least valuable on ties), the others lose its words and
    are grown back to k words (:func:`_fill`)."""
    first = np.asarray(first, dtype=np.int64)
    k = first.size
    values = [_leading(A, np.asarray(s, dtype=np.int64))[0] for s in supports]
    shared = [np.isin(s, first).sum() for s in supports]
    drop = max(range(len(supports)), key=lambda j: (shared[j], -values[j]))
    taken = np.zeros(A.n, dtype=bool)
    taken[first] = True
    for j, s in enumerate(supports):
        if j != drop:  # (the words of the one that gives way are free again)
            taken[np.asarray(s, dtype=np.int64)] = True
    out = [first]
    for j, s in enumerate(supports):
        if j != drop:
            out.append(_fill(A, [w for w in s if w not in set(first.tolist())], k, taken))
    return out


class _Coherence:
    """Document counts of one topic's words against every word: what the mean NPMI of the
    topic becomes when its p-th word is replaced by any v, for all (v, p) at once."""

    def __init__(self, B, df, n_documents, support):
        self.B, self.df, self.n = B, df, n_documents
        self.support = self.np_all = None
        self.update(support)

    def _npmi_with(self, words):
        """(n, len(words)): the NPMI of every word with each of ``words``, from the co-document
        counts."""
        counts = (self.B.T @ self.B[:, words]).toarray()
        return npmi_pairs(counts, self.df[:, None], self.df[words][None, :], self.n)

    def update(self, support):
        support = np.asarray(support, dtype=np.int64)
        if self.support is None or self.support.size != support.size:
            self.np_all = self._npmi_with(support)
        else:
            # a column depends on its own word alone: only the words replaced are counted again
            moved = np.flatnonzero(support != self.support)
            if moved.size:
                self.np_all[:, moved] = self._npmi_with(support[moved])
        inner = self.np_all[support]
        k = support.size
        self.pairs = k * (k - 1) / 2
        off = inner[~np.eye(k, dtype=bool)].reshape(k, k - 1) if k > 1 else np.zeros((k, 0))
        self.pair_sum = float(off.sum() / 2)
        self.row = off.sum(axis=1)  # NPMI of word p with the others
        self.support = support
        self._replaced = None  # replaced(), made on first use after each update

    @property
    def value(self):
        return self.pair_sum / self.pairs if self.pairs else 0.0

    def replaced(self):
        """(n, k): the topic's mean NPMI with word v in place of its p-th word (made once per
        support: the offers and their checks read it many times)."""
        if self._replaced is None:
            k = self.support.size
            with_v = self.np_all.sum(axis=1)[:, None] - self.np_all  # v against the others
            self._replaced = ((self.pair_sum - self.row[None, :] + with_v) / self.pairs
                              if k > 1 else np.zeros_like(self.np_all))
        return self._replaced


@dataclass
class _Offer:
    """A topic's best replacement for coherence (``support`` None: none within its allowance)
    and what chose it: the candidate ``words`` and the scores a word needs to join them."""

    topic: int
    ratio: float
    support: np.ndarray | None
    loss: float
    words: frozenset
    gain_floor: float
    cheap_floor: float

    def would_rank(self, word, track, cheap):
        """Whether ``word``, free again, would be among this topic's candidates."""
        gain = float(np.max(track.replaced()[word] - track.value))
        return gain >= self.gain_floor or float(np.max(cheap[word])) >= self.cheap_floor


def _row_tops(track, G, j, k):
    """Each word's best NPMI gain and best mu-gain over topic j's positions (``track``, its
    columns of G): they change only when topic j does (max_p (r_p - c) is max_p r_p - c
    exactly: rounding keeps the order)."""
    return _row_max(track.replaced()) - track.value, _row_max(G[:, j * k:(j + 1) * k])


def _best_replacement(state, j, track, free, spent, allowed, candidates, tops):
    """Topic j's :class:`_Offer`: among its candidate words (the ``candidates`` best by the NPMI
    they give and the ``candidates`` cheapest by the mu screening, each in every position,
    measured exactly in one batch), the replacement of best NPMI gain per unit of variance
    lost that keeps ``spent`` within ``allowed``. ``tops``: :func:`_row_tops` of topic j."""
    k = state.k
    value = state.pairs[j][0]
    replaced = track.replaced()
    words, floors = set(), []
    for top in tops:
        top = top.copy()
        top[~free] = -np.inf  # (a word that is not free is no candidate)
        count = min(candidates, top.size)
        chosen = np.argpartition(-top, count - 1)[:count]
        words.update(chosen.tolist())
        floors.append(float(top[chosen].min()) if count else np.inf)
    offer = _Offer(j, -np.inf, None, 0.0, frozenset(words), *floors)
    vs = np.repeat(np.fromiter(words, dtype=np.int64, count=len(words)), k)
    ps = np.tile(np.arange(k), len(words))
    gain = np.where(free[vs], replaced[vs, ps] - track.value, -np.inf)
    keep = np.isfinite(gain) & (gain > 1e-6)
    vs, ps, gain = vs[keep], ps[keep], gain[keep]
    if not vs.size:
        return offer
    losses = np.maximum(value - state.replaced_values(j, vs, ps), 0.0)
    ratios = np.where(spent + losses <= allowed,
                      gain / np.maximum(losses, 1e-12 * max(value, 1e-300)), -np.inf)
    c = int(np.argmax(ratios))
    if np.isfinite(ratios[c]):
        support = state.supports[j].copy()
        support[ps[c]] = vs[c]
        offer.ratio, offer.support, offer.loss = float(ratios[c]), support, float(losses[c])
    return offer


def polish_coherence(state, S, *, share, frozen=(), limits=None,
                     candidates=COHERENCE_CANDIDATES):
    """Trade a little of each topic's variance for coherence, in place.

    Greedy: each step takes the replacement (a word no topic holds in place of one of a topic's
    words) that raises the topic's mean NPMI over the documents of ``S`` the most per unit of
    lambda_max it costs, as long as each topic loses at most ``share`` of its value at the
    start (and at most ``limits[j]`` when given: a number, or a function giving it, called
    only once topic j has a replacement within its share, since the limit can only narrow what
    the share allows); topics in ``frozen`` keep their words.
    Candidates: per topic, the ``candidates`` words best by the NPMI they give and the
    ``candidates`` cheapest by the mu screening, each in every position, measured exactly in
    one batch. Returns the steps taken."""
    B = S.tocsc(copy=True).astype(np.float64)
    B.data[:] = 1.0
    n_documents = B.shape[0]
    df = np.asarray(B.sum(axis=0)).ravel()
    k, K = state.k, len(state.supports)
    tracks = [_Coherence(B, df, n_documents, s) for s in state.supports]
    allowed = np.array([share * value for value in state.values])
    pending = [None] * K  # limits given as functions, not yet called
    for j, limit in enumerate(limits if limits is not None else ()):
        if callable(limit):
            pending[j] = limit
        else:
            # (np.minimum: a NaN limit allows nothing)
            allowed[j] = np.minimum(allowed[j], np.maximum(float(limit), 0.0))
    spent = np.zeros(K)
    steps = 0
    G = state.gains()
    offers = [None] * K  # each topic's best replacement while its candidates stay the same
    tops = [None] * K  # each topic's _row_tops while its words stay the same
    while True:
        free = ~state.used() & state.allowed
        for j in range(K):
            if j not in frozen and offers[j] is None:
                if tops[j] is None:
                    tops[j] = _row_tops(tracks[j], G, j, k)
                offers[j] = _best_replacement(state, j, tracks[j], free, spent[j], allowed[j],
                                              candidates, tops[j])
                if offers[j].support is not None and pending[j] is not None:
                    allowed[j] = np.minimum(allowed[j], np.maximum(float(pending[j]()), 0.0))
                    pending[j] = None
                    offers[j] = _best_replacement(state, j, tracks[j], free, spent[j],
                                                  allowed[j], candidates, tops[j])
        made = [offer for offer in offers if offer is not None and offer.support is not None]
        if not made:
            return steps
        best = max(made, key=lambda offer: offer.ratio)  # (the first topic on ties)
        j = best.topic
        taken = int(best.support[~np.isin(best.support, state.supports[j])][0])
        given = int(state.supports[j][~np.isin(state.supports[j], best.support)][0])
        pair, _ = state.moved({j: best.support})
        state.apply({j: best.support}, pair)
        state.gains([j], out=G)
        tracks[j].update(best.support)
        spent[j] += best.loss
        steps += 1
        offers[j] = tops[j] = None
        # another topic's offer stands unless its candidates change: the word taken was one
        # of them, or the word given back now ranks among them
        for i, offer in enumerate(offers):
            if offer is not None and (taken in offer.words or offer.would_rank(
                    given, tracks[i], G[:, i * k:(i + 1) * k])):
                offers[i] = None
