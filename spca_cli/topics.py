"""The one pipeline behind ``spca topics``, ``spca daily`` and ``spca reproduce``.

input (Corpus or MatrixInput) -> Gram operator A -> eigenpairs -> solver -> components
(deflating between them) -> bounds -> :class:`TopicsResult`, which :mod:`spca_cli.report` renders.

Every component's ``explained_variance`` is measured on the ORIGINAL A, while its bound and
``certified_ratio`` refer to the problem the solver actually faced (A after deflation), as
SPEC.md defines them.

``include`` and ``exclude`` (:mod:`spca_cli.constraints`): excluded words are masked out of A
before the first eigen step (the masked A is the problem: its eigenvalues are reported); every
topic holds the included words, its bounds bound the best topic holding them, and ``remove``
deflation removes only a topic's other words, so the topics share the included words and are
otherwise disjoint (no total bound is reported then: the supports are not disjoint). The joint
set search needs disjoint topics: with included words the topics are found one at a time.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from spca_cli import bounds as _bounds
from spca_cli.coherence import coherence_from_counts, coherence_from_documents, topic_coherence
from spca_cli.corpus.core import input_gram
from spca_cli.params import DEFAULTS, DEFLATIONS, check_run, resolve_deflation
from spca_cli.solvers.registry import REGISTRY, solver_spec
from spca_cli.spectrum import (CANDIDATE_TOL, TOPICS_TOL, first_call_tolerances,
                               top_eigenpairs)
from spca_cli.threads import beside

logger = logging.getLogger(__name__)

# The joint set search (``deflation="joint"``, :func:`_run_set`); the values were measured on
# the airline tweets and KOS (k = 10, 5 topics): more sketch samples did not raise the total
# the local search reaches.
#: matchings drawn on the rank-K sketch for the start, and chunks refined
SET_SAMPLES, SET_REFINE = 64, 1
#: the set holding the best single topic is reported unless the free set explains more than
#: this share more
KEEP_FIRST_SLACK = 0.01
#: a topic certified below this on its view (the others' words removed) is solved again there
#: (the topics solved again share one topic's proof budget: :func:`_topic_budget`)
SET_CERTIFIED = 0.99
#: the share of its variance each topic of the set may give up for coherence (NPMI over the
#: documents; :func:`~spca_cli.solvers.setsearch.polish_coherence`). Without the trade the set's
#: mean NPMI is 0.240 (KOS sample), 0.178 (fortunes), 0.249 (KOS), 0.060 (airline tweets); at
#: 0.01 it is 0.273, 0.231, 0.288, 0.174 for 0.4-0.7% of the total, each topic still certified
#: >= 0.99. At 0.01 :data:`COHERENCE_FLOOR` is what stops the trade on
#: all four (0.02 gives the same topics); below it the trade stops earlier (at 0.005 the NPMI
#: is 0.263 and 0.217 on the KOS sample and the fortunes)
COHERENCE_SHARE = 0.01
#: ... and no more than keeps it at this share of the bound on its view (above SET_CERTIFIED:
#: the views change a little as the other topics trade words)
COHERENCE_FLOOR = 0.991

__all__ = ["Topic", "TopicsResult", "TotalBound", "run_topics", "DEFLATIONS", "DEFAULTS"]


@dataclass(frozen=True)
class TotalBound:
    """An upper bound on the total explained variance of disjoint topics (SPEC's
    ``total_upper_bound``, ``total_bound_source``, ``total_certified_ratio``)."""

    value: float
    source: str
    certified_ratio: float


@dataclass
class Topic:
    """One reported component (a topic); ``exact``, ``time_limited`` and ``info`` are its
    solver's (:class:`~spca_cli.solvers._base.SolverOutput`)."""

    index: int
    indices: np.ndarray
    words: list
    weights: np.ndarray
    explained_variance: float
    variance_ratio: float
    cumulative_ratio: float
    upper_bound: float
    bound_source: str
    certified_ratio: float
    problem_value: float
    exact: bool | None = None
    time_limited: bool = False
    info: dict = field(default_factory=dict)
    #: mean NPMI of the topic's word pairs over the documents (:mod:`spca_cli.coherence`);
    #: None without documents (a matrix given as A)
    coherence: float | None = None


@dataclass
class TopicsResult:
    solver: str
    params: dict
    input: dict
    eigenvalues: list
    components: list
    total_explained_variance: float
    seconds: dict
    total_bound: TotalBound | None = None
    notes: list = field(default_factory=list)
    eigensolver: dict = field(default_factory=dict)
    #: the joint search of the set (``deflation="joint"``): :func:`_set_summary`
    set_search: dict | None = None
    #: the words included and excluded (:class:`~spca_cli.constraints.Constraints`), or None
    constraints: object = None


