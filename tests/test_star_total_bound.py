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
