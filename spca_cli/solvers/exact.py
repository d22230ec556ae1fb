"""The provably best k-word topic (branch and bound), and ``auto``: the best of the cheap solvers
closed by a bounded branch and bound.

Both maximise lambda_max(A'[I, I]) over supports |I| = k of the solver's view A'. The bounds are
the weighted row sums of :func:`spca_cli.bounds.weighted_row_bound` on |A'| (valid for any sign
pattern, sharp on nonnegative co-occurrence matrices). Phases:

1. **Incumbent** (lower bound LB): the best of TPower (its starts and swap search), the rank-2
   spannogram and greedy forward selection.
2. **Screening**: a word i is dropped when every support containing it is provably below LB.
   With w' from the (k-1)-word iteration, r' = U_{k-1}(w'), s_i = the k-1 largest |A'_ij| w'_j
   (j != i) and c_i = max_{l != i} |A'_li| / w'_l, replace w'_i by t in the row bound of a
   support I containing i: row i gives A'_ii + s_i / t, a row l != i gives at most r' + c_i t
   (its other k-2 terms are a (k-1)-word row sum). So lambda_max(A'_I) <= r' + c_i t* at the t*
   where both are equal, t* = [-(r' - A'_ii) + sqrt((r' - A'_ii)^2 + 4 c_i s_i)] / (2 c_i).
   Repeated on the survivors until nothing changes. When r' >= LB nothing can be dropped and
   the search starts from the root.
3. **Branch and bound** over the survivors (:func:`spca_cli.kernels.rowbound.branch_and_bound`):
   nodes fix words in or out, the bound of a node is the weighted row bound with the fixed
   words summed exactly, depth first, include-branch first, warm-started weights; leaves are
   scored exactly (eigvalsh of the k x k block). Until it finishes, max(LB, the bounds of the
   open nodes) is a valid bound (the anytime bound), so a time limit still certifies.

``exact`` runs phase 3 to the end (or ``time_limit``); ``auto`` gives it ``budget`` seconds.

With ``forced`` (the words every topic must hold, :mod:`spca_cli.constraints`) the same search
solves max lambda_max(A'[I, I]) over supports holding them: the incumbent's solvers keep them,
the root bound is the forced row bound, screening never drops them and bounds the other words
by :func:`~spca_cli.constraints.forced_screen_bounds`, and branch and bound starts from a root
node with them fixed in. (The bound on every (k-1)-word support that screening may use holds
for all supports, those holding the words among them.)
"""

from __future__ import annotations

import time
import warnings
from concurrent.futures import Future

import numba
import numpy as np

from spca_cli.bounds import (CERTIFICATE_RTOL, ROW_BOUND_SOURCE, RowCertificate, RowModel,
                             fits_float32, row_certificate, weighted_row_bound)
from spca_cli.errors import ConvergenceWarning
from spca_cli.kernels.rowbound import (branch_and_bound_prefixed, offdiag_top_sums,
                                      prefix_values, row_prefixes, top_square_sums)
from spca_cli.solvers._base import check_float, check_k, finish_component, with_notes

__all__ = ["exact", "auto", "longer_budget", "OPTIMAL_SOURCE", "PROVED_SOURCE", "ANYTIME_SOURCE",
           "AUTO_BUDGET", "WORK_PER_SECOND"]

OPTIMAL_SOURCE = "branch and bound: optimal"
PROVED_SOURCE = "branch and bound: nothing above"
ANYTIME_SOURCE = "branch and bound: open nodes"

#: Default budget of ``auto``'s search per component, in nominal seconds.
AUTO_BUDGET = 3.0

#: Entries of |A'| the search visits per nominal second of budget (about what the row-bound
#: kernels do per second on the project's 2-core machine). Counting work instead of seconds
#: keeps auto's results independent of the machine's load.
WORK_PER_SECOND = 2e8

# Largest survivor set searched with a dense |A'| (m x m floats): A'[words, words] takes 2.1 GB
# at 16,384 words, and the search's other arrays up to as much again (its stack of weights
# grows a row of m floats per open node). On a flat matrix every word survives screening: 14,344
# words of 395 tf-idf stories are proved in 29 s, their block 1.6 GB and the process 3.6 GB.
_MAX_DENSE = 1 << 14

# Words beyond which a rung of auto's ladder does not branch (a node costs O(words^2), more
# than its budget buys). exact, which has no budget, branches over up to _MAX_DENSE words and
# stops only at its --time-limit or with the proof.
_MAX_BRANCH = 2000

# The targets LB / ratio that search() tries to prove, in order; 1.0 proves optimality.
_LADDER = (0.95, 0.96, 0.97, 0.98, 0.99, 0.995, 0.999, 1.0)

# Steps of the (k-1)-word weight iteration per screening round (warm-started; any weights give
# a valid bound, better ones drop more words).
_SCREEN_ITERATIONS = 12

# Nodes per call of the numba search between two looks at the clock.
_CHUNK = 2000

