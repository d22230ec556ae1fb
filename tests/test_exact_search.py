"""exact searches until it proves the topic or meets its time limit: no word count stops it
early (auto's budgeted search still stops where branching would cost more than it buys)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import spca_cli.solvers.exact as exact_module
from spca_cli.matrix import Gram
from spca_cli.solvers.exact import auto, exact
from _builders import small_corpus


def _brute(A, k):
    D = A.to_dense()
    return max(float(np.linalg.eigvalsh(D[np.ix_(I, I)])[-1])
               for I in itertools.combinations(range(A.n), k))


def test_exact_branches_over_more_survivors_than_auto_would(monkeypatch):
    monkeypatch.setattr(exact_module, "_MAX_BRANCH", 2)
    A = Gram.from_documents(small_corpus(m=200, n=16, seed=3))
    out = exact(A, 4)
    assert out.exact and out.info["survivors"] == 7  # more than auto branches over
    assert out.bounds[0][1] == "branch and bound: optimal"
    assert abs(out.value - _brute(A, 4)) <= 1e-9 * out.value
    stopped = auto(A, 4, budget=1e6)
    assert not stopped.exact
    assert stopped.bounds[0][1] == "weighted row sums of the screened words"
    assert stopped.bounds[0][0] >= out.value


def test_auto_with_a_goal_stops_once_the_topic_is_certified_that_much():
    """goal 0.99 (what the set asks of its topics solved again): the search ends after the
    first rung it proves that leaves the topic certified 0.99, with less work than the proof of
    optimality, and its bound is never below the brute-force optimum (nonnegative and
    mixed-sign matrices); a topic the row bound certifies 0.99 gets no search."""
    rng = np.random.default_rng(4)
    stopped = 0
    for seed in range(12):
        if seed % 2:
            B = rng.standard_normal((18, 14))
            A = Gram.from_dense(B.T @ B)
        else:
            A = Gram.from_documents(small_corpus(m=120, n=14, seed=seed))
        best = _brute(A, 4)
        full = auto(A, 4, budget=1e6)
        held = auto(A, 4, budget=1e6, goal=0.99)
        bound = held.bounds[0][0]
        assert bound >= best * (1 - 1e-9)
        assert held.value >= 0.99 * bound * (1 - 1e-12)
        assert held.info["budget_used"] <= full.info["budget_used"]
        if held.exact:  # (the certificate or the first rungs proved it optimal)
            assert full.exact and held.value == full.value
        elif held.bounds[0][1] == "weighted row sums":  # certified 0.99 without a search
            assert held.info["proved_ratios"] == [] and held.info["budget_used"] == 0
        else:
            stopped += 1
            # (stopped after a proved rung: the rung itself, or a better topic it found, gave
            # the 0.99)
            assert held.bounds[0][1] == "branch and bound: nothing above"
            assert held.info["proved_ratios"] and 1.0 not in held.info["proved_ratios"]
            assert held.info["budget_used"] < full.info["budget_used"]
    assert stopped >= 3
    A = Gram.from_documents(small_corpus(m=120, n=14, seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (its budget of 0 ran out: the note says so)
        certified = auto(A, 4, budget=0.0)
    ratio = certified.value / certified.bounds[0][0]
    held = auto(A, 4, budget=1e6, goal=ratio * (1 - 1e-9))
    assert held.info["budget_used"] == 0 and held.info["nodes"] == 0
    assert held.value == certified.value and held.bounds == certified.bounds


def test_rungs_that_leave_the_same_words_share_one_dense_block(monkeypatch):
    """On flat matrices (near-equal co-occurrence: nothing screens out) several rungs branch
    over all the words; their dense block and sorted rows are formed once per set of words, and
    the search still ends at the brute-force optimum."""
    formed, branched = [], []
    form, branch = exact_module._dense_block, exact_module._branch

    def counted_form(A, survivors, words):
        formed.append(words.tobytes())
        return form(A, survivors, words)

    def counted_branch(A, survivors, *args, **kwargs):
        branched.append(survivors.size)
        return branch(A, survivors, *args, **kwargs)

    monkeypatch.setattr(exact_module, "_dense_block", counted_form)
    monkeypatch.setattr(exact_module, "_branch", counted_branch)
    shared = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        flat = np.full((14, 14), 3.0) + rng.random((14, 14))
        A = Gram.from_dense(0.5 * (flat + flat.T) + 6 * np.eye(14))
        formed.clear()
        branched.clear()
        out = exact(A, 4)
        assert out.exact
        assert abs(out.value - _brute(A, 4)) <= 1e-9 * out.value
        assert len(formed) == len(set(formed))  # (no set of words formed twice)
        shared += len(branched) - len(formed)
    assert shared >= 4  # rungs that found their block formed


def test_a_watched_search_reports_its_best_against_the_open_nodes_and_ends_the_same():
    """``progress`` hears each rung's target and, between calls of the numba search, the best
    value against the open nodes' largest bound; a watched search ends at the same topic,
    bound and node count as one nobody watches (it only pauses more often)."""
    rng = np.random.default_rng(3)
    flat = np.full((14, 14), 3.0) + rng.random((14, 14))
    A = Gram.from_dense(0.5 * (flat + flat.T) + 6 * np.eye(14))
    said = []
    watched = exact(A, 4, progress=said.append)
    alone = exact(A, 4)
    assert watched.value == alone.value and watched.bounds == alone.bounds
    assert watched.info["nodes"] == alone.info["nodes"]
    targets = [text for text in said if text.startswith("nothing above")]
    assert len(targets) == len(watched.info["proved_ratios"])
    assert targets[-1] == (f"nothing above {watched.value:.6g} = best {watched.value:.6g} / 1? "
                           "screening 14 words")


@pytest.mark.parametrize("seed, budget", [(14, 0.7), (10, 0.7), (3, 0.3), (21, 1.5)])
def test_a_watched_auto_spends_its_budget_on_the_same_nodes(seed, budget):
    """auto's budget is looked at per chunk of the numba search, and a watched chunk only runs
    in pieces: with a budget that stops the search, the same topic, bound, nodes and work."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(200, 600)), int(rng.integers(4, 9))
    Y = rng.standard_normal((30, n))
    A = Gram.from_dense(Y.T @ Y)
    alone = auto(A, k, budget=budget)
    watched = auto(A, k, budget=budget, progress=lambda text: None)
    assert watched.value == alone.value and watched.bounds == alone.bounds
    assert watched.info["nodes"] == alone.info["nodes"]
    assert watched.info["budget_used"] == alone.info["budget_used"]
    assert list(watched.indices) == list(alone.indices)


