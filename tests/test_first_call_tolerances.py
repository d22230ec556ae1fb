"""The first eigen step of a topics run asks TOPICS_TOL of the rank + 1 pairs the solvers and the
per-topic bounds use and TAIL_TOL of the rest, which only the total bounds and the
reported eigenvalues use (spectrum.py, ``first_call_tolerances``): each pair meets its own
tolerance, the total bounds built on the looser pairs stay above the brute-force optimum, and
on a real co-occurrence matrix the topics and their certificates do not change."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import spca_cli.spectrum as spectrum
from spca_cli.corpus.read import load_input
from spca_cli.matrix import Gram
from spca_cli.spectrum import (CANDIDATE_TOL, TAIL_TOL, TOPICS_TOL, first_call_tolerances,
                               top_eigenpairs)
from spca_cli.topics import input_gram, run_topics
from test_topics import matrix_input


def test_first_call_tolerances_are_sharp_for_the_leading_pairs_only():
    assert first_call_tolerances(6, 3).tolist() == [TOPICS_TOL] * 3 + [TAIL_TOL] * 3
    assert first_call_tolerances(3, 3).tolist() == [TOPICS_TOL] * 3


def test_one_tolerance_per_pair_must_match_the_pairs():
    A = Gram.from_dense(np.diag(np.arange(1.0, 40.0)))
    with pytest.raises(ValueError, match=r"tol must be a float or one per pair \(3\), got "
                                         r"shape \(2,\)"):
        top_eigenpairs(A, 3, tol=[1e-5, 1e-3], method="krylov")


def test_each_pair_meets_its_own_tolerance_on_kos(kos_mtx):
    """KOS (6,906 words, real counts): the leading three residuals within TOPICS_TOL theta_1,
    the other three within TAIL_TOL; every value within its residual of LAPACK-accurate
    ones (ARPACK at 1e-10) and never above them beyond rounding (Ritz values)."""
    A, _, _ = input_gram(load_input(kos_mtx))
    tiered = top_eigenpairs(A, 6, tol=first_call_tolerances(6, 3), method="krylov")
    sharp = top_eigenpairs(A, 6, tol=TOPICS_TOL, method="krylov")
    exact = top_eigenpairs(A, 6, tol=1e-10, method="arpack")
    theta1 = tiered.values[0]
    assert np.all(tiered.residuals[:3] <= TOPICS_TOL * theta1)
    assert np.all(tiered.residuals[3:] <= TAIL_TOL * theta1)
    assert tiered.products <= sharp.products
    assert np.all(np.abs(tiered.values - exact.values) <= tiered.residuals + 1e-9 * theta1)
    assert np.all(tiered.values <= exact.values + 1e-9 * theta1)


def _best_disjoint_total(A, k, K):
    """max over K disjoint k-word supports of sum_j lambda_max(A[I_j, I_j]): every support's
    value by LAPACK, then a search over them in decreasing order that stops where even K
    copies of the next value cannot beat the best total found (exact, and fast at 26 words)."""
    supports = list(itertools.combinations(range(A.shape[0]), k))
    values = [float(np.linalg.eigvalsh(A[np.ix_(s, s)])[-1]) for s in supports]
    order = sorted(range(len(supports)), key=lambda i: -values[i])
    best = -np.inf

    def search(start, used, left, total):
        nonlocal best
        if left == 0:
            best = max(best, total)
            return
        for pos in range(start, len(order)):
            i = order[pos]
            if total + left * values[i] <= best:
                return
            if not used & set(supports[i]):
                search(pos + 1, used | set(supports[i]), left - 1, total + values[i])

    search(0, frozenset(), K, 0.0)
    return best


def _loose_tail(monkeypatch, tail):
    monkeypatch.setattr(spectrum, "TAIL_TOL", tail)


@pytest.fixture(params=["coordinates", "random block"])
def first_start(request, monkeypatch):
    """How a topics run's first eigen step starts: from the certificate's exact rows (the
    default; on these small matrices every word, so the start is nearly exact) or, as on a
    backend that keeps no columns, from a random block (where loose pairs stay loose)."""
    if request.param == "random block":
        monkeypatch.setattr(Gram, "column_room", lambda self: 0)
    return request.param


@pytest.mark.parametrize("tail", [TAIL_TOL, CANDIDATE_TOL, 0.3])
@pytest.mark.parametrize("nonnegative", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_total_bound_on_a_loose_tail_stays_above_the_brute_force_total(monkeypatch, seed,
                                                                        nonnegative, tail,
                                                                        first_start):
    """Three topics of 2 words, rank 1, on full-rank matrices of 26 words with two strong
    directions (the sharp pairs converge within a few products, so the tail pairs 3 and 4 stop
    loose: up to 1e-2 theta_1 at a tail of 0.3): the total bound >= the best three disjoint
    pairs, by enumeration, and the reported eigenvalues never exceed LAPACK's."""
    _loose_tail(monkeypatch, tail)
    rng = np.random.default_rng(seed)
    n = 26
    V = rng.random((n, n)) ** 3 if nonnegative else rng.standard_normal((n, n))
    V[:, 0] *= 6.0
    V[:, 1] *= 4.0
    A = V @ V.T
    result = run_topics(matrix_input(A), solver="spannogram", k=2, n_components=3, rank=1,
                        eigensolver="krylov", random_state=seed)
    best = _best_disjoint_total(A, 2, 3)
    assert result.total_bound.value >= best * (1 - 1e-12)
    assert result.total_explained_variance <= best * (1 + 1e-12)
    best_pair = max(np.linalg.eigvalsh(A[np.ix_(pair, pair)])[-1]
                    for pair in itertools.combinations(range(n), 2))
    assert result.components[0].upper_bound >= best_pair * (1 - 1e-12)
    lam = np.linalg.eigvalsh(A)[::-1]
    # the reported eigenvalues are Ritz values: never above the true ones
    assert np.all(np.array(result.eigenvalues) <= lam[:len(result.eigenvalues)] * (1 + 1e-12))


def test_kos_topics_and_certificates_do_not_change(monkeypatch, kos_mtx, first_start):
    """KOS, five topics at rank 2: with the tail at TAIL_TOL the first call needs no more
    products than with every pair at TOPICS_TOL, and the words, bounds and certified ratios of
    every topic are the same; the total bound moves by at most the tail's residuals."""
    corpus = load_input(kos_mtx)
    options = dict(solver="spannogram", k=10, n_components=5, rank=2)
    tiered = run_topics(corpus, **options)
    _loose_tail(monkeypatch, TOPICS_TOL)
    sharp = run_topics(corpus, **options)
    assert tiered.eigensolver["sparse_products"][0] <= sharp.eigensolver["sparse_products"][0]
    for a, b in zip(tiered.components, sharp.components):
        assert a.words == b.words
        assert a.upper_bound == pytest.approx(b.upper_bound, rel=1e-9)
        assert a.certified_ratio == pytest.approx(b.certified_ratio, rel=1e-9)
    theta1 = sharp.eigenvalues[0]
    assert sharp.total_bound.value - 1e-9 * theta1 <= tiered.total_bound.value
    assert tiered.total_bound.value <= sharp.total_bound.value + 3 * TAIL_TOL * theta1
    assert [t.words[:2] for t in tiered.components][:3] == [
        ["bush", "november"], ["dean", "campaign"], ["percent", "vote"]]
