"""The joint solver ``bipartite``: exact oracles on tiny matrices, the matching reduction, the
bounds, the output contract, determinism, the time limit, and the paper's claim on real data."""

from __future__ import annotations

import itertools
import time
import warnings

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from spca_cli.errors import SpcaParameterError
from spca_cli.matrix import Gram
from spca_cli.solvers import SOLVERS
from spca_cli.solvers.registry import REGISTRY
from spca_cli.solvers._base import ConvergenceWarning
from spca_cli.bounds import total_bounds
from spca_cli.solvers.bipartite import _CHUNK, _Problem, _run_chunk, bipartite, match_supports
from spca_cli.solvers.threshold import threshold
from spca_cli.spectrum import low_rank_factor, top_eigenpairs


# ------------------------------------------------------------------------------ helpers
def brute_force_total(A, k, K):
    """max over K disjoint k-supports of sum_j lambda_max(A[I_j, I_j]), by enumeration."""
    n = A.shape[0]
    lam = {s: np.linalg.eigvalsh(A[np.ix_(s, s)])[-1] for s in itertools.combinations(range(n), k)}

    def best(free, K):
        if K == 0:
            return 0.0
        first = min(free)  # supports are unordered: the one holding the smallest free word first
        out = -np.inf
        # either the smallest free word is used by some support, or by none
        for s in itertools.combinations(sorted(free - {first}), k - 1):
            sup = (first, *s)
            out = max(out, lam[tuple(sorted(sup))] + best(free - set(sup), K - 1))
        if len(free) - 1 >= K * k:
            out = max(out, best(free - {first}, K))
        return out

    return best(set(range(n)), K)


def full_matching_value(W, k):
    """The matching weight of Algorithm 2 on the full graph (all n words, K k slots)."""
    gain = np.repeat(np.square(W), k, axis=1)
    r, c = linear_sum_assignment(gain, maximize=True)
    return gain[r, c].sum()


def value_of(A, out):
    total = 0.0
    for c in out.components:
        x = np.zeros(A.shape[0])
        x[c.indices] = c.weights
        total += x @ A @ x
    return total


def load_gram(path):
    S = sp.csr_array(scipy.io.mmread(str(path)))
    return Gram.from_documents(S)


def deflation_total(A, solver, K, k, **options):
    """One component at a time on A' = M A M (used words removed), total measured on A."""
    view, total = A, 0.0
    for _ in range(K):
        eigen = top_eigenpairs(view, max(options.get("rank", 1) + 1, 2))
        spec = next(s for s in REGISTRY.values() if s.function is solver)
        out = spec.run(view, k, {"eigen": eigen, "random_state": 0, **options})
        total += A.sparse_quadratic(out.indices, out.weights)
        view = view.remove(out.indices)
    return total


# ------------------------------------------------------------------------------ (1) exact cases
@pytest.mark.parametrize("k", [2, 3])
def test_reaches_the_brute_force_optimum_on_exact_rank_matrices(k):
    """A = V V^T of rank R = rank: the sketch is exact, so sampling C is the paper's Algorithm 1
    (no refinement, to test it alone); >= 99% of the optimum on at least 90% of 30 seeds."""
    hits = 0
    for seed in range(30):
        rng = np.random.default_rng(seed)
        n, R = (9 if k == 3 else 8), 3
        V = rng.standard_normal((n, R))
        A = V @ V.T
        G = Gram.from_dense(A)
        opt = brute_force_total(A, k, 2)
        out = bipartite(G, k, 2, eigen=top_eigenpairs(G, R + 1), rank=R, samples=256,
                        random_state=seed, refine=0)
        got = value_of(A, out)
        assert got <= opt * (1 + 1e-9)
        hits += got >= 0.99 * opt
    assert hits >= 27, f"only {hits} of 30 seeds reached 99% of the optimum"


