"""The later eigen steps of a topics run stop at CANDIDATE_TOL (spectrum.py): bounds built on
such loose pairs must still hold (brute force), the refinement must give back the sharpness of
accurate pairs where eigenvalue bounds matter, and on real co-occurrence matrices nothing but
the number of products may change."""

from __future__ import annotations

import itertools
import types

import numpy as np
import pytest
import scipy.sparse as sp

import spca_cli.topics as topics_module
from spca_cli import bounds
from spca_cli.corpus.read import load_input
from spca_cli.matrix import Gram
from spca_cli.solvers import SOLVERS
from spca_cli.spectrum import CANDIDATE_TOL, TOPICS_TOL, Eigen
from spca_cli.topics import run_topics
from test_topics import matrix_input


def _best_on_view(A, words, k, nonnegative):
    """Brute force: max x^T A x over unit x with support in ``words``, |support| <= k (x >= 0
    when ``nonnegative``: the optimum of a face is an eigenvector of one sign)."""
    best = 0.0
    for size in range(1, k + 1) if nonnegative else (k,):
        I = np.array(list(itertools.combinations(words, size)))
        values, vectors = np.linalg.eigh(A[I[:, :, None], I[:, None, :]])
        if nonnegative:
            one_sign = np.all(vectors > -1e-12, axis=1) | np.all(vectors < 1e-12, axis=1)
            values = np.where(one_sign, values, -np.inf)
        best = max(best, float(values.max()))
    return best


def _views(A, result, deflation):
    """The matrix each component was solved on, rebuilt from the components before it."""
    n = A.shape[0]
    view, removed = A.copy(), set()
    for topic in result.components:
        yield view, [j for j in range(n) if j not in removed]
        if deflation == "remove":
            removed |= set(topic.indices.tolist())
        else:
            x = np.zeros(n)
            x[topic.indices] = topic.weights
            x /= np.linalg.norm(x)
            P = np.eye(n) - np.outer(x, x)
            view = P @ view @ P


def _without_carry(monkeypatch):
    """Later eigen steps from the warm start only: on these small matrices the carried Ritz
    vectors and one product span nearly everything, so the pairs would not be loose at all."""
    monkeypatch.setattr(Gram, "carried", lambda *args: None)


@pytest.mark.parametrize("carry", [True, False])
@pytest.mark.parametrize("refine", [True, False])
@pytest.mark.parametrize("deflation", ["remove", "projection"])
@pytest.mark.parametrize("nonnegative", [True, False])
@pytest.mark.parametrize("seed", [0, 1])
def test_bounds_on_loose_pairs_stay_above_the_brute_force_optimum(
        monkeypatch, seed, nonnegative, deflation, refine, carry):
    """With the later steps stopped at a residual of 30% of theta_1 (so loose that the block
    method stops after one product), every component's bound is still >= its view's optimum:
    with and without the refinement, nonnegative and mixed-sign, both deflations, with and
    without the Ritz vectors carried between remove views."""
    if not carry:
        _without_carry(monkeypatch)
    rng = np.random.default_rng(seed)
    # full rank, so that the Krylov space of one product is far from invariant
    V = rng.random((22, 22)) ** 3 if nonnegative else rng.standard_normal((22, 22))
    A = V @ V.T
    monkeypatch.setattr(topics_module, "CANDIDATE_TOL", 0.3)
    if not refine:
        monkeypatch.setattr(bounds, "eigen_bounds_could_tighten", lambda *args: False)
    result = run_topics(matrix_input(A), solver="spannogram", k=3, n_components=3, rank=2,
                        deflation=deflation, eigensolver="krylov", random_state=seed)
    loose = max(result.eigensolver["max_relative_residual"], 0.0)
    if not refine and not (carry and deflation == "remove"):
        assert loose > 10 * TOPICS_TOL  # the pairs really were loose
    for topic, (view, words) in zip(result.components, _views(A, result, deflation)):
        opt = _best_on_view(view, words, 3, nonnegative=False)
        assert topic.upper_bound >= opt * (1 - 1e-12)
        assert topic.problem_value <= opt * (1 + 1e-12)