def run_topics(data, *, solver=DEFAULTS["solver"], k=DEFAULTS["k"],
               n_components=DEFAULTS["n_components"], rank=DEFAULTS["rank"],
               deflation=DEFAULTS["deflation"], random_state=DEFAULTS["random_state"],
               time_limit=None, solver_options=None, seconds=None, eigensolver="auto",
               include=None, exclude=None, progress=None):
    """Find ``n_components`` sparse topics of ``data`` and certify each.

    Parameters
    ----------
    data : Corpus or MatrixInput
        From :func:`spca_cli.corpus.load_input`: a document-word matrix ``S`` (A = S^T S) or a
        dense PSD matrix ``A``.
    solver : str
        A key of ``SOLVERS`` (one component at a time) or ``JOINT_SOLVERS`` (all at once).
    k : int
        Words per topic.
    n_components : int
        Number of topics.
    rank : int
        d, the rank of the approximation A_d (spannogram, nonneg) or of the sketch (bipartite).
    deflation : {'joint', 'remove', 'projection'} or None
        How the topics are found together: ``joint`` searches the best set of disjoint topics
        (:func:`_run_set`); ``remove`` and ``projection`` find one topic at a time, changing A
        between them. None: ``joint`` for the auto solver, ``remove`` for a named one
        (:func:`~spca_cli.params.resolve_deflation`). Ignored by joint solvers.
    random_state : int or None
        Seed for every random choice (eigensolver start, sampling).
    time_limit : float or None
        Seconds a solver may spend per component before returning its best so far.
    solver_options : dict, optional
        Extra keyword arguments for the solver (e.g. ``init`` for tpower).
    seconds : dict, optional
        Timings measured before this call (e.g. ``{"ingest": 1.2}``), reported with ours.
    eigensolver : {"auto", "krylov", "arpack", "dense"}, default="auto"
        The ``method`` of :func:`~spca_cli.spectrum.top_eigenpairs` for every eigen step; what
        ran, the sparse products with S it made per call and the worst residual are reported
        in ``TopicsResult.eigensolver``.

    include, exclude : list of str or str, optional
        Words (labels) every topic must contain, and words no topic may contain (a list, or one
        comma-separated string); see :mod:`spca_cli.constraints`. A word not in the vocabulary,
        more included words than k, or a word in both is a
        :class:`~spca_cli.errors.SpcaUsageError`.

    progress : callable, optional
        ``progress(text)``, told what a proof search (``exact``, ``auto``) is doing, with the
        topic it is for: ``"topic 1: best 6.07514, open nodes <= 6.11691 (0.9932), 12 nodes,
        4,330 words"`` (the incumbent, the largest bound of the nodes still open and their
        ratio); the CLI shows it beside its spinner on a terminal.

    Returns
    -------
    TopicsResult
    """
    solver_options = dict(solver_options or {})
    seconds = dict(seconds or {})
    A0, labels, summary = input_gram(data)
    deflation = resolve_deflation(solver, deflation)
    if include and deflation == "joint":
        deflation = "remove"  # topics that share the included words are not a disjoint set
    constraints = None
    if include or exclude:
        from spca_cli.constraints import resolve
        from spca_cli.solvers._base import check_int

        constraints = resolve(labels, include, exclude, k=check_int("k", k, 1),
                              n_components=check_int("n_components", n_components, 1),
                              deflation=deflation,
                              joint=solver if solver_spec(solver).joint else None)
        if constraints.exclude.size:
            A0 = A0.remove(constraints.exclude)
    forced = None if constraints is None else constraints.forced
    k, n_components, rank = check_run(
        solver, int(A0.active().sum()), k=k, n_components=n_components, rank=rank,
        deflation=deflation, random_state=random_state, eigensolver=eigensolver,
        time_limit=time_limit, solver_options=solver_options,
        shared=0 if forced is None else forced.size)
    joint = REGISTRY[solver].joint
    n_eig = max(rank + 1, n_components + 1, 2)

    eigen_calls, eigen_notes = [], []
    seconds["eigen"] = 0.0

    def eigenpairs(A, p, start=None, tol=TOPICS_TOL, previous=None, coordinates=None,
                   confirm=True):
        # the accuracy each use needs: spectrum.py's TOPICS_TOL and CANDIDATE_TOL say why
        t = time.perf_counter()
        e = top_eigenpairs(A, p, random_state=random_state, start=start, method=eigensolver,
                           tol=tol, previous=previous, coordinates=coordinates, confirm=confirm)
        seconds["eigen"] += time.perf_counter() - t
        # what the summary reports, not the pairs: a call's vectors and carry are n x 2(p + 3)
        eigen_calls.append((e.method, e.sparse_products,
                            float(np.max(e.residuals) / e.values[0]) if e.values[0] > 0 else 0.0))
        if e.unverified and "arpack" in e.method:
            # (later calls from old Ritz vectors are unverified by design: no note for them)
            eigen_notes.append(_unverified_note(e))
        return e

    # the first certificate forms the columns of A's first exact rows whatever the solver: those
    # the column cache keeps for every view start the first eigen step with no product
    # (spectrum.py, ``coordinates``); all of them when the certificate reads them where they
    # are kept (dupes-1M: 256 columns of 197,316 words, where the cache's room holds 106), none
    # on a backend that keeps no column
    room = A0.column_room()
    coordinates = _bounds.first_exact_words(A0)
    if not (room and _bounds.reads_kept_rows(A0)):
        coordinates = coordinates[:room]
    searches_set = not joint and deflation == "joint" and n_components > 1
    certificate = None
    if searches_set and "certificate" in REGISTRY[solver].inputs and A0.exact_columns():
        # A's certificate, which the set's solver reads (auto, exact), needs nothing of the
        # eigen step but the columns it starts from: formed first, the certificate is made
        # beside the eigen step, the sketch and its set's search (where A's columns are the
        # same numbers whichever thread forms them: Gram.exact_columns)
        if len(coordinates):
            A0.keep_columns(coordinates)
        certificate = beside(_bounds.row_certificate, A0, k)
    # the pairs past rank + 1 serve only the total bounds and the reported eigenvalues
    eigen0 = eigenpairs(A0, n_eig, tol=first_call_tolerances(n_eig, max(rank + 1, 2)),
                        coordinates=coordinates)
    seconds["solve"] = 0.0
    lam = eigen0.values

    set_search = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if joint:
            found, total_list, solver_notes = _run_joint(
                solver, A0, eigen0, k, n_components, rank, random_state, time_limit,
                solver_options, seconds)
        elif searches_set:
            found, total_list, set_search = _run_set(
                solver, A0, eigen0, labels, k, n_components, rank, random_state, time_limit,
                solver_options, seconds, eigenpairs, progress, certificate=certificate)
            solver_notes = _solver_notes(solver, found)
        else:
            # one topic asked for: the best set of one is the best topic
            found, total_list = _run_deflation(
                solver, A0, eigen0, labels, k, n_components, rank,
                "remove" if deflation == "joint" else deflation, random_state, time_limit,
                solver_options, seconds, eigenpairs, forced, progress)
            solver_notes = _solver_notes(solver, found)
    notes = [str(w.message) for w in caught] + solver_notes + eigen_notes
    if forced is not None:
        words = ", ".join(constraints.include_words)
        notes.append(f"every topic contains {words}; each upper bound is for the best {k}-word "
                     f"topic containing {'it' if forced.size == 1 else 'them'}")
    topics = _topics(found, A0, labels, lam, notes)
    _add_coherence(topics, A0, data, summary)
    total_bound = None if total_list is None else _total_bound(topics, total_list, notes)

    notes = list(dict.fromkeys(notes))  # the same warning from several components: once
    params = {"k": k, "components": n_components, "rank": rank,
              "deflation": None if joint else deflation, "seed": random_state}
    if time_limit is not None:
        params["time_limit"] = time_limit
    params.update({key: val for key, val in solver_options.items() if val is not None})
    if eigensolver != "auto":
        params["eigensolver"] = eigensolver
    return TopicsResult(
        solver=solver, params=params, input=summary,
        eigenvalues=[float(v) for v in lam[:max(n_components, rank + 1)]],
        components=topics, total_explained_variance=float(sum(t.explained_variance for t in topics)),
        seconds=seconds, total_bound=total_bound, notes=notes,
        eigensolver=_eigensolver_summary(eigen_calls),
        set_search=None if set_search is None else _set_summary(set_search, A0, labels),
        constraints=constraints)