def test_the_status_line_shows_what_the_search_says_on_a_terminal_only(monkeypatch):
    """The CLI's spinner shows what the search says beside its description on a terminal; off a
    terminal, or with --quiet, there is nothing to tell (no callback)."""
    import io
    import time

    from rich.console import Console

    import spca_cli.progress as progress_module

    # (pytest's stderr is no terminal; FORCE_COLOR makes rich, here the console below, decide)
    monkeypatch.setenv("FORCE_COLOR", "1")
    screen = io.StringIO()
    monkeypatch.setattr(progress_module, "stderr_console",
                        lambda: Console(file=screen, force_terminal=True, width=200))
    with progress_module.status("Finding 5 topics") as say:
        say("topic 1: best 6.07514, open nodes <= 6.11691 (0.9932), 12 nodes, 4,330 words")
        time.sleep(0.3)  # (the spinner redraws)
    assert "Finding 5 topics: topic 1: best 6.07514, open nodes <= 6.11691" in screen.getvalue()
    monkeypatch.setattr(progress_module, "stderr_console",
                        lambda: Console(file=io.StringIO(), force_terminal=False))
    with progress_module.status("Finding 5 topics") as say:
        assert say is None
    with progress_module.status("Finding 5 topics", quiet=True) as say:
        assert say is None


@pytest.mark.parametrize("view", [False, True])
def test_the_block_of_exact_count_rows_is_the_block_formed_from_the_documents(view):
    """A block of counts taken straight from the model's float32 rows holds the numbers the
    documents give (symmetric, the same float32 |A'| and sorted rows), on A and on a view
    without some words; and the search over it proves the brute-force optimum."""
    from spca_cli.bounds import RowModel

    A = Gram.from_documents(small_corpus(m=200, n=24, seed=5))
    if view:
        A = A.remove(np.array([2, 7, 11]))
    assert A.exact_columns()
    words = np.flatnonzero(A.active())
    model = RowModel.of(A, words=words, exact_rows=words.size)
    assert model.is_exact and model.CT.dtype == np.float32
    A_sub, B, prefixes, values = exact_module._dense_block(A, model, words)
    D = A.submatrix(words)
    assert A_sub.dtype == np.float64 and np.array_equal(A_sub, D)
    assert B.dtype == np.float32 and np.array_equal(B, D.astype(np.float32))
    reference = exact_module._with_prefixes(D, D.astype(np.float32))
    assert all(np.array_equal(a, b) for a, b in zip(prefixes, reference[2]))
    assert np.array_equal(values, reference[3])
    out = exact(A, 3)
    assert out.exact and abs(out.value - _brute(A, 3)) <= 1e-9 * out.value
