"""Topics around chosen words: ``include`` (every topic contains them) and ``exclude`` (no topic
does), with bounds and proofs for the constrained problem.

**exclude** masks the words out of the Gram view every solver and bound sees (a ``remove``
view of A made before the first topic): the masked matrix is the whole problem, so every bound
of it is a bound of the constrained problem, and its eigenvalues are the ones reported.

**include** F (|F| <= k) asks for

    OPT_F = max { x^T A' x : ||x|| = 1, |supp x| = k, F subset of supp x }

on every topic's view A'. Every topic contains F: with ``remove`` deflation only a topic's
other words are removed before the next one (the topics share F and are otherwise disjoint),
with ``projection`` deflation the topic is projected out as usual. OPT_F <= OPT, so every
unconstrained bound still holds; this module adds sharper ones (derivations in
docs/certificates.md#topics-around-chosen-words):

* ``top-k diagonal``: trace(A'_T) <= sum_{i in F} A'_ii + the k - |F| largest other A'_ii;
* ``rank-1 + lambda_2``: OPT_1 restricted to supports holding F;
* the forced row bound (:func:`forced_row_bound`): the weighted row bound with the rows and
  columns of F summed exactly and k - |F| free words, the root node of the branch and bound
  with F fixed in.

Solvers that know the constraint (tpower, greedy, exact, auto) keep F in every support they
form; the others' topics are repaired (:func:`repair`): F plus the k - |F| other words of
largest |weight|, then the constrained truncated power method and swap search from there.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np

from spca_cli.bounds import ROW_BOUND_SOURCE, TOP_DIAGONAL_SOURCE, RowBound, _ROUNDING, _proven
from spca_cli.errors import Name, SpcaUsageError

__all__ = ["Constraints", "resolve", "forced_row_bound", "forced_bounds", "forced_screen_bounds",
           "ForcedColumns", "repair", "FORCED_ROW_SOURCE"]

#: The forced row bound's source; it starts with the row bound's, so it counts as a bound that
#: uses no eigenpair (bounds.eigen_free)
FORCED_ROW_SOURCE = f"{ROW_BOUND_SOURCE} (included words fixed)"


@dataclass(frozen=True)
class Constraints:
    """Word indices every topic contains (``include``) and that no topic contains
    (``exclude``), with the words as given for the report."""

    include: np.ndarray
    exclude: np.ndarray
    include_words: tuple = ()
    exclude_words: tuple = ()

    @property
    def forced(self):
        """The included words as an int64 array, or None when there are none."""
        return self.include if self.include.size else None


def _as_words(words):
    if words is None:
        return []
    if isinstance(words, str):
        words = words.split(",")
    return [str(w).strip() for w in words if str(w).strip()]


def _lookup(labels, name, word):
    """The index of ``word`` among ``labels`` (exact, else case-insensitive), or a usage error
    naming the closest words."""
    position = labels.get(word)
    if position is None:
        position = labels.get(word.lower())
    if position is not None:
        return position
    close = difflib.get_close_matches(word.lower(), list(labels), n=1)
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    raise SpcaUsageError([Name(name), f': "{word}" is not in the vocabulary{hint}'])


def resolve(labels, include=None, exclude=None, *, k, n_components, deflation, joint=None):
    """:class:`Constraints` from the words given (a list, or one comma-separated string).

    A word not in the vocabulary (after stop lists and ``min_count``) is a usage error, for
    ``exclude`` too: such a word is most likely a typo, and a silent note would let an
    exclusion that excludes nothing pass. So are more included words than ``k``, a word both
    included and excluded, ``include`` with ``joint``, the name of a joint solver (its topics
    are found together, not one around the words at a time), and ``include`` of k words with
    ``remove`` deflation and several topics (every topic would be the same). Returns None when
    neither is given.
    """
    include, exclude = _as_words(include), _as_words(exclude)
    if not include and not exclude:
        return None
    index = {}
    for position, label in enumerate(labels):
        index.setdefault(str(label), position)
    inc = list(dict.fromkeys(_lookup(index, "include", w) for w in include))
    exc = list(dict.fromkeys(_lookup(index, "exclude", w) for w in exclude))
    if len(inc) > k:
        raise SpcaUsageError([Name("include"), f" names {len(inc)} words, more than ",
                              Name("k"), f" {k}"])
    both = sorted(set(inc) & set(exc))
    if both:
        raise SpcaUsageError([Name("include"), " and ", Name("exclude"),
                              f' both name "{labels[both[0]]}"'])
    if inc and joint:
        raise SpcaUsageError([Name("include"), " needs a solver that finds one topic at a "
                              f"time, not {joint}, which finds its topics together"])
    if len(inc) == k and n_components > 1 and deflation == "remove":
        raise SpcaUsageError([Name("include"), f" names k = {k} words, so every topic would be "
                              "the same; ask for one topic, a larger ", Name("k"), " or ",
                              Name("deflation"), " projection"])
    return Constraints(np.asarray(sorted(inc), dtype=np.int64),
                       np.asarray(sorted(exc), dtype=np.int64),
                       tuple(str(labels[i]) for i in inc), tuple(str(labels[i]) for i in exc))


# ---------------------------------------------------------------------- bounds
def _top_sum(values, count):
    count = min(int(count), values.size)
    if count <= 0:
        return 0.0
    return float(np.sum(np.partition(values, values.size - count)[values.size - count:]))


def forced_bounds(A, k, eigen, forced):
    """The bounds of :func:`spca_cli.bounds.single_bounds` that the included words ``forced``
    sharpen, for supports T of k active words holding them:

    * ``top-k diagonal``: lambda_max(A'_T) <= trace(A'_T) <= sum_F A'_ii + the k - |F| largest
      A'_ii of the other active words (plus (k - 1) eps when only A' + eps I is PSD);
    * ``rank-1 + lambda_2``: x^T A' x <= x^T A_1 x + lambda_2 for unit x (Lemma 3 of the 2013
      paper), and x^T A_1 x <= lambda_1 ||v1_T||^2 <= lambda_1 (sum_F v1_i^2 + the k - |F|
      largest other v1_i^2); the residual terms are those of the unconstrained bound.
    """
    forced = np.asarray(forced, dtype=np.int64)
    free = k - forced.size
    active = A.active().copy()
    active[forced] = False
    diag = A.diagonal()
    top = float(np.sum(diag[forced])) + _top_sum(diag[active], free)
    out = [(top + max(int(k) - 1, 0) * A.psd_margin, TOP_DIAGONAL_SOURCE)]
    if len(eigen.values) >= 2:
        v1_sq = eigen.vectors[:, 0] ** 2
        opt1 = float(eigen.values[0] * (float(np.sum(v1_sq[forced]))
                                        + _top_sum(v1_sq[active], free)))
        slack = float(2.0 * eigen.residuals[0])
        out.append((opt1 + eigen.tail_ceiling(1) + slack, "rank-1 + lambda_2"))
    return out


class ForcedColumns:
    """|A'[model words, F]|, exactly, for a :class:`~spca_cli.bounds.RowModel` of the view.

    ``pos`` holds each included word's position among the model's words (-1 for a word outside
    the model: a zero row of the PSD A', which adds nothing to any row sum), ``cols`` the
    (m, |F|) columns."""

    def __init__(self, A, model, forced):
        self.forced = np.asarray(forced, dtype=np.int64)
        self.size = self.forced.size
        where = np.searchsorted(model.words, self.forced)
        where = np.minimum(where, max(model.size - 1, 0))
        found = (model.size > 0) & (model.words[where] == self.forced) if model.size else \
            np.zeros(self.size, dtype=bool)
        self.pos = np.where(found, where, -1).astype(np.int64)
        if self.size and model.size:
            self.cols = np.abs(A.columns(self.forced)[model.words])
        else:
            self.cols = np.zeros((model.size, self.size))

    def restrict(self, keep):
        """The columns on the model's words where ``keep`` is True (the included ones must be
        kept)."""
        new = object.__new__(ForcedColumns)
        new.forced, new.size = self.forced, self.size
        new_pos = np.cumsum(keep) - 1
        new.pos = np.where(self.pos >= 0, new_pos[np.maximum(self.pos, 0)], -1).astype(np.int64)
        new.cols = self.cols[keep]
        return new

    def mask(self, m):
        """Boolean (m,): True at the included words of the model."""
        out = np.zeros(m, dtype=bool)
        out[self.pos[self.pos >= 0]] = True
        return out


def _forced_sums(model, fc, w, free):
    """T(w)_i of the forced row bound for every model word i, and which rows count.

    For a support T = F + J, |J| = ``free``, and a row i of T:
    sum_{j in T} |A'_ij| w_j = A'_ii w_i + sum_{j in F, j != i} |A'_ij| w_j
    + sum_{j in J, j != i} |A'_ij| w_j, and the last sum is at most the ``free`` (i in F) or
    ``free`` - 1 (i not in F) largest |A'_ij| w_j over the words j outside F. Rows outside F
    count only when ``free`` >= 1 (else T = F)."""
    m = model.size
    inside = fc.mask(m)
    present = fc.pos >= 0
    wF = np.zeros(fc.size)
    wF[present] = w[fc.pos[present]]
    fixed = fc.cols @ wF
    v = np.where(inside, 0.0, w)  # words of F take no free slot
    T = model.diag * w + fixed
    if free >= 2:
        T = T + model.top_sums(v, free - 1)
    for col in np.flatnonzero(present):
        i = fc.pos[col]
        # its own column's entry is its diagonal, counted once, in diag * w
        T[i] = (model.diag[i] * w[i] + fixed[i] - fc.cols[i, col] * w[i]
                + _top_sum(fc.cols[:, col] * v, free))
    counts = inside | (free >= 1)
    return T, counts


def forced_row_bound(model, fc, k, *, start=None, max_iter=200, rtol=1e-6, attained=None):
    """max lambda_max(A'_T) over supports T of k words holding F <= U_F(w) for every w > 0.

    As for :func:`spca_cli.bounds.weighted_row_bound` (Perron-Frobenius, the similarity
    D^-1 |A'_T| D, the infinity norm), every row sum over T is bounded by
    :func:`_forced_sums`: the included words' entries are summed exactly and only the other
    k - |F| words are chosen freely. U_F(w) = max over the rows that count of T(w)_i / w_i; the
    iteration w <- T(w) / max T(w) lowers it and the smallest value seen is returned (with the
    rounding slack of the unconstrained bound). ``attained`` stops it once the bound proves
    that value optimal. ``fc``: the model's :class:`ForcedColumns`.
    """
    k = int(k)
    free = k - fc.size
    if model.size == 0:
        return RowBound(0.0, np.zeros(0), np.zeros(0), 0)
    w = np.array(start if start is not None else model.sqd, dtype=np.float64)
    w = np.maximum(w / max(w.max(), 1e-300), 1e-300)
    slack = 1.0 + _ROUNDING * max(k, 1)
    best = RowBound(np.inf, w, np.full(model.size, np.inf), 0)
    since = 0
    for it in range(1, int(max_iter) + 1):
        T, counts = _forced_sums(model, fc, w, free)
        ratios = np.where(counts, T / w, -np.inf)
        U = float(max(ratios.max(initial=0.0), 0.0)) * slack
        best.iterations = it
        if U < best.value * (1.0 - 1e-6):
            since = 0
        else:
            since += 1
        if U < best.value:
            best.value, best.weights, best.ratios = U, w, ratios
        counted = ratios[counts]
        if counted.size == 0 or best.value - float(counted.min()) <= rtol * best.value:
            break
        if attained is not None and _proven(attained, best.value):
            break
        if since >= 5:
            break
        top = T[counts].max(initial=0.0)
        if top <= 0:
            break
        w = np.maximum(T / top, 1e-300)
    return best


def forced_screen_bounds(model, fc, k, rounding, start=None, iterations=12):
    """Per model word i: an upper bound on lambda_max of every support of k words holding F and
    i (+inf for the words of F, which are never screened out), and the weights of the inner
    iteration.

    With w' from the (k-1)-word forced iteration and r' = U_F,(k-1)(w'): for T = F + i + J,
    T' = T - i is a (k-1)-word support holding F, so with w'_i replaced by t a row l != i of T
    sums to at most r' w'_l + |A'_li| t, and row i to A'_ii t + s_i, where
    s_i = sum_F |A'_ij| w'_j + the k - 1 - |F| largest other |A'_ij| w'_j (j != i). So
    lambda_max(A'_T) <= max(r' + c_i t, A'_ii + s_i / t), c_i = max_{l != i} |A'_li| / w'_l,
    minimised over t > 0 where the two are equal (the unconstrained screening of
    :mod:`spca_cli.solvers.exact`, with F held in)."""
    m = model.size
    free = k - fc.size
    inside = fc.mask(m)
    if free <= 0:
        return np.where(inside, np.inf, -np.inf), None
    inner = forced_row_bound(model, fc, k - 1, start=start, max_iter=iterations, rtol=1e-4)
    r, w = inner.value, inner.weights
    present = fc.pos >= 0
    wF = np.zeros(fc.size)
    wF[present] = w[fc.pos[present]]
    v = np.where(inside, 0.0, w)
    s = fc.cols @ wF + (model.top_sums(v, free - 1) if free >= 2 else 0.0)
    c = model.top_sums(1.0 / w, 1)
    q = r - model.diag
    disc = np.sqrt(q * q + 4.0 * c * s)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(q >= 0, 2.0 * s / (q + disc), (disc - q) / (2.0 * c))
        bound = np.where(c > 0, r + c * t, np.maximum(r, model.diag))
    bound = np.where(np.isfinite(bound), bound, np.maximum(r, model.diag + s))
    return np.where(inside, np.inf, bound * rounding), w


# ---------------------------------------------------------------------- repair
def repair(A, k, forced, out, *, random_state=0):
    """A feasible topic from another solver's ``out`` (a SolverOutput on ``A``): F, then the
    k - |F| other words of largest |weight| (then of largest A'_ii), then the constrained
    truncated power method with its swap search from there; the better of that and the plain
    repaired support is returned. ``out``'s bounds, info and notes are kept (its bounds bound
    the unconstrained optimum, so the constrained one too); ``exact`` becomes None: the
    solver did not solve the constrained problem."""
    from spca_cli.solvers._base import finish_component
    from spca_cli.solvers.tpower import tpower

    forced = np.asarray(forced, dtype=np.int64)
    active = A.active()
    order = [int(i) for i in out.indices[np.argsort(-np.abs(out.weights), kind="stable")]]
    chosen = list(forced.tolist())
    for i in order:
        if len(chosen) == k:
            break
        if i not in chosen and active[i]:
            chosen.append(i)
    if len(chosen) < k:
        diag = np.where(active, A.diagonal(), -np.inf)
        for i in np.argsort(-diag, kind="stable").tolist():
            if len(chosen) == k:
                break
            if i not in chosen:
                chosen.append(i)
    start = finish_component(A, chosen)
    polished = tpower(A, k, init="spannogram", warm_start=(start.indices, start.weights),
                      random_state=random_state, forced=forced)
    best = polished if polished.value > start.value else start
    best.bounds, best.notes = list(out.bounds), list(out.notes)
    best.info = {**out.info, "repaired": True}
    best.exact, best.time_limited = None, out.time_limited
    return best