def _set_summary(search, A0, labels):
    """What the set search reports: the totals of the set found and of the best set holding
    the best single topic, whether that one was kept, and that topic (words, value, bound)."""
    best = search["best_topic"]
    return {"total": search["total"], "start_total": search["start_total"],
            "searched_total": search["searched_total"],
            "coherence_steps": search["coherence_steps"],
            "total_with_best_topic": search["total_with_best_topic"],
            "best_topic_kept": search["best_topic_kept"],
            "best_topic_words": [str(labels[i]) for i in best.indices],
            "best_topic_value": float(best.value), "moves": search["moves"],
            "resolved": search["resolved"]}


def _eigensolver_summary(calls):
    """What the eigen steps cost: method(s), sparse products with S per call, worst residual."""
    methods = list(dict.fromkeys(method for method, _, _ in calls))
    return {"method": "/".join(methods), "calls": len(calls),
            "sparse_products": [products for _, products, _ in calls],
            "max_relative_residual": max(relative for _, _, relative in calls)}


def _add_coherence(topics, A0, data, summary):
    """Each topic's NPMI coherence over the documents: from S's columns in this process; for
    documents held by a cluster, from A[T, T] when S is binary (then A_ij counts the documents
    holding both words, A_ii those holding i); none for a dense A or a weighted S elsewhere."""
    if A0.S is not None:
        documents_of = getattr(A0.backend, "documents_of", None)
        for topic in topics:
            # (the backend's column form of S, made once: converting a 16M-entry S for each
            # topic took 0.17 s a topic)
            topic.coherence = (
                topic_coherence(A0.S, topic.indices) if documents_of is None else
                coherence_from_documents(*documents_of(topic.indices), A0.S.shape[0]))
        return
    options = getattr(data, "options", None) or {}
    if options.get("weighting") == "binary" and summary.get("documents"):
        for topic in topics:
            together = A0.submatrix(np.asarray(topic.indices))
            topic.coherence = coherence_from_counts(together, summary["documents"])


def _unverified_note(eigen):
    return (f"eigensolver: {eigen.method} may miss an eigenvalue or a copy of a repeated one; "
            "the bounds that use eigenvalues rest on the trace its pairs leave out (weaker, "
            "still proofs)")


def _untrusted_note(which):
    return (f"{which}: a bound from the eigenpairs was below what the topics attain (the "
            "eigensolver missed an eigenvalue, such as a copy of a repeated one); only the "
            "bounds that use no eigenpair certify it")


def _topics(found, A0, labels, lam, notes):
    """The reported topics: each solver output measured on the original A, with its tightest
    trusted bound (:func:`~spca_cli.bounds.trusted`; a note in ``notes`` when some were not)
    and its share of the i-th eigenvalue (alone and with the topics before it)."""
    topics, cumulative, lam_sum = [], 0.0, 0.0
    for index, (out, bound_list) in enumerate(found, start=1):
        explained = A0.sparse_quadratic(out.indices, out.weights)
        lam_i = float(lam[index - 1]) if index - 1 < len(lam) else 0.0
        cumulative += explained
        lam_sum += lam_i
        bound_list, dropped = _bounds.trusted(bound_list, out.value)
        if dropped:
            notes.append(_untrusted_note(f"component {index}"))
        ub, source = _bounds.tightest(bound_list)
        ub = _bounds.cover_rounding(ub, out.value, float(lam[0]) if len(lam) else 0.0,
                                    len(out.indices))
        topics.append(Topic(
            index=index, indices=out.indices, words=[str(labels[i]) for i in out.indices],
            weights=out.weights, explained_variance=explained,
            variance_ratio=explained / lam_i if lam_i > 0 else 0.0,
            cumulative_ratio=cumulative / lam_sum if lam_sum > 0 else 0.0,
            upper_bound=ub, bound_source=source,
            certified_ratio=_bounds.certified_ratio(out.value, ub), problem_value=out.value,
            exact=out.exact, time_limited=out.time_limited, info=out.info))
    return topics


def _time_limit_note(solver, which):
    exact_on = REGISTRY[solver].exact_on
    exactness = f" and not certified exact on {exact_on}" if exact_on else ""
    return (f"{which}: {solver} stopped at the time limit; the result is the best found so "
            f"far{exactness}")


def _solver_notes(solver, found):
    """Each component's notes; a time-limited one that said nothing gets the generic note."""
    notes = []
    for index, (out, _) in enumerate(found, start=1):
        notes += out.notes
        if out.time_limited and not out.notes:
            notes.append(_time_limit_note(solver, f"component {index}"))
    return notes


