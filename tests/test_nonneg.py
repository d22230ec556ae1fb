"""The nonneg solver against brute force, its bounds, its modes and limits, and on KOS."""

from __future__ import annotations

import doctest
import importlib
import itertools
import time
import warnings

import numpy as np
import pytest
import scipy.io

from spca_cli.errors import SpcaParameterError
from spca_cli.kernels.nonneg import epsnet_samples, exact_vertices, pool_new
from spca_cli.matrix import Gram
from spca_cli.solvers import _base
from spca_cli.solvers.nonneg import (cap_probability, epsilon_for_samples, nonneg,
                                     samples_for_epsilon)
from spca_cli.spectrum import top_eigenpairs


# ---------------------------------------------------------------------- oracles
def brute_nonneg(A, k):
    """Best x^T A x over x >= 0, ||x|| = 1, ||x||_0 <= k.

    At the optimum x with support J, x_J > 0 is a local (hence global) maximiser of the Rayleigh
    quotient of A_J, so it is a positive leading eigenvector; conversely each J whose leading
    eigenvector has one sign gives a feasible value lambda_max(A_J).
    """
    n = A.shape[0]
    best = 0.0
    for s in range(1, k + 1):
        for J in itertools.combinations(range(n), s):
            vals, vecs = np.linalg.eigh(A[np.ix_(J, J)])
            u = vecs[:, -1]
            if np.all(u >= -1e-12) or np.all(u <= 1e-12):
                best = max(best, vals[-1])
    return best


def brute_signed(A, k):
    """Best x^T A x over unit x with ||x||_0 <= k (no sign constraint)."""
    return max(np.linalg.eigvalsh(A[np.ix_(J, J)])[-1]
               for J in itertools.combinations(range(A.shape[0]), k))


def solve(A, k, d, **kw):
    G = Gram.from_dense(A)
    return G, nonneg(G, k, eigen=top_eigenpairs(G, d + 1), rank=d, **kw)


def check_output(out, k, n):
    assert out.indices.shape == (k,) and out.weights.shape == (k,)
    assert len(set(out.indices.tolist())) == k and np.all((out.indices >= 0) & (out.indices < n))
    assert np.all(out.weights >= 0.0)
    assert np.linalg.norm(out.weights) == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.diff(out.weights) <= 0.0)  # ordered by weight, zeros (if any) last


def mixed_rank_d(seed, n, d):
    rng = np.random.RandomState(seed)
    B = rng.standard_normal((n, d)) * np.array([3.0, 1.5, 0.7])[:d]  # (n, d) mixed signs
    return B @ B.T


# ---------------------------------------------------------------------- (1) exact = brute force
CASES = [(seed, n, d, k) for seed, (n, d, k) in enumerate(
    (n, d, k) for d in (1, 2, 3) for n in (6, 9, 12) for k in (1, 2, 3, 4))]


@pytest.mark.parametrize("seed,n,d,k", CASES)
def test_exact_mode_equals_brute_force_on_rank_d(seed, n, d, k):
    A = mixed_rank_d(seed, n, d)
    assert np.any(A < 0)
    G, out = solve(A, k, d)
    opt = brute_nonneg(A, k)
    check_output(out, k, n)
    assert out.info["mode"] == "exact" and out.exact is True
    assert out.value == pytest.approx(opt, rel=1e-9)
    assert out.info["opt_d"] == pytest.approx(opt, rel=1e-9)
    x = np.zeros(n)
    x[out.indices] = out.weights
    assert x @ A @ x == pytest.approx(out.value, rel=1e-12)


@pytest.mark.parametrize("d", [2, 3])
def test_spannogram_kernel_alone_is_exact(d):
    # the enumeration by itself (no refinement afterwards) reaches the optimum of A_d = V V^T
    for seed in range(40):
        rng = np.random.RandomState(100 + seed)
        n, k = rng.randint(4, 13), rng.randint(1, 5)
        V = rng.standard_normal((n, d)) * np.array([3.0, 1.0, 0.5])[:d]
        pool = pool_new(4, k)
        counts = np.zeros(3, dtype=np.int64)
        more = exact_vertices(V, np.einsum("ij,ij->i", V, V), np.arange(d), k, 10**9, *pool,
                              counts)
        assert more is False
        assert counts[0] == 2 * len(list(itertools.combinations(range(n + 1), d)))
        assert pool[0].max() == pytest.approx(brute_nonneg(V @ V.T, k), rel=1e-9)