# Entries of each row of |A'| over the survivors kept in decreasing order for the search's node
# bounds (rows whose heap is not settled by then are read whole).
_NODE_PREFIX = 256

# Levels of (k-1)-word searches that may serve a search's screening (_inner_bound), and the
# weight steps of their start from the k-word weights.
_INNER_DEPTH = 1
_INNER_STEPS = 30

# Weight iterations of the search's root from the certificate's weights (any weights give a
# valid bound; the root node improves them further).
_ROOT_STEPS = 12

# Weight iterations per node (warm-started from the parent's weights).
_NODE_ITERATIONS = 6

# A node is pruned unless its bound exceeds LB by this relative margin: ties add nothing.
_PRUNE_SLACK = 1e-12


def _incumbent(A, k, eigen, rank, random_state, forced=None):
    """The best of the cheap solvers: (SolverOutput, name of the solver that found it); with
    ``forced``, topics holding those words (the spannogram's repaired)."""
    from spca_cli.solvers.greedy import greedy
    from spca_cli.solvers.spannogram import spannogram
    from spca_cli.solvers.tpower import tpower

    found = []

    def constrained_spannogram():
        from spca_cli.constraints import repair

        out = spannogram(A, k, eigen=eigen, rank=rank, random_state=random_state)
        return out if forced is None else repair(A, k, forced, out, random_state=random_state)

    runs = {"tpower": lambda: tpower(A, k, eigen=eigen, random_state=random_state,
                                     forced=forced),
            "spannogram": constrained_spannogram,
            "greedy": lambda: greedy(A, k, forced=forced)}
    for name, run in runs.items():
        if name == "spannogram" and (eigen is None or len(eigen.values) < rank + 1):
            continue
        with warnings.catch_warnings():
            # a spannogram rank it refuses (too many candidates) is simply not a contender
            warnings.simplefilter("ignore", ConvergenceWarning)
            try:
                out = with_notes(run)
            except Exception as exc:  # noqa: BLE001 - a refused heuristic is skipped
                if name == "spannogram" and type(exc).__name__ == "SpcaParameterError":
                    continue
                raise
        found.append((out, name))
    # the best value; ties go to the earlier solver in the list
    return max(found, key=lambda pair: pair[0].value)


def _screen_bounds(model, k, rounding, start=None, forced=None):
    """Per word: an upper bound on lambda_max of every k-support (of the model) containing it.

    Also returns the weights w' of the (k-1)-word iteration, to warm-start the next round,
    and the entries of the model read.
    """
    if forced is not None:
        # ``forced``: the model's ForcedColumns; the supports are those holding the included
        # words (:func:`~spca_cli.constraints.forced_screen_bounds`)
        from spca_cli.constraints import forced_screen_bounds

        bound, w = forced_screen_bounds(model, forced, k, rounding, start=start,
                                        iterations=_SCREEN_ITERATIONS)
        return bound, w, float(model.CT.size * (_SCREEN_ITERATIONS + 2))
    if k == 1:
        return model.diag * rounding, None, float(model.size)
    # w' only has to be good, not converged: any w' > 0 gives a valid bound. Linearized steps
    # (policy iteration, as a certificate's from a cold start) get there in fewer: the KOS
    # sample's re-solved topic's first round took 4 steps instead of 11 (31 -> 13 ms), its
    # first round on exact rows 4 instead of 7, and dropped two more words
    inner = weighted_row_bound(model, k - 1, rtol=1e-4, max_iter=_SCREEN_ITERATIONS,
                               start=start, linearize=True)
    r = inner.value
    w = inner.weights
    read = np.array([inner.entries])
    bound = _screen_formula(model.diag, r, model.top_sums(w, k - 1, visited=read),
                            model.top_sums(1.0 / w, 1, visited=read))
    return bound * rounding, w, float(read[0])


def _screen_formula(diag, r, s, c):
    """r + c t* at the t* where A'_ii + s / t = r + c t (see the module docstring)."""
    q = r - diag
    disc = np.sqrt(q * q + 4.0 * c * s)
    with np.errstate(divide="ignore", invalid="ignore"):
        # t* = 2 s / (q + disc) is the stable form of the quadratic's positive root when q >= 0
        t = np.where(q >= 0, 2.0 * s / (q + disc), (disc - q) / (2.0 * c))
        bound = np.where(c > 0, r + c * t, np.maximum(r, diag))
    return np.where(np.isfinite(bound), bound, np.maximum(r, diag + s))