def _run_deflation(solver, A0, eigen0, labels, k, n_components, rank, deflation, random_state,
                   time_limit, solver_options, seconds, eigenpairs, forced=None, progress=None):
    """One component at a time, deflating A between them; with ``forced`` (included words)
    every component holds them and ``remove`` deflation removes only its other words.

    Returns [(SolverOutput, its bound list)] and the total bound list (None unless the
    supports are disjoint)."""
    spec = REGISTRY[solver]
    A, eigen = A0, eigen0
    source = None  # the view A was made from (remove deflation: its Ritz vectors carry over)
    found = []
    disjoint = deflation == "remove" and forced is None
    seconds["bounds"] = 0.0
    certificate = None
    n_pairs = max(rank + 1, 2)  # what the solvers use of a deflated view
    # a solver that makes its candidates from the pairs before the certificate may get a guess
    # on a later view (the carried vectors' own pairs, no product); one that searches from the
    # certificate (auto, exact) would search again, one that uses no pairs (greedy) has
    # nothing to gain
    eligible = "certificate" not in spec.inputs and "eigen" in spec.inputs
    guessing, converged_pairs = False, None
    # (lambda_1 of A: the rounding of a view that is zero up to rounding, _nothing_better)
    scale = float(eigen0.values[0]) if len(eigen0.values) else 0.0
    for index in range(1, n_components + 1):
        if index > 1:
            # the deflated view's leading eigenvectors are close to the last Ritz block: start
            # there; the solver needs them only to generate candidates (CANDIDATE_TOL)
            def converged_pairs(confirm=True, A=A, last=eigen, made_from=source):
                return eigenpairs(A, n_pairs, start=last.basis, tol=CANDIDATE_TOL,
                                  previous=(made_from, last), confirm=confirm)

            eigen = converged_pairs(confirm=not guessing)
        # remove deflation: the last view's certificate, restricted, starts this one
        out, bound_list, certificate, eigen = _solve_view(
            spec, A, k, eigen, rank, random_state, time_limit, solver_options, seconds,
            eigenpairs, previous=certificate if disjoint and index > 1 else None, forced=forced,
            consume_previous="certificate" in spec.inputs,
            progress=_labelled(progress, f"topic {index}"),
            converged_pairs=converged_pairs if guessing else None, rounding_scale=scale)
        # the next view guesses when this one's topic is certified 1.0000 (every view of the
        # 1M-tweet benchmarks but the dupes' first; none of the airline tweets' or KOS's):
        # a guess that does not hold costs its view a second solve and certificate
        guessing = eligible and _nothing_better(out.value, bound_list, scale, k)
        found.append((out, bound_list))
        logger.info("component %d: %s", index, " ".join(str(labels[i]) for i in out.indices))
        if index < n_components:
            source = A
            if deflation == "remove":
                A = A.remove(out.indices if forced is None
                             else np.setdiff1d(out.indices, forced))
            else:
                x = np.zeros(A.n)
                x[out.indices] = out.weights
                A = A.project_out(x)
    if not disjoint:
        return found, None
    # disjoint supports (remove deflation): the same total bounds as for a joint solver, but
    # the sum of the K largest ratios of the first view's weights: it is 1.17-1.85 times the
    # tightest total bound on the four real corpora and the three 1M generators, and tracking
    # it would hold the first certificate to plain weight steps that cannot stop once the
    # topic is proved (dupes-1M: 13 steps of 40 ms where linearized ones take 7)
    return found, _bounds.total_bounds(A0, k, n_components, eigen0)


def _labelled(progress, label):
    """``progress`` (a ``progress(text)`` callback, or None) with ``label: `` before each text."""
    if progress is None:
        return None
    return lambda text: progress(f"{label}: {text}")


def _solve_view(spec, A, k, eigen, rank, random_state, time_limit, solver_options, seconds,
                eigenpairs, *, previous=None, forced=None, consume_previous=False,
                progress=None, converged_pairs=None, rounding_scale=0.0, certificate=None):
    """One topic of the view ``A`` (eigenpairs ``eigen``), certified: the solver's output, its
    bound list, the view's :class:`~spca_cli.bounds.RowCertificate` (``previous`` as
    :func:`~spca_cli.bounds.row_certificate` takes it) and the eigenpairs the bounds used
    (refined ones when the first were too loose). ``forced``: words the topic
    must hold (its bounds then bound the best topic holding them). ``consume_previous``:
    ``previous`` is not used again (:func:`~spca_cli.bounds.row_certificate`). ``progress``:
    the solver's progress callback, labelled with the topic.

    ``converged_pairs``, given when ``eigen`` is a guess (a carried basis's own pairs,
    ``Eigen.confirmed`` False), returns the pairs the view gets without guessing: when the
    topic found on the guess is not certified 1.0000, the view is solved and certified again
    on those, as if there had been no guess (the returned pairs are then confirmed), and what
    the solver logged of the guess is dropped. ``rounding_scale``: lambda_1 of the undeflated
    A, whose rounding a topic's value may exceed a bound by (:func:`_nothing_better`).
    ``certificate``: a :class:`concurrent.futures.Future` of the view's certificate, being
    made beside the run (without ``previous``), for a solver that reads it: the solver starts
    at once and waits for it only where it reads it."""
    made = certificate  # (``certificate`` names the view's certificate below)
    n_pairs = max(rank + 1, 2)  # what the solvers use of a deflated view
    # (the pairs are given with each solve: a guess may be replaced)
    available = {"rank": rank, "random_state": random_state, "time_limit": time_limit,
                 "forced": forced, "progress": progress}

    def attempt(eigen):
        inputs = {**available, "eigen": eigen}
        out = None
        if "certificate" not in spec.inputs:
            # a solver that does not use the certificate runs first: the value it reaches
            # lets the certificate stop as soon as it proves that value optimal
            out = _solve(spec, A, k, inputs, None, solver_options, seconds)
        elif made is not None:
            # the certificate is being made beside: the solver finds its incumbent meanwhile
            # and waits for it where it reads it
            out = _solve(spec, A, k, inputs, made, solver_options, seconds)
        # the certificate is a property of the view and k, whatever the solver: made here (or
        # beside)
        t = time.perf_counter()
        if made is not None:
            certificate = made.result()
        else:
            certificate = _bounds.row_certificate(A, k, previous=previous,
                                                  attained=None if out is None else out.value,
                                                  consume_previous=consume_previous)
        held = None
        if forced is not None:
            held = _forced_certificate(A, k, certificate, forced, out)
        seconds["bounds"] += time.perf_counter() - t
        if out is None:
            out = _solve(spec, A, k, inputs, certificate, solver_options, seconds)
        solver_bounds = _certifying_bounds(spec, A, out)
        bound_list = _component_bounds(A, k, eigen, certificate, solver_bounds, seconds, held)
        return out, certificate, held, solver_bounds, bound_list

    guess = converged_pairs is not None and not eigen.confirmed
    if guess:
        # (only a solver that does not search from the certificate guesses: consume_previous
        # is False, and the guess's certificate reads the last view's model through a mask, as
        # the certificate made again after a guess that does not hold does)
        with _HeldLog(logging.getLogger("spca_cli")) as said:
            out, certificate, held, solver_bounds, bound_list = attempt(eigen)
        if _nothing_better(out.value, bound_list, rounding_scale, k):
            said.hand_on()
        else:
            said.hand_on(warnings=False)
            eigen = converged_pairs()
            out, certificate, held, solver_bounds, bound_list = attempt(eigen)
    else:
        out, certificate, held, solver_bounds, bound_list = attempt(eigen)
    # (pairs still unconfirmed here gave a topic certified 1.0000: nothing to refine for)
    if eigen.confirmed and _could_refine(A, k, eigen, rank, n_pairs, certificate, bound_list,
                                         out.value):
        # rarely (the row bound is the sharp one on co-occurrence matrices): the bounds that
        # use eigenvalues could become the tightest with accurate pairs, so the pairs are
        # refined and the solver (whose own bound uses them) runs again on them
        # of the first run's bounds only those that use no eigenpair are kept: loose pairs
        # need not be the leading ones (a projection view whose lambda_1 is 23.3 gave
        # theta_1 = 11.1 with r_1 = 0.05 at a tolerance of 0.3, and the spannogram's
        # OPT_2 + lambda_3 on them, 18.6, stayed below the topic found on refined pairs)
        solver_bounds = _bounds.eigen_free(solver_bounds)
        # from a random block: pairs refined from old Ritz vectors are not known to be the
        # leading ones (spectrum.top_eigenpairs), those of a cold block are
        eigen = eigenpairs(A, n_pairs)
        if not out.time_limited:  # (a time-limited solver is not given its time twice)
            again = _solve(spec, A, k, {**available, "eigen": eigen}, certificate,
                           solver_options, seconds)
            # the better topic of the two is kept
            solver_bounds += _certifying_bounds(spec, A, again)
            if again.value >= out.value:
                out = again
        bound_list = _component_bounds(A, k, eigen, certificate, solver_bounds, seconds, held)
    return out, bound_list, certificate, eigen