# ---------------------------------------------------------------------- (2) epsilon-net
@pytest.mark.parametrize("d", [2, 3, 5])
def test_cap_probability_matches_monte_carlo(d):
    eps = 0.2
    c = np.random.RandomState(d).standard_normal((200_000, d))
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    empirical = np.mean(c[:, 0] ** 2 >= 1 - eps)
    assert empirical == pytest.approx(cap_probability(eps, d), abs=0.005)
    n_samples = samples_for_epsilon(eps, d, 0.01)
    assert (1 - cap_probability(eps, d)) ** n_samples <= 0.01
    assert (1 - cap_probability(eps, d)) ** (n_samples - 1) > 0.01
    assert epsilon_for_samples(n_samples, d, 0.01) <= eps


def test_epsilon_net_samples_reach_one_minus_eps_with_stated_probability():
    # raw Algorithm 3 (random directions + rank-1 solver, nothing else) on rank-3 matrices
    eps, d, delta, trials = 0.3, 3, 0.05, 300
    n_samples = samples_for_epsilon(eps, d, delta)
    hits = 0
    for seed in range(trials):
        rng = np.random.RandomState(seed)
        n, k = rng.randint(6, 11), rng.randint(2, 5)
        V = rng.standard_normal((n, d)) * np.array([2.0, 1.5, 1.0])
        C = rng.standard_normal((n_samples, d))
        C /= np.linalg.norm(C, axis=1, keepdims=True)
        pool = pool_new(2, k)
        epsnet_samples(V, C, k, *pool)
        hits += pool[0].max() >= (1 - eps) * brute_nonneg(V @ V.T, k)
    slack = 3 * np.sqrt(delta * (1 - delta) / trials)
    assert hits / trials >= 1 - delta - slack


def test_epsilon_net_solver_reaches_one_minus_eps():
    eps, trials, hits = 0.1, 60, 0
    for seed in range(trials):
        rng = np.random.RandomState(seed)
        n, k, d = rng.randint(6, 12), rng.randint(2, 5), 2 + seed % 2
        A = mixed_rank_d(seed, n, d)
        _, out = solve(A, k, d, epsilon=eps, random_state=seed)
        assert out.info["mode"] == "epsilon-net" and out.exact is False
        assert out.info["samples"] == samples_for_epsilon(eps, d, min(0.01, 1 / n))
        assert out.info["confidence"] >= 0.99
        check_output(out, k, n)
        hits += out.value >= (1 - eps) * brute_nonneg(A, k)
    assert hits / trials >= 0.99 - 3 * np.sqrt(0.01 * 0.99 / trials)


def test_epsilon_net_is_deterministic_for_a_seed_and_samples_give_epsilon():
    A = mixed_rank_d(3, 40, 3) + 0.1 * np.eye(40)
    _, a = solve(A, 5, 3, samples=30, random_state=7)
    _, b = solve(A, 5, 3, samples=30, random_state=7)
    assert a.indices.tolist() == b.indices.tolist() and np.array_equal(a.weights, b.weights)
    assert a.info["samples"] == 30
    assert a.info["epsilon"] == pytest.approx(epsilon_for_samples(30, 3, 0.01))


# ---------------------------------------------------------------------- (3) bounds
@pytest.mark.parametrize("mode", [{}, {"epsilon": 0.1}, {"samples": 5}])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_every_bound_is_above_the_optimum_on_full_rank_matrices(mode, d):
    for seed in range(8):
        rng = np.random.RandomState(seed)
        n, k = 10, 1 + seed % 4
        B = rng.standard_normal((n, n))
        A = B @ B.T / n + 2.0 * np.outer(B[:, 0], B[:, 0]) / n  # a leading direction, still full rank
        G, out = solve(A, k, d, random_state=seed, **mode)
        opt = brute_nonneg(A, k)
        assert np.linalg.eigvalsh(A)[0] > 1e-6  # full rank
        assert out.value <= opt * (1 + 1e-12)  # feasible
        assert out.bounds, out.info
        for value, source in out.bounds:
            assert value >= opt * (1 - 1e-12), source
            if out.info["mode"] == "epsilon-net":
                assert "w.p. >= " in source
        # the signed bounds the pipeline adds hold for the nonnegative problem too
        assert np.linalg.eigvalsh(A)[-1] >= opt
        assert np.sort(np.diag(A))[-k:].sum() >= opt * (1 - 1e-12)


def test_bound_sources_name_the_inequality():
    A = mixed_rank_d(1, 12, 3) + 0.05 * np.eye(12)
    _, ex = solve(A, 3, 2)
    assert [s for _, s in ex.bounds] == ["rank-2 nonneg spannogram + lambda_3",
                                         "Theorem 1 ratio (rank 2)"]
    _, net = solve(A, 3, 3, epsilon=0.1)
    assert net.bounds[0][1].startswith("eps-net rank-3 + lambda_4 (w.p. >= 0.99")
    assert net.bounds[1][1].startswith("Theorem 2 ratio (rank 3, eps 0.1, w.p. >= 0.99")


