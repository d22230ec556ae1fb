"""The spannogram solver against brute force over all C(n, k) supports, and its elimination.

Oracles: on A = V V^T of exact rank d the rank-d spannogram must find the k-sparse optimum; on
any PSD A its bound must be >= that optimum; elimination must not change anything it returns.
"""

from __future__ import annotations

import doctest
import importlib
import itertools
import time

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from spca_cli.errors import SpcaParameterError
from spca_cli.matrix import Gram
from spca_cli.solvers import SOLVERS
from spca_cli.solvers.spannogram import is_nonnegative, spannogram
from spca_cli.spectrum import top_eigenpairs


def brute_force(M, k, allowed=None):
    """max over |I| = k (I inside ``allowed``) of lambda_max(M[I, I])."""
    idx = np.arange(len(M)) if allowed is None else np.asarray(allowed)
    combos = np.array(list(itertools.combinations(idx, k)))
    vals = np.linalg.eigvalsh(M[combos[:, :, None], combos[:, None, :]])[:, -1]
    return float(vals.max())


def solve(M, k, rank, **kw):
    A = Gram.from_dense(M)
    return spannogram(A, k, eigen=top_eigenpairs(A, rank + 1), rank=rank, **kw)


def same_output(a, b):
    assert np.array_equal(a.indices, b.indices)
    assert a.value == b.value
    assert a.bounds == b.bounds
    assert a.info["candidates"] == b.info["candidates"]


def zipf_corpus(seed, m=250, n=90, dup=6):
    """Binary documents from 4 topics over a Zipf vocabulary, with ``dup`` duplicated words."""
    rs = np.random.RandomState(seed)
    base = 1.0 / np.arange(1, n + 1) ** 1.1
    topics = [rs.permutation(n)[:12] for _ in range(4)]
    rows, cols = [], []
    for doc in range(m):
        p = base.copy()
        p[topics[rs.randint(4)]] += 0.4
        p /= p.sum()
        words = np.unique(rs.choice(n, size=rs.randint(3, 10), p=p))
        rows += [doc] * len(words)
        cols += words.tolist()
    S = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(m, n))
    # words that always occur together: identical columns, identical rows of V
    S = sp.hstack([S, S[:, rs.choice(n, dup, replace=False)]]).tocsr()
    return S


# ---------------------------------------------------------------- exactness on rank-d matrices
@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("positive", [False, True], ids=["mixed", "nonneg"])
def test_exact_on_rank_d(d, positive):
    for seed in range(40):
        rs = np.random.RandomState(1000 * d + seed)
        n = rs.randint(max(d + 3, 6), 17)
        k = rs.randint(2, 6)
        V = rs.rand(n, d) if positive else rs.randn(n, d)
        M = V @ V.T
        best = brute_force(M, k)
        out = solve(M, k, d)
        assert out.exact and out.info["rank"] == d
        assert out.value == pytest.approx(best, rel=1e-9)
        assert out.info["opt_d"] == pytest.approx(best, rel=1e-9)
        assert out.bounds[0][0] >= best
        assert len(np.unique(out.indices)) == k
        assert np.linalg.norm(out.weights) == pytest.approx(1.0)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_nonnegative_reduction_is_exact(d):
    for seed in range(20):
        rs = np.random.RandomState(50 + 100 * d + seed)
        n, k = rs.randint(6, 14), rs.randint(2, 6)
        V = rs.rand(n, d)
        M = V @ V.T
        out = solve(M, k, d, nonnegative=True)
        assert out.info["sign_patterns"] == 1
        assert out.value == pytest.approx(brute_force(M, k), rel=1e-9)


# ---------------------------------------------------------------- bounds on full-rank matrices
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_bound_is_above_the_optimum_on_full_rank(rank):
    for seed in range(25):
        rs = np.random.RandomState(300 + 100 * rank + seed)
        n, k = rs.randint(5, 13), rs.randint(2, 6)
        X = rs.rand(n + 4, n) if seed % 2 else rs.randn(n + 4, n)
        M = X.T @ X
        best = brute_force(M, k)
        modes = (None, True) if seed % 2 else (None,)
        for nonnegative in modes:
            out = solve(M, k, rank, nonnegative=nonnegative)
            assert out.value <= best * (1 + 1e-12)
            bound, source = out.bounds[0]
            assert bound >= best
            assert source == f"rank-{rank} spannogram + lambda_{rank + 1}"
            assert 0.0 <= out.info["apriori_ratio"] <= 1.0


