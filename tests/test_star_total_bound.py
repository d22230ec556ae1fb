"""The disjoint-stars bound on a set's total (bounds.star_total_bound): never below the best
total of K disjoint supports found by brute force, on hostile small matrices of both signs, on
views, with Cauchy-Schwarz pairs and any number of priced candidates; and on the bundled real
sample it is the sharpest of the total bounds."""

from __future__ import annotations

import numpy as np
import pytest

from spca_cli import bounds
from spca_cli.corpus import load_input
from spca_cli.matrix import Gram
from _brute_force_bounds import KINDS, best_total, hostile_matrix
from conftest import REPO

KOS_SAMPLE = REPO / "data_samples" / "docword.kos-sample.txt.gz"


@pytest.mark.parametrize("seed", range(240))
def test_star_total_is_never_below_the_best_disjoint_total(seed):
    rng = np.random.default_rng(seed)
    kind = KINDS[seed % len(KINDS)]
    n = int(rng.integers(6, 11))
    D, _ = hostile_matrix(rng, kind, n)
    A = Gram.from_dense(0.5 * (D + D.T))
    view = A.remove(rng.choice(n, int(rng.integers(1, 3)), replace=False)) \
        if rng.random() < 0.4 else A
    k, K = int(rng.integers(1, 5)), int(rng.integers(2, 4))
    best = best_total(view.to_dense(), k, K)
    assert best is not None and np.isfinite(best)  # (K <= 3 pieces fit in 4 words or more)
    model = bounds.RowModel.of(view, exact_rows=int(rng.integers(0, n + 1)))
    lower = best * float(rng.choice([0.0, 0.5, 0.99, 1.0]))
    value = bounds.star_total_bound(model, k, K, lower=lower, rows=int(rng.integers(1, n + 2)),
                                    steps=int(rng.integers(1, 80)))
    scale = max(abs(best), float(np.abs(D).max()), 1e-300)
    assert value >= best - 1e-12 * scale, (seed, kind, value, best)


def test_star_total_is_the_sharpest_total_on_the_real_sample():
    """The KOS sample's default set (5 topics of 10 words): the rank-2 split certified 0.718 of
    its total; the stars certify more than 0.8, above every other total bound."""
    from spca_cli.topics import run_topics

    result = run_topics(load_input(str(KOS_SAMPLE)))
    assert result.total_bound.source == bounds.STAR_SOURCE
    assert result.total_bound.certified_ratio > 0.8
    assert result.total_bound.value >= result.total_explained_variance


def _priced_values(near, far_top, pi, base, take):
    """The priced stars of star_values the plain way: every entry of every row priced."""
    values = np.empty(near.shape[0])
    for a in range(near.shape[0]):
        terms = [near[a, b] - pi[b] for b in range(near.shape[1]) if b != a and near[a, b] > 0]
        terms = [x for x in terms + list(far_top[a]) if x > 0]
        values[a] = base[a] - pi[a] + sum(sorted(terms, reverse=True)[:take])
    return values


@pytest.mark.parametrize("prefix", [1, 2, 5, 64])
@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_sorted_heads_read_every_entry_a_priced_star_needs(monkeypatch, seed, prefix, parallel):
    """A row's sorted head read up to its stop, and its unsorted rest read only when the head's
    last entry could still enter: the values of every entry priced, whatever the head's length,
    ties and prices (heavy prices push a row's sum past its head), on one thread or the team."""
    from spca_cli.kernels import rowbound

    if parallel:
        monkeypatch.setattr(rowbound, "_STAR_PARALLEL_ROWS", 0)
    rng = np.random.default_rng(seed)
    count, take = int(rng.integers(3, 40)), int(rng.integers(0, 6))
    near = np.where(rng.random((count, count)) < 0.6, rng.integers(0, 6, (count, count)) * 1.0,
                    0.0)  # (integers: ties)
    np.fill_diagonal(near, -np.inf)
    far_top = -np.sort(-rng.integers(0, 4, (count, take)) * 1.0, axis=1)
    pi = np.where(rng.random(count) < 0.5, rng.random(count) * 8.0, 0.0)
    base = rng.random(count) * 10.0
    ptr, heads, idx, val = rowbound.star_sorted_rows(near, prefix)
    values = np.empty(count)
    partners = np.empty((count, max(take, 1)), dtype=np.int64)
    rowbound.star_values(ptr, heads, idx, val, far_top, pi, base, take, values, partners)
    np.testing.assert_allclose(values, _priced_values(near, far_top, pi, base, take),
                               rtol=1e-12, atol=1e-12)
    for a in range(count):  # the partners named are candidates whose priced entry was taken
        for b in partners[a][partners[a] >= 0]:
            assert b != a and near[a, b] - pi[b] > 0
