"""Screening from a bound on every (k-1)-word support (the 2 x 2 bound of
:func:`spca_cli.solvers.exact._inner_screen_bounds`) and the search that uses it, checked against
brute force on hostile small matrices: nonnegative and mixed-sign, PSD and PSD only up to
rounding, few exact rows (Cauchy-Schwarz pairs) and all of them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import spca_cli.solvers.exact as exact_module
from spca_cli.bounds import RowModel, row_prefixes
from spca_cli.kernels.rowbound import outside_columns, top_square_sums
from spca_cli.matrix import Gram
from _brute_force_bounds import KINDS, hostile_matrix


def _view(seed):
    rng = np.random.default_rng(seed)
    kind = KINDS[seed % len(KINDS)]
    n = int(rng.integers(6, 13))
    D, _ = hostile_matrix(rng, kind, n)
    D = 0.5 * (D + D.T)
    return rng, D, Gram.from_dense(D)


def _best(D, words, k):
    """max lambda_max over supports of k of ``words``, and the best holding each word."""
    holding = {int(i): -np.inf for i in words}
    best = -np.inf
    for I in itertools.combinations(words.tolist(), k):
        value = float(np.linalg.eigvalsh(D[np.ix_(I, I)])[-1])
        best = max(best, value)
        for i in I:
            holding[i] = max(holding[i], value)
    return best, holding


@pytest.mark.parametrize("seed", range(40))
def test_square_sums_are_the_brute_force_sums(seed):
    rng, D, A = _view(seed)
    model = RowModel.of(A, exact_rows=int(rng.integers(0, A.n + 1)))
    k = int(rng.integers(2, 6))
    d = model.sqd * model.sqd
    expected = np.zeros(model.size)
    words = model.words
    for a in range(model.size):
        values = []
        for b in range(model.size):
            if a == b:
                continue
            exact = model.hpos[a] >= 0 or model.hpos[b] >= 0
            values.append(D[words[a], words[b]] ** 2 if exact else d[a] * d[b])
        expected[a] = sum(sorted(values, reverse=True)[:k - 1])
    plain = top_square_sums(model.CT, model.hpos, model.hrow, d, k - 1)
    np.testing.assert_allclose(plain, expected, rtol=1e-12, atol=0)
    if model.hrow.size:
        sorted_rows = top_square_sums(model.CT, model.hpos, model.hrow, d, k - 1,
                                      row_prefixes(model.CT, int(rng.integers(1, k + 2))),
                                      outside_columns(model.CT, model.hpos))
        np.testing.assert_allclose(sorted_rows, expected, rtol=1e-12, atol=0)


def test_float32_rows_are_squared_exactly():
    """Co-occurrence counts above 4096 are float32 numbers whose squares float32 rounds (4097^2
    = 16,785,409 to 16,785,408): the squares are taken in float64, and the screening bound of
    the pair stays at its lambda_max, 9097, not 1.2e-4 below it."""
    A = Gram.from_dense(np.array([[5000.0, 4097.0], [4097.0, 5000.0]]))
    model = RowModel.of(A, exact_rows=2)
    assert model.CT.dtype == np.float32
    d = model.sqd * model.sqd
    assert top_square_sums(model.CT, model.hpos, model.hrow, d, 1).tolist() == [4097.0 ** 2] * 2
    assert exact_module._inner_screen_bounds(model, 2, 5000.0).min() >= 9097.0
    rng = np.random.default_rng(0)
    C = rng.integers(4097, 1 << 15, (40, 40)).astype(float)  # (row sums < 2^24)
    C = np.maximum(C, C.T) * (rng.random((40, 40)) < 0.5)
    np.fill_diagonal(C, C.sum(axis=1))
    model = RowModel.of(Gram.from_dense(C), exact_rows=40)
    assert model.CT.dtype == np.float32
    wide = model.CT.astype(np.float64)
    d = model.sqd * model.sqd
    for prefixes in (None, row_prefixes(model.CT, 5)):
        np.testing.assert_array_equal(
            top_square_sums(model.CT, model.hpos, model.hrow, d, 6, prefixes),
            top_square_sums(wide, model.hpos, model.hrow, d, 6, prefixes))


@pytest.mark.parametrize("seed", range(60))
def test_inner_screening_bound_is_above_every_support_holding_the_word(seed):
    """With ``inner`` the best (k-1)-word value (the smallest valid one), each word's bound is
    at least the best k-word support holding it."""
    rng, D, A = _view(seed)
    model = RowModel.of(A, exact_rows=int(rng.integers(0, A.n + 1)))
    k = int(rng.integers(2, min(6, model.size) + 1)) if model.size >= 2 else 2
    if model.size < k:
        return
    every = np.arange(A.n)
    inner, _ = _best(D, every, k - 1)
    _, holding = _best(D, every, k)
    bounds = exact_module._inner_screen_bounds(model, k, inner)
    for a, i in enumerate(model.words):
        assert bounds[a] >= holding[int(i)] - 1e-12 * max(abs(holding[int(i)]), 1e-300), \
            (seed, int(i), bounds[a], holding[int(i)])


@pytest.mark.parametrize("seed", range(30))
def test_search_through_inner_bounds_never_claims_below_the_optimum(seed, monkeypatch):
    """auto and exact with branching refused beyond one word, so that rungs reach for a search
    of k - 1 words: the value is attained and the bound is at least the optimum."""
    rng, D, A = _view(seed)
    k = int(rng.integers(3, min(5, A.n) + 1))
    opt, _ = _best(D, np.arange(A.n), k)
    calls = []
    original = exact_module._inner_bound

    def spy(*args):
        calls.append(args[1])
        return original(*args)

    monkeypatch.setattr(exact_module, "_inner_bound", spy)
    monkeypatch.setattr(exact_module, "_MAX_BRANCH", 1)
    monkeypatch.setattr(exact_module, "_MAX_DENSE", 1)
    for solve in (exact_module.auto, exact_module.exact):
        out = solve(A, k)
        bound = min(b for b, _ in out.bounds)
        assert out.value <= opt * (1 + 1e-9) + 1e-12
        assert bound >= opt * (1 - 1e-9) - 1e-12, (seed, solve.__name__, bound, opt)


def test_the_search_of_k_minus_1_words_serves_most_hostile_views(monkeypatch):
    """(The cases above go through it: 24 of the 30 seeds ask for a (k-1)-word bound.)"""
    calls = []
    original = exact_module._inner_bound
    monkeypatch.setattr(exact_module, "_inner_bound",
                        lambda *args: calls.append(1) or original(*args))
    monkeypatch.setattr(exact_module, "_MAX_BRANCH", 1)
    for seed in range(30):
        rng, D, A = _view(seed)
        exact_module.auto(A, int(rng.integers(3, min(5, A.n) + 1)))
    assert len(calls) >= 15
