"""The certificate's exact rows grow in steps (``bounds._more_rows``): 2^24 // size rows hold
fewer than 2^24 entries whenever size does not divide it, so each step must be chosen by rows,
not entries, or the same model would come back for ever. Tiny budgets, the real ones, and any
budget against the brute-force optimum.
"""

from __future__ import annotations

import itertools
import types

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spca_cli.bounds as bounds
from spca_cli.matrix import Gram


class _EndlessLoop(Exception):
    pass


def _guard_models(monkeypatch, limit=8):
    """Record the exact rows of every model built; raise past ``limit`` (an endless loop)."""
    built = []
    original = bounds.RowModel.of.__func__

    def of(cls, A, **kw):
        built.append(kw.get("exact_rows"))
        if len(built) > limit:
            raise _EndlessLoop(built)
        return original(cls, A, **kw)

    monkeypatch.setattr(bounds.RowModel, "of", classmethod(of))
    return built


def _small_budgets(monkeypatch, rows, half, entries):
    monkeypatch.setattr(bounds, "EXACT_ROWS", rows)
    monkeypatch.setattr(bounds, "_EXACT_ENTRIES", entries)
    monkeypatch.setattr(bounds, "_ESCALATION_ENTRIES", (half, entries))


def _best_single(D, k):
    return max(float(np.linalg.eigvalsh(D[np.ix_(I, I)])[-1])
               for I in itertools.combinations(range(D.shape[0]), k))


@pytest.mark.parametrize("given_value", [False, True])
def test_escalation_reaches_every_step_and_stops(monkeypatch, given_value):
    """Binary co-occurrence of 15 words (flat diagonal) with budgets of 100 and 200 entries,
    neither a multiple of 15: 2 rows, then 100 // 15 = 6, then 200 // 15 = 13, then no more
    (6 x 15 = 90 < 100 must not choose the first step again and build the 6-row model for
    ever), whether the floor rule (the topic's value given) or the Cauchy-Schwarz test asks.
    With the value the floor rule skips the weight steps of the 2- and 6-row models (their
    floors are above it)."""
    rng = np.random.default_rng(3)
    A = Gram.from_documents(sp.csr_array((rng.random((300, 15)) < 0.3).astype(float)))
    best = _best_single(A.to_dense(), 3)
    _small_budgets(monkeypatch, 2, 100, 200)
    built = _guard_models(monkeypatch)
    iterated = []
    original = bounds.weighted_row_bound
    monkeypatch.setattr(bounds, "weighted_row_bound",
                        lambda model, k, **kw: iterated.append(model.hrow.size)
                        or original(model, k, **kw))
    certificate = bounds.row_certificate(A, 3, attained=best if given_value else None)
    assert built == [2, 6, 13]
    assert iterated == ([13] if given_value else [2, 6, 13])
    assert certificate.bound.value >= best * (1 - 1e-12)


def test_more_rows_at_the_real_budgets():
    """2^24 and 2^25 entries: 47,393 words (the clustered 200k-tweet vocabulary) go 256 -> 354 ->
    708 -> no more; 65,400 words, where 2^24 // 65,400 = 256 adds nothing, go straight to the
    second step; 3,000 words to every row."""
    def model(size):
        return types.SimpleNamespace(size=size)

    assert bounds._more_rows(model(47_393), 256) == 354
    assert bounds._more_rows(model(47_393), 354) == 708
    assert bounds._more_rows(model(47_393), 708) == 708
    assert bounds._more_rows(model(65_400), 256) == 513
    assert bounds._more_rows(model(3_000), 256) == 3_000


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 10), k=st.integers(1, 4),
       rows=st.integers(0, 5), entries=st.integers(1, 120), half_share=st.floats(0.0, 1.0),
       binary=st.booleans(),
       value=st.sampled_from([None, 0.0, 0.5, 1.0, 1.0 + 1e-10, 1.5]))
def test_certificate_ends_above_the_optimum_with_any_budget(seed, n, k, rows, entries,
                                                            half_share, binary, value):
    """Any exact-row budgets (tiny, not multiples of the words), any start, k up to 4 and up to
    every word, the topic's value given as 0, half, all, or more than the optimum (or not at
    all): the certificate ends within 8 models and its bound is >= the brute-force optimum."""
    k = min(k, n)
    rng = np.random.default_rng(seed)
    if binary:
        A = Gram.from_documents(sp.csr_array((rng.random((60, n)) < 0.3).astype(float)))
    else:
        V = rng.standard_normal((n, int(rng.integers(1, n + 1))))
        A = Gram.from_dense(V @ V.T)
    D = A.to_dense()
    best = _best_single(D, k) if np.any(np.diag(D) > 0) else 0.0
    with pytest.MonkeyPatch.context() as monkeypatch:
        _small_budgets(monkeypatch, rows, max(1, int(half_share * entries)), entries)
        _guard_models(monkeypatch)
        certificate = bounds.row_certificate(
            A, k, attained=None if value is None else value * best)
    assert certificate.bound.value >= best * (1 - 1e-12)