class _HeldLog(logging.Handler):
    """Within its block, the records logged under ``logger`` are held instead of handled
    (its handlers set aside, nothing propagated); :meth:`hand_on` hands them on afterwards,
    the warnings among them only if asked."""

    def __init__(self, logger):
        super().__init__()
        self.logger, self.records, self.saved = logger, [], None

    def emit(self, record):
        self.records.append(record)

    def __enter__(self):
        self.saved = self.logger.handlers[:], self.logger.propagate
        self.logger.handlers[:] = [self]
        self.logger.propagate = False
        return self

    def __exit__(self, *exc):
        self.logger.handlers[:], self.logger.propagate = self.saved

    def hand_on(self, warnings=True):
        for record in self.records:
            if warnings or record.levelno < logging.WARNING:
                self.logger.handle(record)
        self.records = []


def _nothing_better(value, bound_list, scale, k):
    """Whether a bound of ``bound_list`` that uses no eigenpair leaves no topic better than
    ``value`` by more than the certificate's precision (:data:`~spca_cli.bounds.
    CERTIFICATE_RTOL`: a ratio of 1.0000 as reported). ``scale`` (lambda_1 of the undeflated A)
    and ``k`` set the rounding a view that is zero up to rounding may put a value above its
    bounds by (:func:`~spca_cli.bounds.cover_rounding`, as the report does)."""
    free = [bound for bound, _ in _bounds.eigen_free(bound_list)]
    if not free:
        return False
    bound = _bounds.cover_rounding(min(free), value, scale, k)
    return _bounds.certified_ratio(value, bound) >= 1.0 - _bounds.CERTIFICATE_RTOL


