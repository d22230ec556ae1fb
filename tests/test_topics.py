"""The pipeline, the bounds module and the report, over every registered solver."""

from __future__ import annotations

import itertools
import json
import types

import numpy as np
import pytest
import scipy.sparse as sp

from spca_cli import bounds
from spca_cli.matrix import Gram
from spca_cli.report import render, to_dict
from spca_cli.solvers import JOINT_SOLVERS, SOLVERS
from spca_cli.spectrum import top_eigenpairs
from spca_cli.topics import run_topics

SPEC_COMPONENT_FIELDS = {"index", "words", "weights", "indices", "explained_variance",
                         "variance_ratio", "cumulative_ratio", "upper_bound", "bound_source",
                         "certified_ratio"}


def matrix_input(A, labels=None):
    labels = labels if labels is not None else [str(i) for i in range(A.shape[0])]
    return types.SimpleNamespace(A=A, labels=labels, path="test.npy")


def corpus_input(S, vocabulary=None):
    vocabulary = vocabulary if vocabulary is not None else [f"w{i}" for i in range(S.shape[1])]
    return types.SimpleNamespace(S=sp.csr_array(S), vocabulary=vocabulary, path="test.mtx")


def random_psd(n, rank, rng, nonnegative=False):
    V = rng.random((n, rank)) if nonnegative else rng.standard_normal((n, rank))
    return V @ V.T


def brute_force(A, k):
    best = 0.0
    for support in itertools.combinations(range(A.shape[0]), k):
        best = max(best, np.linalg.eigvalsh(A[np.ix_(support, support)])[-1])
    return best


def planted(n=60, k=6, seed=0):
    """A = 50 u u^T + a small PSD noise, u k-sparse: the support of u is the answer."""
    rng = np.random.default_rng(seed)
    u = np.zeros(n)
    support = rng.choice(n, k, replace=False)
    u[support] = rng.uniform(0.5, 1.0, k)
    u /= np.linalg.norm(u)
    N = rng.standard_normal((n, n)) * 0.05
    return 50 * np.outer(u, u) + N @ N.T, set(support.tolist())


@pytest.mark.parametrize("deflation", ["remove", "projection"])
@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_solver_contract(solver, deflation):
    """Every single-component solver, with both deflations: unit norm, exactly k distinct
    words, SPEC fields, deterministic for a seed, bound >= attained, the planted support found."""
    A, support = planted()
    data = matrix_input(A)
    first = run_topics(data, solver=solver, k=6, n_components=2, rank=2, random_state=3,
                       deflation=deflation)
    again = run_topics(data, solver=solver, k=6, n_components=2, rank=2, random_state=3,
                       deflation=deflation)
    doc, doc_again = to_dict(first), to_dict(again)
    doc.pop("seconds"), doc_again.pop("seconds")
    assert json.dumps(doc) == json.dumps(doc_again)
    assert set(first.components[0].indices.tolist()) == support
    for topic, comp in zip(first.components, doc["components"]):
        assert SPEC_COMPONENT_FIELDS <= set(comp)
        assert len(set(topic.indices.tolist())) == 6
        assert np.isclose(np.linalg.norm(topic.weights), 1.0)
        assert 0 < topic.certified_ratio <= 1
        assert topic.upper_bound >= topic.problem_value * (1 - 1e-12)
    if deflation == "remove":  # disjoint supports
        assert not set(first.components[0].indices) & set(first.components[1].indices)
    else:  # the second topic solved (I - x x^T) A (I - x x^T): x explains nothing there
        x = np.zeros(A.shape[0])
        x[first.components[0].indices] = first.components[0].weights
        P = np.eye(A.shape[0]) - np.outer(x, x)
        second = first.components[1]
        y = np.zeros(A.shape[0])
        y[second.indices] = second.weights
        assert second.problem_value == pytest.approx(y @ P @ A @ P @ y, rel=1e-9)


@pytest.mark.parametrize("solver", sorted(JOINT_SOLVERS))
def test_joint_solver_contract(solver):
    A, support = planted()
    result = run_topics(matrix_input(A), solver=solver, k=6, n_components=2, rank=2,
                        random_state=1)
    first, second = result.components
    assert not set(first.indices) & set(second.indices)
    assert set(first.indices.tolist()) == support
    ub, ratio = result.total_bound.value, result.total_bound.certified_ratio
    assert ub >= result.total_explained_variance and 0 < ratio <= 1