def test_refinement_gives_back_the_bounds_of_accurate_pairs(monkeypatch):
    """A mixed-sign rank-2 matrix of 400 words plus a full-rank noise, where the spannogram's
    OPT_2 + lambda_3 is the tightest bound of the later topics: they get the same bounds (to
    the eigensolver's tolerance) and the same words as with every step at TOPICS_TOL, because
    their pairs are refined (one more call per later topic)."""
    rng = np.random.default_rng(0)
    V = rng.standard_normal((400, 2)) * np.array([6.0, 5.0])
    N = rng.standard_normal((400, 400)) * 0.1
    A = V @ V.T + N @ N.T
    options = dict(solver="spannogram", k=8, n_components=3, rank=2, eigensolver="krylov",
                   deflation="projection")
    loose = run_topics(matrix_input(A), **options)
    monkeypatch.setattr(topics_module, "CANDIDATE_TOL", TOPICS_TOL)
    accurate = run_topics(matrix_input(A), **options)
    assert [t.bound_source for t in loose.components[1:]] == \
        [t.bound_source for t in accurate.components[1:]] == ["rank-2 spannogram + lambda_3"] * 2
    theta1 = loose.eigenvalues[0]
    for a, b in zip(loose.components, accurate.components):
        assert abs(a.upper_bound - b.upper_bound) <= 5 * TOPICS_TOL * theta1
        assert a.indices.tolist() == b.indices.tolist()
    # each later topic: warm-started (its pairs not known to be the leading ones), then
    # refined from a random block where the spannogram's bound could be the tightest
    assert loose.eigensolver["calls"] == accurate.eigensolver["calls"] == 1 + 2 * 2


def test_could_tighten_only_when_an_eigenvalue_bound_is_within_its_residuals():
    eigen = Eigen(values=np.array([10.0, 4.0]), vectors=np.eye(3)[:, :2],
                  residuals=np.array([0.01, 0.01]))
    row = (9.0, bounds.ROW_BOUND_SOURCE)
    # lambda_1 + r_1 = 10.01 cannot get below 10.01 - 5 * 0.01 = 9.96 > 9.0: no refinement
    assert not bounds.eigen_bounds_could_tighten([(10.01, "lambda_1"), row], 8.0, eigen, 2)
    # 9.03 - 0.05 < 9.0: accurate pairs could make lambda_1 the tightest
    assert bounds.eigen_bounds_could_tighten([(9.03, "lambda_1"), row], 8.0, eigen, 2)
    # the topic is proven optimal by the row bound: nothing to gain
    assert not bounds.eigen_bounds_could_tighten([(9.03, "lambda_1"), row], 9.0, eigen, 2)
    # a bound of unknown source counts as using the pairs (the safe side)
    assert bounds.eigen_bounds_could_tighten([(8.99, "some new bound"), row], 8.0, eigen, 2)


def test_real_cooccurrence_keeps_its_topics_and_certificates_with_fewer_products(
        monkeypatch, kos_mtx):
    """KOS (6,906 words): the later steps stop at CANDIDATE_TOL, nothing is refined (the row
    bound is the tightest), and topics, bounds and certified ratios are those of accurate pairs
    (no view guesses: no topic before the last is certified 1.0000)."""
    corpus = load_input(kos_mtx)
    options = dict(solver="spannogram", k=10, n_components=3, rank=2)
    loose = run_topics(corpus, **options)
    monkeypatch.setattr(topics_module, "CANDIDATE_TOL", TOPICS_TOL)
    accurate = run_topics(corpus, **options)
    assert loose.eigensolver["calls"] == 3
    assert TOPICS_TOL < loose.eigensolver["max_relative_residual"] <= CANDIDATE_TOL
    assert sum(loose.eigensolver["sparse_products"]) < sum(accurate.eigensolver["sparse_products"])
    for a, b in zip(loose.components, accurate.components):
        assert a.words == b.words
        assert a.bound_source == b.bound_source == bounds.ROW_BOUND_SOURCE
        assert a.upper_bound == pytest.approx(b.upper_bound, rel=1e-9)
        assert a.certified_ratio == pytest.approx(b.certified_ratio, rel=1e-9)
    assert [t.words[:2] for t in loose.components] == [
        ["bush", "november"], ["dean", "campaign"], ["percent", "vote"]]


# very loose later eigen steps with every solver, a view projected to zero, one bipartite component

@pytest.mark.parametrize("carry", [True, False])
@pytest.mark.parametrize("solver", sorted(SOLVERS))
@pytest.mark.parametrize("deflation", ["remove", "projection"])
def test_every_solver_keeps_valid_bounds_on_very_loose_later_pairs(monkeypatch, solver, deflation,
                                                                   carry):
    """Later steps stopped at 30% of theta_1 on a low-rank-plus-noise matrix of 16 words
    (where the eigenvalue bounds compete): every topic's bound is >= its view's brute-force
    optimum and its value <= it, for each solver (nonneg against the nonnegative optimum),
    with and without the Ritz vectors carried between remove views."""
    if not carry:
        _without_carry(monkeypatch)
    rng = np.random.default_rng(7)
    nonnegative = solver == "nonneg"
    V = rng.random((16, 3)) if nonnegative else rng.standard_normal((16, 3))
    N = (rng.random((16, 16)) if nonnegative else rng.standard_normal((16, 16))) * 0.05
    A = V @ V.T + N @ N.T
    monkeypatch.setattr(topics_module, "CANDIDATE_TOL", 0.3)
    result = run_topics(matrix_input(A), solver=solver, k=3, n_components=3, rank=2,
                        deflation=deflation, eigensolver="krylov", random_state=3)
    if not (carry and deflation == "remove"):
        assert result.eigensolver["max_relative_residual"] > TOPICS_TOL  # loose later pairs
    for topic, (view, words) in zip(result.components, _views(A, result, deflation)):
        best = _best_on_view(view, words, 3, nonnegative)
        assert topic.upper_bound >= best * (1 - 1e-10)
        assert topic.problem_value <= best * (1 + 1e-10)