def _exact_rows_hopeless(model, k, w, lower, inner=None, most=None):
    """Whether exact rows for every word could not let screening do what it is for: every
    screening bound is evaluated with the Cauchy-Schwarz pairs taken as 0 at the weights ``w``,
    a lower estimate of what exact rows give there, and the words whose estimate is still at
    least ``lower`` would survive; hopeless when that is every word, or more than half of
    ``most`` (the words the search takes: on KOS and the fortunes the screening with exact rows
    kept 1.4 to 2.5 times the estimate, 727 -> 1,294, 865 -> 1,284, 1,129 -> 2,860, 1,355 ->
    2,926 words). Only decides whether to spend the work: the KOS sample's third topic formed all
    5,115 rows, 26M entries and two thirds of auto's budget, to drop none, and a KOS topic formed
    5,344 rows to keep them all."""
    if w is None or k < 2:
        return False
    zero = np.zeros_like(model.sqd)

    def sums(v, count):
        return offdiag_top_sums(model.CT, model.hpos, model.hrow, zero,
                                np.ascontiguousarray(v, dtype=np.float64), int(count),
                                model.prefixes, model.columns)

    r = float(np.max((model.diag * w + sums(w, k - 2)) / w))
    if r >= lower and inner is None:
        return True
    bound = _screen_formula(model.diag, r, sums(w, k - 1), sums(1.0 / w, 1))
    if inner is not None:
        beta2 = top_square_sums(model.CT, model.hpos, model.hrow, zero, k - 1, model.prefixes,
                                model.columns)
        bound = np.minimum(bound, _two_by_two(model.diag, inner, beta2))
    survivors = int(np.count_nonzero(bound >= lower))
    return survivors == model.size or (most is not None and 2 * survivors > most)


def _inner_screen_bounds(model, k, inner):
    """Per word i: an upper bound on lambda_max of every k-support of the model holding i, from
    ``inner`` >= lambda_max of every (k-1)-support. With I = {i} + J and a unit x = (a, y),
    x^T A'_I x <= A'_ii a^2 + 2 |a| ||b|| ||y|| + inner ||y||^2 (b = A'[J, i]), the quadratic
    form of [[A'_ii, beta], [beta, inner]] on (|a|, ||y||), so lambda_max(A'_I) is at most that
    2 x 2 matrix's larger eigenvalue for any beta >= ||b||: here beta^2 is the sum of the k-1
    largest A'_ij^2 (j != i; Cauchy-Schwarz outside the exact rows). Valid for any sign
    pattern; it drops the rare words that the row bound keeps when the best (k-1) words alone
    are near the target."""
    d = model.sqd * model.sqd  # A'_ii + eps >= |A'_ij|^2 / (A'_jj + eps)
    beta2 = top_square_sums(model.CT, model.hpos, model.hrow, d, k - 1, model.prefixes,
                            model.columns)
    return _two_by_two(model.diag, inner, beta2)


def _square_sums_read(model, k):
    """About the entries :func:`top_square_sums` reads on the model (the first k of each sorted
    row; whole rows without the sorted prefixes)."""
    h, n = model.CT.shape
    rows_h = h * k if model.prefixes is not None else h * n
    rows_out = (n - h) * k if model.columns is not None else (n - h) * h
    return float(rows_h + rows_out)


def _two_by_two(diag, inner, beta2):
    """The larger eigenvalue of [[diag, beta], [beta, inner]], rounded up."""
    center = 0.5 * (diag + inner)
    radius = np.sqrt((0.5 * (diag - inner)) ** 2 + beta2 * (1.0 + 1e-12))
    # a few rounded operations on numbers of the bound's size: a relative slack far above them
    return center + radius + 1e-12 * (np.abs(center) + radius)


def screen(A, model, k, lower, work=None, start=None, first=None, inner=None, most=None,
           forced=None):
    """Drop, repeatedly, every word whose screening bound is below ``lower``.

    A support worth more than ``lower`` holds only surviving words, so each round may restrict
    the model to the survivors. When a round drops nothing and the model still bounds pairs of
    words by Cauchy-Schwarz, it is rebuilt with exact rows for every survivor (if they fit in
    :data:`_MAX_DENSE`), which is what lets screening go on. Returns ``(model, complete)``:
    the surviving model, and False when the ``work`` budget stopped it early (fewer words dropped,
    never a wrong one). ``start``: weights on the model's words to begin the (k-1)-word
    iteration from (the k-word weights are close to its fixed point). ``first``: a dict that
    keeps the first round's bounds, which depend on the model and not on ``lower``, for the
    next call on the same model and start (the rungs of :func:`search`). ``inner``, a bound
    on every (k-1)-word support, adds :func:`_inner_screen_bounds` (each word keeps the
    smaller of its two bounds). ``most``: the survivors the caller can use (exact rows are
    not formed when far more would survive, :func:`_exact_rows_hopeless`).
    """
    rounding = 1.0 + 64 * np.finfo(float).eps * max(k, 1)
    from spca_cli.constraints import ForcedColumns

    fc = None if forced is None else ForcedColumns(A, model, forced)
    w = start
    round_one = True
    while model.size > k:
        if work is not None and work.exhausted:
            return model, False
        if round_one and first:
            bound, w = first["bound"], first["weights"]
        else:
            bound, w, entries = _screen_bounds(model, k, rounding, start=w, forced=fc)
            if work is not None:
                work.spend(entries)
            if round_one and first is not None:
                first.update(bound=bound, weights=w)
        round_one = False
        if inner is not None and k >= 2:
            bound = np.minimum(bound, _inner_screen_bounds(model, k, inner))
            if work is not None:
                work.spend(_square_sums_read(model, k))
        keep = bound >= lower
        if fc is not None:  # the included words are never dropped
            keep |= fc.mask(model.size)
        if not keep.all():
            model = model.restrict(keep)
            w = None if w is None else w[keep]
            fc = None if fc is None else fc.restrict(keep)
        elif (not model.is_exact and model.size <= _MAX_DENSE
              and not _exact_rows_hopeless(model, k, w, lower, inner, most)):
            model = RowModel.of(A, words=model.words, exact_rows=model.size)
            fc = None if fc is None else ForcedColumns(A, model, forced)
            if work is not None:
                work.spend(model.CT.size)
        else:
            break
    return model, True