def test_brute_force_helper_agrees_with_plain_enumeration():
    rng = np.random.default_rng(0)
    V = rng.standard_normal((7, 7))
    A = V @ V.T
    lam = {s: np.linalg.eigvalsh(A[np.ix_(s, s)])[-1] for s in itertools.combinations(range(7), 2)}
    plain = max(lam[a] + lam[b] for a in lam for b in lam if not set(a) & set(b))
    assert brute_force_total(A, 2, 2) == pytest.approx(plain, rel=1e-12)


# ------------------------------------------------------------------------------ (2) reduction
@pytest.mark.parametrize("seed", range(40))
def test_reduction_never_changes_the_matching_value(seed):
    rng = np.random.default_rng(seed)
    K, k = int(rng.integers(1, 5)), int(rng.integers(1, 6))
    n = int(rng.integers(K * k, K * k + 60))
    kind = seed % 4
    if kind == 0:
        W = rng.standard_normal((n, K))
    elif kind == 1:  # many ties
        W = rng.integers(-2, 3, size=(n, K)).astype(float)
    elif kind == 2:  # equal columns: the worst case, every column needs its K k best words
        W = np.repeat(rng.standard_normal((n, 1)), K, axis=1)
    else:  # a low-rank W = V C, as in the solver
        W = rng.standard_normal((n, 3)) @ rng.standard_normal((3, K))
    supports, value = match_supports(W, k)
    assert value == pytest.approx(full_matching_value(W, k), rel=1e-12, abs=1e-12)
    # and the supports really are K disjoint k-sets with that weight
    assert supports.shape == (K, k) and np.unique(supports).size == K * k
    assert value == pytest.approx(sum(np.square(W[s, j]).sum() for j, s in enumerate(supports)))


def test_reduction_keeps_the_value_on_a_real_sketch(kos_mtx):
    A = load_gram(kos_mtx)
    V = low_rank_factor(top_eigenpairs(A, 5), 4)
    rng = np.random.default_rng(0)
    K, k = 8, 10
    for _ in range(5):
        C = rng.standard_normal((4, K))
        C /= np.linalg.norm(C, axis=0)
        _, value = match_supports(V @ C, k)
        assert value == pytest.approx(full_matching_value(V @ C, k), rel=1e-12)
    # the solver's pooled path (top lists found among the heaviest words only) is exact too
    prob = _Problem(A, V, k, K)
    Cs = rng.standard_normal((6, 4, K))
    Cs /= np.linalg.norm(Cs, axis=1, keepdims=True)
    res = _run_chunk(prob, 0, Cs, None)
    assert res["sketch"] == pytest.approx(max(full_matching_value(V @ C, k) for C in Cs),
                                          rel=1e-12)


# ------------------------------------------------------------------------------ (3) bounds
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("K,k,n", [(2, 2, 8), (2, 3, 9), (3, 2, 8)])
def test_every_bound_is_above_the_brute_force_optimum(seed, K, k, n):
    rng = np.random.default_rng(seed)
    V = rng.random((n, n)) if seed % 2 else rng.standard_normal((n, n))  # full rank
    A = V @ V.T
    G = Gram.from_dense(A)
    opt = brute_force_total(A, k, K)
    for n_eig in (K + 1, n):
        for value, source in total_bounds(G, k, K, top_eigenpairs(G, n_eig)):
            assert value >= opt * (1 - 1e-12), source
    out = bipartite(G, k, K, eigen=top_eigenpairs(G, K + 1), rank=2, samples=64)
    assert len(out.bounds) == 3
    assert min(b for b, _ in out.bounds) >= value_of(A, out) * (1 - 1e-12)


def test_split_bound_is_tighter_than_ky_fan_and_trace_on_kos(kos_mtx):
    A = load_gram(kos_mtx)
    (ky_fan, _), (trace, _), (split, source) = total_bounds(A, 10, 8, top_eigenpairs(A, 9))
    assert "split" in source and split < min(ky_fan, trace)