def test_explained_variance_is_measured_on_the_original_matrix():
    rng = np.random.default_rng(5)
    A = random_psd(12, 12, rng)
    result = run_topics(matrix_input(A), solver="threshold", k=3, n_components=3, rank=1,
                        deflation="projection")
    for topic in result.components:
        x = np.zeros(12)
        x[topic.indices] = topic.weights
        assert topic.explained_variance == pytest.approx(x @ A @ x, rel=1e-12)
    lam = np.linalg.eigvalsh(A)[::-1]
    cum = np.cumsum([t.explained_variance for t in result.components]) / np.cumsum(lam[:3])
    assert [t.cumulative_ratio for t in result.components] == pytest.approx(cum, rel=1e-9)
    assert result.components[0].variance_ratio == pytest.approx(
        result.components[0].explained_variance / lam[0], rel=1e-9)


@pytest.mark.parametrize("seed", range(12))
def test_single_bounds_are_above_the_brute_force_optimum(seed):
    """lambda_1, top-k diagonal and rank-1 + lambda_2, on A and on both deflated views."""
    rng = np.random.default_rng(seed)
    A = random_psd(9, int(rng.integers(1, 10)), rng, nonnegative=seed % 2 == 0)
    G = Gram.from_dense(A)
    x = rng.standard_normal(9)
    for view in (G, G.remove([0, 3]), G.project_out(x / np.linalg.norm(x))):
        dense, active = view.to_dense(), np.flatnonzero(view.active())
        eigen = top_eigenpairs(view, 2)
        for k in (1, 2, 3, 5):
            opt = max(np.linalg.eigvalsh(dense[np.ix_(s, s)])[-1]
                      for s in itertools.combinations(active, k))
            for value, source in bounds.single_bounds(view, k, eigen):
                assert value >= opt * (1 - 1e-12) - 1e-12, source


@pytest.mark.parametrize("seed", range(4))
def test_total_bounds_are_above_the_best_disjoint_pair(seed):
    rng = np.random.default_rng(seed)
    A = random_psd(8, 8, rng)
    G = Gram.from_dense(A)
    eigen = top_eigenpairs(G, 3)
    k = 2
    lam = {s: np.linalg.eigvalsh(A[np.ix_(s, s)])[-1]
           for s in itertools.combinations(range(8), k)}
    best = max(lam[a] + lam[b] for a in lam for b in lam if not set(a) & set(b))
    for value, source in bounds.total_bounds(G, k, 2, eigen):
        assert value >= best * (1 - 1e-12), source


def test_certified_ratio_refuses_a_bound_below_the_value():
    with pytest.raises(RuntimeError, match="below the attained value"):
        bounds.certified_ratio(2.0, 1.0)
    assert bounds.certified_ratio(1.0, 2.0) == 0.5


def test_sparse_corpus_and_dense_matrix_agree():
    rng = np.random.default_rng(2)
    S = sp.random(40, 15, density=0.3, random_state=2, format="csr")
    S.data[:] = 1.0
    A = (S.T @ S).toarray()
    a = run_topics(corpus_input(S), solver="threshold", k=4, n_components=2, rank=1)
    b = run_topics(matrix_input(A), solver="threshold", k=4, n_components=2, rank=1)
    for x, y in zip(a.components, b.components):
        assert x.indices.tolist() == y.indices.tolist()
        assert x.explained_variance == pytest.approx(y.explained_variance, rel=1e-9)
    assert a.input == {"path": "test.mtx", "documents": 40, "words": 15, "nonzeros": S.nnz,
                       "paths": ["test.mtx"], "duplicates_set_aside": None}
    del rng


def test_parameter_errors_name_the_numbers():
    A, _ = planted(n=20)
    with pytest.raises(ValueError, match=r"components \* k must be <= the number of words"):
        run_topics(matrix_input(A), solver="threshold", k=6, n_components=4)
    with pytest.raises(ValueError, match=r"k must be <= the number of words; got k=30 > 20"):
        run_topics(matrix_input(A), solver="threshold", k=30)
    with pytest.raises(ValueError, match="unknown solver 'magic'"):
        run_topics(matrix_input(A), solver="magic", k=3)


def test_table_and_markdown_render_the_same_figures():
    A, _ = planted(n=20, k=3)
    labels = [f"[w{i}]" for i in range(20)]  # '[' must not be read as rich markup
    doc = to_dict(run_topics(matrix_input(A, labels), solver="threshold", k=3, n_components=2,
                             rank=1))
    table = render(doc, "table", width=100)
    first = doc["components"][0]
    assert "  ".join(f"{w} {x:.2f}" for w, x in zip(first["words"], first["weights"])) in table
    assert f"{first['certified_ratio']:.4f}" in table
    md = render(doc, "markdown")
    assert md.splitlines()[2].startswith("| | PC 1 | PC 2 |")
    assert f"| 1 | {first['words'][0]} |" in md
    csv_text = render(doc, "csv")
    assert csv_text.splitlines()[0].startswith("component,position,word,index,weight")
    assert len(csv_text.splitlines()) == 1 + 2 * 3