class _Work:
    """What the search may still do: a count of |A'| entries to visit (weight steps, screening
    rounds, branch-and-bound nodes) and/or a wall-clock limit.

    auto's budget is counted in entries, never in seconds, so its topics and bounds do not
    depend on how busy the machine is; ``exact --time-limit`` is a wall-clock limit, as asked.
    """

    def __init__(self, units=None, seconds=None):
        self.left = None if units is None else float(units)
        self.spent = 0.0
        self.deadline = None if seconds is None else time.perf_counter() + seconds

    def spend(self, units):
        self.spent += units
        if self.left is not None:
            self.left -= units

    @property
    def exhausted(self):
        return ((self.left is not None and self.left <= 0)
                or (self.deadline is not None and time.perf_counter() > self.deadline))

    @property
    def reason(self):
        """What ended the search: ``"time limit"`` (the clock) or ``"budget"`` (the work)."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            return "time limit"
        return "budget"


class _Progress:
    """What the search tells a watcher (``report(text)``, a plain callback such as the CLI's
    status line on a terminal), at most every :data:`_PROGRESS_SECONDS`; None: nothing."""

    def __init__(self, report):
        self.report = report
        self.last = -np.inf

    def rung(self, ratio, lower, words):
        self._say(f"nothing above {lower / ratio:.6g} = best {lower:.6g} / {ratio:g}? "
                  f"screening {words:,} words", force=True)

    def nodes(self, lower, open_bound, nodes, words):
        ratio = lower / open_bound if open_bound > 0 else 1.0
        self._say(f"best {lower:.6g}, open nodes <= {open_bound:.6g} ({min(ratio, 1.0):.4f}), "
                  f"{nodes:,} nodes, {words:,} words")

    def _say(self, text, force=False):
        now = time.perf_counter()
        if force or now - self.last >= _PROGRESS_SECONDS:
            self.last = now
            self.report(text)


#: The least time between two progress reports of a search (and about what one call of the
#: numba branch and bound runs when someone watches)
_PROGRESS_SECONDS = 0.25


def _branch(A, survivors, k, lower, floor, work, weights=None, forced=None, blocks=None,
            progress=None):
    """Branch and bound over the surviving words for supports worth more than max(lower, floor);
    with ``forced``, over supports holding them (fixed in at the root node).

    ``weights`` (on the survivors) start the root's weight iteration: the certificate's, which
    the root's are close to, take a few steps where a cold start took up to 200 (half of the
    search's time on the KOS sample).

    ``blocks``, a dict the rungs of one search share, keeps the last survivors' dense block,
    |A'| and its row prefixes: a rung whose screening leaves the same words (every word, on a
    flat matrix) reuses them (on 14,344 words of tf-idf, 10 s of forming and sorting a rung).

    ``progress``, a :class:`_Progress`, hears the best value and the open nodes' largest bound
    between calls of the numba search, each call then limited to about
    :data:`_PROGRESS_SECONDS` of work (the same nodes in the same order: the search resumes).

    Returns ``(support or None, value, finished, open_bound, nodes)``: the best support found
    above ``lower`` (None if none), its value, whether the search finished, and the largest
    bound of the nodes left open (``-inf`` when finished).
    """
    words = survivors.words
    if forced is not None and not np.isin(forced, words).all():
        words, weights = np.union1d(words, forced), None
    key = words.tobytes()
    if blocks is not None and key in blocks:
        A_sub, B, prefixes, values = blocks[key]
    else:
        if blocks is not None:
            blocks.clear()  # (before the new one is formed: one block alive at a time)
        A_sub, B, prefixes, values = _dense_block(A, survivors, words)
        if blocks is not None:
            blocks[key] = A_sub, B, prefixes, values
    m = words.size
    root = RowModel(np.arange(m), np.diag(A_sub).copy(), B, np.arange(m), np.arange(m),
                    prefixes=(*prefixes, values))
    # (linearized steps, as screening's: the same nodes in fewer root steps)
    start = weighted_row_bound(root, k, start=weights,
                               max_iter=200 if weights is None else _ROOT_STEPS, rtol=1e-4,
                               linearize=True)
    stack_in = np.zeros((m + 2, m), dtype=np.bool_)
    stack_out = np.zeros((m + 2, m), dtype=np.bool_)
    stack_w = np.zeros((m + 2, m))
    stack_ub = np.zeros(m + 2)
    stack_w[0] = start.weights
    stack_ub[0] = start.value
    if forced is not None:
        stack_in[0, np.searchsorted(words, forced)] = True
    depth, nodes, best, value = 1, 0, np.zeros(k, dtype=np.int64), lower
    work.spend(start.entries)
    order, _, rest = prefixes
    work.spend(B.size)
    visited = np.zeros(1)
    rows_in_parallel = numba.get_num_threads() > 1  # (a node's rows on the parallel threads)
    # nodes per call from what a node has read so far (a whole row per node and step at first)
    node_cost = float(m * m * _NODE_ITERATIONS)
    while depth > 0 and not work.exhausted:
        chunk = _CHUNK if work.left is None else int(min(_CHUNK, max(1, work.left // node_cost)))
        before = visited[0]
        left = chunk
        while left > 0 and depth > 0:
            # (a watched chunk runs in pieces of about _PROGRESS_SECONDS: the same nodes, since
            # the budget, the clock and the cost estimate are looked at per chunk only)
            per_node = visited[0] / nodes if nodes else node_cost
            piece = left if progress is None else int(
                min(left, max(1, _PROGRESS_SECONDS * WORK_PER_SECOND // per_node)))
            depth, value, done = branch_and_bound_prefixed(
                A_sub, B, k, stack_in, stack_out, stack_w, stack_ub, depth, best, value, floor,
                piece, _NODE_ITERATIONS, _PRUNE_SLACK, order, rest, visited, values,
                rows_in_parallel)
            left -= done
            nodes += done
            if progress is not None and depth > 0:
                progress.nodes(value, float(max(stack_ub[:depth].max(), floor, value)), nodes, m)
        work.spend(visited[0] - before)
        if nodes:
            node_cost = max(visited[0] / nodes, 1.0)
    support = words[best] if value > lower else None
    open_bound = float(stack_ub[:depth].max()) if depth else -np.inf
    return support, value, depth == 0, open_bound, nodes


def _dense_block(A, survivors, words):
    """``(A_sub, B, prefixes, values)`` for a search over ``words``: A'[words, words], B =
    |A_sub| (float32 where that holds it exactly), each row's largest entries in order and
    their values."""
    if survivors.is_exact and words.size == survivors.size and A.is_nonnegative():
        # the model's exact rows are |A'| on these words, which is A' itself on a nonnegative
        # view: no pass over the documents (150 submatrices of the fortunes' groups took 0.8 s)
        if survivors.CT.dtype == np.float32 and A.exact_columns():
            # integer counts, each A'_ij formed exactly whichever word's column holds it: the
            # rows are symmetric and float32 already (the passes below give the same numbers,
            # in about twice the time: 31-39 ms against 14-20 on a KOS sample topic's 920 words)
            B = np.ascontiguousarray(survivors.CT[survivors.hpos])
            return _with_prefixes(B.astype(np.float64), B)
        A_sub = survivors.dense()
        A_sub = 0.5 * (A_sub + A_sub.T)  # (rows formed as columns of A' may differ by rounding)
    else:
        A_sub = A.submatrix(words)
    B = np.ascontiguousarray(A_sub if A.is_nonnegative() else np.abs(A_sub))
    if fits_float32(B):
        # the certificates' dtype (counts of co-occurrence): the row kernels below are then
        # the ones the certificate loaded, not a float64 signature of each (50 ms of loading)
        B = B.astype(np.float32)
    return _with_prefixes(A_sub, B)


def _with_prefixes(A_sub, B):
    """:func:`_dense_block`'s answer for the block ``A_sub`` and its ``B``: each row's largest
    entries in order, sorted once for the root's weight steps and every node (a row then stops
    once no later entry can enter its sum: the same bound; the budget counts the entries
    actually read), and their values."""
    prefixes = row_prefixes(B, min(B.shape[0], _NODE_PREFIX))
    return A_sub, B, prefixes, prefix_values(B, prefixes[0])


def search(A, k, incumbent, *, certificate=None, time_limit=None, work_units=None,
           forced=None, goal=1.0, progress=None):
    """Phases 2 and 3 from ``incumbent`` (a SolverOutput on ``A``), as a ladder of targets.

    Each rung takes a target theta = LB / ratio (ratio from :data:`_LADDER`, ending at 1):
    screening at theta keeps only the words that can be in a support worth more than theta,
    and branch and bound over them (pruning at theta) either finds such a support (a better
    topic: LB rises) or proves there is none, so OPT <= theta. High targets screen down to a few
    dozen words and are proved in a fraction of a second; the last rung (theta = LB) proves the
    incumbent optimal. The ladder stops at the time limit, when a budgeted search (auto) has a
    rung leave more than :data:`_MAX_BRANCH` words, or when one leaves more than
    :data:`_MAX_DENSE`; the bound is then the lowest theta proved (or the open nodes' largest
    bound, or the row bound).

    ``certificate`` is the view's :class:`~spca_cli.bounds.RowCertificate` when the caller has
    it (the pipeline computes one for every component), or a :class:`concurrent.futures.
    Future` of it (being made on another thread while the incumbent was found). Returns
    ``(indices, value, bound, finished, info)``: the best support found (the incumbent's unless
    the search beat it), its exact value, an upper bound on the optimum, and whether the
    incumbent is proved optimal (then ``bound`` is its value).

    ``forced``: the words every support must hold (the incumbent holds them); the bound and
    the proof are then for the best support holding them.

    ``goal``: the ladder does not start, or stops after a rung it proves, once the topic is
    certified at least this (value / bound, a better topic found on the way included); 1 runs
    it to the proof of optimality.

    ``progress``: a callback ``progress(text)`` told what the search is doing (each rung's
    target, then the best value against the open nodes' largest bound), at most every
    :data:`_PROGRESS_SECONDS`.
    """
    work = _Work(work_units, time_limit)
    if isinstance(certificate, Future):
        certificate = certificate.result()  # (made on another thread meanwhile)
    if certificate is None:
        certificate = row_certificate(A, k)
    if forced is not None:
        forced = np.asarray(forced, dtype=np.int64)
    found = _ladder(A, k, np.asarray(incumbent.indices, dtype=np.int64), float(incumbent.value),
                    certificate, work, _INNER_DEPTH, forced=forced, goal=goal,
                    progress=None if progress is None else _Progress(progress))
    found[4]["work"] = work.spent
    return found


def _screening_cost(root):
    """About the entries the first screening round reads: :data:`_SCREEN_ITERATIONS` weight
    steps, each reading what a step of the certificate's iteration (``root``) read."""
    return _SCREEN_ITERATIONS * root.entries / max(root.iterations, 1)


def _inner_bound(A, k, model, root, best_set, work, depth):
    """An upper bound on lambda_max of every (k-1)-word support of the model's words: the
    ladder of :func:`search` run for k - 1 words on the same model (the k-word weights start
    its iteration), from the best of the k-word topic's (k-1)-word subsets, spending the same
    work. (A support with a zero diagonal word outside the model is worth what its other words
    are, and fewer words are worth no more: lambda_max of a principal submatrix is at most that
    of the matrix.)"""
    sub = A.submatrix(best_set)
    values = [float(np.linalg.eigvalsh(np.delete(np.delete(sub, j, 0), j, 1))[-1])
              for j in range(best_set.size)]
    drop = int(np.argmax(values))
    start = weighted_row_bound(model, k - 1, start=root.weights, rtol=CERTIFICATE_RTOL,
                               max_iter=_INNER_STEPS)
    work.spend(start.entries)
    _, _, bound, _, _ = _ladder(A, k - 1, np.delete(best_set, drop), values[drop],
                                RowCertificate(model, start), work, depth - 1)
    return bound


def _ladder(A, k, best_set, lower, certificate, work, depth, forced=None, goal=1.0,
            progress=None):
    """:func:`search`'s ladder, spending ``work``; ``depth``: how many levels of (k-1)-word
    searches may serve its screening (:func:`_inner_bound`); ``forced``, ``goal`` as
    :func:`search`; ``progress`` a :class:`_Progress` (the inner (k-1)-word ladders report
    nothing)."""
    model, root = certificate.model, certificate.bound
    source = ROW_BOUND_SOURCE
    if forced is not None:
        from spca_cli.constraints import FORCED_ROW_SOURCE, ForcedColumns, forced_row_bound

        held = forced_row_bound(model, ForcedColumns(A, model, forced), k, start=root.weights,
                                rtol=CERTIFICATE_RTOL)
        if held.value < root.value:
            root, source = held, FORCED_ROW_SOURCE
    info = {"words": int(model.size)}
    every = model.words if forced is None else np.union1d(model.words, forced)
    if every.size <= k:
        # every support of k words holds all the words with A'_ii > 0: the optimum is theirs
        words = every
        value = float(np.linalg.eigvalsh(A.submatrix(words))[-1]) if words.size else 0.0
        fill = np.setdiff1d(np.flatnonzero(A.active()), words)[:k - words.size]
        if value > lower:
            best_set, lower = np.concatenate([words, fill]), value
        return best_set, lower, lower, True, {**info, "survivors": int(words.size), "nodes": 0}
    bound, finished, nodes, rungs = root.value, False, 0, []
    first_round = {}  # screening's first round on the root model, the same for every rung
    blocks = {}  # the last rung's dense block, for a rung with the same survivors
    stopped = None  # None: the work or the clock ran out
    most = _MAX_BRANCH if work.left is not None else _MAX_DENSE
    inner = None  # a bound on every (k-1)-word support, once a rung needed one
    if goal < 1.0 and lower >= goal * bound:
        # certified enough by the row bound alone
        info.update({"nodes": 0, "proved_ratios": [], "bound_source": source,
                     "stopped": "goal"})
        return best_set, lower, bound, False, info
    if (work.left is not None and work.left < _screening_cost(root)
            and bound > lower * (1.0 + 1e-12)):
        # the first screening round alone would spend the budget, and a search that stops
        # there proves nothing: the certificate's bound is the answer, without the work
        info.update({"nodes": 0, "proved_ratios": [], "bound_source": source,
                     "stopped": "budget"})
        return best_set, lower, bound, False, info
    for ratio in _LADDER:
        theta = lower / ratio
        if theta >= bound * (1.0 - 1e-12):
            continue  # already proved
        if work.exhausted:
            break
        if progress is not None:
            progress.rung(ratio, lower, model.size)
        survivors, complete = screen(A, model, k, theta, work, start=root.weights,
                                     first=first_round, inner=inner, most=most, forced=forced)
        if complete and survivors.size > most and inner is None and depth > 0 and k > 2:
            # the row bound of k - 1 words is near theta, so no word drops: a search for k - 1
            # words proves a lower bound on them, from which rare words drop
            inner = _inner_bound(A, k, model, root, best_set, work, depth)
            if inner < theta and not work.exhausted:
                survivors, complete = screen(A, model, k, theta, work, start=root.weights,
                                             first=first_round, inner=inner, most=most,
                                             forced=forced)
        if not complete:
            break
        info["survivors"] = int(survivors.size)
        held_words = (survivors.size if forced is None
                      else np.union1d(survivors.words, forced).size)
        if held_words < k:
            proved, open_bound = True, -np.inf
        elif survivors.size > most:
            stopped = (f"{survivors.size} words survive screening at {ratio:g} of the best "
                       f"found, more than the {most} branch and bound takes")
            # too many words to branch over; their own row bound may still improve the bound:
            # from the root's weights on them, to the certificate's precision
            start = root.weights[np.searchsorted(model.words, survivors.words)]
            kept = max(theta, weighted_row_bound(survivors, k, start=start,
                                                 rtol=CERTIFICATE_RTOL).value)
            if kept < bound:
                bound, source = kept, f"{ROW_BOUND_SOURCE} of the screened words"
            break
        else:
            start = root.weights[np.searchsorted(model.words, survivors.words)]
            support, value, proved, open_bound, done = _branch(A, survivors, k, lower, theta,
                                                               work, start, forced, blocks,
                                                               progress)
            nodes += done
            if support is not None:  # a better topic than the incumbent
                best_set, lower = support, value
        if proved:
            bound, source = min(bound, max(theta, lower)), PROVED_SOURCE
            rungs.append(ratio)
            if ratio == 1.0:
                finished = True
                bound = lower
            elif lower >= goal * bound:
                stopped = "goal"
                break
        else:
            if max(theta, lower, open_bound) < bound:
                bound, source = max(theta, lower, open_bound), ANYTIME_SOURCE
            break
    if bound <= lower * (1.0 + 1e-12):  # e.g. the row bound itself met the incumbent
        finished, bound = True, lower
    info.update({"nodes": int(nodes), "proved_ratios": rungs, "bound_source": source})
    if not finished:
        info["stopped"] = stopped or work.reason
    return best_set, lower, bound, finished, info


def _solve(A, k, *, eigen, rank, random_state, time_limit, work_units, certificate, name,
           budget=None, forced=None, incumbent=None, goal=1.0, progress=None):
    if incumbent is None:
        incumbent, found_by = _incumbent(A, k, eigen, rank, random_state, forced)
    else:
        found_by = incumbent.info.get("found_by", "incumbent")
    best_set, value, bound, finished, info = search(A, k, incumbent, certificate=certificate,
                                                    time_limit=time_limit,
                                                    work_units=work_units, forced=forced,
                                                    goal=goal, progress=progress)
    improved = value > incumbent.value * (1.0 + 1e-10)  # not a rounding-level "gain"
    if improved:
        found_by = "branch and bound"
    source = info.pop("bound_source", ROW_BOUND_SOURCE)
    work = info.pop("work")
    info = {"found_by": found_by, **info}
    if budget is not None:
        info["budget_used"] = work / WORK_PER_SECOND
    if finished:
        bounds = [(bound * (1.0 + 1e-12), OPTIMAL_SOURCE)]
    else:
        bounds = [(bound, source)]
    stopped = info.pop("stopped", None)
    facts = {"bounds": bounds, "exact": bool(finished), "time_limited": stopped == "time limit",
             "info": info}
    if stopped == "budget":
        # auto's budget is work, not time: say what was proved and how to prove more (the
        # option's name from the registry, where the CLI's options come from)
        from spca_cli.solvers.registry import solver_spec

        flag = solver_spec("auto").param("budget").flag
        warnings.warn(f"auto: certified {value / bound:.4f} when its proof budget ({budget:.3g} s "
                      f"of work) ran out; a longer proof: {flag} {longer_budget(budget):.3g}",
                      ConvergenceWarning, stacklevel=3)
    if not finished and name == "exact":
        warnings.warn(f"exact: not proved optimal ({stopped}); the topic is the best found and "
                      f"its bound {bound:.8g} comes from {source}", ConvergenceWarning,
                      stacklevel=3)
    if improved:
        return finish_component(A, best_set, **facts)
    return finish_component(A, incumbent.indices, incumbent.weights, **facts)


def longer_budget(budget):
    """The budget a note suggests for a longer proof than ``budget`` gave: four times it, or
    the default for a budget of 0."""
    return 4 * budget if budget > 0 else AUTO_BUDGET


def exact(A, k, *, eigen=None, rank=2, random_state=0, time_limit=None, certificate=None,
          forced=None, incumbent=None, progress=None):
    """The provably best k-word topic of ``A`` by branch and bound (see the module docstring).

    Parameters
    ----------
    A : Gram
        The (possibly deflated) co-occurrence operator of shape (n_words, n_words).
    k : int
        Number of nonzero words.
    eigen : Eigen, optional
        Leading eigenpairs of ``A`` (the spannogram incumbent needs ``rank + 1`` of them).
    rank : int, default=2
        Rank of the spannogram that competes for the incumbent.
    random_state : int or None, default=0
        Passed to the heuristics that find the incumbent.
    time_limit : float, optional
        Seconds for the branch and bound (the incumbent's solvers always finish); at the limit
        the best topic found is returned with the best bound proved so far and a
        ConvergenceWarning, as when a rung of the ladder leaves too many words to branch over.
    certificate : RowCertificate or Future, optional
        The weighted row bound of ``A`` for ``k`` (:func:`spca_cli.bounds.row_certificate`),
        when the caller has computed it already, or a :class:`concurrent.futures.Future` of
        it being made on another thread (the search waits for it after the incumbent).
    forced : array-like of int, optional
        Words every support must hold (``include``: at most k active words); the topic is then
        the provably best one holding them.
    incumbent : SolverOutput, optional
        A topic of ``A`` in hand: the search starts from it (no cheap solvers run first).
    progress : callable, optional
        ``progress(text)``, told what the search does as it goes (each rung's target, then the
        best value against the open nodes' largest bound), at most four times a second: the
        CLI's status line on a terminal.

    Returns
    -------
    SolverOutput
        ``bounds`` holds the optimum itself (``"branch and bound: optimal"``) once the search
        finished, and ``exact`` says so. ``info``: ``found_by`` (which method found the topic),
        ``words`` (words with A'_ii > 0), ``survivors`` (after screening), ``nodes``.

    Examples
    --------
    >>> import numpy as np
    >>> from spca_cli.matrix import Gram
    >>> S = np.array([[1, 1, 0, 0], [1, 1, 1, 0], [0, 0, 1, 1], [0, 1, 1, 1.0]])
    >>> out = exact(Gram.from_documents(S), 2)
    >>> sorted(out.indices.tolist()), round(out.value, 6), out.exact
    ([1, 2], 5.0, True)
    """
    k = check_k(A, k)
    if time_limit is not None:
        time_limit = check_float("time_limit", time_limit, 0.0, np.inf, low_open=True)
    return _solve(A, k, eigen=eigen, rank=rank, random_state=random_state,
                  time_limit=time_limit, work_units=None, certificate=certificate,
                  name="exact", forced=forced, incumbent=incumbent, progress=progress)


def auto(A, k, *, eigen=None, rank=2, random_state=0, time_limit=None, budget=AUTO_BUDGET,
         certificate=None, forced=None, incumbent=None, goal=1.0, progress=None):
    """The best of TPower, the rank-``rank`` spannogram and greedy, certified by the weighted
    row bound and closed by a bounded search: ``budget`` nominal seconds (default 3), counted
    as :data:`WORK_PER_SECOND` entries of |A'| visited per second, so the result is the same on
    a busy machine; ``time_limit`` adds a wall-clock limit. ``info["found_by"]`` names the
    method whose topic was kept; ``exact`` says whether the search proved it optimal.
    ``forced``, ``incumbent``, ``progress``: as for :func:`exact`. ``goal``: the search ends
    once the topic is certified at least this (:func:`search`; the set's topics solved again
    on their views ask for 0.99), 1 (the default) when it is proved optimal.

    Examples
    --------
    >>> import numpy as np
    >>> from spca_cli.matrix import Gram
    >>> S = np.array([[1, 1, 0, 0], [1, 1, 1, 0], [0, 0, 1, 1], [0, 1, 1, 1.0]])
    >>> out = auto(Gram.from_documents(S), 2)
    >>> round(out.value, 6), out.exact
    (5.0, True)
    """
    k = check_k(A, k)
    budget = check_float("budget", budget, 0.0, np.inf)
    if time_limit is not None:
        time_limit = check_float("time_limit", time_limit, 0.0, np.inf, low_open=True)
    return _solve(A, k, eigen=eigen, rank=rank, random_state=random_state,
                  time_limit=time_limit, work_units=budget * WORK_PER_SECOND,
                  certificate=certificate, name="auto", budget=budget, forced=forced,
                  incumbent=incumbent, goal=check_float("goal", goal, 0.0, 1.0),
                  progress=progress)