# ------------------------------------------------------------------------------ (4) contract
def test_output_contract():
    rng = np.random.default_rng(3)
    V = rng.random((40, 6))
    A = V @ V.T
    G = Gram.from_dense(A)
    out = bipartite(G, 4, 5, eigen=top_eigenpairs(G, 6), samples=100)
    assert len(out.components) == 5
    words = np.concatenate([c.indices for c in out.components])
    assert words.size == 20 and np.unique(words).size == 20  # disjoint, exactly k each
    values = [c.value for c in out.components]
    assert values == sorted(values, reverse=True)
    for c in out.components:
        assert c.indices.size == 4 and c.indices.dtype == np.int64
        assert np.linalg.norm(c.weights) == pytest.approx(1.0)
        assert np.abs(c.weights[0]) == np.abs(c.weights).max() and c.weights[0] > 0
        x = np.zeros(40)
        x[c.indices] = c.weights
        assert c.value == pytest.approx(x @ A @ x)
        # the weights are the leading eigenvector of A on the support: nothing better there
        assert c.value == pytest.approx(np.linalg.eigvalsh(A[np.ix_(c.indices, c.indices)])[-1])
    info = out.info
    assert info["samples"] == 100 and not out.time_limited and info["rank"] == 4
    assert info["sketch_value"] <= sum(values) * (1 + 1e-9)  # A - A_4 is PSD


def test_respects_removed_words():
    rng = np.random.default_rng(4)
    V = rng.random((30, 5))
    G = Gram.from_dense(V @ V.T).remove(np.arange(10))
    out = bipartite(G, 3, 4, eigen=top_eigenpairs(G, 5), samples=50)
    words = np.concatenate([c.indices for c in out.components])
    assert words.min() >= 10 and np.unique(words).size == 12


def test_parameter_errors():
    G = Gram.from_dense(np.eye(10))
    eigen = top_eigenpairs(G, 5)
    with pytest.raises(SpcaParameterError,
                       match=r"n_components \* k must be <= .* got 3 \* 4 = 12 > 10"):
        bipartite(G, 4, 3, eigen=eigen)
    with pytest.raises(SpcaParameterError, match="samples must be an int in the range"):
        bipartite(G, 2, 2, eigen=eigen, samples=0)
    with pytest.raises(SpcaParameterError, match="n_jobs must be >= 1, or -1"):
        bipartite(G, 2, 2, eigen=eigen, n_jobs=0)
    with pytest.raises(SpcaParameterError, match="time_limit must be in the range"):
        bipartite(G, 2, 2, eigen=eigen, time_limit=-1.0)
    with pytest.raises(SpcaParameterError, match="n_components must be an int"):
        bipartite(G, 2, 1.5, eigen=eigen)


def test_computes_more_eigenpairs_when_given_too_few():
    rng = np.random.default_rng(5)
    V = rng.standard_normal((20, 20))
    G = Gram.from_dense(V @ V.T)
    few = bipartite(G, 3, 3, eigen=top_eigenpairs(G, 1), rank=3, samples=64)
    enough = bipartite(G, 3, 3, eigen=top_eigenpairs(G, 4), rank=3, samples=64)
    assert [c.indices.tolist() for c in few.components] == \
        [c.indices.tolist() for c in enough.components]


# ------------------------------------------------------------------------------ (5) determinism
def test_deterministic_for_a_seed_and_independent_of_n_jobs():
    rng = np.random.default_rng(6)
    V = rng.random((200, 8))
    G = Gram.from_dense(V @ V.T)
    eigen = top_eigenpairs(G, 9)
    samples = 5 * _CHUNK + 7  # several chunks, the last one partial
    runs = [bipartite(G, 5, 4, eigen=eigen, samples=samples, random_state=11, n_jobs=nj)
            for nj in (1, 1, 2)]
    ref = runs[0]
    for out in runs[1:]:
        for a, b in zip(ref.components, out.components):
            assert np.array_equal(a.indices, b.indices)
            assert np.array_equal(a.weights, b.weights)
        assert out.info["best_sample"] == ref.info["best_sample"]
        assert out.info["sketch_value"] == ref.info["sketch_value"]
        assert out.bounds == ref.bounds


