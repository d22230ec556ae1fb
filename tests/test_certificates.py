"""The weighted row bound, the screening bound and branch and bound against brute force.

Every inequality of :mod:`spca_cli.bounds` and :mod:`spca_cli.solvers.exact` is checked on small
matrices where the optimum max_{|I| = k} lambda_max(A'_I) is found by trying every support:
nonnegative count corpora (A = S^T S), mixed-sign PSD matrices, and both deflated views.
"""

from itertools import combinations

import numpy as np
import pytest

from spca_cli.bounds import RowModel, row_certificate, weighted_row_bound
from spca_cli.kernels.rowbound import branch_and_bound
from spca_cli.matrix import Gram
from spca_cli.solvers._base import finish_component
from spca_cli.solvers.exact import _screen_bounds, auto, exact, search


def _views(seed):
    """A few (name, Gram view) pairs of 7-10 words: nonnegative, mixed-sign, deflated."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(7, 11))
    S = (rng.random((30, n)) < 0.35) * rng.integers(1, 5, (30, n))
    X = rng.standard_normal((12, n)) * rng.random(n)
    nonneg = Gram.from_documents(S.astype(float))
    mixed = Gram.from_dense(X.T @ X)
    x = rng.standard_normal(n)
    return [("counts", nonneg), ("mixed-sign", mixed),
            ("counts, removed", nonneg.remove([0, 3])),
            ("counts, projected", nonneg.project_out(x)),
            ("mixed-sign, both", mixed.remove([1]).project_out(x))]


def _brute(A, k):
    """(optimum, its support) over every k-subset of the active words."""
    D = A.to_dense()
    words = np.flatnonzero(A.active())
    best, arg = -np.inf, None
    for I in combinations(words.tolist(), k):
        value = np.linalg.eigvalsh(D[np.ix_(I, I)])[-1]
        if value > best:
            best, arg = value, I
    return best, arg


def _brute_disjoint_total(A, k, C):
    D = A.to_dense()
    words = np.flatnonzero(A.active()).tolist()
    lam = {I: np.linalg.eigvalsh(D[np.ix_(I, I)])[-1] for I in combinations(words, k)}
    best = -np.inf
    for pair in combinations(lam, C):
        if len(set().union(*pair)) == C * k:
            best = max(best, sum(lam[I] for I in pair))
    return best


CASES = [(seed, k) for seed in range(6) for k in (1, 2, 3, 4)]


@pytest.mark.parametrize("seed,k", CASES)
def test_row_bound_is_above_the_optimum(seed, k):
    for name, A in _views(seed):
        opt, _ = _brute(A, k)
        for exact_rows in (0, 3, A.n):  # all Cauchy-Schwarz, mixed, all exact
            bound = weighted_row_bound(RowModel.of(A, exact_rows=exact_rows), k)
            assert bound.value >= opt * (1 - 1e-12), (name, exact_rows)
            # w = 1 (Gershgorin) is a valid bound too, and the iteration never does worse
            ones = weighted_row_bound(RowModel.of(A, exact_rows=exact_rows), k, max_iter=1,
                                      start=np.ones(RowModel.of(A).size))
            assert ones.value >= opt * (1 - 1e-12)
            assert bound.value <= ones.value * (1 + 1e-12)


@pytest.mark.parametrize("seed,k", CASES)
def test_a_certificate_told_the_topic_found_stays_above_the_optimum(seed, k):
    """``attained`` (the solver's value) ends the work once the bound meets it, and keeps it
    going while the least ratio says it still could: the bound stays >= OPT on every view.
    Told the optimum itself, or a worse support's value (which it cannot stop at), it ends
    within the iteration's tolerance of the untold bound or below it (the steps may differ:
    plain ones while the value looks within reach, linearized ones untold)."""
    for name, A in _views(seed):
        opt, support = _brute(A, k)
        untold = row_certificate(A, k).bound
        told = row_certificate(A, k, attained=opt).bound
        assert told.value >= opt * (1 - 1e-12), name
        assert told.value <= untold.value * (1 + 1e-5), name
        D = A.to_dense()
        others = [I for I in combinations(np.flatnonzero(A.active()).tolist(), k)
                  if np.linalg.eigvalsh(D[np.ix_(I, I)])[-1] < opt * (1 - 1e-6)]
        if others:
            worse = float(np.linalg.eigvalsh(D[np.ix_(others[0], others[0])])[-1])
            told_worse = row_certificate(A, k, attained=worse).bound.value
            assert told_worse >= opt * (1 - 1e-12), name
            assert told_worse <= untold.value * (1 + 1e-5), name


@pytest.mark.parametrize("seed", range(6))
def test_disjoint_total_bound_is_above_the_best_pair(seed):
    for name, A in _views(seed):
        if A.X is not None or int(A.active().sum()) < 4:
            continue
        best = _brute_disjoint_total(A, 2, 2)
        bound = weighted_row_bound(RowModel.of(A), 2, totals=(2,))
        assert bound.totals[2] >= best * (1 - 1e-12), name


@pytest.mark.parametrize("seed,k", [(s, k) for s in range(6) for k in (2, 3, 4)])
def test_screening_bound_holds_for_every_support_with_the_word(seed, k):
    for name, A in _views(seed):
        model = RowModel.of(A)
        bound, _, _ = _screen_bounds(model, k, 1.0)
        D = A.to_dense()
        for pos, i in enumerate(model.words.tolist()):
            others = [j for j in model.words.tolist() if j != i]
            best = max(np.linalg.eigvalsh(D[np.ix_(I, I)])[-1]
                       for I in ([i, *J] for J in combinations(others, k - 1)))
            assert bound[pos] >= best * (1 - 1e-12), (name, i)


@pytest.mark.parametrize("seed,k", [(s, k) for s in range(6) for k in (1, 2, 3, 4)])
def test_exact_finds_the_brute_force_optimum(seed, k):
    for name, A in _views(seed):
        opt, _ = _brute(A, k)
        out = exact(A, k)
        assert out.exact, name
        assert out.value == pytest.approx(opt, rel=1e-10), name
        bound, source = out.bounds[0]
        assert source == "branch and bound: optimal"
        assert opt <= bound <= opt * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_anytime_bound_of_open_nodes_is_above_the_optimum_at_every_step(seed):
    """One node per call: after every step max(incumbent, open nodes' bounds) >= OPT."""
    for name, A in _views(seed):
        k = 3
        opt, _ = _brute(A, k)
        words = np.flatnonzero(A.active())
        A_sub = A.submatrix(words)
        B = np.abs(A_sub)
        m = words.size
        stack_in = np.zeros((m + 2, m), dtype=np.bool_)
        stack_out = np.zeros((m + 2, m), dtype=np.bool_)
        stack_w = np.ones((m + 2, m))
        stack_ub = np.full(m + 2, np.inf)
        best = np.zeros(k, dtype=np.int64)
        depth, lower, steps = 1, 0.0, 0
        while depth > 0:
            depth, lower, _ = branch_and_bound(A_sub, B, k, stack_in, stack_out, stack_w,
                                               stack_ub, depth, best, lower, 0.0, 1, 3, 1e-12)
            anytime = max(lower, stack_ub[:depth].max()) if depth else lower
            assert anytime >= opt * (1 - 1e-12), (name, steps)
            steps += 1
        assert lower == pytest.approx(opt, rel=1e-12)
        assert np.linalg.eigvalsh(A_sub[np.ix_(best, best)])[-1] == pytest.approx(opt)


@pytest.mark.parametrize("seed", range(4))
def test_a_floor_above_the_optimum_proves_nothing_is_above_it(seed):
    """Pruning at theta > OPT finishes without a support above theta (the ladder's proof),
    and at theta < OPT it finds a support above theta."""
    for name, A in _views(seed):
        k = 3
        opt, _ = _brute(A, k)
        words = np.flatnonzero(A.active())
        A_sub = A.submatrix(words)
        m = words.size
        for theta, above in ((opt * 1.01, False), (opt * 0.99, True)):
            stack_in = np.zeros((m + 2, m), dtype=np.bool_)
            stack_out = np.zeros((m + 2, m), dtype=np.bool_)
            stack_w = np.ones((m + 2, m))
            stack_ub = np.full(m + 2, np.inf)
            best = np.zeros(k, dtype=np.int64)
            depth, value, _ = branch_and_bound(A_sub, np.abs(A_sub), k, stack_in, stack_out,
                                               stack_w, stack_ub, 1, best, 0.0, theta, 10**6, 3,
                                               1e-12)
            assert depth == 0, name
            assert (value > theta) == above, (name, theta, value)


def test_exact_beats_a_weak_incumbent_and_names_the_search():
    """A planted block the heuristics may miss is found by the search (weak incumbent)."""
    A = _views(3)[0][1]
    opt, support = _brute(A, 3)
    weak = finish_component(A, np.flatnonzero(A.active())[-3:])
    best_set, value, bound, finished, _ = search(A, 3, weak)
    assert finished and value == pytest.approx(opt, rel=1e-12)
    assert sorted(best_set.tolist()) == sorted(support)
    assert bound == pytest.approx(opt, rel=1e-12)


def test_auto_reports_the_winner_and_a_certificate():
    A = _views(0)[0][1]
    out = auto(A, 3)
    opt, _ = _brute(A, 3)
    assert out.value == pytest.approx(opt, rel=1e-10)
    assert out.info["found_by"] in ("tpower", "spannogram", "greedy", "branch and bound")
    assert out.exact is True
