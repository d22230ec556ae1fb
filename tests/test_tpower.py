"""The truncated power method: planted recovery, fixed points and swap optimality on real
corpora, warnings, determinism, deflated views and every start."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from spca_cli.errors import SpcaParameterError
from spca_cli.matrix import Gram
from spca_cli.solvers import SOLVERS
from spca_cli.solvers._base import ConvergenceWarning
from spca_cli.solvers.threshold import threshold
from spca_cli.solvers.tpower import INITS, sparse_matvec, tpower
from spca_cli.spectrum import top_eigenpairs

from _builders import PUBLISHED, dense_x, planted, small_corpus


def top_k_set(z, active, k):
    score = np.where(active, np.abs(z), -np.inf)
    return set(np.argsort(-score, kind="stable")[:k].tolist())


def best_single_swap(A, indices):
    """max lambda_max over all supports I - a + j (every a in I, every active j not in I).

    Independent of the solver's secular-equation search: every swapped principal submatrix is
    assembled from A'[:, I] (one block product A.matmat) and the diagonal, and all of them go
    through one batched LAPACK eigvalsh call.
    """
    idx = np.asarray(indices)
    k, n = idx.size, A.n
    E = np.zeros((n, k))
    E[idx, np.arange(k)] = 1.0
    C = A.matmat(E)  # (n, k) A'[:, I]
    base = C[idx]
    base = 0.5 * (base + base.T)
    diag = A.diagonal()
    free = A.active().copy()
    free[idx] = False
    rows = np.flatnonzero(free)
    best = -np.inf
    for a in range(k):
        M = np.repeat(base[None], rows.size, axis=0)  # (c, k, k)
        M[:, a, :] = C[rows]
        M[:, :, a] = C[rows]
        M[:, a, a] = diag[rows]
        best = max(best, float(np.linalg.eigvalsh(M)[:, -1].max()))
    return best


def test_registered():
    assert SOLVERS["tpower"] is tpower


def test_planted_support():
    A, support = planted()
    out = tpower(A, 10, eigen=top_eigenpairs(A, 2))
    assert sorted(out.indices.tolist()) == support.tolist()
    assert out.info["converged"]


@pytest.mark.parametrize("fixture", ["airline_mtx", "kos_mtx"])
def test_real_corpus_fixed_point_and_swaps(fixture, request):
    S = sp.csr_array(scipy.io.mmread(request.getfixturevalue(fixture)))
    A = Gram.from_documents(S)
    eigen = top_eigenpairs(A, 2)
    out = tpower(A, 10, eigen=eigen)
    assert out.info["converged"]
    # a fixed point of truncation: the k largest |A x| are the support again (Gram's own product)
    z = A.matvec(dense_x(A, out))
    assert top_k_set(z, A.active(), 10) == set(out.indices.tolist())
    assert out.value >= threshold(A, 10, eigen=eigen).value - 1e-9 * out.value
    # no single swap (one word in, one out, over all pairs) raises lambda_max
    assert best_single_swap(A, out.indices) <= out.value * (1 + 1e-9)
    assert out.value >= PUBLISHED[fixture] - 0.005
    assert set(out.info["starts"]) == {"top-variance", "top-k-variance", "warm-start",
                                       "eigenvector"}
    assert out.value == pytest.approx(max(out.info["starts"].values()), rel=1e-12)


def test_plain_algorithm_is_a_fixed_point_on_kos(kos_mtx):
    S = sp.csr_array(scipy.io.mmread(kos_mtx))
    A = Gram.from_documents(S)
    out = tpower(A, 10, init="top-k-variance", local_search=False)
    z = A.matvec(dense_x(A, out))
    assert top_k_set(z, A.active(), 10) == set(out.indices.tolist())
    assert out.info["swaps"] == 0


def test_convergence_warning():
    rng = np.random.RandomState(3)
    G = rng.standard_normal((40, 80))
    A = Gram.from_dense(G @ G.T)
    with pytest.warns(ConvergenceWarning, match=r"TPower stopped at the iteration limit 1 "
                                                r"before converging; a higher limit may find more"):
        out = tpower(A, 5, init="top-variance", max_iter=1, local_search=False)
    assert not out.info["converged"]
    assert out.info["iterations"] == 1


def test_deterministic():
    S = small_corpus()
    A = Gram.from_documents(S)
    eigen = top_eigenpairs(A, 2)
    a = tpower(A, 6, eigen=eigen, n_starts=3, random_state=7)
    b = tpower(Gram.from_documents(S.copy()), 6, eigen=eigen, n_starts=3, random_state=7)
    assert a.indices.tobytes() == b.indices.tobytes()
    assert a.weights.tobytes() == b.weights.tobytes()
    assert a.value == b.value and a.info == b.info


def test_ties_go_to_the_lower_index():
    # eight identical words: every 3-subset is optimal, the lowest indices must win
    A = Gram.from_dense(np.ones((8, 8)) + np.eye(8))
    out = tpower(A, 3)
    assert sorted(out.indices.tolist()) == [0, 1, 2]


def test_remove_view_never_picks_removed_words():
    S = small_corpus()
    A = Gram.from_documents(S)
    first = tpower(A, 6, eigen=top_eigenpairs(A, 2))
    removed = set(first.indices.tolist())
    B = A.remove(first.indices)
    second = tpower(B, 6, eigen=top_eigenpairs(B, 2))
    assert not removed & set(second.indices.tolist())
    # the sparse-kernel path on the masked view agrees with a dense copy of the same view
    dense = tpower(Gram.from_dense(B.to_dense()), 6)
    assert sorted(second.indices.tolist()) == sorted(dense.indices.tolist())
    assert second.value == pytest.approx(dense.value, rel=1e-10)
    z = B.matvec(dense_x(B, second))
    assert top_k_set(z, B.active(), 6) == set(second.indices.tolist())


def test_remove_until_few_words_left():
    S = small_corpus(n=40)
    A = Gram.from_documents(S)
    A = A.remove(np.arange(33))
    out = tpower(A, 7)
    assert sorted(out.indices.tolist()) == list(range(33, 40))
    with pytest.raises(SpcaParameterError, match="k must be <= the number of words"):
        tpower(A, 8)


def test_projection_view():
    S = small_corpus()
    A = Gram.from_documents(S)
    first = tpower(A, 6, eigen=top_eigenpairs(A, 2))
    B = A.project_out(dense_x(A, first))
    out = tpower(B, 6, eigen=top_eigenpairs(B, 2))
    x = dense_x(B, out)
    assert out.value == pytest.approx(B.quadratic(x), rel=1e-9)
    assert top_k_set(B.matvec(x), B.active(), 6) == set(out.indices.tolist())
    dense = tpower(Gram.from_dense(B.to_dense()), 6)
    assert out.value == pytest.approx(dense.value, rel=1e-9)
    assert best_single_swap(B, out.indices) <= out.value * (1 + 1e-9)


def test_sparse_matvec_matches_gram_on_every_view():
    S = small_corpus()
    A = Gram.from_documents(S)
    rng = np.random.RandomState(0)
    idx = rng.choice(A.n, 7, replace=False)
    w = rng.standard_normal(7)
    x = np.zeros(A.n)
    x[idx] = w
    y = rng.standard_normal(A.n)
    views = [A, A.remove(idx[:2]), A.project_out(y), Gram.from_dense(A.to_dense()),
             Gram.from_dense(A.to_dense()).remove(idx[:3])]
    for V in views:
        np.testing.assert_allclose(sparse_matvec(V, idx, w), V.matvec(x), rtol=1e-12, atol=1e-9)


def brute_force(A, k):
    from itertools import combinations
    D = A.to_dense()
    return max(np.linalg.eigvalsh(D[np.ix_(c, c)])[-1] for c in combinations(range(A.n), k))


@pytest.mark.parametrize("seed", range(4))
def test_small_oracle(seed):
    # at most the brute-force optimum over all C(12, 4) supports, and swap-optimal
    rng = np.random.RandomState(seed)
    G = rng.standard_normal((12, 5))
    A = Gram.from_dense(np.abs(G @ G.T))
    out = tpower(A, 4)
    opt = brute_force(A, 4)
    assert out.value <= opt * (1 + 1e-12)
    assert best_single_swap(A, out.indices) <= out.value * (1 + 1e-9)


def test_k_equals_n_is_the_leading_eigenvector():
    rng = np.random.RandomState(5)
    G = rng.standard_normal((9, 20))
    A = Gram.from_dense(G @ G.T)
    out = tpower(A, 9)
    assert out.value == pytest.approx(np.linalg.eigvalsh(A.to_dense())[-1], rel=1e-12)


@pytest.mark.parametrize("init", INITS)
def test_every_init(init):
    S = small_corpus()
    A = Gram.from_documents(S)
    eigen = top_eigenpairs(A, 2)
    warm = threshold(A, 6, eigen=eigen)
    out = tpower(A, 6, eigen=eigen, init=init,
                 warm_start=(warm.indices, warm.weights) if init == "spannogram" else None)
    assert out.indices.size == 6 and len(set(out.indices.tolist())) == 6
    assert np.linalg.norm(out.weights) == pytest.approx(1.0)
    assert out.info["converged"]
    if init == "auto":
        assert out.info["init"] in out.info["starts"]
    else:
        assert out.info["init"] == init and list(out.info["starts"]) == [init]
    if init == "spannogram":  # TPower never lowers the value of its start
        assert out.value >= warm.value - 1e-9


def test_auto_with_a_warm_start_and_random_starts():
    A, support = planted(seed=2)
    out = tpower(A, 10, warm_start=(support, np.ones(10)), n_starts=2)
    assert {"spannogram", "random-1", "random-2"} <= set(out.info["starts"])
    assert sorted(out.indices.tolist()) == support.tolist()


def test_spannogram_init_needs_a_warm_start():
    A, _ = planted()
    with pytest.raises(SpcaParameterError,
                       match=r"init='spannogram' needs warm_start=\(indices, weights\)"):
        tpower(A, 10, init="spannogram")


@pytest.mark.parametrize("kwargs, message", [
    ({"init": "best"}, "init must be one of auto, top-variance"),
    ({"max_iter": 0}, r"max_iter must be an int in the range \[1, inf\], got 0"),
    ({"tol": 0.0}, r"tol must be in the range \(0.0, inf\], got 0.0"),
    ({"n_starts": -1}, r"n_starts must be an int in the range \[0, inf\], got -1"),
    ({"init": "spannogram", "warm_start": ([99], [1.0])}, r"warm_start indices must be in"),
])
def test_parameter_errors(kwargs, message):
    A, _ = planted()
    with pytest.raises(SpcaParameterError, match=message):
        tpower(A, 10, **kwargs)


def test_time_limit_stops_between_starts_and_says_so():
    import warnings as _warnings

    from spca_cli.errors import ConvergenceWarning

    A, _support = planted()
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always")
        out = tpower(A, 10, time_limit=1e-9)
    assert out.time_limited is True and len(out.info["starts"]) == 1
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert any(m.startswith("TPower stopped at the time limit after 1 of ") for m in messages)
    assert tpower(A, 10).time_limited is False