# ------------------------------------------------------------------------------ (6) time limit
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_time_limit_returns_the_best_so_far(n_jobs):
    rng = np.random.default_rng(7)
    V = rng.random((300, 6))
    G = Gram.from_dense(V @ V.T)
    t = time.perf_counter()
    with pytest.warns(ConvergenceWarning, match="time limit of 0.05 s reached"):
        out = bipartite(G, 5, 4, eigen=top_eigenpairs(G, 7), samples=10**7, time_limit=0.05,
                        n_jobs=n_jobs)
    assert time.perf_counter() - t < 5.0
    assert out.time_limited and 1 <= out.info["samples"] < 10**7
    words = np.concatenate([c.indices for c in out.components])
    assert np.unique(words).size == 20


def test_no_warning_without_time_limit():
    G = Gram.from_dense(np.diag(np.arange(1.0, 11.0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = bipartite(G, 2, 2, eigen=top_eigenpairs(G, 5), samples=10)
    assert not out.time_limited and out.notes == []
    # a diagonal A: the best two disjoint pairs hold the four largest entries
    assert sorted(np.concatenate([c.indices for c in out.components]).tolist()) == [6, 7, 8, 9]


# ------------------------------------------------------------------------------ (7) real data
@pytest.mark.parametrize("fixture", ["kos_mtx", "airline_mtx"])
def test_beats_deflation_on_real_data(fixture, request):
    """The paper's claim: jointly chosen components explain more than one-by-one deflation with
    word removal (threshold, and tpower / spannogram rank 2 when they are registered)."""
    A = load_gram(request.getfixturevalue(fixture))
    K, k = 5, 10
    out = bipartite(A, k, K, eigen=top_eigenpairs(A, 5), rank=4, samples=600, n_jobs=2)
    total = sum(A.sparse_quadratic(c.indices, c.weights) for c in out.components)
    assert total == pytest.approx(out.info["total_value"], rel=1e-9)
    assert min(b for b, _ in out.bounds) >= total
    baselines = {"threshold": deflation_total(A, threshold, K, k)}
    if "tpower" in SOLVERS:
        baselines["tpower"] = deflation_total(A, SOLVERS["tpower"], K, k, time_limit=3.0)
    if "spannogram" in SOLVERS:
        baselines["spannogram"] = deflation_total(A, SOLVERS["spannogram"], K, k, rank=2,
                                                  time_limit=3.0)
    for name, value in baselines.items():
        assert total >= value, (name, total, value)


def _assignment_value(w2, k):
    """The maximum by linear_sum_assignment on the K k slot columns."""
    gain = np.repeat(w2, k, axis=1)
    r, c = linear_sum_assignment(gain, maximize=True)
    return gain[r, c].sum()


def _drawn_weights(rng, kind, u, K):
    if kind == "uniform":
        return rng.random((u, K)) ** 2
    if kind == "ties":  # few distinct values: many maxima
        return rng.integers(0, 4, (u, K)).astype(float)
    if kind == "equal columns":  # every group wants the same words
        return np.square(rng.standard_normal((u, 1))) @ np.ones((1, K))
    return np.square(rng.standard_normal((u, K))) * 10.0 ** rng.integers(-8, 9)  # any scale


@pytest.mark.parametrize("kind", ["uniform", "ties", "equal columns", "scaled"])
def test_the_matching_finds_linear_sum_assignments_maximum(kind):
    """The matching kernel (longest augmenting paths over the K groups) reaches the maximum
    SciPy's linear_sum_assignment finds on the K k slot columns, with every group full and no
    word twice; without ties (continuous weights) the very same words."""
    from spca_cli.solvers.bipartite import _match

    rng = np.random.default_rng(11)
    for _ in range(150):
        K, k = int(rng.integers(1, 7)), int(rng.integers(1, 11))
        u = K * k + int(rng.integers(0, 40))
        w2 = _drawn_weights(rng, kind, u, K)
        words = np.arange(100, 100 + u)
        supports, value = _match(w2, words, k)
        assert supports.shape == (K, k)
        assert np.unique(supports).size == K * k  # disjoint
        rows = supports - 100
        assert value == pytest.approx(sum(w2[rows[g], g].sum() for g in range(K)), rel=1e-12)
        assert value == pytest.approx(_assignment_value(w2, k), rel=1e-12, abs=0)
        if kind == "uniform":
            gain = np.repeat(w2, k, axis=1)
            r, c = linear_sum_assignment(gain, maximize=True)
            assert np.array_equal(np.sort(supports.ravel()), np.sort(words[r]))


def test_a_default_run_does_not_import_scipy_optimize():
    """scipy.optimize costs 200-300 ms to import; a default run (the set search's start
    included) never needs it."""
    import subprocess
    import sys

    from conftest import REPO

    code = ("import sys; from spca_cli.cli import cli\n"
            "try:\n    cli(['topics', sys.argv[1], '-o', sys.argv[2], '--quiet'])\n"
            "except SystemExit:\n    pass\n"
            "print('scipy.optimize' in sys.modules)")
    sample = REPO / "data_samples" / "docword.kos-sample.txt.gz"
    out = subprocess.run([sys.executable, "-c", code, str(sample), "/dev/null"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stderr


def test_weights_equal_up_to_rounding_still_get_a_full_maximum_matching():
    """Weights within 1e-13 of each other can leave the kernel a path it cannot follow back
    (a cycle of rounding gain); the matching then comes from SciPy's assignment: every group
    full, the maximum value (1 in 400 such drawn problems)."""
    from spca_cli.solvers.bipartite import _match

    w2 = 1.0 + 7e-14 * np.array([[0, 0, 0], [3, 2, 1], [1, 3, 3], [1, 3, 0], [3, 3, 1],
                                 [3, 0, 1]], dtype=float)
    supports, value = _match(w2, np.arange(6), 2)
    assert np.unique(supports).size == 6
    assert value == pytest.approx(_assignment_value(w2, 2), rel=1e-15)


def test_too_few_words_for_the_groups_is_an_error_not_a_crash():
    from spca_cli.solvers.bipartite import match_supports

    with pytest.raises(ValueError, match="3 words cannot fill 2 groups of 2"):
        match_supports(np.random.default_rng(1).random((3, 2)), 2)


@pytest.mark.parametrize("scale", [1.0, 1e-12, 1e-16, 1e-20, 1e12])
def test_matchings_find_the_maximum_at_any_scale(scale):
    """The kernel's rounding test is relative to the weights: weights of any size (w2 is
    (V c)^2 with V = U L^(1/2)) give the maximum linear_sum_assignment gives."""
    from spca_cli.solvers.bipartite import _match

    rng = np.random.default_rng(3)
    w2 = rng.random((24, 3)) ** 2 * scale
    _, value = _match(w2, np.arange(24), 2)
    assert value == pytest.approx(_assignment_value(w2, 2), rel=1e-9, abs=0)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_the_matching_refuses_invalid_weights(bad):
    from spca_cli.solvers.bipartite import _match

    w2 = np.random.default_rng(0).random((10, 2))
    w2[3, 1] = bad
    with pytest.raises(ValueError, match="invalid numeric entries"):
        _match(w2, np.arange(10), 2)


def test_the_set_search_start_does_not_depend_on_the_matrix_scale():
    """The same matrix times 1e-18 gets the set search's start of the matrix itself."""
    from spca_cli.solvers.bipartite import sketch_supports
    from spca_cli.spectrum import top_eigenpairs

    rng = np.random.default_rng(5)
    B = rng.standard_normal((40, 6))
    D = B @ B.T
    starts = []
    for scale in (1.0, 1e-18):
        A = Gram.from_dense(D * scale)
        eigen = top_eigenpairs(A, 4)
        found = sketch_supports(A, 4, 3, eigen=eigen, rank=3, samples=16, refine=1,
                                random_state=0)
        starts.append(sorted(tuple(sorted(s.tolist())) for s in found))
    assert starts[1] == starts[0]
