"""The row-bound kernel's early stop on the exact rows' largest entries gives the same sums as
reading every entry, and both equal a brute-force sum of the k - 1 largest products."""

from __future__ import annotations

import numpy as np
import pytest

from spca_cli.kernels.rowbound import (_node_bound, branch_and_bound_prefixed, node_bound,
                                      offdiag_top_sums, outside_columns, prefix_values,
                                      perron_weights, restrict_outside_columns, row_prefixes)


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


def _case(rng, seed):
    """A random model (ties on even seeds, float32 on every third), weights with zeros, and a
    count of entries per row."""
    n = int(rng.integers(5, 60))
    h = int(rng.integers(0, n + 1))
    M, CT, hpos, hrow, sqd = _model(rng, n, h, ties=seed % 2 == 0,
                                     dtype=np.float32 if seed % 3 == 0 else np.float64)
    v = rng.random(n)
    v[rng.random(n) < 0.2] = 0.0
    return n, M, CT, hpos, hrow, sqd, v, int(rng.integers(1, 10))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("length", [1, 3, 8, 1000])
def test_prefix_stop_gives_the_sums_of_every_entry(seed, length):
    rng = np.random.default_rng(seed)
    n, M, CT, hpos, hrow, sqd, v, count = _case(rng, seed)
    prefixes = row_prefixes(CT, length=length)
    fast = offdiag_top_sums(CT, hpos, hrow, sqd, v, count, prefixes)
    full = offdiag_top_sums(CT, hpos, hrow, sqd, v, count)
    np.testing.assert_allclose(fast, full, rtol=1e-12, atol=0)
    np.testing.assert_allclose(full, _brute(M, hpos, sqd, v, count), rtol=1e-6, atol=0)


def _weights(rng, M, kind, few):
    """Weights that run against the entries (the largest on the words of smallest entries),
    on ``few`` words only (the others 0), or all equal."""
    n = M.shape[0]
    if kind == "against":
        return 1.0 / (1.0 + M.sum(axis=0) - M.diagonal())
    if kind == "few":
        v = np.zeros(n)
        v[rng.choice(n, few, replace=False)] = rng.random(few) + 0.5
        return v
    return np.ones(n)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("weights", ["against", "few", "equal"])