def test_projection_deflation_to_a_zero_view_reports_instead_of_raising():
    """A rank-1 matrix of 4 words: after the first topic the projected view is zero up to
    rounding, and the later topics must be reported with value ~0, not raise (a computed value
    of 3.8e-15 exceeds every bound, 3.6e-15: bounds.cover_rounding raises the bound to it)."""
    u = np.array([1.0, 2.0, 3.0, 4.0])
    result = run_topics(matrix_input(np.outer(u, u)), solver="greedy", k=2, n_components=3,
                        rank=1, deflation="projection")
    assert len(result.components) == 3
    assert all(t.upper_bound >= t.problem_value for t in result.components)
    # (explained_variance is measured on the original A; the view's value is rounding noise)
    assert result.components[2].problem_value == pytest.approx(0.0, abs=1e-12)
    assert [t.certified_ratio for t in result.components][1:] == [1.0, 1.0]


def test_bipartite_with_one_component():
    """The polish of a single component, which has no other supports to concatenate."""
    rng = np.random.default_rng(0)
    V = rng.standard_normal((8, 8))
    result = run_topics(matrix_input(V @ V.T), solver="bipartite", k=2, n_components=1, rank=2)
    assert len(result.components) == 1 and len(result.components[0].words) == 2


def _six_groups(seed, n=20):
    """Six groups of 3 words (the first twice as strong) over a weak full-rank background."""
    rng = np.random.default_rng(seed)
    V = np.zeros((n, 6))
    idx = rng.permutation(n)
    for c in range(6):
        V[idx[3 * c:3 * c + 3], c] = (rng.random(3) + 0.5) * (4.0 if c == 0 else 2.0)
    V = np.column_stack([V, 0.05 * rng.random((n, n))])
    return V @ V.T


@pytest.mark.parametrize("seed, solver", [(109, "auto"), (109, "exact"), (77, "spannogram")])
def test_misconverged_loose_pairs_never_bound_below_the_topic(monkeypatch, seed, solver):
    """Projection deflation with the later steps at 0.3: the second view's theta_1 converges
    to its lambda_2 (seed 77: 11.1, r_1 = 0.05, lambda_1 = 23.3). lambda_1 + r_1 then falls
    below the topic's value, which must ask for refined pairs (auto, exact), and after the
    refinement the first run's OPT_2 + lambda_3 (18.6, spannogram) must not be kept below the
    topic found on the refined pairs (23.3). Every bound is >= its view's brute-force optimum."""
    monkeypatch.setattr(topics_module, "CANDIDATE_TOL", 0.3)
    A = _six_groups(seed)
    result = run_topics(matrix_input(A), solver=solver, k=2, n_components=2, rank=2,
                        deflation="projection", eigensolver="krylov", random_state=seed)
    # the second view's warm-started pairs are not known to be leading: their ceilings rest on
    # the trace left outside them (refined only where that could be the tightest bound)
    assert result.eigensolver["calls"] in (2, 3)
    for topic, (view, words) in zip(result.components, _views(A, result, "projection")):
        optimum = _best_on_view(view, words, 2, nonnegative=False)
        assert topic.upper_bound >= optimum * (1 - 1e-12)
        assert topic.problem_value == pytest.approx(optimum, rel=1e-9)


def test_a_bound_below_the_value_asks_for_refinement():
    """eigen_bounds_could_tighten: a bound below the value found is a contradiction (the pairs
    are not the leading ones), never "proven optimal"."""
    from spca_cli.spectrum import Eigen

    eigen = Eigen(values=np.array([11.0, 9.0]), vectors=np.eye(3)[:, :2],
                  residuals=np.array([0.05, 0.05]))
    listed = [(11.05, "lambda_1"), (30.0, bounds.ROW_BOUND_SOURCE)]
    assert bounds.below_attained(listed, 23.3)
    assert bounds.eigen_bounds_could_tighten(listed, 23.3, eigen, 2)
    assert not bounds.below_attained(listed, 11.05)
    assert bounds.eigen_free(listed + [(12.0, "branch and bound: optimal")]) == [
        (30.0, bounds.ROW_BOUND_SOURCE), (12.0, "branch and bound: optimal")]
    assert TOPICS_TOL < 0.05 / 11.0