# ---------------------------------------------------------------------- (4) nonnegative A
@pytest.mark.parametrize("d", [1, 2, 3])
def test_entrywise_nonnegative_rank_d_matches_signed_optimum(d):
    for seed in range(6):
        rng = np.random.RandomState(seed)
        n, k = 10, 2 + seed % 3
        S = rng.uniform(0.0, 1.0, size=(d, n)) * (rng.uniform(size=(d, n)) < 0.7)
        A = S.T @ S  # (n, n), entrywise >= 0, rank d
        G, out = solve(A, k, d)
        assert out.value == pytest.approx(brute_signed(A, k), rel=1e-9)


def test_k_equal_n_on_nonnegative_matrix_is_the_perron_vector():
    rng = np.random.RandomState(0)
    S = rng.uniform(size=(30, 8))
    A = S.T @ S
    G, out = solve(A, 8, 2)
    assert out.value == pytest.approx(np.linalg.eigvalsh(A)[-1], rel=1e-10)


def test_agrees_with_the_signed_spannogram_on_nonnegative_rank_d():
    spannogram = pytest.importorskip("spca_cli.solvers.spannogram").spannogram
    for seed in range(4):
        rng = np.random.RandomState(seed)
        S = rng.uniform(size=(2, 9))
        G = Gram.from_dense(S.T @ S)
        eigen = top_eigenpairs(G, 3)
        signed = spannogram(G, 3, eigen=eigen, rank=2)
        ours = nonneg(G, 3, eigen=eigen, rank=2)
        assert ours.value == pytest.approx(signed.value, rel=1e-9)


# ---------------------------------------------------------------------- (5) mixed signs
def test_mixed_sign_optimum_differs_from_signed_and_uses_the_negative_side():
    a = np.array([3.0, 1.0, -2.0, -2.0, -2.0])
    A = np.outer(a, a) + 1e-3 * np.eye(5)  # nearly rank 1
    G, out = solve(A, 3, 2)
    assert brute_signed(A, 3) == pytest.approx(17.0, rel=1e-3)
    assert out.value == pytest.approx(brute_nonneg(A, 3), rel=1e-9)
    assert out.value == pytest.approx(12.0, rel=1e-3)
    assert sorted(out.indices.tolist()) == [2, 3, 4]
    assert np.all(out.weights > 0)


def test_fewer_positive_weights_than_k_are_padded_with_zeros():
    a = np.array([2.0, 1.0, -1.0, -1.0])
    G, out = solve(np.outer(a, a), 3, 1)
    assert out.value == pytest.approx(5.0)
    assert out.indices.tolist() == [0, 1, 2]  # pad: largest (A x)_j, ties by index
    assert out.weights[2] == 0.0 and out.info["nonzeros"] == 2
    check_output(out, 3, 4)


def test_finish_component_sign_rule_is_a_no_op_for_nonnegative_weights():
    A = mixed_rank_d(5, 9, 2)
    G = Gram.from_dense(A)
    idx, w = np.array([4, 1, 7]), np.array([0.2, 0.9, 0.1])
    out = _base.finish_component(G, idx, weights=w)
    assert np.all(out.weights > 0)
    assert out.indices.tolist() == [1, 4, 7]
    assert np.allclose(out.weights, np.array([0.9, 0.2, 0.1]) / np.linalg.norm(w))


def test_removed_words_are_never_chosen():
    rng = np.random.RandomState(2)
    S = rng.uniform(size=(40, 12))
    G = Gram.from_documents(S).remove([0, 3, 5])
    for kw in ({}, {"epsilon": 0.2}):
        out = nonneg(G, 4, eigen=top_eigenpairs(G, 3), rank=2, **kw)
        assert not set(out.indices.tolist()) & {0, 3, 5}


# ---------------------------------------------------------------------- (6) limits and errors
def test_exact_refuses_when_too_many_vertices():
    A = mixed_rank_d(0, 60, 3) + 0.01 * np.eye(60)
    G = Gram.from_dense(A)
    eigen = top_eigenpairs(G, 4)
    with pytest.raises(SpcaParameterError,
                       match=r"^nonneg exact mode would visit 71,980 spannogram vertices "
                             r"\(2 C\(n\+1, d\) for rank d=3, n=60 words\) > "
                             r"max_candidates=1,000; give a time limit, a smaller rank, or use "
                             r"the epsilon-net mode \(samples or epsilon\)$"):
        nonneg(G, 4, eigen=eigen, rank=3, exact=True, max_candidates=1000)
    auto = nonneg(G, 4, eigen=eigen, rank=3, max_candidates=1000)
    assert auto.info["mode"] == "epsilon-net" and auto.info["epsilon"] == 0.1