# ---------------------------------------------------------------- elimination changes nothing
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_elimination_identical_on_random_matrices(rank):
    for seed in range(6):
        rs = np.random.RandomState(500 + seed)
        n, k = 40, rs.randint(3, 7)
        low = rs.rand(n, rank + 1) * (1.0 / np.arange(1, n + 1) ** 0.7)[:, None]
        X = rs.rand(60, n) * (1.0 / np.arange(1, n + 1))
        for M in (low @ low.T, X.T @ X):  # low rank, then full rank
            on = solve(M, k, rank)
            off = solve(M, k, rank, eliminate=False)
            same_output(on, off)
            assert on.info["surviving_words"] <= off.info["surviving_words"]


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_elimination_identical_on_a_zipf_corpus(rank):
    for seed in range(3):
        A = Gram.from_documents(zipf_corpus(seed))
        eigen = top_eigenpairs(A, rank + 1)
        on = spannogram(A, 6, eigen=eigen, rank=rank)
        off = spannogram(A, 6, eigen=eigen, rank=rank, eliminate=False)
        same_output(on, off)
        assert on.info["surviving_words"] < off.info["surviving_words"]
        assert on.info["nonnegative"]


def same_with_fewer_rows_classed(short, every):
    """The output with the classes of the longest rows: that of every row's classes, but for
    the bound's slack, which counts only rows merged into a class (a row left out is never
    merged), so it may be lower in its last digits."""
    assert np.array_equal(short.indices, every.indices) and short.value == every.value
    assert short.info["candidates"] == every.info["candidates"]
    assert short.info["surviving_words"] == every.info["surviving_words"]
    assert short.exact == every.exact and len(short.bounds) == len(every.bounds)
    for (bound, source), (reference, reference_source) in zip(short.bounds, every.bounds):
        assert source == reference_source
        assert reference * (1 - 1e-8) <= bound <= reference


@pytest.mark.parametrize("rows", [4, 12, 30])
def test_classes_of_the_longest_rows_first_change_nothing(monkeypatch, rows):
    """The classes formed over the longest rows of V only (taking every row in when a pass
    cannot rule the others out) give the output of the classes of every row."""
    import spca_cli.solvers.spannogram as module

    calls = []
    classes = module._classes

    def counted(Vw, *args):
        calls.append(len(Vw))
        return classes(Vw, *args)

    monkeypatch.setattr(module, "_classes", counted)
    redone = kept = 0
    cases = [Gram.from_documents(zipf_corpus(seed)) for seed in range(3)]
    for seed in range(6):
        rs = np.random.RandomState(900 + seed)
        low = rs.randn(40, 3) * (1.0 / np.arange(1, 41) ** 0.7)[:, None]
        cases += [Gram.from_dense(low @ low.T), Gram.from_dense(np.abs(low) @ np.abs(low).T)]
    # the longest rows: 3 words on one axis and 20 copies of a word on the other, whose one
    # class fills the first pass; a shorter word on the first axis, left out, is in the best 5
    V = np.array([[1.0, 0.0]] * 3 + [[0.0, 0.5]] * 20 + [[0.45, 0.0]] + [[0.1, 0.1]] * 6)
    cases.append(Gram.from_dense(V @ V.T + 1e-3 * np.eye(len(V))))
    # short rows that one class merges (they differ by less than its grid, 1e-9 of the longest
    # row), which a cut by norm alone split
    V = np.array([[1.0, 0.0], [0.0, 0.9], [0.5, 0.5], [0.5, -0.5]]
                 + [[1e-4 + step * 1e-10, 0.0] for step in (4, 3, 2, 1, 0, -1, -3, -4)])
    cases.append(Gram.from_dense(V @ V.T))
    # passes that grow while a row left out still reaches the threshold: the next pass takes
    # the classes of every row (a pass capped at the classes formed stopped one word short)
    V = np.random.RandomState(0).randn(30, 3) * (1.0 / np.arange(1, 31) ** 0.7)[:, None]
    cases.append(Gram.from_dense(V @ V.T))
    for A in cases:
        for rank in (1, 2, 3):
            eigen = top_eigenpairs(A, rank + 1)
            monkeypatch.setattr(module, "_CLASSED_ROWS", rows)
            calls.clear()
            first = spannogram(A, 5, eigen=eigen, rank=rank)
            redone += len(calls) == 2
            kept += len(calls) == 1 and calls[0] < A.n
            monkeypatch.setattr(module, "_CLASSED_ROWS", 10 ** 9)
            same_with_fewer_rows_classed(first, spannogram(A, 5, eigen=eigen, rank=rank))
            for k in (3, 8):
                monkeypatch.setattr(module, "_CLASSED_ROWS", rows)
                short = spannogram(A, k, eigen=eigen, rank=rank)
                monkeypatch.setattr(module, "_CLASSED_ROWS", 10 ** 9)
                same_with_fewer_rows_classed(short, spannogram(A, k, eigen=eigen, rank=rank))
    assert kept > 0  # the classes of the longest rows sufficed
    if rows == 4:
        assert redone > 0  # and some pass took every row in