def _documents(S):
    """A topics input from the document-word matrix ``S`` alone."""
    return types.SimpleNamespace(S=sp.csr_array(S), path="generated",
                                 vocabulary=[f"w{i}" for i in range(S.shape[1])])


def _always_confirmed(monkeypatch):
    """Every carried call multiplies its random columns (confirm=True), as a reference."""
    original = topics_module.top_eigenpairs

    def confirming(*args, confirm=True, **kwargs):
        return original(*args, confirm=True, **kwargs)

    monkeypatch.setattr(topics_module, "top_eigenpairs", confirming)


def _same_topics(first, second):
    return all(np.array_equal(a.indices, b.indices)
               and a.explained_variance == pytest.approx(b.explained_variance, rel=1e-12)
               and a.certified_ratio == b.certified_ratio
               for a, b in zip(first.components, second.components))


@pytest.mark.parametrize("seed", [0, 1])
def test_views_whose_topic_is_certified_skip_the_random_product(monkeypatch, seed):
    """Remove deflation's later views after a topic certified 1.0000 take the carried
    Rayleigh-Ritz pairs as they are, with no product, and keep them when the topic found on
    them is certified 1.0000 too (here every one): the same topics, bounds and ratios as when
    every carried call multiplies its random columns until its pairs converge, in fewer
    products."""
    from test_spectrum_clusters import _clustered_documents

    data = _documents(_clustered_documents(topics=12, words=600, documents=4000, seed=seed).S)
    options = dict(solver="spannogram", k=10, n_components=5, rank=2, deflation="remove",
                   eigensolver="krylov")
    deferred = run_topics(data, **options)
    _always_confirmed(monkeypatch)
    confirmed = run_topics(data, **options)
    assert _same_topics(deferred, confirmed)
    products = deferred.eigensolver["sparse_products"]
    # the first topic (the head word's) is certified below 1.0000: the second view gets
    # converged pairs, the later ones, after topics certified 1.0000, guesses that hold
    assert deferred.components[0].certified_ratio < 0.9999 <= deferred.components[1].certified_ratio
    assert min(products[:2]) > 0 and products[2:] == [0] * 3
    assert sum(products) < sum(confirmed.eigensolver["sparse_products"])


def test_a_guess_not_certified_leaves_the_run_as_without_guesses(monkeypatch, caplog):
    """A planted 10-word topic, two weaker words beside it, and a second vocabulary the carried
    vectors never touch: the first topic is certified 1.0000, so the second view takes a guess,
    whose pairs lie on the two words left of the first vocabulary; its topic is not certified
    1.0000, so the view is solved and certified again on converged pairs (the random columns
    multiplied), which find the second vocabulary. The same topics, bounds, ratios and warnings
    as a run whose carried calls never guess: what the solver said of the guess is dropped."""
    rng = np.random.RandomState(1)
    first = np.hstack([(rng.rand(400, 10) < 0.9) * 3.0, (rng.rand(400, 2) < 0.2) * 3.0])
    second = (rng.rand(400, 40) < 0.3) * 2.0
    data = _documents(sp.block_diag([sp.csr_array(first), sp.csr_array(second)]))
    first_vocabulary = np.arange(data.S.shape[1]) < 12
    carried = Gram.carried

    def on_the_first_vocabulary(self, source, V, AV):
        out = carried(self, source, V, AV)
        if out is None:
            return None
        V = out[0] * first_vocabulary[:, None]
        return V, self.matmat(V)

    monkeypatch.setattr(Gram, "carried", on_the_first_vocabulary)
    options = dict(solver="spannogram", k=10, n_components=3, rank=2, deflation="remove",
                   eigensolver="krylov")
    caplog.set_level("WARNING", logger="spca_cli")
    guessed = run_topics(data, **options)
    said = [record.getMessage() for record in caplog.records]
    products = guessed.eigensolver["sparse_products"]
    # the guess with no product, then converged pairs for the second view; the third view,
    # after a topic certified below 1.0000, gets converged pairs at once
    assert guessed.components[0].certified_ratio >= 0.9999
    assert len(products) == 4 and products[1] == 0 and min(products[2:]) > 0
    assert np.all(guessed.components[1].indices >= 12)
    caplog.clear()
    _always_confirmed(monkeypatch)
    assert _same_topics(guessed, run_topics(data, **options))
    assert said == [record.getMessage() for record in caplog.records]