def test_time_limit_stops_and_says_so():
    A = mixed_rank_d(0, 60, 3) + 0.01 * np.eye(60)
    G = Gram.from_dense(A)
    eigen = top_eigenpairs(G, 4)
    with pytest.warns(_base.ConvergenceWarning, match="stopped at the time limit after 0 of"):
        out = nonneg(G, 4, eigen=eigen, rank=3, exact=True, max_candidates=1000,
                     time_limit=1e-9)
    assert out.time_limited is True and out.exact is False
    assert out.info["opt_d"] is None and out.bounds == []
    check_output(out, 4, 60)
    with pytest.warns(_base.ConvergenceWarning, match="guarantee now holds with probability 0"):
        net = nonneg(G, 4, eigen=eigen, rank=3, samples=10**6, time_limit=1e-9)
    assert net.time_limited is True and net.info["samples"] == 0
    assert net.bounds == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        full = nonneg(G, 4, eigen=eigen, rank=3, exact=True, time_limit=60)
    assert full.exact is True and full.time_limited is False
    assert full.value >= out.value * (1 - 1e-12)


@pytest.mark.parametrize("kw,message", [
    ({"exact": True, "samples": 10}, "exact=True cannot be combined with samples or epsilon"),
    ({"epsilon": 0.0}, r"epsilon must be in the range \(0.0, 1.0\], got 0.0"),
    ({"samples": 0}, r"samples must be an int in the range \[1, inf\], got 0"),
    ({"rank": 0}, r"rank must be an int in the range \[1, inf\], got 0"),
    ({"exact": "yes"}, "exact must be True, False or None, got 'yes'"),
])
def test_parameter_errors(kw, message):
    G = Gram.from_dense(mixed_rank_d(0, 8, 2))
    with pytest.raises(SpcaParameterError, match=message):
        nonneg(G, 2, eigen=top_eigenpairs(G, 3), **kw)


def test_docstring_example_runs():
    # the package re-exports the function under the module's name, so fetch the module itself
    nonneg_module = importlib.import_module("spca_cli.solvers.nonneg")
    result = doctest.testmod(nonneg_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# ---------------------------------------------------------------------- (7) real data
@pytest.fixture
def kos_gram(kos_mtx):
    S = scipy.io.mmread(kos_mtx).tocsr()
    G = Gram.from_documents(S)
    return G, top_eigenpairs(G, 4)


def test_kos_explained_variance_and_bound(kos_gram, record_property):
    G, eigen = kos_gram
    nonneg(G, 5, eigen=eigen, rank=3, epsilon=0.1)  # compile the kernels outside the timing
    diag = G.diagonal()
    rows = []
    for K in (5, 10, 20):
        t0 = time.perf_counter()
        out = nonneg(G, K, eigen=eigen, rank=3, epsilon=0.1)
        seconds = time.perf_counter() - t0
        general = [(float(eigen.values[0] + eigen.residuals[0]), "lambda_1"),
                   (float(np.sort(diag)[-K:].sum()), "top-k diagonal")]
        bound, source = min(out.bounds + general)
        check_output(out, K, G.n)
        assert out.info["nonzeros"] == K  # A >= 0 entrywise: nothing is worth leaving out
        assert out.value <= bound
        assert seconds < 5.0
        rows.append((K, out.value, out.value / eigen.values[0], bound, source, seconds))
        record_property(f"kos_k{K}", {"value": out.value, "bound": bound, "source": source,
                                      "seconds": round(seconds, 3)})
    values = [r[1] for r in rows]
    assert values == sorted(values)  # more words never explain less here
    for K, value, ratio, bound, source, seconds in rows:
        print(f"KOS nonneg d=3 eps=0.1 K={K}: {value:.1f} ({ratio:.3f} of lambda_1), "
              f"bound {bound:.1f} [{source}], {seconds:.2f}s")


def test_duplicate_rows_and_zero_rows_stay_exact():
    # words with identical columns of S give identical rows of V: not general position
    for seed in range(30):
        rng = np.random.RandomState(200 + seed)
        d, k = 2 + seed % 2, 2 + seed % 3
        B = rng.standard_normal((6, d)) * np.array([3.0, 1.0, 0.5])[:d]
        B = np.vstack([B, B[:2], np.zeros((1, d))])  # rows 6, 7 copy rows 0, 1; row 8 is 0
        A = B @ B.T
        G, out = solve(A, k, d)
        assert out.info["opt_d"] == pytest.approx(brute_nonneg(A, k), rel=1e-9)