def test_classes_of_the_longest_rows_refuse_only_what_every_row_refuses(monkeypatch):
    """With few candidates allowed, the classes of the longest rows refuse a run exactly when
    the classes of every row do, with the same message (their floor is judged on every row)."""
    import spca_cli.solvers.spannogram as module

    def outcome(A, eigen, rank, allowed, rows):
        monkeypatch.setattr(module, "_CLASSED_ROWS", rows)
        try:
            return spannogram(A, 5, eigen=eigen, rank=rank, max_candidates=allowed)
        except SpcaParameterError as exc:
            return str(exc)

    refused = 0
    for seed in range(4):
        A = Gram.from_documents(zipf_corpus(seed))
        for rank in (2, 3):
            eigen = top_eigenpairs(A, rank + 1)
            for allowed in (50, 400, 5000, 60_000):
                short, every = (outcome(A, eigen, rank, allowed, rows) for rows in (4, 10 ** 9))
                if isinstance(every, str):
                    refused += 1
                    assert short == every
                else:
                    same_with_fewer_rows_classed(short, every)
    assert refused > 0


def test_airline_elimination_leaves_few_words_and_the_same_answer(airline_mtx):
    A = Gram.from_documents(sp.csr_array(scipy.io.mmread(str(airline_mtx))))
    eigen = top_eigenpairs(A, 3)
    on = spannogram(A, 10, eigen=eigen, rank=2)
    off = spannogram(A, 10, eigen=eigen, rank=2, eliminate=False)
    same_output(on, off)
    assert on.info["surviving_words"] < 300 < A.n == off.info["surviving_words"]
    assert on.value >= 3821.31 - 0.01  # best published first component (PROVENANCE.md)


# ---------------------------------------------------------------- ties and degenerate input
def test_duplicate_and_zero_rows_are_exact():
    for seed in range(30):
        rs = np.random.RandomState(700 + seed)
        n, d, k = rs.randint(7, 13), rs.randint(1, 4), rs.randint(2, 6)
        V = rs.randn(n, d) if seed % 2 else rs.rand(n, d)
        V[1] = V[0]  # identical words
        V[2] = V[0]
        V[4] = -V[3]  # same curve |V c|
        V[n - 1] = 0.0  # a word that never co-occurs in the top-d subspace
        M = V @ V.T
        best = brute_force(M, k)
        out = solve(M, k, d)
        assert out.value == pytest.approx(best, rel=1e-9)
        assert out.bounds[0][0] >= best
        same_output(out, solve(M, k, d, eliminate=False))


def test_k_equal_n_and_too_few_nonzero_rows():
    rs = np.random.RandomState(3)
    V = rs.randn(8, 2)
    M = V @ V.T
    out = solve(M, 8, 2)
    assert sorted(out.indices) == list(range(8))
    assert out.value == pytest.approx(np.linalg.eigvalsh(M)[-1], rel=1e-9)
    V[5:] = 0.0  # only 5 nonzero rows for k = 6
    M = V @ V.T
    out = solve(M, 6, 2)
    assert set(range(5)) <= set(out.indices)
    assert out.value == pytest.approx(brute_force(M, 6), rel=1e-9)


def test_rank_above_the_number_of_nonzero_eigenvalues():
    for seed in range(6):
        rs = np.random.RandomState(800 + seed)
        V = rs.randn(10, 2)
        M = V @ V.T
        out = solve(M, 4, 4)
        assert out.info["rank"] == 2 and out.info["rank_requested"] == 4
        assert out.value == pytest.approx(brute_force(M, 4), rel=1e-9)
        assert out.bounds[0][0] >= brute_force(M, 4)


# ---------------------------------------------------------------- deflated views
def test_remove_view_never_picks_removed_words():
    for seed in range(6):
        rs = np.random.RandomState(900 + seed)
        X = rs.rand(20, 12)
        removed = [0, 3, 5, 7]
        A = Gram.from_dense(X.T @ X).remove(removed)
        assert is_nonnegative(A)
        out = spannogram(A, 3, eigen=top_eigenpairs(A, 3), rank=2)
        assert not set(out.indices.tolist()) & set(removed)
        allowed = [i for i in range(12) if i not in removed]
        best = brute_force(A.to_dense(), 3, allowed)
        assert out.value <= best * (1 + 1e-12) and out.bounds[0][0] >= best