def _run_set(solver, A0, eigen0, labels, k, n_components, rank, random_state, time_limit,
             solver_options, seconds, eigenpairs, progress=None, certificate=None):
    """The best set of disjoint topics (``deflation="joint"``; docs/solvers.md, "The set").

    1. The best single topic, certified on A (the solver's, as in remove deflation); a solver
       with a proof budget (auto) searches to prove it only in step 3, once the set reported
       is known to hold it, or a topic of the set explains more than it.
    2. Starts: the best of a few matchings on the rank-K sketch (the bipartite method's
       Algorithms 1-2, :func:`~spca_cli.solvers.bipartite.sketch_supports`), and the same set
       made to hold the best single topic (:func:`~spca_cli.solvers.setsearch.with_first`).
    3. Local search from each (:func:`~spca_cli.solvers.setsearch.improve_set`), the second
       with that topic frozen. The set holding the best single topic is kept unless the free
       one explains more than :data:`KEEP_FIRST_SLACK` more; both totals are reported. A
       topic the proof's search finds better than the best single topic replaces it, and the
       sets are searched again around it. Then each topic trades up to
       :data:`COHERENCE_SHARE` of its variance for coherence.
    4. Each topic certified as the best k words disjoint from the OTHER topics (A without
       their words), and, where that certificate stays below :data:`SET_CERTIFIED`, solved
       again on that view: a better topic there replaces it (the total only grows), until a
       round changes nothing.

    ``certificate``: a :class:`concurrent.futures.Future` of A's certificate being made beside
    the run, for a solver that reads it (:func:`run_topics`).

    Returns [(SolverOutput, bound list)], the total bound list and the search's summary."""
    from spca_cli.solvers.bipartite import sketch_supports
    from spca_cli.solvers.setsearch import improve_set

    spec = REGISTRY[solver]
    seconds["bounds"] = 0.0
    # a solver with a proof budget (auto) proves the best single topic only once the set is
    # known to hold it (on the four real corpora and in 32 of the fortunes' 35 categories it
    # does not: such a search would prove a topic that is not reported)
    deferred = _topic_budget(spec, solver_options) is not None
    # (no sum of the K largest ratios: the disjoint stars bound the total at 0.51-0.74 of it on
    # the four real corpora, and without it the certificate takes linearized steps, 7 instead
    # of 18 on the fortunes)
    t = time.perf_counter()
    sketch = sketch_supports(A0, k, n_components, eigen=eigen0,
                             rank=min(n_components, len(eigen0.values)),
                             samples=SET_SAMPLES, refine=SET_REFINE, random_state=random_state)
    free = improve_set(A0, sketch)
    seconds["search"] = time.perf_counter() - t
    first, first_bounds, cert0, first_eigen = _solve_view(
        spec, A0, k, eigen0, rank, random_state, time_limit,
        {**solver_options, "budget": 0.0} if deferred else solver_options, seconds,
        eigenpairs, progress=_labelled(progress, "the best topic"), certificate=certificate)
    coherent = A0.S is not None  # (documents in this process: their counts give the coherence)
    views = _Views(A0, k, cert0, seconds)
    views.ahead(free, _limit_asked if coherent else float)
    t = time.perf_counter()
    free, kept, keep_first = _searched_sets(A0, free, first)
    seconds["search"] += time.perf_counter() - t
    stars = _stars_beside(A0, k, n_components, cert0, (kept if keep_first else free).total,
                          seconds)
    # proved when the set holds it, or when a topic of the set explains more: then it is not
    # the best single topic, which the search looks for (and the report names)
    if deferred and (keep_first or max(free.values) > first.value * (1.0 + 1e-9)):
        available = {"eigen": first_eigen, "rank": rank, "random_state": random_state,
                     "time_limit": time_limit, "forced": None, "incumbent": first,
                     "progress": _labelled(progress, "the best topic")}
        proved = _solve(spec, A0, k, available, cert0, solver_options, seconds)
        first_bounds = _component_bounds(A0, k, first_eigen, cert0,
                                         _certifying_bounds(spec, A0, proved), seconds)
        if proved.value > first.value * (1.0 + 1e-9):
            # its search found a better topic: the sets are searched again around it
            t = time.perf_counter()
            free, kept, keep_first = _searched_sets(A0, free, proved)
            seconds["search"] += time.perf_counter() - t
        first = proved
    chosen = kept if keep_first else free
    searched_total = chosen.total
    coherence_steps = 0
    if coherent:
        from spca_cli.solvers.setsearch import polish_coherence

        # what each topic can give up and stay certified: its value above 0.991 of the bound
        # on its view (0.001 of room for the views' change as the others trade words)
        # (a bound at or below value (1 - share) / floor leaves the share as the limit, so
        # each certificate stops there: it is not the one reported); made only for a topic
        # with a replacement within its share (34 of the 162 topics offered in the fortunes'
        # groups have none), on the views of the set as it is here
        def limit(value, others):
            return lambda: value - COHERENCE_FLOOR * views.certificate(
                others, _limit_asked(value))[1].bound.value

        limits = [0.0 if keep_first and j == 0 else limit(value, _others(chosen.supports, j))
                  for j, value in enumerate(chosen.values)]
        t, certifying = time.perf_counter(), seconds["bounds"]
        coherence_steps = polish_coherence(chosen, A0.S, share=COHERENCE_SHARE,
                                           frozen={0} if keep_first else set(), limits=limits)
        # (the limits' certificates it made are counted as bounds)
        seconds["search"] += time.perf_counter() - t - (seconds["bounds"] - certifying)
    supports = [np.asarray(s, dtype=np.int64) for s in chosen.supports]
    pairs = list(chosen.pairs)
    outs = [None] * n_components
    if keep_first:
        outs[0] = (first, first_bounds)
    resolved = 0
    viewed = [None] * n_components  # the other topics' words each bound list was made without

    def others_of(j):
        return _others(supports, j)

    def view_certificate(j, value):
        others = viewed[j] = others_of(j)
        return views.certificate(others, value)

    below = []  # the topics certified below SET_CERTIFIED on their views
    for j in range(n_components):
        if keep_first and j == 0:
            continue
        out = _set_topic(supports[j], *pairs[j])
        _, certificate = view_certificate(j, out.value)
        outs[j] = (out, [(certificate.bound.value, _bounds.ROW_BOUND_SOURCE)])
        if _bounds.certified_ratio(out.value, certificate.bound.value) < SET_CERTIFIED:
            below.append(j)
    # they share one topic's proof budget (auto's), what one leaves going to the next
    budget = topic_budget = _topic_budget(spec, solver_options)
    for waiting, j in zip(range(len(below), 0, -1), below):
        out = outs[j][0]
        view, certificate = view_certificate(j, out.value)  # (a topic solved before changed it)
        bound_list = [(certificate.bound.value, _bounds.ROW_BOUND_SOURCE)]
        outs[j] = (out, bound_list)
        if _bounds.certified_ratio(out.value, certificate.bound.value) >= SET_CERTIFIED:
            continue
        # a solver with a proof search starts it from the topic in hand, and needs no
        # eigenpairs of the view (they only find a first topic; the fortunes' 35 groups would
        # make 88 such eigen steps, 0.5 s of CPU)
        eigen = (None if "incumbent" in spec.inputs else
                 eigenpairs(view, max(rank + 1, 2), start=eigen0.basis, tol=CANDIDATE_TOL,
                            previous=(A0, eigen0)))
        # (a solver that can stop once the topic is certified SET_CERTIFIED, auto, does: its
        # budget is then left to the topics still waiting)
        available = {"eigen": eigen, "rank": rank, "random_state": random_state,
                     "time_limit": time_limit, "forced": None, "incumbent": out,
                     "goal": SET_CERTIFIED,
                     "progress": _labelled(progress, "a topic of the set")}
        options = (solver_options if budget is None
                   else {**solver_options, "budget": max(budget, 0.0) / waiting})
        again = _solve(spec, view, k, available, certificate, options, seconds)
        if budget is not None:
            budget -= again.info.get("budget_used", 0.0)
            again.notes = [_shared_budget_note(note, spec, topic_budget, again)
                           for note in again.notes]
        bound_list += _certifying_bounds(spec, view, again)
        resolved += 1
        if again.value > out.value * (1.0 + 1e-9):
            out = again
            supports[j] = np.asarray(again.indices, dtype=np.int64)
            pairs[j] = (float(again.value), np.asarray(again.weights))
        else:
            out.exact, out.time_limited = again.exact, again.time_limited
            out.notes, out.info = again.notes, again.info
        outs[j] = (out, bound_list)
    for j in range(n_components):
        # a topic solved again later in the last round changed the views certified before it:
        # those are certified again on the views the reported set leaves them (row bound)
        if viewed[j] is not None and not np.array_equal(viewed[j], others_of(j)):
            out = outs[j][0]
            _, certificate = view_certificate(j, out.value)
            if out.exact:  # (proved on the view it was solved on, not this one)
                out.exact = None
            outs[j] = (out, [(certificate.bound.value, _bounds.ROW_BOUND_SOURCE)])
    total = float(sum(out.value for out, _ in outs))
    order = sorted(range(n_components), key=lambda j: (j != 0 or not keep_first,
                                                       -outs[j][0].value))
    found = [outs[j] for j in order]
    summary = {"start_total": float(free.start_total), "searched_total": float(searched_total),
               "coherence_steps": int(coherence_steps), "total": total,
               "total_with_best_topic": float(kept.total), "best_topic_kept": bool(keep_first),
               "best_topic": first, "moves": int(free.moves + kept.moves),
               "resolved": resolved}
    t = time.perf_counter()
    totals = _bounds.total_bounds(A0, k, n_components, eigen0, row=cert0.bound,
                                  star=None if stars is None else stars.result())
    seconds["bounds"] += time.perf_counter() - t
    return found, totals, summary


