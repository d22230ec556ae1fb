"""A row model's floor (bounds.RowModel.floor): the k largest diagonal entries outside its
exact rows sum to a value no weights can take the bound below. The certificate uses it to add
exact rows at once when the floor is above the value to prove, instead of iterating towards a
bound that cannot prove it."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import spca_cli.bounds as bounds
from spca_cli.bounds import RowModel, row_certificate
from spca_cli.corpus.read import load_input
from spca_cli.matrix import Gram
from spca_cli.topics import run_topics

KOS_SAMPLE = str(Path(__file__).parent.parent / "data_samples" / "docword.kos-sample.txt.gz")


def _u(model, w, k):
    return float(np.max((model.diag * w + model.top_sums(w, k - 1)) / w))


@pytest.mark.parametrize("nonnegative", [True, False])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [2, 3, 5])
def test_no_weights_go_below_the_floor(seed, nonnegative, k):
    """U(w) >= floor(k) for random, extreme and converged weights, nonnegative and mixed-sign
    matrices, with 3 of 24 rows exact."""
    rng = np.random.default_rng(seed)
    V = rng.random((24, 6)) if nonnegative else rng.standard_normal((24, 6))
    model = RowModel.of(Gram.from_dense(V @ V.T), exact_rows=3)
    floor = model.floor(k)
    outside = np.sort(model.diag[model.hpos < 0])[::-1]
    assert floor == pytest.approx(outside[:k].sum(), rel=1e-15)
    candidates = [rng.random(model.size) for _ in range(40)]
    candidates += [np.where(np.arange(model.size) == i, 1.0, 1e-9) for i in range(model.size)]
    candidates.append(bounds.weighted_row_bound(model, k, rtol=1e-12).weights)
    for w in candidates:
        assert _u(model, w, k) >= floor * (1 - 1e-12)


def test_floor_of_an_exact_model_is_zero():
    rng = np.random.default_rng(0)
    V = rng.random((10, 3))
    assert RowModel.of(Gram.from_dense(V @ V.T), exact_rows=10).floor(3) == 0.0


def test_a_model_whose_floor_is_above_the_value_is_not_iterated(monkeypatch):
    """Binary co-occurrence of 400 short documents over 40 words (a flat diagonal): with 4
    exact rows the floor of 3 words is above the best 3-word value, so the certificate goes to
    every row at once (one weight iteration, on the exact model) and proves that value."""
    rng = np.random.default_rng(1)
    S = sp.csr_array((rng.random((400, 40)) < 0.08).astype(float))
    A = Gram.from_documents(S)
    monkeypatch.setattr(bounds, "EXACT_ROWS", 4)
    dense = A.to_dense()
    best = max(np.linalg.eigvalsh(dense[np.ix_(I, I)])[-1] for I in combinations(range(40), 3))
    assert RowModel.of(A, exact_rows=4).floor(3) > best
    seen = []
    original = bounds.weighted_row_bound
    monkeypatch.setattr(bounds, "weighted_row_bound",
                        lambda model, k, **kw: seen.append(model.hrow.size) or original(model, k, **kw))
    certificate = row_certificate(A, 3, attained=best)
    assert seen == [40]
    assert certificate.bound.value >= best * (1 - 1e-12)


def test_kos_sample_later_topics_get_more_rows_instead_of_their_floor(monkeypatch):
    """The bundled KOS sample (300 documents, real counts) with 8 exact rows to start from:
    the later views' restricted models have floors above their topics' values. Iterated on,
    they stopped near their floors, where the Cauchy-Schwarz test saw no reason to add rows
    (certified 0.717 and 0.469); now the rows are added first (0.996 and 0.868)."""
    monkeypatch.setattr(bounds, "EXACT_ROWS", 8)
    seen = []
    original = bounds.weighted_row_bound

    def recorded(model, k, **kw):
        seen.append((model.hrow.size, model.floor(k), kw.get("attained")))
        return original(model, k, **kw)

    monkeypatch.setattr(bounds, "weighted_row_bound", recorded)
    result = run_topics(load_input(KOS_SAMPLE), solver="spannogram", k=10, n_components=3,
                        rank=2)
    assert [round(t.certified_ratio, 3) for t in result.components] == [0.933, 0.996, 0.868]
    # (every row of the sample's 5,125 active words fits in the budget: exact at once)
    assert [rows for rows, _, _ in seen] == [8, 5125, 5115]
    # no weights were iterated on a model that could grow and whose floor is above the value
    assert all(floor <= attained for rows, floor, attained in seen if rows == 8)