def test_projection_view():
    for seed in range(6):
        rs = np.random.RandomState(950 + seed)
        X = rs.rand(20, 11)
        A = Gram.from_dense(X.T @ X).project_out(rs.randn(11))
        assert not is_nonnegative(A)
        out = spannogram(A, 3, eigen=top_eigenpairs(A, 4), rank=3)
        best = brute_force(A.to_dense(), 3)
        assert out.info["nonnegative"] is False
        assert out.value <= best * (1 + 1e-12) and out.bounds[0][0] >= best


# ---------------------------------------------------------------- limits and errors
def test_refuses_too_many_candidates():
    A = Gram.from_dense(np.eye(30) + 0.01)
    with pytest.raises(SpcaParameterError, match=(
            r"^rank 3 with k=4 leaves (at least )?\d+ words after elimination: (at least )?"
            r"[0-9.e+]+ candidate supports "
            r"would not finish; use a smaller rank, or time_limit SECONDS to get the best "
            r"found in that time$")):
        spannogram(A, 4, eigen=top_eigenpairs(A, 4), rank=3, max_candidates=100)


def test_hopeless_rank_is_refused_before_any_pass(monkeypatch):
    """Rank 5 on a full-rank 300-word matrix: the floor on the last pass's size says no at once
    (running the passes would take half a minute to reach the same refusal)."""
    module = importlib.import_module("spca_cli.solvers.spannogram")

    def no_pass(*args, **kwargs):
        raise AssertionError("an elimination pass ran")

    monkeypatch.setattr(module._Pass, "run", no_pass)
    M = np.random.default_rng(0).random((300, 300))
    A = Gram.from_dense(M @ M.T)
    with pytest.raises(SpcaParameterError, match=r"^rank 5 with k=10 leaves at least 300 words "
                                                 r"after elimination: at least 3\.1e\+11 "
                                                 r"candidate supports would not finish"):
        spannogram(A, 10, eigen=top_eigenpairs(A, 6), rank=5)


@pytest.mark.parametrize("seed", range(6))
def test_early_refusal_agrees_with_the_passes(seed, monkeypatch):
    """Whatever the budget, the floor refuses only what the passes themselves would refuse."""
    module = importlib.import_module("spca_cli.solvers.spannogram")
    rs = np.random.RandomState(seed)
    n, d = 60, 3
    X = rs.randn(n, d) * np.r_[3.0, 2.0, 1.0] + 0.3 * rs.randn(n, d) * (rs.rand(n, 1) < 0.2)
    A = Gram.from_dense(X @ X.T + 1e-3 * np.eye(n))
    eigen = top_eigenpairs(A, d + 1)

    def outcome(budget):
        try:
            return sorted(spannogram(A, 5, eigen=eigen, rank=d, max_candidates=budget).indices)
        except SpcaParameterError as exc:
            assert "would not finish" in str(exc)
            return "refused"

    budgets = [10, 300, 3_000, 30_000, 300_000]
    with_floor = [outcome(b) for b in budgets]
    monkeypatch.setattr(module, "_fewest_classes", lambda *args, **kwargs: 0)
    assert with_floor == [outcome(b) for b in budgets]
    assert "refused" in with_floor and with_floor[-1] != "refused"  # both kinds are seen


@pytest.mark.parametrize("limit", [1e-4, 0.3])
def test_time_limit_returns_a_valid_support(limit):
    X = np.random.RandomState(4).randn(400, 300)
    A = Gram.from_dense(X.T @ X)
    eigen = top_eigenpairs(A, 4)
    start = time.perf_counter()
    out = spannogram(A, 5, eigen=eigen, rank=3, eliminate=False, time_limit=limit,
                     max_candidates=100)
    assert time.perf_counter() - start < limit + 2.0
    assert out.time_limited and not out.exact
    assert out.bounds == [] and out.info["opt_d"] is None
    assert len(np.unique(out.indices)) == 5 and out.value > 0
    if limit > 0.1:
        assert out.info["candidates"] > 0


def test_nonnegative_true_needs_a_nonnegative_matrix():
    X = np.random.RandomState(5).randn(12, 6)
    with pytest.raises(SpcaParameterError, match="nonnegative=True needs"):
        solve(X.T @ X, 2, 2, nonnegative=True)


def test_registered_and_documented():
    assert SOLVERS["spannogram"] is spannogram
    # the package re-exports the function under the module's name, so fetch the module itself
    module = importlib.import_module("spca_cli.solvers.spannogram")
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


@given(hnp.arrays(np.int64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=40),
                  elements=st.integers(-3, 3)))
def test_row_classes_number_rows_as_np_unique(keys):
    from spca_cli.solvers.spannogram import _row_classes

    expected = np.unique(keys, axis=0, return_inverse=True)[1].ravel()
    np.testing.assert_array_equal(_row_classes(keys), expected)