def _limit_asked(value):
    """What the certificate of a topic's view is asked to prove for the topic's coherence
    limit (``_run_set``): the least value that still leaves it :data:`COHERENCE_FLOOR` once
    it gives up its share. A bound at or below it leaves the share as the limit."""
    return value * (1.0 - COHERENCE_SHARE) / COHERENCE_FLOOR


def _stars_beside(A0, k, n_components, cert0, searched_total, seconds):
    """The disjoint stars' bound on the set's total (:func:`~spca_cli.bounds.star_total_bound`
    on the model of A's certificate), started on a second thread (:func:`~spca_cli.threads.
    beside`; ``result()`` gives it): it waits on nothing the set's later steps do. The total of
    the set the search found (a total some set attains; the final one, after the coherence
    step, is not known yet) steers its prices. The model is made here: for short texts the
    stars read more exact rows, formed from A. None for fewer than two topics (no such
    bound)."""
    if n_components < 2:
        return None
    t = time.perf_counter()
    model = _bounds.star_model(cert0.model, k, n_components, A=A0)
    stars = beside(_bounds.star_total_bound, model, k, n_components, lower=searched_total)
    seconds["bounds"] += time.perf_counter() - t
    return stars


def _searched_sets(A0, free, first):
    """``(free, kept, keep_first)``: the best set found without a constraint (``free``, the
    local optimum from the sketch, or the one below if better), the set made to hold the topic
    ``first`` (frozen) searched from ``free``, and whether that one is reported
    (:data:`KEEP_FIRST_SLACK`)."""
    from spca_cli.solvers.setsearch import improve_set, with_first

    kept = improve_set(A0, with_first(A0, free.supports, first.indices), frozen=[0])
    # the set holding the best topic, let go, is a second start (a local optimum of its own)
    other = improve_set(A0, kept.supports)
    if other.total > free.total:
        other.start_total = free.start_total
        free = other
    return free, kept, kept.total >= free.total * (1.0 - KEEP_FIRST_SLACK)


def _topic_budget(spec, solver_options):
    """The proof budget a solver with one (auto) gives each topic: the one asked for, or its
    default; None for a solver without a budget."""
    param = spec.param("budget")
    if param is None:
        return None
    given = (solver_options or {}).get("budget")
    if given is not None:
        return float(given)
    return float(inspect.signature(spec.function).parameters["budget"].default)


def _shared_budget_note(note, spec, budget, out):
    """A topic solved again on its view (``out``) had a share of the budget the set's topics
    solved again share: its note names that budget, which is what ``--budget`` sets."""
    if not note.startswith(f"{spec.name}: certified") or "proof budget" not in note:
        return note
    from spca_cli.solvers.exact import longer_budget

    ratio = out.value / min(b for b, _ in out.bounds)
    flag = spec.param("budget").flag
    return (f"{spec.name}: certified {ratio:.4f} on its view (the other topics' words left out) when "
            f"the proof budget the set's topics share ({budget:.3g} s of work) ran out; a "
            f"longer proof: {flag} {longer_budget(budget):.3g}")


def _others(supports, j):
    """The words of every topic of the set but topic j, sorted."""
    return np.sort(np.concatenate([np.asarray(s, dtype=np.int64)
                                   for i, s in enumerate(supports) if i != j]))


class _Views:
    """The views of the set (A0 without the other topics' words) and their row certificates,
    each computed once: all start from the certificate of A0, and take more exact rows from
    one model of A0 (:class:`~spca_cli.bounds.SharedRows`)."""

    def __init__(self, A0, k, cert0, seconds):
        self.A0, self.k, self.cert0, self.seconds = A0, k, cert0, seconds
        self.shared = _bounds.SharedRows(A0)
        # the words removed -> (the value asked to prove, the certificate, those words)
        self.made = {}
        # A0's certificate's weights on every word (0 off its model), for the words a nearby
        # view did not hold (_near_weights)
        self.base_weights = np.zeros(A0.n)
        self.base_weights[cert0.words] = cert0.bound.weights

    def ahead(self, searched, asked):
        """Start forming, beside the run, the exact rows the views' certificates of a set like
        ``searched`` take at once from A0's model (:meth:`~spca_cli.bounds.SharedRows.ahead`):
        the view of its topic of least value, asked to prove ``asked(value)``, stands for
        them (the first to take more rows)."""
        j = int(np.argmin(searched.values))
        view = self.A0.remove(_others(searched.supports, j))
        self.shared.ahead(view, self.k, asked(float(searched.values[j])), self.cert0)

    def certificate(self, others, value):
        """``(view, certificate)`` of A0 without the words ``others``. The iteration stops
        once its bound meets the value it is given, so a certificate made for a larger value
        than ``value`` is made again. It starts from the weights of the certificate made for
        the view nearest this one (the most words removed from both: the same topic's view
        before the coherence step, or another topic's), if any."""
        view = self.A0.remove(others)
        key = others.tobytes()
        if key not in self.made or self.made[key][0] > value:
            t = time.perf_counter()
            certificate = _bounds.row_certificate(
                view, self.k, previous=self.cert0, attained=value, shared=self.shared,
                near=self._near_weights(others))
            self.made[key] = value, certificate, others
            self.seconds["bounds"] += time.perf_counter() - t
        return view, self.made[key][1]

    def _near_weights(self, others):
        """Weights on every word from the certificate of the nearest view made (None before
        the first): its own on its words, A0's certificate's on the others (the words this view
        holds and that one did not), scaled to the first by their median ratio on its words."""
        if not self.made:
            return None
        _, near, _ = max(self.made.values(),
                         key=lambda made: np.intersect1d(made[2], others).size)
        words, weights = near.words, near.bound.weights
        base = self.base_weights
        both = base[words] > 0
        scale = float(np.median(weights[both] / base[words][both])) if np.any(both) else 1.0
        out = base * scale
        out[words] = weights
        return np.maximum(out, 1e-300)


