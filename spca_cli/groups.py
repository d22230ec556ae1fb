"""Topics per group (``spca topics FILE --by COLUMN``): the corpus is read once with each
document's group (:attr:`~spca_cli.corpus.core.Corpus.groups`), then the pipeline of
:func:`~spca_cli.topics.run_topics` runs on each group's rows of S, every topic certified as in
a run on the whole corpus.

Rules (docs/output.md, "Topics per group"):

* **Groups**: one per distinct value, in sorted order; the empty value (an empty CSV field, a
  missing JSON field or null) is the group ``(none)``, listed last.
* **Vocabulary of a group**: the corpus's words (after every ingest filter) that occur in at
  least ``min_count`` of the group's documents (the ingest's ``min_count``: 2 for raw text, 1
  for UCI), so that a group's A = S_g^T S_g holds no word of too few of its own documents.
* **Not solved**: a group of fewer than ``min_documents`` documents, or with fewer words than
  its topics need (k, or k x components for disjoint topics), is reported with the reason and
  gets no topics.
* **Proof budget** (solver ``auto`` without an explicit ``budget``): the groups share what one
  run on the whole corpus may spend, each in proportion to its documents; a run's notes say
  so. An explicit budget applies to every group as given.
* **Distinctive words**: for each solved group, every word of its topics with the share of the
  group's documents that contain it, the share of the corpus's other documents that do, and
  ``lift``, their ratio; ranked by lift (words in no other document first, ``lift`` null), then
  by share. The tables show the first ``distinctive`` of each group; JSON and CSV hold all.

A group of fewer than :data:`SINGLE_THREAD_NNZ` stored entries is solved on one thread (numba
and BLAS): on such sizes a thread team's start-up and spin-waits cost more than it saves, and
on a busy two-core machine a 311-word group's spannogram took 0.8 s on two threads, 0.02 s on
one. Groups holding :data:`PARALLEL_MIN_NNZ` entries or more in all are solved by this
process and one worker process per further core (the fortunes' 35 categories: 26.0 s in one
process, about 9 s on two cores, the same topics); below that, starting a worker (about a
second: a fresh interpreter, numba's kernels loaded from the cache) costs more than it saves.
The command line starts the workers before it reads an input of :data:`EARLY_WORKERS_BYTES`
or more (:class:`GroupWorkers`), so that their start overlaps the read.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from spca_cli.corpus.core import Corpus
from spca_cli.errors import SpcaError, SpcaParameterError
from spca_cli.params import DEFAULTS, FitError, resolve_deflation
from spca_cli.report import DUPLICATES_SET_ASIDE, counted
from spca_cli.solvers.registry import solver_spec

__all__ = ["GroupOutcome", "GroupedResult", "GroupWorkers", "run_groups", "group_name", "NO_GROUP",
           "DEFAULT_MIN_DOCUMENTS", "DEFAULT_DISTINCTIVE", "SINGLE_THREAD_NNZ"]

#: the name of the group of documents with an empty value
NO_GROUP = "(none)"
#: groups with fewer documents are reported, not solved
DEFAULT_MIN_DOCUMENTS = 20
#: distinctive words reported per group
DEFAULT_DISTINCTIVE = 5
#: below this many stored entries of S_g a group runs on one thread (see the module's notes)
SINGLE_THREAD_NNZ = 1 << 20
#: groups holding fewer stored entries in all are solved in this process (see the module's notes)
PARALLEL_MIN_NNZ = 50_000
#: ``spca topics --by`` starts its workers before reading inputs of this many bytes or more
#: (:class:`GroupWorkers`; every real corpus with groups in the tests and benchmarks holds far
#: more than :data:`PARALLEL_MIN_NNZ` entries from 1 MB on)
EARLY_WORKERS_BYTES = 1 << 20


def group_name(value):
    """The name a group is reported by: its value, or :data:`NO_GROUP` for ""."""
    return value if value else NO_GROUP


@dataclass
class GroupOutcome:
    """One group: its size and either its topics (``result``) or why it was not solved."""

    name: str
    documents: int
    words: int
    result: object = None  # TopicsResult
    corpus: Corpus | None = None  # the group's rows and words, for its top documents
    columns: np.ndarray | None = None  # each group word's column in the corpus
    not_solved: str | None = None
    budget: float | None = None  # auto's proof budget per topic given to this group
    distinctive: list = field(default_factory=list)


@dataclass
class GroupedResult:
    by: str
    input: dict
    solver: str
    params: dict
    groups: list
    seconds: dict
    notes: list = field(default_factory=list)


@contextlib.contextmanager
def _threads(nnz):
    """One numba and BLAS thread for a group below :data:`SINGLE_THREAD_NNZ` entries."""
    if nnz >= SINGLE_THREAD_NNZ:
        yield
        return
    import numba

    from spca_cli.threads import one_blas_thread

    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        with one_blas_thread():
            yield
    finally:
        numba.set_num_threads(previous)


def _jobs(jobs, solved, random_state):
    """The processes the groups are solved in: ``jobs``, or (None) the cores this process may
    use; never more than the groups, and 1 when the groups are too small to repay starting
    processes (:data:`PARALLEL_MIN_NNZ`) or ``random_state`` is a generator (the groups draw
    from it in turn, which a copy in each process would not)."""
    if isinstance(random_state, np.random.RandomState):
        return 1
    if jobs is None:
        from spca_cli.processes import usable_cores

        jobs = usable_cores()
        if sum(o.corpus.S.nnz for o in solved) < PARALLEL_MIN_NNZ:
            return 1
    return max(1, min(int(jobs), len(solved)))


def _solve_group(corpus, task):
    """One group's topics: ``(TopicsResult, None)``, or ``(None, why)`` for a group its run
    does not fit (a :class:`~spca_cli.params.FitError` other than of the solver's options,
    which concern every group and are raised)."""
    from spca_cli.topics import run_topics

    try:
        with _threads(corpus.S.nnz):
            return run_topics(corpus, **task), None
    except FitError as exc:
        if exc.param in ("solver_options",):
            raise
        return None, str(exc)


def _solve_here(solved, tasks, on_group):
    """Each group in this process, in order."""
    for index, (outcome, task) in enumerate(zip(solved, tasks), 1):
        if on_group is not None:
            on_group(index, len(solved), outcome.name)
        yield _solve_group(outcome.corpus, task)


def _warm_up():
    """A worker's first task: the pipeline's modules imported and its kernels loaded from
    numba's cache, on a run over a small drawn corpus (about 1 s that the first group solved
    in a fresh worker took more than the same group solved again)."""
    from spca_cli.topics import run_topics

    rng = np.random.default_rng(0)
    S = sp.csr_array((rng.random((60, 40)) < 0.2).astype(np.float64))
    S.data[:] = 1.0
    with _threads(S.nnz):
        run_topics(Corpus(S=S, vocabulary=np.array([f"w{j}" for j in range(40)],
                                                   dtype=object)), k=3, n_components=2)


class GroupWorkers:
    """The worker processes of :func:`run_groups`: one per core but one (this process solves
    groups too), spawned (numba's OpenMP threads, which this process may have started, do not
    survive a fork) and warmed up (:func:`_warm_up`) from the moment this is made. Made before
    the corpus is read (``spca topics --by`` does so for inputs of
    :data:`EARLY_WORKERS_BYTES` or more), their start overlaps the read instead of delaying the
    first groups. A context manager: its end waits for the workers to end, except when an
    error ends it: the workers are then stopped at once (a missing column is reported in
    0.7 s, not after the workers' start and warm-up, 2.3 s).

    Parameters
    ----------
    processes : int, optional
        Workers (default: the cores this process may use, minus one); 0 starts none.
    """

    def __init__(self, processes=None):
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        from spca_cli.processes import children_ignore_ctrl_c, usable_cores, worker_start

        self.processes = max(0, usable_cores() - 1 if processes is None else int(processes))
        self.pool = None
        self._started = []  # the worker processes (started by the submits, spawn context)
        if self.processes:
            before = set(mp.active_children())
            try:
                # Ctrl-C stops them through this process (close(stop=True)), never while
                # they start, which printed a traceback of theirs
                with children_ignore_ctrl_c():
                    self.pool = ProcessPoolExecutor(max_workers=self.processes,
                                                    mp_context=mp.get_context("spawn"),
                                                    initializer=worker_start)
                    for _ in range(self.processes):
                        self.pool.submit(_warm_up)
            except BaseException:  # (SIGTERM's SystemExit while they start)
                self._started = [p for p in mp.active_children() if p not in before]
                self.close(stop=True)
                raise
            self._started = [p for p in mp.active_children() if p not in before]

    def close(self, *, stop=False):
        """End the workers: when their work is done, or (``stop``) at once."""
        if self.pool is None:
            return
        if stop:
            for process in self._started:
                process.kill()
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.pool = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        self.close(stop=exc_type is not None)


def _solve_in_processes(solved, tasks, workers, on_group):
    """The groups solved by this process and the ``workers`` (:class:`GroupWorkers`), results
    in the groups' order. The workers take the largest groups first, this process the smallest
    (it starts at once, while a worker may still be starting), until none is left. A thread of
    this process hands each worker its next group the moment it returns one, so a worker
    holds one group at a time: with a second one queued, the fortunes' last worker ended
    0.5 s after this process, its queued group unshared. A group is sent to a worker without
    its texts, times and ids, which its topics do not use."""
    import threading
    from collections import deque
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    # (deque's pops at either end are atomic: the thread and this process take from opposite
    # ends, and an empty deque ends either)
    waiting = deque(sorted(range(len(solved)), key=lambda i: -solved[i].corpus.S.nnz))
    sent = {}  # future -> group
    results = [None] * len(solved)
    recorded = set()
    failed = []  # what ended the thread's hand-outs (a broken pool), raised by this process

    def dispatch():
        running = set()
        try:
            while True:
                while len(running) < workers.processes:
                    try:
                        i = waiting.popleft()
                    except IndexError:
                        return
                    future = workers.pool.submit(_solve_group, dataclasses.replace(
                        solved[i].corpus, texts=None, ids=None, times=None, tz_offsets=None),
                        tasks[i])
                    sent[future] = i
                    running.add(future)
                done, running = wait(running, return_when=FIRST_COMPLETED)
                if any(future.exception() is not None for future in done):
                    return  # (this process raises it)
        except BaseException as exc:  # (a group taken from ``waiting`` and never sent)
            failed.append(exc)

    def record(i, result):
        results[i] = result
        recorded.add(i)
        if on_group is not None and len(recorded) < len(solved):
            # (``index``: the group under way; the one named has just finished)
            on_group(len(recorded) + 1, len(solved), solved[i].name)

    def collect():
        for future, i in list(sent.items()):
            if i not in recorded and future.done():
                record(i, future.result())  # (its error is raised)
        if failed:
            raise failed[0]

    dispatcher = threading.Thread(target=dispatch, name="spca-groups", daemon=True)
    dispatcher.start()
    try:
        while True:
            collect()
            try:
                i = waiting.pop()
            except IndexError:
                break
            record(i, _solve_group(solved[i].corpus, tasks[i]))
        dispatcher.join()
        collect()
        while len(recorded) < len(solved):
            pending = [f for f, i in sent.items() if i not in recorded]
            if not pending:  # (every group is recorded, sent or failed: never, but never a spin)
                raise SpcaError("groups were lost on their way to the worker processes")
            wait(pending, return_when=FIRST_COMPLETED)
            collect()
    except BrokenProcessPool:
        # (a worker killed: by the system out of memory, or by hand)
        raise SpcaError("a worker process solving the groups ended abruptly (killed, or out "
                        "of memory?)") from None
    finally:
        waiting.clear()  # (which ends the thread at its next hand-out)
        for future in list(sent):
            future.cancel()
    return results


def _group_rows(values):
    """[(value, rows)] of each distinct value, sorted, the empty value last."""
    values = np.asarray(values, dtype=object)
    names, inverse = np.unique(values.astype(str), return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(names) + 1))
    out = [(str(name), order[bounds[i]:bounds[i + 1]]) for i, name in enumerate(names)]
    return [g for g in out if g[0]] + [g for g in out if not g[0]]


def _sub_corpus(corpus, rows, min_count):
    """The group's Corpus (its rows of S, the words in >= ``min_count`` of them) and each kept
    word's column in the corpus."""
    S = sp.csr_array(corpus.S)[rows]
    present = np.bincount(S.indices[S.data != 0], minlength=S.shape[1])  # documents per word
    columns = np.flatnonzero(present >= max(min_count, 1))
    S = sp.csr_array(S[:, columns])
    take = (lambda v: None if v is None else
            (v[rows] if isinstance(v, np.ndarray) else v.take(rows)))
    source_rows = rows if corpus.rows is None else np.asarray(corpus.rows)[rows]
    sub = Corpus(S=S, vocabulary=np.asarray(corpus.vocabulary, dtype=object)[columns],
                 times=take(corpus.times), tz_offsets=take(corpus.tz_offsets),
                 kind=corpus.kind, path=corpus.path, options=corpus.options,
                 paths=list(corpus.paths), texts=take(corpus.texts), ids=take(corpus.ids),
                 rows=source_rows.astype(np.int64))
    return sub, columns


def _words_needed(solver, k, n_components, deflation, shared=0):
    """The words a group's topics need: k, or k x components for disjoint topics, of which the
    ``shared`` included words count once (every topic holds them)."""
    disjoint = deflation in ("joint", "remove") or solver_spec(solver).joint
    return shared + (k - shared) * n_components if disjoint else k


def _group_constraints(corpus, include, exclude, *, solver, k, n_components, deflation):
    """``(include, exclude)``: the words as the corpus spells them, checked once for the whole
    run on its vocabulary (:func:`~spca_cli.constraints.resolve`: a word it lacks, more included
    words than k, ... are one error, not one per group); ``([], [])`` without any."""
    from spca_cli.constraints import resolve

    found = resolve(corpus.vocabulary, include, exclude, k=k, n_components=n_components,
                    deflation=deflation, joint=solver if solver_spec(solver).joint else None)
    if found is None:
        return [], []
    return list(found.include_words), list(found.exclude_words)


def _words_of(corpus, columns, words):
    """Those of ``words`` in the vocabulary of the group whose words are the corpus's
    ``columns``."""
    if not words:
        return []
    present = set(map(str, corpus.vocabulary[columns]))
    return [w for w in words if w in present]


def run_groups(corpus, *, by, solver=DEFAULTS["solver"], k=DEFAULTS["k"],
               n_components=DEFAULTS["n_components"], rank=DEFAULTS["rank"],
               deflation=DEFAULTS["deflation"], random_state=DEFAULTS["random_state"],
               time_limit=None, solver_options=None, eigensolver="auto",
               min_documents=DEFAULT_MIN_DOCUMENTS, distinctive=DEFAULT_DISTINCTIVE,
               seconds=None, on_group=None, jobs=1, workers=None, include=None, exclude=None):
    """The topics of each group of ``corpus`` (a :class:`Corpus` read with ``groups``).

    Parameters
    ----------
    corpus : Corpus
        With ``groups``, one value per document.
    by : str
        What the groups are (a column's name, a groups file), for the report.
    solver, k, n_components, rank, deflation, random_state, time_limit, solver_options, \
eigensolver
        As :func:`~spca_cli.topics.run_topics` takes them, for every group.
    min_documents : int
        Groups with fewer documents are reported, not solved.
    distinctive : int
        Distinctive words per group the tables show (the report holds every topic word's).
    seconds : dict, optional
        Timings measured before this call (``{"ingest": 1.2}``).
    on_group : callable(index, count, name), optional
        Called as each group is solved (a progress line).
    jobs : int or None, default=1
        Processes the groups are solved in: 1 solves them here; None: as many as the cores this
        process may use, when the groups are large enough to repay starting them (see the
        module's notes; ``spca topics --by`` runs so). Each group's result is the same either
        way. Worker processes are fresh interpreters that import the caller's main module, so a
        script that asks for them runs its work under ``if __name__ == "__main__":``.
    workers : GroupWorkers, optional
        Worker processes started before (while the corpus was read), used instead of new ones
        when more than one process is worth it (``jobs``); the caller ends them.
    include, exclude : list of str or str, optional
        As :func:`~spca_cli.topics.run_topics` takes them, checked once on the corpus's
        vocabulary; every group's topics hold the included words (a group whose vocabulary
        lacks one is not solved, with the word named), and an excluded word is left out of the
        groups that have it.

    Returns
    -------
    GroupedResult
    """
    from spca_cli.solvers.exact import AUTO_BUDGET
    from spca_cli.topics import run_topics

    if getattr(corpus, "groups", None) is None:
        raise SpcaParameterError("the corpus was read without groups")
    if not isinstance(min_documents, (int, np.integer)) or min_documents < 1:
        raise SpcaParameterError(f"min_documents must be an int >= 1, got {min_documents!r}")
    if not isinstance(distinctive, (int, np.integer)) or distinctive < 0:
        raise SpcaParameterError(f"distinctive must be an int >= 0, got {distinctive!r}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer))
                             or jobs < 1):
        raise SpcaParameterError(f"jobs must be None or an int >= 1, got {jobs!r}")
    solver_options = dict(solver_options or {})
    seconds = dict(seconds or {})
    start = time.perf_counter()
    min_count = int(corpus.options.get("min_count") or 1)
    deflation = resolve_deflation(solver, deflation)
    if include and deflation == "joint":
        deflation = "remove"  # (as run_topics does: topics holding the same words are not disjoint)
    include, exclude = _group_constraints(corpus, include, exclude, solver=solver, k=k,
                                          n_components=n_components, deflation=deflation)
    needed = _words_needed(solver, k, n_components, deflation, shared=len(include))
    outcomes = []
    for value, rows in _group_rows(corpus.groups):
        sub, columns = _sub_corpus(corpus, rows, min_count)
        outcome = GroupOutcome(name=group_name(value), documents=int(rows.size),
                               words=int(columns.size), corpus=sub, columns=columns)
        held = _words_of(corpus, columns, include)
        lacking = [w for w in include if w not in held]
        if rows.size < min_documents:
            outcome.not_solved = f"{counted(rows.size, 'document')}, fewer than {min_documents:,}"
        elif lacking:
            outcome.not_solved = (f'"{lacking[0]}" is not among its words (those in {min_count}+ '
                                  "of its documents)")
        elif columns.size < needed:
            outcome.not_solved = (f"{counted(columns.size, 'word')} in {min_count}+ documents, "
                                  f"fewer than the {needed:,} its topics need")
        outcomes.append((outcome, rows))
    solved = [o for o, _ in outcomes if o.not_solved is None]
    notes = [] if solved else ["no group was solved (each group's not_solved says why)"]
    shared = solver == "auto" and solver_options.get("budget") is None
    total = sum(o.documents for o in solved)
    if shared and solved:
        flag = solver_spec("auto").param("budget").flag  # (the note is read on the CLI)
        notes.append(f"auto: the groups share the proof budget of one run ({AUTO_BUDGET:g} s "
                     "of work per topic), each in proportion to its documents (the budget of "
                     f"each group is in its report); {flag} S gives every group S")
    tasks = []
    for outcome in solved:
        options = dict(solver_options)
        if shared:
            # (three significant digits: the budget is printed in notes and reports)
            options["budget"] = float(f"{AUTO_BUDGET * outcome.documents / total:.3g}")
            outcome.budget = options["budget"]
        elif solver == "auto":
            outcome.budget = float(options["budget"])
        tasks.append(dict(solver=solver, k=k, n_components=n_components, rank=rank,
                          deflation=deflation, random_state=random_state,
                          time_limit=time_limit, solver_options=options,
                          eigensolver=eigensolver, include=include or None,
                          exclude=_words_of(corpus, outcome.columns, exclude) or None))
    jobs = _jobs(jobs, solved, random_state)
    if jobs == 1:
        results = list(_solve_here(solved, tasks, on_group))
    elif workers is not None and workers.processes:
        results = _solve_in_processes(solved, tasks, workers, on_group)
    else:
        with GroupWorkers(jobs - 1) as own:
            results = _solve_in_processes(solved, tasks, own, on_group)
    for outcome, (result, refused) in zip(solved, results):
        outcome.result, outcome.not_solved = result, refused
    _add_distinctive(corpus, outcomes)
    seconds["groups"] = time.perf_counter() - start
    params = {"k": k, "components": n_components, "rank": rank,
              "deflation": None if solver_spec(solver).joint else deflation,
              "seed": random_state, "min_documents": int(min_documents),
              "distinctive": int(distinctive)}
    if time_limit is not None:
        params["time_limit"] = time_limit
    params.update({key: val for key, val in solver_options.items() if val is not None})
    if eigensolver != "auto":
        params["eigensolver"] = eigensolver
    if include or exclude:
        params.update({"include": include, "exclude": exclude})
    summary = {"path": str(corpus.path), "documents": corpus.n_documents,
               "words": corpus.n_words, "nonzeros": corpus.nnz,
               "paths": list(corpus.paths or [corpus.path])}
    summary[DUPLICATES_SET_ASIDE] = corpus.duplicates
    return GroupedResult(by=str(by), input=summary, solver=solver, params=params,
                         groups=[o for o, _ in outcomes], seconds=seconds, notes=notes)


def _add_distinctive(corpus, outcomes):
    """Each solved group's topic words with the share of its documents holding each and the
    share of the other documents that do, ranked (see the module). ``outcomes``: (outcome, its
    rows) pairs (by rows, not by name: a value written "(none)" is not the empty value)."""
    present = sp.csr_array(corpus.S)
    present = sp.csr_array((np.ones(present.nnz), present.indices, present.indptr),
                           shape=present.shape)
    total = np.asarray(present.sum(axis=0)).ravel()
    n = corpus.n_documents
    for outcome, rows in outcomes:
        if outcome.result is None:
            continue
        first_topic = {}
        for topic in outcome.result.components:
            for index in topic.indices:
                first_topic.setdefault(int(outcome.columns[index]), topic.index)
        columns = np.fromiter(first_topic, dtype=np.int64, count=len(first_topic))
        inside = np.asarray(present[rows][:, columns].sum(axis=0)).ravel()
        elsewhere = total[columns] - inside
        m, rest = rows.size, n - rows.size
        entries = []
        for j, column in enumerate(columns):
            share = inside[j] / m
            other = elsewhere[j] / rest if rest else None
            lift = share / other if other else None
            entries.append({"word": str(corpus.vocabulary[column]),
                            "topic": first_topic[int(column)], "documents": int(inside[j]),
                            "share": float(share),
                            "documents_elsewhere": int(elsewhere[j]),
                            "share_elsewhere": None if other is None else float(other),
                            "lift": None if lift is None else float(lift)})
        entries.sort(key=lambda e: (e["lift"] is not None, -(e["lift"] or 0.0),
                                    -e["share"], e["word"]))
        outcome.distinctive = entries
