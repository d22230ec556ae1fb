"""The row-bound kernel's early stop on the exact rows' largest entries gives the same sums as
reading every entry, and both equal a brute-force sum of the k - 1 largest products."""

from __future__ import annotations

import numpy as np
import pytest

from spca_cli.kernels.rowbound import offdiag_top_sums, row_prefixes


def _model(rng, n, h, *, ties, dtype):
    """A symmetric nonnegative |A'| on n words, the first h rows exact, and its diagonal."""
    if ties:
        M = rng.integers(0, 4, (n, n)).astype(float)  # co-occurrence counts: many equal
    else:
        M = rng.random((n, n)) ** 3
    M[rng.random((n, n)) < 0.5] = 0.0
    M = np.maximum(M, M.T)
    diag = M.sum(axis=1) + 1.0  # large enough for Cauchy-Schwarz to stay above every pair
    np.fill_diagonal(M, diag)
    words = rng.permutation(n)
    hrow = np.sort(words[:h]).astype(np.int64)
    hpos = np.full(n, -1, dtype=np.int64)
    hpos[hrow] = np.arange(h)
    CT = np.ascontiguousarray(M[hrow], dtype=dtype)
    return M, CT, hpos, hrow, np.sqrt(diag)


def _brute(M, hpos, sqd, v, count):
    n = M.shape[0]
    out = np.zeros(n)
    for i in range(n):
        row = np.where((hpos[i] >= 0) | (hpos >= 0), M[i], sqd[i] * sqd) * v
        row[i] = -np.inf
        out[i] = np.sort(row)[::-1][:count].sum()
    return out


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("length", [1, 3, 8, 1000])
def test_prefix_stop_gives_the_sums_of_every_entry(seed, length):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    h = int(rng.integers(0, n + 1))
    M, CT, hpos, hrow, sqd = _model(rng, n, h, ties=seed % 2 == 0,
                                     dtype=np.float32 if seed % 3 == 0 else np.float64)
    v = rng.random(n)
    v[rng.random(n) < 0.2] = 0.0
    count = int(rng.integers(1, 10))
    prefixes = row_prefixes(CT, length=length)
    fast = offdiag_top_sums(CT, hpos, hrow, sqd, v, count, prefixes)
    full = offdiag_top_sums(CT, hpos, hrow, sqd, v, count)
    np.testing.assert_allclose(fast, full, rtol=1e-12, atol=0)
    np.testing.assert_allclose(full, _brute(M, hpos, sqd, v, count), rtol=1e-6, atol=0)


def test_prefix_holds_the_largest_entries_in_order():
    CT = np.array([[3.0, 9.0, 1.0, 7.0, 5.0]])
    order, lengths, rest = row_prefixes(CT, length=3)
    assert order.tolist() == [[1, 3, 4]] and lengths.tolist() == [3]
    assert rest.tolist() == [3.0]
    order, lengths, rest = row_prefixes(CT, length=10)
    assert order.tolist() == [[1, 3, 4, 0, 2]] and lengths.tolist() == [5]
    assert rest.tolist() == [0.0]


@pytest.mark.parametrize("seed", range(8))
def test_restricted_model_keeps_prefixes_that_give_the_same_sums(seed):
    """A RowModel restricted to some words (remove deflation, screening) derives its prefixes
    from its parent's; its sums equal those of a model made afresh on the same words."""
    from spca_cli.bounds import RowModel

    rng = np.random.default_rng(seed)
    n, h = 40, 25
    M, CT, hpos, hrow, sqd = _model(rng, n, h, ties=seed % 2 == 0, dtype=np.float64)
    model = RowModel(np.arange(n), np.diag(M).copy(), CT, hpos, hrow)
    model._prefixes = row_prefixes(model.CT, length=int(rng.integers(2, 40)))
    keep = rng.random(n) < 0.6
    small = model.restrict(keep)
    assert small._prefixes is not None
    v = rng.random(int(keep.sum()))
    fresh = offdiag_top_sums(small.CT, small.hpos, small.hrow, small.sqd, v, 4)
    np.testing.assert_allclose(small.top_sums(v, 4), fresh, rtol=1e-12, atol=0)


def test_prefix_stop_on_a_large_parallel_model():
    """Past the parallel threshold (2^20 entries), with the default prefix."""
    rng = np.random.default_rng(0)
    M, CT, hpos, hrow, sqd = _model(rng, 1500, 800, ties=True, dtype=np.float32)
    v = rng.random(1500)
    fast = offdiag_top_sums(CT, hpos, hrow, sqd, v, 9, row_prefixes(CT))
    full = offdiag_top_sums(CT, hpos, hrow, sqd, v, 9)
    np.testing.assert_allclose(fast, full, rtol=1e-12, atol=0)