def _set_topic(support, value, x):
    """A topic of the searched set as a solver output (words by decreasing weight)."""
    from spca_cli.solvers._base import SolverOutput

    order = np.argsort(-np.abs(x), kind="stable")
    return SolverOutput(indices=np.asarray(support, dtype=np.int64)[order],
                        weights=np.asarray(x, dtype=np.float64)[order], value=float(value),
                        info={"found_by": "set search"})


def _could_refine(A, k, eigen, rank, n_pairs, certificate, bound_list, value):
    """Whether refined pairs could make a bound that uses them the tightest of a topic not
    proven optimal (:func:`~spca_cli.bounds.eigen_bounds_could_tighten`). Pairs not known to be
    the leading ones (a warm start) bound through weak ceilings; what they would give as
    leading pairs is judged on the same pairs taken as verified: the view's own bounds made
    again, the solver's lowered by what its lambda_{d+1} ceiling added."""
    loose = eigen.residuals[:n_pairs].max(initial=0.0) > TOPICS_TOL * eigen.value(0)
    unknown = eigen.known < min(n_pairs, len(eigen.values))
    if not (loose or unknown):
        return False
    if not unknown:
        return _bounds.eigen_bounds_could_tighten(bound_list, value, eigen, rank)
    as_if = dataclasses.replace(eigen, verified=None)
    d = eigen.effective_rank(rank)
    shift = eigen.tail_ceiling(d) - as_if.tail_ceiling(d)
    own = _bounds.single_bounds(A, k, as_if, row=certificate.bound)
    solver = [(b - shift if _bounds.uses_eigenpairs(src) else b, src)
              for b, src in bound_list[len(own):]]
    return _bounds.eigen_bounds_could_tighten(own + solver, value, as_if, rank)


def _certifying_bounds(spec, A, out):
    """The solver's own bounds that hold for every topic of the view ``A``. A solver whose
    bounds hold for nonnegative topics only (nonneg) keeps them on an entrywise nonnegative
    A', where the best topic is nonnegative; elsewhere the least of them is reported as
    ``nonnegative_upper_bound`` in the topic's solver info, with a note, and the certificate
    rests on the bounds that hold for every topic."""
    if not spec.nonnegative_bounds or not out.bounds or A.is_nonnegative():
        return list(out.bounds)
    out.info["nonnegative_upper_bound"] = float(min(b for b, _ in out.bounds))
    out.notes.append(f"{spec.name}: the matrix has negative entries, so the solver's own bounds "
                     "hold for nonnegative topics only (solver_info: nonnegative_upper_bound); "
                     "the certificate uses bounds that hold for every topic")
    return []


def _solve(spec, A, k, inputs, certificate, solver_options, seconds):
    """One timed run of a single-component solver, given the certificate if it uses one. With
    included words (``inputs["forced"]``), a topic without them (a solver that does not take
    them) is repaired (:func:`spca_cli.constraints.repair`)."""
    t = time.perf_counter()
    if "certificate" in spec.inputs:
        inputs = {**inputs, "certificate": certificate}
    out = spec.run(A, k, inputs, solver_options)
    forced = inputs.get("forced")
    if forced is not None and not np.isin(forced, out.indices).all():
        from spca_cli.constraints import repair

        out = repair(A, k, forced, out, random_state=inputs.get("random_state"))
    seconds["solve"] += time.perf_counter() - t
    return out


def _forced_certificate(A, k, certificate, forced, out):
    """``(forced, bound)``: the forced row bound of the view
    (:func:`spca_cli.constraints.forced_row_bound`) on the certificate's model, from its
    weights; it stops once it proves ``out`` (when the solver ran first) optimal."""
    from spca_cli.constraints import ForcedColumns, forced_row_bound

    model = certificate.model
    return forced, forced_row_bound(model, ForcedColumns(A, model, forced), k,
                                    start=certificate.bound.weights,
                                    rtol=_bounds.CERTIFICATE_RTOL,
                                    attained=None if out is None else out.value)


def _component_bounds(A, k, eigen, certificate, solver_bounds, seconds, held=None):
    """A component's bound list: the view's own bounds, then (with included words) the ones
    sharpen and the forced row bound (``held``, from :func:`_forced_certificate`), then the
    solver's."""
    t = time.perf_counter()
    bound_list = _bounds.single_bounds(A, k, eigen, row=certificate.bound)
    if held is not None:
        from spca_cli.constraints import FORCED_ROW_SOURCE, forced_bounds

        forced, row = held
        bound_list += forced_bounds(A, k, eigen, forced) + [(row.value, FORCED_ROW_SOURCE)]
    bound_list += solver_bounds
    seconds["bounds"] += time.perf_counter() - t
    return bound_list


def _total_bound(topics, bound_list, notes):
    total = float(sum(t.explained_variance for t in topics))
    bound_list, dropped = _bounds.trusted(bound_list, total)
    if dropped:
        notes.append(_untrusted_note("the total"))
    ub, source = _bounds.tightest(bound_list)
    return TotalBound(ub, source, _bounds.certified_ratio(total, ub))


def _run_joint(solver, A0, eigen0, k, n_components, rank, random_state, time_limit,
               solver_options, seconds):
    """All components at once. Returns [(SolverOutput, its bound list)], the total bound list
    and the solver's notes."""
    t = time.perf_counter()
    available = {"eigen": eigen0, "rank": rank, "random_state": random_state,
                 "time_limit": time_limit}
    joint = REGISTRY[solver].run_joint(A0, k, n_components, available, solver_options)
    seconds["solve"] += time.perf_counter() - t
    if "samples" in joint.info and seconds["solve"] > 0:
        seconds["samples_per_second"] = joint.info["samples"] / seconds["solve"]
    t = time.perf_counter()
    cert0 = _bounds.row_certificate(A0, k, totals=(n_components,))
    row0 = cert0.bound
    single = _bounds.single_bounds(A0, k, eigen0, row=row0)
    seconds["bounds"] = time.perf_counter() - t
    found = []
    for out in joint.components:
        out.info = {**joint.info, **out.info}
        out.time_limited = joint.time_limited
        found.append((out, single))
    notes = list(joint.notes)
    if joint.time_limited and not notes:
        notes.append(_time_limit_note(solver, "all components"))
    attained = float(sum(out.value for out in joint.components))
    totals = _bounds.total_bounds(A0, k, n_components, eigen0, row=row0, model=cert0.model,
                                  lower=attained) + list(joint.bounds)
    return found, totals, notes
