"""Certified upper bounds on the best k-sparse explained variance.

Every function returns ``(value, bound_source)`` pairs; each value is provably >= the optimum of
the problem it bounds, so ``certified_ratio = attained / bound`` says "this topic is at least this
close to optimal". Solvers add their own, tighter bounds (e.g. the spannogram's
OPT_d + lambda_{d+1}, Lemma 3 of the 2013 paper); :func:`tightest` picks the smallest.

Eigenvalues from an iterative eigensolver are Ritz values, which can sit slightly *below* the
true eigenvalue, and a solver can miss a copy of a repeated eigenvalue altogether. Every bound
here takes lambda_i through :attr:`~spca_cli.spectrum.Eigen.ceilings`, which add the residual
norm ||A v - theta v|| where no copy can be missing before the pair and fall back to what is
known where one could (docs/certificates.md).

Bounds that hold only for PSD matrices (a trace bounds lambda_max; Cauchy-Schwarz bounds
|A_ij|) add what ``A.psd_margin`` costs them, so a matrix PSD only up to rounding (a ``.npy``
whose smallest eigenvalue is -1e-9 lambda_max) gets bounds that hold for it.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np

from spca_cli import threads
from spca_cli.kernels.rowbound import (PREFIX, STAR_PREFIX, gather_rows, offdiag_top_sums,
                                      outside_columns, perron_weights, prefix_values,
                                      restrict_outside_columns, restrict_prefixes, row_prefixes,
                                      star_descent, star_rescale, star_rows, star_values)

__all__ = ["single_bounds", "total_bounds", "star_total_bound", "star_model", "row_certificate", "RowCertificate", "tightest", "certified_ratio",
           "first_exact_words",
           "eigen_bounds_could_tighten", "below_attained", "eigen_free", "uses_eigenpairs", "trusted",
           "cover_rounding",
           "RowModel",
           "RowBound", "weighted_row_bound", "ROW_BOUND_SOURCE"]

ROW_BOUND_SOURCE = "weighted row sums"
TOP_DIAGONAL_SOURCE = "top-k diagonal"
# Bound sources that use no eigenpair (the exact solver's all start with "branch and bound";
# "top-" is the top-k diagonal of a topic and the top-Kk diagonal of a total); any other source
# is taken to use them, which at worst asks for an unneeded refinement
_EIGEN_FREE_PREFIXES = (ROW_BOUND_SOURCE, "top-", "branch and bound")

#: Words whose rows of |A'| the certificate keeps exactly (the rest: Cauchy-Schwarz). On KOS
#: and the airline tweets 128 already gives the same bound to 1e-8 as 512.
EXACT_ROWS = 256

# More exact rows while the Cauchy-Schwarz pairs lift the bound by more than this share; at
# most this many stored entries (4 bytes each when float32 holds them exactly, else 8) in all.
_CS_GAIN = 1e-3
_EXACT_ENTRIES = 1 << 25
# More exact rows come in steps, a quarter of the entries first, then half: on 200,000
# clustered tweets (47,000 words) 354 rows gave the later topics the same certified ratios as
# 709 (to 1e-7) at half the cost per weight step (and on both 1M-tweet generators of
# bench_targets all ten topics stay at 1.0); the fortunes' views (14,503 words) certify four of
# five topics the same with 578 rows as with 1,156 and the fifth at 0.9916 instead of 0.9940,
# for half the memory (67 MB less a run, which a first touch makes cost 0.1-0.3 s) and half the
# work per weight step. A step that gives no more rows than the model has is passed over (a
# vocabulary above 32,768 words starts at half); more rows only while the test still asks.
_ESCALATION_ENTRIES = (_EXACT_ENTRIES // 4, _EXACT_ENTRIES // 2, _EXACT_ENTRIES)
_COLUMN_BLOCK = 64  # exact rows formed per block when a model is built
# Exact entries from which a model sorts its rows' prefixes (RowModel.prefixes), a quarter of a
# row long at most: below, reading whole rows costs less than sorting them once, unless at most
# _SPARSE_SHARE of the entries are nonzero (then a row's prefix is its few nonzeros, and a weight
# step reads those alone): from _SPARSE_PREFIX_ENTRIES, below which a model is read in
# microseconds. The fortunes' categories (exact rows 4-19% nonzero) spent 4.5 s of 12 in weight
# steps reading whole rows.
_PREFIX_ENTRIES = 1 << 20
_SPARSE_PREFIX_ENTRIES = 1 << 14
_SPARSE_SHARE = 0.25

# Relative slack added to every computed row bound: a sum of k rounded nonnegative terms is
# within k * 2^-52 of the exact sum, so (1 + 64 k eps) keeps the bound above the real number.
_ROUNDING = 64 * np.finfo(float).eps

# The weight iteration stops after _STALL steps without a relative gain of _STALL_GAIN: words
# with no strong partner keep min_i T_i / w_i low, so the ratios may never meet within rtol.
_STALL = 5
_STALL_GAIN = 1e-5
_INNER_RTOL = 0.25
_INNER_SHARE = 0.1
_INNER_STEPS = 100
_LINEAR_MISSES = 3
_SETTLES_ABOVE = 1e-4


def _top_diagonal(A, diag, k):
    """sum of the k largest of ``diag`` (the view's active diagonal): for PSD A' and a support
    I of k words, lambda_max(A'_I) <= trace(A'_I). When only A' + eps I is PSD
    (``A.psd_margin``), lambda_max(A'_I) + eps <= trace(A'_I) + k eps adds (k - 1) eps."""
    return _top_sum(diag, k) + max(int(k) - 1, 0) * A.psd_margin


def _top_sum(values, count):
    count = min(int(count), values.size)
    if count <= 0:
        return 0.0
    return float(np.sum(np.partition(values, values.size - count)[values.size - count:]))


def single_bounds(A, k, eigen, *, row=None):
    """Upper bounds on max { x^T A' x : ||x|| = 1, ||x||_0 <= k } for the view ``A``.

    * ``lambda_1``: dropping the sparsity constraint can only help.
    * ``top-k diagonal``: for PSD A and support I, lambda_max(A_I) <= trace(A_I) <= sum of the
      k largest diagonal entries.
    * ``rank-1 + lambda_2``: the spannogram's data-dependent bound with d = 1, which costs
      nothing once v_1 is known.
    * ``weighted row sums``: :func:`weighted_row_bound` on |A'|, the sharp one on co-occurrence
      matrices (their spectra decay too slowly for the eigenvalue bounds to be tight).
    """
    diag = A.diagonal()[A.active()]
    out = [(eigen.ceiling(0), "lambda_1"), (_top_diagonal(A, diag, k), TOP_DIAGONAL_SOURCE)]
    if len(eigen.values) >= 2:
        # Lemma 3 of the 2013 paper with d = 1: OPT <= OPT_1 + lambda_2, and OPT_1 is exact and
        # free (thresholding: lambda_1 times the k largest v1_i^2). The eigensolver's error
        # enters to first order through the residuals (r_2 + 2 r_1), as for the spannogram;
        # r_2 is in lambda_2's ceiling
        v1_sq = eigen.vectors[:, 0] ** 2
        opt1 = float(eigen.values[0] * _top_sum(v1_sq[A.active()], k))
        slack = float(2.0 * eigen.residuals[0])
        out.append((opt1 + eigen.tail_ceiling(1) + slack, "rank-1 + lambda_2"))
    if row is None:
        row = row_certificate(A, k).bound
    return out + [(row.value, ROW_BOUND_SOURCE)]


class RowCertificate:
    """The weighted row bound of one view and k: its :class:`RowModel` and :class:`RowBound`
    (the exact and auto solvers start their search from both).

    A certificate computed on a :class:`MaskedModel` (a view of a larger model) forms its own
    model only when ``model`` is asked for: most of the set's views are certified by the
    bound alone, and a copy of their exact rows (67 MB a view on the fortunes) would serve
    nothing."""

    def __init__(self, model, bound):
        self._model, self.bound = model, bound

    @property
    def model(self):
        if isinstance(self._model, MaskedModel):
            self._model = self._model.restricted()
        return self._model

    @property
    def words(self):
        """The words of the model, which the bound's weights are on (a masked model's rows are
        not formed for them)."""
        return self._model.words


# The weight iteration of the certificate stops when U(w) is within this share of
# min_i T(w)_i / w_i, the least any further step could reach: a bound 1e-4 above the best the
# iteration can give moves a certified ratio by at most 1e-4, and on 200,000 clustered tweets it
# saves up to two thirds of the steps, each a pass over n x (exact rows) entries.
CERTIFICATE_RTOL = 1e-4


class SharedRows:
    """Exact rows of an undeflated A formed once for the certificates of its ``remove`` views
    (the set's: A without the other topics' words).

    A view that needs more exact rows than its ``previous`` certificate holds takes them from
    A's model with that many rows plus the words the view removes, restricted to the view's
    words (A'_ij = A_ij between words both active), instead of forming its own and sorting
    its rows again. Any exact rows give a valid bound: this only changes the work.

    :meth:`ahead` forms such a model on a second thread before a view asks for it."""

    def __init__(self, A):
        self.A = A
        self._models = {}  # exact rows -> A's model, or a Future of it (ahead)

    def model(self, view, rows):
        """The view's model with at least ``rows`` exact rows (fewer when it has fewer words)."""
        size = rows + self._removed(view)
        base = self._models.get(size)
        if base is None:
            base = self._models[size] = self._formed(size)
        elif isinstance(base, Future):  # (formed ahead: taken once it is done)
            base = self._models[size] = base.result()
        keep = view.active()[base.words] & (view.diagonal()[base.words] + view.psd_margin > 0)
        return MaskedModel(base, keep)

    def ahead(self, view, k, attained, previous):
        """Start forming, beside the run (:func:`~spca_cli.threads.beside`), the model that
        :func:`row_certificate` of the view (``k``, ``attained``, ``previous``, this as
        ``shared``) takes before its first weight step: when its start model (``previous``'s
        on the view's words) has a floor above ``attained`` and can take more rows. Views of
        the same size take the same model, so one view stands for the set's. Only where a
        second thread runs kernels (:func:`~spca_cli.threads.kernels_run_beside`) and A's
        columns are the same numbers whichever thread forms them first
        (:meth:`~spca_cli.matrix.Gram.exact_columns`): the columns the main thread reads
        meanwhile do not depend on when this runs. The fortunes' set views take 578 rows this
        way, a model of 618 rows that takes 0.15-0.19 s to form and sort."""
        if not (threads.kernels_run_beside() and self.A.exact_columns()):
            return  # (formed when a view asks: it may not)
        model, rows, _, final = _start_model(view, previous, consume_previous=False)
        more = _more_rows(model, rows)
        if not _grows(model, rows, more, final) or not _below_floor(model, k, attained):
            return
        size = more + self._removed(view)
        if size not in self._models:
            self._models[size] = threads.beside(self._formed, size)

    def _removed(self, view):
        return int(self.A.n - np.count_nonzero(view.active()))

    def _formed(self, size):
        base = RowModel.of(self.A, exact_rows=size)
        # sorted here once: each view's model restricts them (a sort of its own rows per
        # view took 0.43 s of the fortunes' 1.65 s of view certificates)
        base.prefixes, base.columns  # noqa: B018 (made on first use)
        return base


def _start_model(A, previous, consume_previous):
    """``(model, rows, weights, final)`` a certificate of the ``remove`` view ``A`` starts
    from: ``previous``'s model on the view's words (None without one, or for a projection
    view), the exact rows it asks for at least, the weights it starts from (None: its own
    start) and whether its exact rows are final (see :func:`row_certificate`)."""
    rows, weights, model, final = EXACT_ROWS, None, None, False
    if previous is not None and getattr(A, "X", None) is None:
        # (a masked model as it is: its ``model`` would be a copy of its rows)
        old = previous.model if consume_previous else previous._model
        keep = A.active()[old.words] & (A.diagonal()[old.words] + A.psd_margin > 0)
        model = (old.restrict(keep, in_place=True) if consume_previous
                 else MaskedModel(old, keep))
        rows = max(rows, model.hrow.size)
        final = old.hrow.size > EXACT_ROWS  # its rows were chosen for this vocabulary
        if final:
            # warm weights only on the full set of exact rows: from a narrow model's weights
            # the iteration settled on a row of H (23,707 against 23,451 from a cold start on
            # a clustered topic) where the test below sees no reason to add rows
            weights = previous.bound.weights[keep]
    return model, rows, weights, final


def _grows(model, rows, more, final):
    """Whether a certificate on ``model`` (``rows`` exact rows asked) may take ``more``."""
    return not (model.is_exact or final or more <= rows)


def _below_floor(model, k, attained):
    """Whether no weights take ``model``'s bound down to ``attained`` (its floor is above it):
    more exact rows at once (a clustered topic's 7 weight steps at 246 rows stayed exactly at
    the floor, 221,491, before the Cauchy-Schwarz test asked for rows)."""
    return attained is not None and model.floor(k) > attained


def row_certificate(A, k, *, totals=(), previous=None, attained=None, shared=None,
                    consume_previous=False, near=None):
    """:func:`weighted_row_bound` of the view ``A``, with as many exact rows as it needs.

    It starts with :data:`EXACT_ROWS` exact rows. Pairs of words outside them are bounded by
    Cauchy-Schwarz, sqrt(A'_ii A'_jj), which is far above the true co-occurrence when the
    diagonal is flat (short binary documents: every frequent word has a large A'_ii). When the
    bound at the weights found would drop by more than :data:`_CS_GAIN` with those pairs taken
    as 0, it is computed again (warm-started) with as many exact rows as a quarter of
    :data:`_EXACT_ENTRIES` stored entries allow, then half, then all of them (every row up to
    about 5,800 words), each while the same test still asks for it
    (:data:`_ESCALATION_ENTRIES`). On the airline tweets' later topics this lifts the
    certified ratio from 0.61-0.83 to 0.98-0.99; on KOS, whose counts make the diagonal steep,
    the first try already suffices.

    ``previous``, the certificate of the view this one was made from by removing words (remove
    deflation), makes the next one cheap: its model restricted to the words still active is
    exactly this view's model with the same exact rows (A'_ij is unchanged between words both
    still active), so no column of A is formed again, and its weights start the iteration.
    On 200,000 clustered tweets this took a later topic's certificate from 10.5 s to 4 s at the
    same certified ratio (1.0). Any weights and any exact rows give a valid bound; this only
    changes how much work finds a tight one.

    ``attained``, the value of the topic found on this view (when the solver ran first), ends
    the work once the bound meets it: the weight iteration stops there and no exact rows are
    added (:func:`weighted_row_bound`). On 1M generated tweets the four later topics are
    proven optimal this way in fewer weight steps, each a pass over n x (exact rows) entries.

    ``shared``, a :class:`SharedRows` of the A this ``remove`` view was made from, provides the
    more exact rows a view asks for.

    ``consume_previous``: ``previous`` is not used again and the caller will read this
    certificate's model (remove deflation's next view with a solver that searches from it), so
    its model is restricted in its own memory (:meth:`RowModel.restrict`); otherwise this view
    is a :class:`MaskedModel` of it, which copies nothing (dupes-1M: 0.35 s of four
    restrictions of 197,316 words).

    ``near``, positive weights on all of A's words (a view that differs from this one in a few
    words: its certificate's, see :class:`~spca_cli.topics._Views`), start the linearized
    steps where ``previous`` gives no weights: the set's ten view certificates of the fortunes
    take 78 steps from there instead of 90 from cold, the KOS sample's 59 instead of 70.
    """
    # (final: no more rows, the restricted rows of an escalated view are kept)
    model, rows, weights, final = _start_model(A, previous, consume_previous)
    prior = None
    if shared is not None and getattr(A, "X", None) is not None:
        shared = None  # (a projected view's entries are not A's)
    while True:
        if model is None:
            if shared is not None and rows > EXACT_ROWS:
                model = shared.model(A, rows)
            else:
                model = RowModel.of(A, exact_rows=rows)
        more = _more_rows(model, rows)
        can_grow = _grows(model, rows, more, final)
        if can_grow and _below_floor(model, k, attained):
            rows, model = more, None
            continue
        start = None
        if weights is not None:
            start = weights if prior is None else np.interp(model.words, prior.words, weights)
        elif near is not None:
            start = near[model.words]
        # a cold start takes linearized steps (warm weights are near their end already); they
        # land near the least U in a few steps, and a tenth of the tolerance costs a step or
        # two more and leaves no certificate below where the plain steps left it (the four real
        # corpora's default topics). So does a start from a nearby view's weights, which are not
        # near this view's end (plain steps from them take 12-44 steps on the fortunes' views).
        # Not with totals: their sum of ratios is K U at equal ratios
        linear = weights is None and not totals
        result = weighted_row_bound(model, k, totals=totals, start=start, attained=attained,
                                    rtol=CERTIFICATE_RTOL / 10 if linear else CERTIFICATE_RTOL,
                                    linearize=linear)
        if not can_grow:
            break
        if attained is not None and _proven(attained, result.value):
            break
        # with the Cauchy-Schwarz pairs taken as 0 the same weights give a lower estimate of
        # what exact rows could reach; when it is close, more exact rows cannot help
        if _rows_cannot_help(model, k, result):
            break
        prior, weights = model, result.weights
        rows, model = more, None
    return RowCertificate(model, result)


def _rows_cannot_help(model, k, result):
    """Whether U_0 = max_i T_0(w)_i / w_i at the weights of ``result`` (a
    :func:`weighted_row_bound` on ``model``), T_0 the row sums with the pairs outside the exact
    rows taken as 0, is within :data:`_CS_GAIN` of ``result.value``: then more exact rows
    cannot take the bound much lower. An exact row reads no such pair (T_0 = T there), so
    when the exact rows' own ratios already reach that level, so does U_0, without a pass over
    the other rows (the iteration equalises the ratios: every certificate of the four real
    corpora ends so)."""
    level = result.value * (1.0 - _CS_GAIN)
    on_exact = result.ratios[model.hrow]
    if on_exact.size and np.isfinite(level) and float(on_exact.max()) >= level:
        return True
    w = result.weights
    return float(np.max((model.diag * w + model.top_sums(w, k - 1, cauchy_schwarz=False))
                        / w)) >= level


def first_exact_words(A, rows=EXACT_ROWS):
    """The words whose columns of the view ``A`` its first certificate forms (the exact rows of
    :func:`row_certificate`'s first model), largest diagonal first. The first eigen step of a
    topics run starts from them (``coordinates`` of :func:`~spca_cli.spectrum.top_eigenpairs`),
    since they are formed anyway."""
    words = _model_words(A)
    return words[_largest_first(A.diagonal()[words], rows)]


def _model_words(A):
    """The words a :class:`RowModel` of the view keeps: active, with A'_ii + eps > 0."""
    return np.flatnonzero(A.active() & (A.diagonal() + A.psd_margin > 0))


def _largest_first(diag, count):
    """Positions of the ``count`` largest entries of ``diag``, largest first (ties: the first)."""
    return np.argsort(-diag, kind="stable")[:min(diag.size, int(count))]


def _more_rows(model, rows):
    """The exact rows of the next model: as many as the first step of
    :data:`_ESCALATION_ENTRIES` that allows more than ``rows`` does (``rows`` when none does).

    (The step is chosen by the rows it gives, not by ``size * rows`` below it: 2^24 // size
    rows hold fewer than 2^24 entries whenever size does not divide it, so that test chose
    the same step again and the same model was built for ever.)"""
    if model.size == 0:  # a view without a nonzero word: nothing to add
        return rows
    if model.size * model.size <= _EXACT_ENTRIES and model.size > rows:
        # every row fits: exact at once. The restricted models of later views and the search's
        # screening then use these rows instead of forming their own (on the airline tweets a
        # first step of 3,191 rows was followed by a screening model of all 5,267)
        return model.size
    for budget in _ESCALATION_ENTRIES:
        more = min(model.size, budget // model.size)
        if more > rows:
            return more
    return rows


#: A bound within this relative distance of a value attained proves that value optimal (the
#: rounding tolerance of :func:`certified_ratio`).
PROVEN_RTOL = 1e-9


def _proven(attained, bound):
    return bound <= attained * (1.0 + PROVEN_RTOL)


def total_bounds(A, k, n_components, eigen, *, row=None, model=None, lower=0.0, star=None):
    """Upper bounds on max sum_j x_j^T A x_j over K = ``n_components`` disjoint k-sparse unit
    vectors (joint solvers and remove deflation).

    Each is a ``(value, source)`` pair; every value is >= that optimum, with the stated proof.
    Disjoint supports make the x_j orthonormal, and their union U has K k words.

    * ``sum of top-K eigenvalues``: Ky Fan's maximum principle, plus the eigensolver residuals.
    * ``top-Kk diagonal``: x_j^T A x_j <= lambda_max(A_Ij) <= trace(A_Ij) for PSD A, so the
      total is at most trace(A_U) <= the sum of the K k largest diagonal entries.
    * ``rank-p split``: A = A_p + E with A_p = sum_{i<=p} theta_i v_i v_i^T and E = A - A_p,
      both PSD (up to the eigensolver residuals). The total splits as sum_j x_j^T A_p x_j +
      sum_j x_j^T E x_j, and each part is bounded by Ky Fan or by the trace of its own diagonal,
      whichever is smaller:  min(theta_1 + ... + theta_min(p,K), top-Kk diag(A_p))
      + min(lambda_{p+1} + ... + lambda_{p+K}, top-Kk diag(E)). The first term is a provable
      upper bound on the sketch optimum OPT_p, so this is the "OPT_sketch + spectral tail"
      bound of the bipartite paper's Remark 9.2 with an OPT_sketch we can certify. Residuals:
      with R the residual matrix of the first p pairs and P the projector on them,
      E = P_perp A P_perp + D with ||D||_2 <= 3 ||R||_F =: delta (D collects P A P - A_p and the
      two cross terms P A P_perp, each of norm <= ||R||), so each x_j^T E x_j carries + delta,
      and each diagonal entry of E differs from that of the PSD P_perp A P_perp by <= delta.
    * ``weighted row sums (K largest ratios)``: from ``row``, a :class:`RowCertificate` of A
      with ``totals`` holding K (:func:`weighted_row_bound`).
    * ``weighted row sums of disjoint supports``: from ``model``, the :class:`RowModel` of A
      (:func:`star_total_bound`; ``lower``, a total some set attains, steers its prices), or
      ``star``, that bound made already (the set's, beside its last steps:
      :func:`spca_cli.threads.beside`).

    Eigenvalue-based terms take each lambda_i's ceiling (:attr:`~spca_cli.spectrum.Eigen.
    ceilings`): theta_i + r_i where no copy of a repeated eigenvalue can be missing before it,
    a weaker valid value where one could.
    """
    K = int(n_components)
    theta = np.asarray(eigen.values, dtype=np.float64)
    resid = np.asarray(eigen.residuals, dtype=np.float64)
    active = A.active()
    diag = A.diagonal()
    # each of the K supports' trace bound gives up (k - 1) eps when only A' + eps I is PSD
    margin = K * max(k - 1, 0) * A.psd_margin
    out = []
    if theta.size >= K:
        out.append((eigen.ceiling_sum(0, K), f"sum of top-{K} eigenvalues"))
    out.append((_top_sum(diag[active], K * k) + margin, f"top-{K * k} diagonal"))
    best = None
    diag_p = np.zeros_like(diag)
    for p in range(1, theta.size):
        v = eigen.vectors[:, p - 1]
        diag_p = diag_p + theta[p - 1] * v * v  # diag(A_p), accumulated
        delta = 3.0 * float(np.sqrt(np.sum(resid[:p] ** 2)))
        head = min(float(np.sum(theta[:min(p, K)])), _top_sum(diag_p[active], K * k))
        tail_diag = (_top_sum(np.maximum(diag - diag_p, 0.0)[active], K * k) + K * k * delta
                     + margin)
        # E <= A' - A_j for the j pairs known to be leading (Eigen.tail_ceiling): its i-th
        # eigenvalue is at most lambda_{j+i}
        tail = min(eigen.ceiling_sum(min(p, eigen.known), K), tail_diag) + K * delta
        if best is None or head + tail < best[0]:
            best = (head + tail, p)
    if best is not None:
        out.append((best[0], f"rank-{best[1]} split: sketch part + spectral tail"))
    if row is not None and K in row.totals:
        out.append((row.totals[K], f"{ROW_BOUND_SOURCE} ({K} largest ratios)"))
    if star is not None:
        out.append((float(star), STAR_SOURCE))
    elif model is not None and K >= 2:
        out.append((star_total_bound(model, k, K, lower=lower, A=A), STAR_SOURCE))
    return out


#: Words a disjoint-stars bound (:func:`star_total_bound`) prices first (its candidates),
#: while their rows read at most _STAR_ENTRIES entries of |A'| (candidates x words: 400 x
#: 14,543 on the fortunes); when a ratio outside them is among the K terms of the best bound,
#: they grow to as many as _STAR_WIDE_ENTRIES allow (816 x 5,135 on the KOS sample).
STAR_ROWS = 400
_STAR_ENTRIES, _STAR_WIDE_ENTRIES = 1 << 23, 1 << 22
#: Subgradient steps of the prices at the first weights at most; they stop after
#: _STAR_PATIENCE steps that did not lower the bound by _STAR_GAIN.
_STAR_STEPS = 60
_STAR_PATIENCE, _STAR_GAIN = 10, 1e-4
#: Joint steps of the prices and the candidates' log-weights after those, the log-weights'
#: step _STAR_TILT / sqrt(step + 1) long; every _STAR_RECOUNT steps the candidates' rows and
#: the ratios outside them are computed again at the new weights, and the _STAR_TRACKED * K
#: largest of those ratios follow the weights between. On the KOS sample, KOS, the fortunes
#: and the airline tweets these certify 0.917, 0.910, 0.934 and 0.953 of the default set in
#: 0.13-0.26 s; recounting every 40 steps, no more in 1.5 times as long; 200 steps of 1.0
#: every 50, 0.907-0.948.
_STAR_REWEIGH_STEPS, _STAR_TILT, _STAR_RECOUNT, _STAR_TRACKED = 300, 0.8, 75, 4
#: The joint steps stop sooner after this many steps that did not lower the bound by
#: _STAR_GAIN (on the four corpora above it changes no bound)
_STAR_JOINT_PATIENCE = 60
STAR_SOURCE = "weighted row sums of disjoint supports"


def star_total_bound(model, k, n_components, *, lower=0.0, A=None, rows=None,
                     steps=_STAR_STEPS, reweigh_steps=_STAR_REWEIGH_STEPS):
    """An upper bound on max sum_j lambda_max(A'[T_j, T_j]) over K = ``n_components`` disjoint
    supports of at most k words, from the weighted row sums of ``model`` (:class:`RowModel`,
    its Cauchy-Schwarz pairs included) and the supports' disjointness.

    For weights w > 0 and a support T, lambda_max(A'_T) <= max_{i in T} R_i(T) with
    R_i(T) = |A'_ii| + sum_{l in T, l != i} |A'_il| w_l / w_i (Perron-Frobenius and
    Collatz-Wielandt, as :func:`weighted_row_bound`). Give each topic T_j of a disjoint set its
    maximising word i_j (its anchor): the anchors and their partners T_j - i_j (at most k - 1
    each) are distinct words, so the set's total is at most the best "star packing": K distinct
    anchors, each with at most k - 1 partners, no word used twice, worth sum_j R_{i_j}(T_j).
    For prices pi >= 0 on the words, adding sum_l pi_l (1 - uses_l) >= 0 and dropping "no word
    used twice" (a Lagrangian relaxation) bounds that packing by

        L(w, pi) = sum_l pi_l + (the K largest over words i of v_i(w, pi)),
        v_i(w, pi) = |A'_ii| - pi_i + (the k - 1 largest positive P_il - pi_l, l != i),
        P_il = |A'_il| w_l / w_i.

    With u = log w, every P_il - pi_l is convex in (u, pi), and so are their positive parts,
    the sums of the largest of them and L: one convex function of the prices and the
    log-weights, any point of which is a bound. The words of largest ratio at w = sqrt(A'_ii)
    are the candidates (:data:`STAR_ROWS`, or ``rows`` of them); every other word keeps pi = 0
    and its weight, and has v_i <= its ratio, so the K largest ratios outside the candidates
    stand in for them. First the candidates' prices descend at these weights (projected
    subgradient steps, Polyak's, towards ``lower``, a total some set attains); when a ratio
    outside the candidates is among the K terms of the best L, the candidates grow once (not
    past ``rows``) and the prices go on. Then the prices and the candidates' log-weights descend
    together (:data:`_STAR_REWEIGH_STEPS`). The candidates' weights move the ratios outside
    them, which are computed again every :data:`_STAR_RECOUNT` steps (and at the best point
    seen, before its L counts); the words they lift among the K terms become candidates. On
    the KOS sample the prices alone certify 0.852 of the default set, with the weights 0.917
    (KOS 0.841 -> 0.910).

    Candidates without exact rows read Cauchy-Schwarz pairs, which no weights make sharp on
    short texts (:func:`_mostly_zero`): given the :class:`~spca_cli.matrix.Gram` view ``A``,
    the stars of such a model with fewer exact rows than they may have candidates read a model
    formed again with as many (the fortunes: 0.887 with 256 exact rows, 0.934 with 400). The
    smallest L computed, with the rounding slack of the row bound, is returned (inf for an
    empty model).
    """
    K, k = int(n_components), int(k)
    m = model.size
    if m == 0 or K <= 0:
        return 0.0 if m == 0 else np.inf
    if model.CT is None:  # (a model consumed by an in-place restriction)
        return np.inf
    first, most = _star_rows(m, K, rows)
    model = star_model(model, k, K, A=A, rows=rows)
    w = np.maximum(model.sqd / max(float(model.sqd.max()), 1e-300), 1e-300)
    ratios = _ratios(model, w, k)
    order = np.argsort(-ratios, kind="stable")
    stars = _Stars(model, k, K, w, ratios, lower, order[:first])
    best, prices, binding = stars.descend(np.zeros(m), steps)
    if binding and first < most:
        stars = _Stars(model, k, K, w, ratios, lower, order[:most])
        value, prices, _ = stars.descend(prices, steps)
        best = min(best, value)
    if reweigh_steps > 0 and stars.cand.size > K:
        best = min(best, _reweighed(stars, prices, reweigh_steps))
    return best


def star_model(model, k, n_components, *, A=None, rows=None):
    """The :class:`RowModel` :func:`star_total_bound` reads for ``model`` (its arguments):
    ``model`` itself, or, for short texts, one formed again from the view ``A`` with as many
    exact rows as the stars may have candidates. The only step of that bound that reads
    ``A``: made where ``A`` is used (the bound then runs on another thread with the model
    this returns and no ``A``)."""
    m = model.size
    if m == 0 or int(n_components) <= 0 or model.CT is None:
        return model
    _, most = _star_rows(m, int(n_components), rows)
    if A is not None and model.hrow.size < most and _mostly_zero(model.CT):
        return RowModel.of(A, exact_rows=most, words=model.words, sorted_reads=False)
    return model


def _star_rows(m, K, rows):
    """(the candidates the stars price first, the most they grow to) on a model of m words."""
    first = min(m, max(K, min(STAR_ROWS, _STAR_ENTRIES // m) if rows is None else int(rows)))
    most = max(first, min(m, _STAR_WIDE_ENTRIES // m)) if rows is None else first
    return first, most


def _mostly_zero(CT):
    """Whether at most :data:`_SPARSE_SHARE` of the exact rows' entries are nonzero: short
    texts, where a pair outside them lies far below its Cauchy-Schwarz bound (the nine largest
    entries of an exact row: 0.07-0.10 of their bounds on average on the airline tweets and the
    fortunes, whose rows are 13-15% nonzero; 0.26-0.42 on KOS and the KOS sample, 32-78%)."""
    return CT.size > 0 and np.count_nonzero(CT) <= _SPARSE_SHARE * CT.size


def _ratios(model, w, k, terms=None):
    """Every word's row-sum ratio T(w)_i / w_i on ``model`` (``terms``: as
    :meth:`RowModel.top_sums`)."""
    sums = model.top_sums(w, k - 1, terms=terms) if k > 1 else np.zeros(model.size)
    return np.abs(model.diag) + sums / w


def _reweighed(stars, prices, steps):
    """The smallest L of :func:`star_total_bound` over ``steps`` joint subgradient steps of the
    candidates' prices (from ``prices``, on the model's words) and log-weights (from those of
    ``stars``, which move), each L with the ratios outside the candidates as they are at its
    weights."""
    model, k, K = stars.model, stars.k, stars.K
    pi = prices[stars.cand].copy()
    scale = np.ones(stars.cand.size)
    best, seen, best_at = np.inf, np.inf, None
    for first in range(0, int(steps), _STAR_RECOUNT):
        # the candidates' rows read again at these weights (a row's read stops sooner when its
        # head is sorted at the weights it is priced at), and the ratios outside them: L as it
        # is, and the words those ratios lift among its K terms join the candidates (at their
        # weight and no price)
        stars.rescale(scale)
        outside = _OutsideStars(stars)
        total, chosen = stars.bound(pi, outside.exact)
        best = min(best, total)
        lifted = outside.words[chosen[chosen >= stars.cand.size] - stars.cand.size]
        lifted = lifted[lifted >= 0]
        if lifted.size:
            on_words = np.zeros(model.size)
            on_words[stars.cand] = pi
            stars = _Stars(model, k, K, stars.w, outside.ratios, stars.lower,
                           np.concatenate([stars.cand, lifted]))
            pi = on_words[stars.cand]
            outside = _OutsideStars(stars)
            best = min(best, stars.bound(pi, outside.exact)[0])
        count = stars.cand.size
        log_scale = np.zeros(count)
        at_pi, at_scale = np.empty(count), np.empty(count)
        value, done = star_descent(stars.near_idx, stars.near_val, stars.lengths, stars.heads,
                                   stars.far_top, stars.base, stars.take, K, stars.slack,
                                   stars.lower, outside.exact, outside.terms, outside.slots,
                                   pi, log_scale, _STAR_TILT, first,
                                   min(_STAR_RECOUNT, int(steps) - first), _STAR_JOINT_PATIENCE,
                                   _STAR_GAIN, at_pi, at_scale)
        if value < seen:  # (its ratios outside estimated: counted once they are computed)
            on_words = np.zeros((2, model.size))
            on_words[0, stars.cand] = at_pi
            on_words[1, stars.cand] = stars.w[stars.cand] * at_scale
            seen, best_at = value, on_words
        if done < _STAR_RECOUNT:
            break
        scale = np.exp(log_scale)
    if best_at is not None:  # the best point seen, its rows and ratios computed there
        at_pi, weights = best_at
        held = weights[stars.cand] > 0.0  # (words that became candidates later: as they are)
        scale = np.where(held, weights[stars.cand] / stars.w[stars.cand], 1.0)
        stars.rescale(scale)
        best = min(best, stars.bound(at_pi[stars.cand], _OutsideStars(stars).exact)[0])
    return best


class _OutsideStars:
    """The largest ratios outside the candidates of ``stars`` at their weights w, with their
    terms, which follow the candidates' weights from there (the terms fixed: exact at w, an
    estimate elsewhere, for the subgradient steps only)."""

    def __init__(self, stars):
        model, k = stars.model, stars.k
        weights = stars.w
        terms = model.new_terms(max(k - 1, 1))
        self.ratios = _ratios(model, weights, k, terms)
        self.exact, self.words = stars.outside_top(self.ratios, _STAR_TRACKED * stars.K)
        present = self.words >= 0
        rows = self.words[present]
        slot = np.full(model.size, -1, dtype=np.int64)
        slot[stars.cand] = np.arange(stars.cand.size)
        partner = terms[0][rows] if k > 1 else np.full((rows.size, 1), -1, dtype=np.int64)
        # each term |A'_jl| w_l / w_j at these weights, and the candidate l it follows (-1: none)
        self.terms = np.zeros((self.words.size, partner.shape[1]))
        self.slots = np.full((self.words.size, partner.shape[1]), -1, dtype=np.int64)
        if rows.size and k > 1:
            held = partner >= 0
            value = np.where(held, terms[1][rows] * weights[np.maximum(partner, 0)], 0.0)
            self.terms[present] = value / weights[rows][:, None]
            self.slots[present] = np.where(held, slot[np.maximum(partner, 0)], -1)


class _Stars:
    """The priced stars of :func:`star_total_bound` at the weights ``w`` with the words
    ``cand`` as candidates: their rows read once (and rescaled when the weights move);
    ``ratios`` (T(w) / w) give the K largest outside them."""

    def __init__(self, model, k, K, w, ratios, lower, cand):
        m = model.size
        self.model, self.k, self.K, self.w, self.lower = model, k, K, w, lower
        self.cand = cand = np.sort(np.asarray(cand, dtype=np.int64))
        count = cand.size
        self.outside = outside = np.ones(m, dtype=bool)
        outside[cand] = False
        self.cut = self.outside_top(ratios)[0]
        # the candidates' rows, split into the priced partners (the candidates) and the k - 1
        # largest of the others, which never carry a price
        slot = np.full(m, -1, dtype=np.int64)
        slot[cand] = np.arange(count)
        # (the positive entries alone, each row's largest first: a price only lowers an entry,
        # and a row's read stops where no later entry can enter its sum)
        self.near_idx = np.empty((count, count), dtype=np.int64)
        self.near_val = np.empty((count, count))
        self.lengths = np.empty(count, dtype=np.int64)
        self.heads = np.empty(count, dtype=np.int64)
        self.far_top = np.zeros((count, max(k - 1, 0) if count < m else 0))
        # the words outside the candidates a row without exact entries reads: the exact rows,
        # and of the others the largest sqd_l w_l, twice what far_top holds (so that rounding of
        # the products cannot reorder them past it)
        h_far = np.flatnonzero(outside & (model.hpos >= 0)).astype(np.int64)
        others = np.flatnonzero(outside & (model.hpos < 0))
        g = model.sqd[others] * w[others]
        keep = min(others.size, 2 * self.far_top.shape[1] + 2)
        cs_far = others[np.argpartition(-g, keep - 1)[:keep]] if keep else others[:0]
        star_rows(model.CT, model.hpos, model.sqd, w, cand, slot, STAR_PREFIX, self.near_idx,
                  self.near_val, self.lengths, self.heads, self.far_top, h_far,
                  cs_far.astype(np.int64))
        self.base = np.abs(model.diag[cand])
        self.take = max(k - 1, 0)
        self.slack = 1.0 + _ROUNDING * (K * k + count)
        self.values = np.empty(count)
        self.partners = np.empty((count, max(self.take, 1)), dtype=np.int64)
        self.gains = np.empty((count, max(self.take, 1)))
        self.unit = np.ones(count)  # (the rows are read at the weights w)

    def rescale(self, scale):
        """Moves these stars to the candidates' weights multiplied by ``scale``."""
        self.w = self.w.copy()
        self.w[self.cand] *= scale
        star_rescale(self.near_idx, self.near_val, self.lengths, self.heads, self.far_top,
                     scale, STAR_PREFIX)

    def outside_top(self, ratios, count=None):
        """The K largest of ``ratios`` outside the candidates, largest first, 0 for missing
        ones (with fewer than K words outside, the other topics are anchored at candidates or
        empty), and their words (-1 for a missing one)."""
        count = self.K if count is None else count
        values, words = np.zeros(count), np.full(count, -1, dtype=np.int64)
        rest = np.flatnonzero(self.outside)
        if rest.size:
            top = rest[np.argsort(-ratios[rest], kind="stable")[:count]]
            values[:top.size], words[:top.size] = ratios[top], top
        return values, words

    def bound(self, pi, cut):
        """L at the candidates' prices ``pi`` with ``cut`` the largest ratios outside them (K
        of them or more). Returns ``(L, chosen)``: the positions of the K terms chosen in the
        candidates' values followed by ``cut``."""
        star_values(self.near_idx, self.near_val, self.lengths, self.heads, self.far_top, pi,
                    self.base, self.take, self.unit, self.values, self.partners, self.gains)
        pool = np.concatenate([self.values, cut])
        chosen = np.argpartition(-pool, self.K - 1)[:self.K]
        return (float(pi.sum()) + float(pool[chosen].sum())) * self.slack, chosen

    def price_subgradient(self, chosen):
        """A subgradient of L in the prices at the last :meth:`bound`: for each candidate, 1 -
        the uses of its word in the ``chosen`` stars."""
        count = self.cand.size
        g = np.ones(count)
        for a in chosen[chosen < count]:
            g[a] -= 1.0
            used = self.partners[a][self.partners[a] >= 0]
            np.subtract.at(g, used, 1.0)
        return g

    def descend(self, prices, steps):
        """Subgradient steps of the prices from ``prices`` (on the model's words) at the
        weights read. Returns ``(value, prices, binding)``: the smallest L seen, the prices
        that gave it (on the model's words, 0 off the candidates), and whether a ratio outside
        the candidates was among its K terms."""
        count = self.cand.size
        pi = prices[self.cand].copy()
        best, best_pi, binding = np.inf, pi, False
        theta = 1.0
        since = 0  # steps since the best fell by _STAR_GAIN
        for _ in range(max(int(steps), 1)):
            total, chosen = self.bound(pi, self.cut)
            since = 0 if total < best * (1.0 - _STAR_GAIN) else since + 1
            if total < best:
                best, best_pi, binding = total, pi, bool(np.any(chosen >= count))
            elif total > best * (1.0 + 1e-3):
                theta *= 0.7
                if theta < 1e-3:
                    break
            if since >= _STAR_PATIENCE:
                break
            g = self.price_subgradient(chosen)
            active = (g < 0.0) | (pi > 0.0)
            norm2 = float(np.sum(g[active] ** 2))
            gap = total - self.lower
            if norm2 == 0.0 or gap <= 0.0:
                break
            pi = np.maximum(pi - theta * gap / norm2 * g, 0.0)
        out = np.zeros(self.model.size)
        out[self.cand] = best_pi
        return best, out, binding


def eigen_bounds_could_tighten(bounds, attained, eigen, rank):
    """True when accurate eigenpairs could make a bound of ``bounds`` tighter than the best one
    that uses none, and the topic (value ``attained``) is not proven optimal already.

    A bound that uses eigenpairs adds their residuals: at most about (2 d + 1) max_i r_i at rank
    d for :func:`single_bounds` and the spannogram's OPT_d + lambda_{d+1}, about what accurate
    pairs could take off them. nonneg's Theorem 1 ratio bound, (value + cross) / rho, can move
    by far more (up to 105 max r_i in an adversarial search), but it lies above nonneg's own
    OPT_d + lambda_{d+1} in every case seen, so it is not the one refinement would make the
    tightest. A bound below ``attained`` (:func:`below_attained`) always asks for refinement:
    the pairs were not the leading ones, which every bound on them assumes.
    """
    best = tightest(bounds)[0]
    if below_attained(bounds, attained):
        return True
    if _proven(attained, best):
        return False
    free = [b for b, source in bounds if source.startswith(_EIGEN_FREE_PREFIXES)]
    uses = [b for b, source in bounds if not source.startswith(_EIGEN_FREE_PREFIXES)]
    if not uses:
        return False
    # (pairs past rank + 1, which only the total bounds use, may be looser: not counted)
    d = max(int(rank), 1)
    slack = (2 * d + 1) * float(np.max(eigen.residuals[:d + 1], initial=0.0))
    return bool(min(uses) - slack < min(free, default=np.inf))


def below_attained(bounds, attained):
    """True when the tightest of ``bounds`` is below ``attained``, a value some support reaches,
    beyond rounding: the eigenpairs some bound used are not the leading ones (a loose Krylov
    call whose theta_1 converged to lambda_2 while lambda_1's direction was still faint in its
    basis: lambda_1 - theta_1 far above r_1), and accurate ones are needed."""
    return bool(tightest(bounds)[0] < attained * (1.0 - PROVEN_RTOL))


def uses_eigenpairs(source):
    """Whether the bound named ``source`` rests on eigenpairs (any source not known to be free of
    them counts as using them: at worst an unneeded refinement)."""
    return not source.startswith(_EIGEN_FREE_PREFIXES)


def eigen_free(bounds):
    """The bounds of ``bounds`` that use no eigenpair."""
    return [b for b in bounds if b[1].startswith(_EIGEN_FREE_PREFIXES)]


def trusted(bounds, attained):
    """``(kept, dropped)``: ``bounds``, or only those that use no eigenpair when the tightest is
    below ``attained`` (a value some support reaches), and whether any was dropped.

    Such a bound proves that the eigenpairs behind it missed an eigenvalue, so no bound built
    on them proves anything. ARPACK (one Lanczos vector: the fallback after the block method,
    and the path of more than 12 pairs) finds one copy of a repeated eigenvalue: with 998 three
    times among the word counts it reported two, and the total bound of three topics, 3,010,
    fell below the 3,016 they attain (a RuntimeError instead of a certificate). The bounds
    that remain are proofs whatever the eigensolver did; refinement, where it is possible,
    happens before (:func:`eigen_bounds_could_tighten`)."""
    if not below_attained(bounds, attained):
        return list(bounds), False
    free = eigen_free(bounds)
    return (free, True) if free else (list(bounds), False)


def cover_rounding(bound, value, scale, k):
    """``bound``, raised to ``value`` when the value exceeds it by no more than the rounding of
    k-term sums at ``scale`` (lambda_1 of the undeflated A), else unchanged.

    A view that is zero up to rounding (projection deflation of a low-rank A) has OPT = 0, and
    both its bounds and a topic's computed value x^T A' x are rounding noise of A's scale (seen:
    bound 3.6e-15, value 3.8e-15 on a rank-1 4 x 4 matrix). Raising never lowers a bound, so
    it cannot make one lie; a value above a bound by more than that still raises in
    :func:`certified_ratio`.
    """
    if bound < value <= bound + _ROUNDING * max(int(k), 1) * max(scale, 0.0):
        return float(value)
    return bound


def tightest(bounds):
    """The smallest of several ``(value, source)`` bounds."""
    return min(bounds, key=lambda b: b[0])


def certified_ratio(value, bound, *, rtol=PROVEN_RTOL):
    """value / bound in [0, 1]; 1.0 for the degenerate 0 / 0, and for a bound within ``rtol``
    of the value (the value proved optimal, :func:`_proven`: the last digits of a bound met to
    rounding move with the platform's LAPACK, not with the proof).

    A bound below an attained value (beyond rounding) is a bug, never a ratio above 1: raise.
    """
    if bound <= 0:
        if value > rtol:
            raise RuntimeError(f"upper bound {bound!r} is below the attained value {value!r}")
        return 1.0
    ratio = value / bound
    if ratio > 1.0 + rtol:
        raise RuntimeError(f"upper bound {bound!r} is below the attained value {value!r}")
    if _proven(value, bound):
        return 1.0
    return float(max(ratio, 0.0))


# ---------------------------------------------------------------------- weighted row-sum bound
def fits_float32(values):
    """True when float32 holds every one of ``values`` exactly (beyond its range: False, quietly).

    A few thousand entries spread over the array are checked first: weighted entries (tf-idf)
    fail there, without a float32 copy of the whole array (0.6 s for a 14,344-word block)."""
    with np.errstate(over="ignore", invalid="ignore"):
        sample = values.flat[::max(1, values.size // 4096)]
        if not np.array_equal(sample.astype(np.float32), sample):
            return False
        return bool(np.array_equal(values.astype(np.float32), values))


def _widened(CT, written):
    """A float64 copy of the float32 rows ``CT`` holding its first ``written`` rows (the rest
    is not initialised)."""
    wide = np.empty(CT.shape)
    wide[:written] = CT[:written]
    return wide


class RowModel:
    """|A'| restricted to the words that can matter, in the form the row-bound kernels take.

    Only words that are active in the view and have A'_ii + eps > 0 are kept (a PSD matrix has
    a zero row wherever its diagonal is zero; eps is ``A.psd_margin``, 0 unless A is PSD only up
    to rounding). Exact rows are kept for the ``exact_rows`` words of largest diagonal (the set
    H, formed as A'[:, H] from sparse columns of S, never densely); a pair of words outside H is
    bounded by Cauchy-Schwarz on A' + eps I, |A'_ij| <= sqrt((A'_ii + eps) (A'_jj + eps)).

    Attributes
    ----------
    words : ndarray of int64, shape (m,)
        Word indices of the view, in increasing order.
    diag : ndarray of float64, shape (m,)
        A'_ii of those words.
    CT, hpos, hrow : ndarray
        The exact rows and the position maps of :mod:`spca_cli.kernels.rowbound`; ``CT`` is
        float32 when that holds every entry exactly, else float64.
    """

    def __init__(self, words, diag, CT, hpos, hrow, margin=0.0, *, prefixes=None):
        self.words, self.diag, self.CT, self.hpos, self.hrow = words, diag, CT, hpos, hrow
        self.margin = float(margin)
        self.sqd = np.sqrt(np.maximum(diag + self.margin, 0.0))
        # (``prefixes``: the exact rows' :func:`~spca_cli.kernels.rowbound.row_prefixes` and
        # their :func:`~spca_cli.kernels.rowbound.prefix_values`, sorted by the caller)
        self._prefixes = None if prefixes is None else tuple(prefixes[:3])
        self._prefix_values = None if prefixes is None else prefixes[3]
        self._worth_prefixes = None  # (whether prefixes repay their sort: decided on first use)
        self._columns = None
        self._sorted_reads = True  # (False: never sort rows for reading: RowModel.of)
        # CT is the backend's kept columns (_kept_rows): read only, never restricted in place
        self._shared_rows = False

    @classmethod
    def of(cls, A, *, exact_rows=512, words=None, sorted_reads=True):
        """The model of a :class:`~spca_cli.matrix.Gram` view (all its words, or ``words``);
        ``sorted_reads=False`` for a model read only a few times (no :attr:`prefixes` or
        :attr:`columns`: their sorts would cost more than the reads they save)."""
        diag_all = A.diagonal()
        if words is None:
            words = _model_words(A)
        words = np.asarray(words, dtype=np.int64)
        diag = diag_all[words]
        model = _kept_rows(cls, A, words, diag, exact_rows)
        if model is None:
            model = _own_rows(cls, A, words, diag, exact_rows)
        if not sorted_reads:
            model._worth_prefixes = model._sorted_reads = False
        return model

    @property
    def size(self):
        return self.words.size

    @property
    def is_exact(self):
        """True when every row is exact (no Cauchy-Schwarz entries)."""
        return self.hrow.size == self.words.size

    def floor(self, k):
        """The least U(w) any weights reach on this model with ``k`` words: the sum of the k
        largest diagonal entries outside the exact rows.

        For such a set J the model holds the Cauchy-Schwarz pairs sqrt(A'_ii A'_jj), so its
        block is the rank-1 matrix s s^T (s = sqrt(diag_J)) with Perron root sum_J A'_jj, and
        for every w > 0, U(w) >= max_{i in J} (M_J w_J)_i / w_i >= that root
        (Collatz-Wielandt)."""
        outside = self.diag[self.hpos < 0]
        return _top_sum(outside, k)

    def top_sums(self, v, count, *, cauchy_schwarz=True, visited=None, terms=None,
                 active=None):
        """For each word i: the sum of the ``count`` largest |A'_ij| v_j over j != i.

        With ``cauchy_schwarz=False`` the pairs outside the exact rows count as 0 (a lower
        estimate, used only to decide whether more exact rows would help). ``visited`` (an
        array of one float) gains the entries read. ``terms``: see
        :func:`~spca_cli.kernels.rowbound.offdiag_top_sums` (words are the model's
        positions). ``active``: only these rows' sums (a masked view's, whose other words
        weigh 0: :meth:`MaskedModel.top_sums`)."""
        sqd = self.sqd if cauchy_schwarz else np.zeros_like(self.sqd)
        return offdiag_top_sums(self.CT, self.hpos, self.hrow, sqd,
                                np.ascontiguousarray(v, dtype=np.float64), int(count),
                                self._stored_prefixes(), self.columns, visited, terms, active)

    def new_terms(self, count):
        """Arrays for :meth:`top_sums`' ``terms``: each row's words and entries."""
        return (np.empty((self.size, count), dtype=np.int64), np.empty((self.size, count)))

    def fixed_terms_weights(self, terms, start, rtol, steps):
        """The weights ``steps`` power steps at most from ``start`` take towards the Perron
        vector of the row-sum map with each row's terms fixed to ``terms`` (a linear map;
        :func:`~spca_cli.kernels.rowbound.perron_weights`), stopping once its ratios lie
        within ``rtol``."""
        return perron_weights(*terms, self.diag, start, np.arange(self.size), rtol, steps)[0]

    def _stored_prefixes(self):
        """:attr:`prefixes` with their values in order (read in sequence by the kernel)."""
        prefixes = self.prefixes
        if prefixes is None:
            return None
        if self._prefix_values is None:
            self._prefix_values = prefix_values(self.CT, prefixes[0], prefixes[1])
        return (*prefixes, self._prefix_values)

    @property
    def columns(self):
        """The exact entries of the rows outside H, nonzero ones largest first (:func:`~spca_cli.
        kernels.rowbound.outside_columns`), made on first use when those rows hold at least
        :data:`_PREFIX_ENTRIES` entries: repaid by the weight steps that follow, each of which
        then reads a few of a row's entries instead of all h (None below)."""
        h = self.hrow.size
        if (self._columns is None and self._sorted_reads and h
                and (self.size - h) * h >= _PREFIX_ENTRIES):
            self._columns = outside_columns(self.CT, self.hpos)
        return self._columns

    @property
    def prefixes(self):
        """The exact rows' largest entries in order (:func:`~spca_cli.kernels.rowbound.
        row_prefixes`), made on first use for a model of at least :data:`_PREFIX_ENTRIES` exact
        entries whose rows are much longer than a prefix, or of :data:`_SPARSE_PREFIX_ENTRIES`
        whose rows are mostly zero: a sort of each row, repaid by the weight steps that follow
        (each row then stops after its first few hundred entries, or its nonzeros); None
        below, where reading whole rows costs less than sorting them once."""
        if self._prefixes is None and self._worth_prefixes is None:
            size = self.CT.size
            # (decided once: the count of nonzeros reads every entry, as a weight step does)
            self._worth_prefixes = size >= _PREFIX_ENTRIES or (
                size >= _SPARSE_PREFIX_ENTRIES
                and np.count_nonzero(self.CT) <= _SPARSE_SHARE * size)
            if self._worth_prefixes:
                self._prefixes = row_prefixes(self.CT, min(PREFIX, max(64, self.size // 4)))
        return self._prefixes

    def restrict(self, keep, *, in_place=False):
        """The model on the words where the boolean ``keep`` (shape (m,)) is True.

        ``in_place``: its exact rows (and their sorted columns) are written over this model's
        memory, which is then released from it: this model can no longer be used. At 197,316
        words the exact rows and their columns hold about 300 MB, which a copy doubled at the
        run's peak."""
        keep = np.asarray(keep, dtype=bool)
        in_place = in_place and not self._shared_rows  # (the backend's columns stay as they are)
        new_pos = np.cumsum(keep) - 1
        kept_h = keep[self.hrow]
        hrow = new_pos[self.hrow[kept_h]]
        # gathered in one numba call straight into the new rows: no (h, m) intermediate, and
        # none of the per-row calls that took 1.6 s of 8.5 on the airline tweets' default run
        # (72,000 np.take calls over the screening rounds)
        CT = gather_rows(self.CT, np.flatnonzero(kept_h), np.flatnonzero(keep),
                         in_place=in_place)
        hpos = np.full(int(keep.sum()), -1, dtype=np.int64)
        hpos[hrow] = np.arange(hrow.size)
        model = RowModel(self.words[keep], self.diag[keep], CT, hpos, hrow.astype(np.int64),
                         self.margin)
        if self._prefixes is not None:  # (cheaper restricted than made again)
            model._prefixes = restrict_prefixes(self._prefixes, np.flatnonzero(kept_h), keep)
        if self._columns is not None:
            model._columns = restrict_outside_columns(self._columns, np.flatnonzero(kept_h), keep,
                                                      in_place=in_place)
        if in_place:  # (its arrays now hold the new model's entries)
            self.CT = self._prefixes = self._prefix_values = self._columns = None
        return model

    def dense(self):
        """|A'| on the model's words as a dense (m, m) array; only for an exact model."""
        if not self.is_exact:
            raise ValueError("dense() needs every row exact")
        return np.ascontiguousarray(self.CT[self.hpos], dtype=np.float64)


def reads_kept_rows(A):
    """Whether the first certificate of ``A`` reads its exact rows from the backend's kept
    columns as they are (:func:`_kept_rows`), when the first eigen step keeps them: then they
    cost no memory beyond the certificate's own, whatever the column cache's room."""
    return (not A.is_deflated and A.is_nonnegative()
            and _model_words(A).size == A.n)


def _own_rows(cls, A, words, diag, exact_rows):
    """The model of the view ``A`` on ``words`` with its exact rows (the words of largest
    diagonal, in word order) copied into an array of its own."""
    in_h = np.sort(_largest_first(diag, exact_rows))
    h = in_h.size
    # float32 while every entry is exactly a float32 (co-occurrence counts of binary or
    # count data below 2^24 always are): the same numbers in half the memory (at 50,000
    # words and 700 exact rows 140 MB instead of 280 MB); float64 from the first entry that
    # float32 would round
    CT = np.empty((h, words.size), dtype=np.float32)
    # the (n, h) columns and their copies never exist at once: _COLUMN_BLOCK at a time,
    # formed on the product threads (the first 256 rows of 1M clustered tweets: 1.6 s on 2
    # cores and a process peak of 1.30 GB, against 2.5 s and 1.27 GB one column at a time)
    every_word = words.size == A.n  # (then words is 0..n-1: no gather)
    # undeflated or remove views: A'_ij = A_ij between active words, so the base columns
    # serve unmasked (no (n, 64) masked copies)
    base = A.X is None and bool(np.all(A.active()[words]))
    for lo in range(0, h, _COLUMN_BLOCK):
        part = words[in_h[lo:lo + _COLUMN_BLOCK]]
        # the base columns as the backend caches them, each copied into its row (float32
        # columns straight into float32 rows: dupes-1M's 256 rows of 197,316 words in
        # 0.37 s, against 0.71 s through a float64 block, its absolute value and a check)
        if base:
            for t, column in enumerate(A.base_column_list(part)):
                row = column if every_word else column[words]
                if (CT.dtype == np.float32 and row.dtype != np.float32
                        and not fits_float32(row)):
                    CT = _widened(CT, lo + t)
                np.abs(row, out=CT[lo + t], casting="unsafe")
            continue
        # a projection view's columns (C-contiguous rows: they come in Fortran order)
        rows = A.columns(part).T
        # np.take, not rows[:, words]: a quarter of the time on (64, 50,000) blocks
        rows = np.abs(rows if every_word else np.take(rows, words, axis=1))
        if CT.dtype == np.float32 and not fits_float32(rows):
            CT = _widened(CT, lo)
        CT[lo:lo + part.size] = rows
    hpos = np.full(words.size, -1, dtype=np.int64)
    hpos[in_h] = np.arange(h)
    return cls(words, diag, CT, hpos, in_h.astype(np.int64), A.psd_margin)


def _kept_rows(cls, A, words, diag, exact_rows):
    """The model of ``A`` on every word with the backend's kept columns of its exact rows as
    they are (no copy), or None: when ``A`` is undeflated and nonnegative (|A| = A) and those
    columns (the words of largest diagonal, largest first) are one block the backend keeps,
    as the first eigen step of a topics run forms it (:meth:`~spca_cli.matrix.Gram.
    keep_columns`). The rows then follow that block's order. dupes-1M's first model: 256 rows
    of 197,316 words, a 202 MB copy and its fresh memory (0.3-0.5 s) saved."""
    if words.size != A.n or not reads_kept_rows(A):
        return None
    order = _largest_first(diag, exact_rows)
    block = A.kept_block(words[order])
    if block is None:
        return None
    hpos = np.full(words.size, -1, dtype=np.int64)
    hpos[order] = np.arange(order.size)
    model = cls(words, diag, block, hpos, order.astype(np.int64), A.psd_margin)
    model._shared_rows = True
    return model


class MaskedModel:
    """The model of a ``remove`` view read from the model of the matrix it was made from: the
    words where ``keep`` is False weigh 0 in every sum, and only the kept words' sums are
    returned.

    A kept word's top sums on ``base`` with weight 0 on the other words are its top sums on
    the view (the entries between kept words are the same, and zeros change no sum of the
    largest nonnegative terms: where fewer than ``count`` are positive both sums hold all the
    positive ones), so every bound is the one :meth:`RowModel.restrict` would give, without
    copying the exact rows (67 MB for each of the fortunes' set views; 0.4 s of their 1.8 s of
    certificates). It offers what :func:`row_certificate` and :func:`weighted_row_bound` use;
    :meth:`restricted` forms the copy for a search."""

    def __init__(self, base, keep):
        keep = np.asarray(keep, dtype=bool)
        if isinstance(base, MaskedModel):
            # a mask of a mask is one mask of the model below: remove deflation's later views
            # all read the first view's model, whatever the chain of views
            on_base = np.zeros(base.base.size, dtype=bool)
            on_base[base._index[keep]] = True
            base, keep = base.base, on_base
        self.base, self.keep = base, keep
        self._index = np.flatnonzero(self.keep)
        self.words = base.words[self._index]
        self.diag = base.diag[self._index]
        self.sqd = base.sqd[self._index]
        self.margin = base.margin
        self._hpos = base.hpos[self._index]
        self._full = np.zeros(base.size)  # the weights on the base's words (0 off the view)

    @property
    def size(self):
        return self.words.size

    @property
    def hrow(self):
        """Positions (in the view) of the exact rows the view keeps."""
        return np.flatnonzero(self._hpos >= 0)

    @property
    def is_exact(self):
        return bool(np.all(self._hpos >= 0))

    def floor(self, k):
        """:meth:`RowModel.floor` on the view's words."""
        return _top_sum(self.diag[self._hpos < 0], k)

    def top_sums(self, v, count, *, cauchy_schwarz=True, visited=None, terms=None):
        """:meth:`RowModel.top_sums` of the view's words, ``v`` on them (``terms`` from
        :meth:`new_terms`, on the base's words: a word off the view weighs 0 and is no
        term)."""
        self._full[self._index] = v
        return self.base.top_sums(self._full, count, cauchy_schwarz=cauchy_schwarz,
                                  visited=visited, terms=terms,
                                  active=self.keep)[self._index]

    def new_terms(self, count):
        """Arrays for :meth:`top_sums`' ``terms`` (the base's rows)."""
        return self.base.new_terms(count)

    def fixed_terms_weights(self, terms, start, rtol, steps):
        """:meth:`RowModel.fixed_terms_weights` on the view's words."""
        full = np.zeros(self.base.size)
        full[self._index] = start
        return perron_weights(*terms, self.base.diag, full, self._index, rtol,
                              steps)[0][self._index]

    def restricted(self):
        """The view's own :class:`RowModel` (a copy of its exact rows)."""
        return self.base.restrict(self.keep)


@dataclass
class RowBound:
    """The best weighted row bound found: OPT <= ``value`` for every support of ``k`` words.

    Attributes
    ----------
    value : float
        min over the weights tried of U(w) = max_i T(w)_i / w_i (rounding slack included).
    weights : ndarray, shape (m,)
        The weights w (on the model's words) that gave ``value``.
    ratios : ndarray, shape (m,)
        T(w)_i / w_i at those weights.
    iterations : int
        Steps of w <- T(w) / max T(w) taken.
    entries : float
        Entries of the exact rows read by those steps (sorted prefixes stop rows early).
    totals : dict
        C -> an upper bound on the total of C topics with disjoint supports (the sum of the C
        largest ratios, minimised over the weights tried).
    """

    value: float
    weights: np.ndarray
    ratios: np.ndarray
    iterations: int
    totals: dict = field(default_factory=dict)
    entries: float = 0.0


def _projected_gain(trail):
    """What the weight iteration can still take off its best value, projected from the last two
    gains of ``trail`` (best value after each step) as a geometric series: d1 r / (1 - r) with
    r = d1 / d0 (inf until two gains are known or while gains grow).

    The iteration converges linearly; where a few words without a strong partner keep
    min_i T_i / w_i far below U (a reducible |A'|), the ratio test below never ends it, and the
    steps went on at gains of 1e-5 of U each: a warm-started later certificate of the airline
    tweets took 51-56 steps of 3,191 exact rows, its start already within 6e-4 of where they
    ended."""
    if len(trail) < 3:
        return np.inf
    d0, d1 = trail[-3] - trail[-2], trail[-2] - trail[-1]
    if d1 <= 0 and d0 <= 0:
        return 0.0  # two steps without a gain
    if d1 >= d0:
        return np.inf
    return d1 * d1 / (d0 - d1)


def weighted_row_bound(model, k, *, max_iter=200, rtol=1e-6, totals=(), start=None,
                       attained=None, linearize=False):
    """Upper bound OPT = max_{|I| = k} lambda_max(A'_I) <= U(w) for every w > 0.

    For any support I and weights w > 0, with D = diag(w_I) (a similarity),
    lambda_max(A'_I) <= rho(|A'_I|) = rho(D^-1 |A'_I| D) <= ||D^-1 |A'_I| D||_inf
    = max_{i in I} sum_{j in I} |A'_ij| w_j / w_i <= max_i T(w)_i / w_i =: U(w), where
    T(w)_i = A'_ii w_i + (sum of the k-1 largest |A'_ij| w_j, j != i): the sum over I has k - 1
    off-diagonal terms. (The first step is Perron-Frobenius: |lambda(A'_I)| <= rho(|A'_I|).)
    w = 1 is Gershgorin's bound; the nonlinear power iteration w <- T(w) / max T(w) lowers it,
    and the smallest U(w) seen is returned. It stops when U is within ``rtol`` of
    min_i T(w)_i / w_i (how far the iteration could still go) or after ``max_iter`` steps.

    Disjoint supports I_1..I_C each attain their bound at a word of their own, so their total
    is at most the sum of the C largest ratios T(w)_i / w_i: for every C in ``totals`` that sum
    is minimised over the same iterates.

    ``attained``, a value some k-word support reaches on A' (the topic found), stops the
    iteration as soon as the bound meets it to rounding (:data:`PROVEN_RTOL`): OPT lies between
    the two, so the topic is proven optimal and no weights can lower the bound further. Only
    without ``totals`` (their sums could still fall). While the least ratio is still at or
    below ``attained`` (the value can still be proved), the steps go on past ``rtol``.

    ``linearize`` (without ``totals``): each step goes to the Perron vector of the row-sum map
    with each row's terms held at the ones chosen at the current weights (policy iteration;
    docs/certificates.md, "Linearized steps"): a few steps reach the least U where plain ones
    take tens. Any weights give a valid bound, so this changes only how soon it is found.
    """
    k = int(k)
    diag = model.diag
    if model.size == 0:
        return RowBound(0.0, np.zeros(0), np.zeros(0), 0, {int(c): 0.0 for c in totals})
    w = np.array(start if start is not None else model.sqd, dtype=np.float64)
    w = np.maximum(w / w.max(), 1e-300)
    best = RowBound(np.inf, w, np.full(model.size, np.inf), 0,
                    {int(c): np.inf for c in totals})
    slack = 1.0 + _ROUNDING * max(k, 1)
    read = np.zeros(1)
    linearized = linearize and not best.totals and k > 1
    terms = model.new_terms(k - 1) if linearized else None
    stalled_at, since = np.inf, 0
    trail, settled = [], 0  # the best value after each step; steps the projection said "done"
    # whether w came from a linearized step; such steps in a row that lowered nothing
    linear_step, misses = False, 0
    for it in range(1, int(max_iter) + 1):
        T = diag * w + model.top_sums(w, k - 1, visited=read, terms=terms)
        best.entries = float(read[0])
        ratios = T / w
        U = float(ratios.max()) * slack
        for count in best.totals:
            c = min(count, ratios.size)
            total = float(np.sum(np.partition(ratios, ratios.size - c)[ratios.size - c:])) * slack
            best.totals[count] = min(best.totals[count], total)
        improved = U < best.value
        if improved:
            best.value, best.weights, best.ratios = U, w, ratios
        best.iterations = it
        low = float(ratios.min())  # (min_i T_i / w_i: no weights take U below it)
        # (a value to prove that no weights' bound lies below yet: the steps go on while they
        # can still reach it, whatever rtol says)
        provable = attained is not None and not best.totals and low <= attained
        if best.value - low <= rtol * best.value and not provable:
            break
        if attained is not None and not best.totals and _proven(attained, best.value):
            break
        misses = misses + 1 if linear_step and not improved else 0
        if misses >= _LINEAR_MISSES:
            # linearized steps that lowered nothing, in a row: their fixed terms' Perron
            # vectors starve the words whose terms lead into a weaker block of a reducible
            # map (whose ratios are then large); plain steps from the best weights on
            linearized = linear_step = False
            T = best.ratios * best.weights
            w = np.maximum(T / T.max(), 1e-300)
            continue
        # (policy iteration raises the fixed maps' Perron roots, not U, at every step: a
        # linearized step that lowered nothing is neither a gain nor a stall)
        if not misses:
            trail.append(best.value)
            gain = _projected_gain(trail)
            if gain <= 0.5 * rtol * best.value:
                settled += 1
                if settled >= 2:  # twice in a row: what is left to gain is below rtol
                    break
            else:
                settled = 0
            if U < stalled_at * (1.0 - _STALL_GAIN):
                stalled_at, since = U, 0
            else:
                since += 1
                if since >= _STALL:  # a reducible |A'| may never equalise its ratios
                    break
        w = np.maximum(T / T.max(), 1e-300)
        # with a value to prove, plain steps while they are projected to end within
        # _SETTLES_ABOVE of it (remove deflation's later topics of 1M tweets: 7e-8 above in 4
        # plain steps, where linearized ones took 7 and 100 power steps for 8e-7); linearized
        # ones from the first step projected to end above it (the fortunes' set views, 1%)
        settles_above = attained is None or best.value - gain > attained * (1 + _SETTLES_ABOVE)
        linear_step = linearized and (linear_step or settles_above)
        if linear_step:
            w = model.fixed_terms_weights(terms, w, _inner_rtol(rtol, low, ratios), _INNER_STEPS)
    return best


def _inner_rtol(rtol, low, ratios):
    """The precision of a linearized step's Perron vector: what the next step can use, a share
    of how far the ratios still spread, down to a share of ``rtol``."""
    return max(_INNER_RTOL * rtol, _INNER_SHARE * (1.0 - low / float(ratios.max())))