@pytest.mark.parametrize("length", [2, 8, 40])
def test_rows_read_beside_the_largest_weights_give_the_sums_of_every_entry(seed, weights,
                                                                            length):
    """An exact row stops on its prefix and the largest weights read side by side (the
    threshold algorithm): the same sums as every entry read, whatever the weights, among them
    weights that run against the entries (the largest on the words of smallest entries, where
    the prefix alone decides nothing), weights on a few words (the others 0, as the words a
    view removes), and equal weights (every weight tied)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 120))
    M, CT, hpos, hrow, sqd = _model(rng, n, int(rng.integers(1, n + 1)), ties=seed % 2 == 0,
                                     dtype=np.float32 if seed % 3 == 0 else np.float64)
    v = _weights(rng, M, weights, int(rng.integers(1, 6)))
    count = int(rng.integers(1, 12))
    read = np.zeros(1)
    fast = offdiag_top_sums(CT, hpos, hrow, sqd, v, count, row_prefixes(CT, length=length),
                            visited=read)
    full = offdiag_top_sums(CT, hpos, hrow, sqd, v, count)
    np.testing.assert_allclose(fast, full, rtol=1e-12, atol=0)
    np.testing.assert_allclose(full, _brute(M, hpos, sqd, v, count), rtol=1e-6, atol=0)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weights", ["against", "few", "equal"])
def test_long_rows_read_beside_the_largest_weights_give_the_sums_of_every_entry(
        monkeypatch, seed, weights):
    """Rows longer than the prefix's first pass (``_LAZY`` entries), on the parallel kernel
    that reads the largest weights beside them: the sums of every entry, as brute force."""
    from spca_cli.kernels import rowbound

    monkeypatch.setattr(rowbound, "_PARALLEL_WORK", 0)
    rng = np.random.default_rng(100 + seed)
    n = 300
    M, CT, hpos, hrow, sqd = _model(rng, n, int(rng.integers(150, n + 1)), ties=seed % 2 == 0,
                                     dtype=np.float32 if seed % 3 == 0 else np.float64)
    v = _weights(rng, M, weights, 40)
    count = int(rng.integers(2, 12))
    prefixes = row_prefixes(CT, length=256)
    assert prefixes[1].max() > rowbound._LAZY
    fast = offdiag_top_sums(CT, hpos, hrow, sqd, v, count, prefixes,
                            outside_columns(CT, hpos))
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


def test_prefix_of_a_sparse_row_ends_at_its_nonzeros():
    """A row with fewer nonzeros than the prefix: they alone, in order; the order's tail holds
    its zero entries' positions (the branch and bound reads it to its end), and nothing
    nonzero is left after it."""
    CT = np.array([[0.0, 4.0, 0.0, 0.0, 6.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])
    order, lengths, rest = row_prefixes(CT, length=4)
    assert lengths.tolist() == [2, 0] and rest.tolist() == [0.0, 0.0]
    assert order[0, :2].tolist() == [4, 1]
    assert sorted(order[0, 2:].tolist()) == [0, 2] and sorted(order[1].tolist()) == [0, 1, 2, 3]


@pytest.mark.parametrize("seed", range(8))
def test_rows_with_fewer_nonzeros_than_the_sum_stop_at_their_prefix(seed):
    """Rows of 0-3 nonzeros and a sum of up to 8 entries: a row's sum is its nonzeros' (the
    zeros after them add nothing), read without the rest of the row, as brute force has it
    (a row whose heap fills reads at most one weight's entry per entry of its prefix)."""
    rng = np.random.default_rng(seed)
    n = 50
    M = np.zeros((n, n))
    for i in range(n):
        M[i, rng.choice(n, int(rng.integers(0, 4)), replace=False)] = rng.random()
    M = np.maximum(M, M.T)
    diag = M.sum(axis=1) + 1.0
    np.fill_diagonal(M, diag)
    hpos = np.arange(n, dtype=np.int64)
    CT = np.ascontiguousarray(M)
    sqd, v, count = np.sqrt(diag), rng.random(n), int(rng.integers(4, 9))
    read_fast, read_full = np.zeros(1), np.zeros(1)
    fast = offdiag_top_sums(CT, hpos, hpos.copy(), sqd, v, count, row_prefixes(CT, length=16),
                            visited=read_fast)
    full = offdiag_top_sums(CT, hpos, hpos.copy(), sqd, v, count, visited=read_full)
    np.testing.assert_allclose(fast, full, rtol=1e-12, atol=0)
    np.testing.assert_allclose(full, _brute(M, hpos, sqd, v, count), rtol=1e-12, atol=0)
    assert read_fast[0] <= 2 * np.count_nonzero(M) and read_full[0] == n * n


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


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("length", [0, 2, 1000])
def test_outside_rows_read_largest_first_give_the_sums_of_every_entry(seed, length):
    """Rows outside the exact set read through their nonzero exact entries, largest first, and
    stopped early: the same sums as reading all h entries, and as brute force."""
    rng = np.random.default_rng(100 + seed)
    n, M, CT, hpos, hrow, sqd, v, count = _case(rng, seed)
    prefixes = row_prefixes(CT, length=length) if length else None
    if prefixes is not None and seed % 2:  # with the prefixes' values stored in order
        prefixes = (*prefixes, prefix_values(CT, prefixes[0]))
    fast = offdiag_top_sums(CT, hpos, hrow, sqd, v, count, prefixes, outside_columns(CT, hpos))
    full = offdiag_top_sums(CT, hpos, hrow, sqd, v, count)
    np.testing.assert_allclose(fast, full, rtol=1e-12, atol=0)
    np.testing.assert_allclose(fast, _brute(M, hpos, sqd, v, count), rtol=1e-6, atol=0)


@pytest.mark.parametrize("seed", range(8))
def test_restricted_outside_columns_equal_those_made_afresh(seed):
    from spca_cli.bounds import RowModel

    rng = np.random.default_rng(200 + seed)
    n, h = 50, int(rng.integers(1, 30))
    M, CT, hpos, hrow, sqd = _model(rng, n, h, ties=seed % 2 == 0, dtype=np.float64)
    model = RowModel(np.arange(n), np.diag(M).copy(), CT, hpos, hrow)
    model._columns = outside_columns(CT, hpos)
    keep = rng.random(n) < 0.6
    small = model.restrict(keep)
    fresh = outside_columns(small.CT, small.hpos)
    # the same entries per row; equal values may come in another order
    assert np.array_equal(small._columns[0], fresh[0])
    for i in range(small.size):
        lo, hi = fresh[0][i], fresh[0][i + 1]
        assert sorted(zip(small._columns[2][lo:hi], small._columns[1][lo:hi])) == \
            sorted(zip(fresh[2][lo:hi], fresh[1][lo:hi]))
        assert np.all(np.diff(small._columns[2][lo:hi]) <= 0)
    v = rng.random(small.size)
    np.testing.assert_allclose(
        small.top_sums(v, 4),
        offdiag_top_sums(small.CT, small.hpos, small.hrow, small.sqd, v, 4), rtol=1e-12, atol=0)
    # restricting twice, and to nothing of H
    again = small.restrict(rng.random(small.size) < 0.5)
    assert np.array_equal(again._columns[0], outside_columns(again.CT, again.hpos)[0])
    none_of_h = np.ones(n, dtype=bool)
    none_of_h[hrow] = False
    bare = model.restrict(none_of_h)
    assert bare._columns[1].size == 0


def test_outside_columns_on_a_large_parallel_model():
    rng = np.random.default_rng(1)
    M, CT, hpos, hrow, sqd = _model(rng, 3000, 600, ties=True, dtype=np.float32)
    v = rng.random(3000)
    fast = offdiag_top_sums(CT, hpos, hrow, sqd, v, 9, row_prefixes(CT),
                            outside_columns(CT, hpos))
    full = offdiag_top_sums(CT, hpos, hrow, sqd, v, 9)
    np.testing.assert_allclose(fast, full, rtol=1e-12, atol=0)


@pytest.mark.parametrize("seed", range(6))
def test_kth_largest_is_the_entry_a_partition_places(seed):
    from spca_cli.kernels.rowbound import _kth_largest

    rng = np.random.default_rng(seed)
    for x in (rng.random(1), rng.integers(0, 3, 50).astype(float), np.full(17, 2.5),
              rng.standard_normal(1000), np.sort(rng.random(64)), np.sort(rng.random(64))[::-1],
              np.repeat(rng.random(5), 40)):
        before = x.copy()
        for m in {1, 2, x.size // 2 + 1, x.size - 1, x.size} - {0}:
            assert _kth_largest(x, m) == np.partition(x, x.size - m)[x.size - m]
        np.testing.assert_array_equal(x, before)  # (on a copy)


def _outside_by_sorting(CT, hpos):
    """:func:`outside_columns` from NumPy: each word outside H, its nonzero exact entries by
    decreasing value, equal values by increasing exact row."""
    indptr, rows, values = [0], [], []
    for j in range(CT.shape[1]):
        q = np.flatnonzero(CT[:, j]) if hpos[j] < 0 else np.zeros(0, dtype=np.int64)
        q = q[np.argsort(-CT[q, j], kind="stable")]
        rows.extend(q)
        values.extend(CT[q, j])
        indptr.append(len(rows))
    return np.array(indptr), np.array(rows, dtype=np.int32), np.array(values, dtype=CT.dtype)


@pytest.mark.parametrize("n, h, dtype", [(700, 40, np.float32), (513, 3, np.float64),
                                         (255, 255, np.float64), (1, 0, np.float64)])
def test_outside_columns_equal_a_sort_of_each_column(n, h, dtype):
    # word blocks of 256: n on either side of a block's end, H of every size
    rng = np.random.default_rng(n)
    _, CT, hpos, _, _ = _model(rng, n, h, ties=True, dtype=dtype)
    for got, want in zip(outside_columns(CT, hpos), _outside_by_sorting(CT, hpos)):
        assert got.dtype == want.dtype or got.dtype == np.int64
        np.testing.assert_array_equal(got, want)


def _node_bound_by_sorting(B, F, R, slots, w, n_iter):
    """The node bound of :func:`node_bound` from whole rows sorted in NumPy: each row's sum over
    F plus the ``slots`` (``slots - 1`` and its diagonal for a word of R) largest B_ij w_j over
    R without i, the smallest max ratio over ``n_iter`` steps of w <- T / max T."""
    rows = np.concatenate([F, R])
    best, best_w = np.inf, w.copy()
    for _ in range(n_iter):
        T = np.empty(rows.size)
        for a, i in enumerate(rows):
            others = R[R != i]
            cap = slots if a < F.size else slots - 1
            top = np.sort(B[i, others] * w[others])[::-1][:cap].sum() if cap > 0 else 0.0
            T[a] = B[i, F] @ w[F] + (B[i, i] * w[i] if a >= F.size else 0.0) + top
        U = float(np.max(T / w[rows]))
        if U < best:
            best, best_w = U, w.copy()
        if T.max() <= 0:
            break
        w[rows] = np.maximum(T / T.max(), 1e-300)
    w[:] = best_w
    return best


@pytest.mark.parametrize("seed", range(40))
def test_node_bound_through_row_prefixes_is_the_same_bound(seed):
    """A node's rows read from their prefixes and the weights' list, stopped early, give the
    bound of whole rows sorted (ties of entries and of weights included)."""
    rng = np.random.default_rng(300 + seed)
    m = int(rng.integers(4, 40))
    M, _, _, _, _ = _model(rng, m, 0, ties=seed % 2 == 0, dtype=np.float64)
    if seed % 3 == 1:  # mixed signs: B = |A|
        M = M * np.sign(rng.standard_normal((m, m)))
        M = np.triu(M) + np.triu(M, 1).T
    B = np.abs(M)
    k = int(rng.integers(2, min(m, 8) + 1))
    words = rng.permutation(m)
    nF = int(rng.integers(0, k))
    F = np.sort(words[:nF]).astype(np.int64)
    R = np.sort(words[nF:nF + int(rng.integers(k - nF, m - nF + 1))]).astype(np.int64)
    w0 = rng.random(m) + 1e-3
    if seed % 4 == 3:  # equal weights: the weights' list full of ties
        w0 = np.round(w0, 1) + 0.1
    length = int(rng.integers(1, m + 1))
    order, _, rest = row_prefixes(B, length)
    w1, w2, w3 = w0.copy(), w0.copy(), w0.copy()
    sorted_rows = _node_bound_by_sorting(B, F, R, k - nF, w3, 4)
    plain = node_bound(B, F, R, k - nF, w1, 4, -np.inf)
    visited = np.zeros(1)
    fast = _node_bound(B, F, R, k - nF, w2, 4, -np.inf, order, rest, visited,
                       prefix_values(B, order), False)
    assert plain == pytest.approx(sorted_rows, rel=1e-12)
    assert fast == pytest.approx(sorted_rows, rel=1e-12)
    np.testing.assert_allclose(w1, w3, rtol=1e-12)
    np.testing.assert_allclose(w2, w3, rtol=1e-12)
    assert visited[0] > 0


@pytest.mark.parametrize("seed", range(2))
def test_a_node_of_thousands_of_rows_is_the_same_bound(seed):
    """A node of 2,348 rows and a short prefix (64 entries): the bound of whole rows sorted,
    weights concentrated on a few words or spread, and far fewer entries read than whole rows."""
    rng = np.random.default_rng(500 + seed)
    m = 2348
    X = (rng.random((60, m)) < 0.05) * rng.random((60, m))
    B = np.abs(X.T @ X)
    words = rng.permutation(m)
    F = np.sort(words[:2]).astype(np.int64)
    R = np.sort(words[2:]).astype(np.int64)
    w0 = rng.random(m) ** (8 if seed else 1) + 1e-6
    order, _, rest = row_prefixes(B, 64)
    w1, w2 = w0.copy(), w0.copy()
    sorted_rows = _node_bound_by_sorting(B, F, R, 8, w1, 3)
    visited = np.zeros(1)
    fast = _node_bound(B, F, R, 8, w2, 3, -np.inf, order, rest, visited, prefix_values(B, order),
                       True)
    assert fast == pytest.approx(sorted_rows, rel=1e-12)
    np.testing.assert_allclose(w2, w1, rtol=1e-12)
    assert 0 < visited[0] < 3 * m * m


@pytest.mark.parametrize("rows_in_parallel", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_search_through_row_prefixes_finds_the_brute_force_optimum(seed, rows_in_parallel):
    """The prefixed branch and bound ends at the optimum of every k-word support, and its
    anytime bound is never below it."""
    from itertools import combinations

    rng = np.random.default_rng(400 + seed)
    m, k = int(rng.integers(5, 11)), 3
    X = rng.random((m + 3, m)) * (rng.random((m + 3, m)) < 0.5)
    A = X.T @ X
    if seed % 2:
        Y = rng.standard_normal((m + 3, m))
        A = Y.T @ Y
    opt = max(np.linalg.eigvalsh(A[np.ix_(c, c)])[-1] for c in combinations(range(m), k))
    B = np.abs(A)
    order, _, rest = row_prefixes(B, int(rng.integers(1, m + 1)))
    stack_in = np.zeros((m + 2, m), dtype=np.bool_)
    stack_out = np.zeros((m + 2, m), dtype=np.bool_)
    stack_w = np.ones((m + 2, m))
    stack_ub = np.full(m + 2, np.inf)
    best = np.zeros(k, dtype=np.int64)
    depth, lower, visited = 1, 0.0, np.zeros(1)
    while depth > 0:
        depth, lower, _ = branch_and_bound_prefixed(A, B, k, stack_in, stack_out, stack_w,
                                                    stack_ub, depth, best, lower, 0.0, 1, 3,
                                                    1e-12, order, rest, visited,
                                                    prefix_values(B, order), rows_in_parallel)
        anytime = max(lower, stack_ub[:depth].max()) if depth else lower
        assert anytime >= opt * (1 - 1e-12)
    assert lower == pytest.approx(opt, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_a_search_reading_its_nodes_rows_in_parallel_is_the_same_search(seed):
    """Nodes of 700 words (three blocks of rows and a part): reading their rows on the parallel
    threads gives the same nodes, bounds, weights, best support and entries read as reading
    them in turn, call after call of the resumable search."""
    rng = np.random.default_rng(700 + seed)
    m, k = 700, 6
    X = (rng.random((300, m)) < 0.04 + 0.04 * rng.random(m)).astype(float)
    A = X.T @ X
    B = A.astype(np.float32)
    order, _, rest = row_prefixes(B, 64)
    values = prefix_values(B, order)
    runs = []
    for rows_in_parallel in (False, True):
        stack_in = np.zeros((m + 2, m), dtype=np.bool_)
        stack_out = np.zeros((m + 2, m), dtype=np.bool_)
        stack_w = np.ones((m + 2, m))
        stack_ub = np.full(m + 2, np.inf)
        best = np.zeros(k, dtype=np.int64)
        depth, lower, visited, trail = 1, 0.0, np.zeros(1), []
        for _ in range(6):
            depth, lower, nodes = branch_and_bound_prefixed(
                A, B, k, stack_in, stack_out, stack_w, stack_ub, depth, best, lower, 0.0, 3, 6,
                1e-12, order, rest, visited, values, rows_in_parallel)
            trail.append((depth, lower, nodes, visited[0], stack_ub[:depth].copy(),
                          stack_w[:depth].copy(), best.copy()))
        runs.append(trail)
    serial, parallel = runs
    assert serial[-1][3] > 0
    for one, two in zip(serial, parallel):
        assert one[:4] == two[:4]
        for a, b in zip(one[4:], two[4:]):
            np.testing.assert_array_equal(a, b)


def _dense_model_entries(CT, hpos, hrow, sqd):
    """|A'| of the kernels' compact form as a dense array: exact where a row or a column is in
    H, sqd_i sqd_j elsewhere."""
    n = hpos.size
    D = np.outer(sqd, sqd)
    for p, i in enumerate(hrow):
        D[i, :] = CT[p]
        D[:, i] = CT[p]
    return D


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("sorted_rows", [False, True])
def test_top_sums_terms_are_the_words_and_entries_of_each_sum(seed, sorted_rows):
    """Each row's terms (word, entry) sum, weighted, to the row's sum; each entry is the
    model's |A'_ij| (exact, or Cauchy-Schwarz outside H); no word has weight 0 or is the row
    itself; and the terms are the largest weighted entries of the row."""
    rng = np.random.default_rng(seed)
    n, h, count = 300, 40, 6
    B = rng.poisson(0.3, (200, n)).astype(float)
    A = B.T @ B
    sqd = np.sqrt(np.diag(A))
    hrow = np.sort(rng.choice(n, h, replace=False))
    hpos = np.full(n, -1)
    hpos[hrow] = np.arange(h)
    CT = np.abs(A[hrow])
    v = rng.random(n)
    v[rng.choice(n, 20, replace=False)] = 0.0
    prefixes = columns = None
    if sorted_rows:
        prefixes = (*row_prefixes(CT, 64)[:3],)
        columns = outside_columns(CT, hpos)
    sel = np.empty((n, count), dtype=np.int64)
    coef = np.empty((n, count))
    sums = offdiag_top_sums(CT, hpos, hrow, sqd, v, count, prefixes, columns, terms=(sel, coef))
    D = _dense_model_entries(CT, hpos, hrow, sqd)
    for i in range(n):
        words = sel[i][sel[i] >= 0]
        assert i not in words and np.all(v[words] > 0)
        assert np.allclose(coef[i][sel[i] >= 0], D[i, words])
        assert sums[i] == pytest.approx(float(np.sum(coef[i][sel[i] >= 0] * v[words])),
                                        rel=1e-12, abs=1e-12)
        weighted = np.delete(D[i] * v, i)
        assert sums[i] == pytest.approx(float(np.sum(np.sort(weighted)[-count:])), rel=1e-12)


def test_perron_weights_reach_the_perron_vector_of_the_fixed_map():
    """The power iteration of a nonnegative map given as each row's terms ends on its Perron
    vector (numpy's eigenvector of the same dense matrix), weights off the rows untouched."""
    rng = np.random.default_rng(3)
    n, c = 50, 4
    sel = np.stack([rng.choice(np.delete(np.arange(n), i), c, replace=False) for i in range(n)])
    coef = rng.random((n, c))
    diag = rng.random(n) + 0.5
    M = np.diag(diag)
    for i in range(n):
        M[i, sel[i]] += coef[i]
    values, vectors = np.linalg.eig(M)
    perron = np.abs(np.real(vectors[:, np.argmax(np.real(values))]))
    w, steps = perron_weights(sel, coef, diag, np.ones(n), np.arange(n), 1e-12, 10_000)
    assert steps < 10_000
    assert np.allclose(w, perron / perron.max(), rtol=1e-8)
    rows = np.arange(0, n, 2)
    fixed = np.where(np.isin(np.arange(n), rows), 1.0, 7.0)
    partial, _ = perron_weights(np.where(np.isin(sel, rows), sel, -1), coef, diag, fixed, rows,
                                1e-9, 50)
    assert np.all(partial[1::2] == 7.0)
