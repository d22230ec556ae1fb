"""Exact greedy forward selection: the secular-equation kernel against LAPACK, each step against
brute force, planted recovery, real corpora, deflated views and a 100k-word vocabulary."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from spca_cli.kernels.greedy import bordered_lmax
from spca_cli.matrix import Gram
from spca_cli.solvers import SOLVERS
from spca_cli.solvers.greedy import greedy
from spca_cli.solvers.threshold import threshold
from spca_cli.spectrum import top_eigenpairs

from _builders import PUBLISHED, dense_x, planted, small_corpus


def test_registered():
    assert SOLVERS["greedy"] is greedy


@pytest.mark.parametrize("m", [0, 1, 4, 9])
def test_bordered_lmax_matches_eigvalsh(m):
    rng = np.random.RandomState(m)
    n = 150
    G = rng.standard_normal((n + m, n + m // 2 + 1))
    D = G @ G.T
    D[:5, :] = 0.0  # words with no coupling at all (and zero variance)
    D[:, :5] = 0.0
    D[5, :] *= 1e-9  # and one almost uncoupled word
    D[:, 5] *= 1e-9
    I = np.arange(n, n + m)
    mu, Q = np.linalg.eigh(D[np.ix_(I, I)])
    C = np.ascontiguousarray(D[:, I])
    rows = np.arange(n)
    got = bordered_lmax(mu, np.ascontiguousarray(Q), C, np.arange(m), np.diag(D).copy(), rows)
    want = [np.linalg.eigvalsh(D[np.ix_(list(I) + [j], list(I) + [j])])[-1] for j in rows]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * max(want))
    # pruned: same first maximum, every value not pruned is exact, pruned ones are below tau
    for tau in (-np.inf, float(np.median(want))):
        pruned = bordered_lmax(mu, np.ascontiguousarray(Q), C, np.arange(m), np.diag(D).copy(),
                               rows, tau, True)
        assert int(np.argmax(pruned)) == int(np.argmax(got))
        kept = np.isfinite(pruned)
        np.testing.assert_array_equal(pruned[kept], got[kept])
        earlier = np.maximum(tau, np.concatenate([[-np.inf], np.maximum.accumulate(got)[:-1]]))
        assert np.all(got[~kept] <= earlier[~kept] + 1e-12 * abs(got.max()))


def test_each_step_is_the_exact_best_extension():
    rng = np.random.RandomState(0)
    G = rng.standard_normal((30, 8))
    D = np.abs(G @ G.T)
    out = greedy(Gram.from_dense(D), 7)
    order = [int(np.argmax(np.diag(D)))]
    for _ in range(6):
        cands = [j for j in range(30) if j not in order]
        vals = [np.linalg.eigvalsh(D[np.ix_(order + [j], order + [j])])[-1] for j in cands]
        order.append(cands[int(np.argmax(vals))])
    assert out.info["order"] == order
    path = out.info["path"]
    assert all(b >= a - 1e-9 for a, b in zip(path, path[1:]))
    assert path[-1] == pytest.approx(out.value, rel=1e-12)


def test_planted_support():
    A, support = planted()
    out = greedy(A, 10)
    assert sorted(out.indices.tolist()) == support.tolist()


@pytest.mark.parametrize("fixture", ["airline_mtx", "kos_mtx"])
def test_real_corpus_at_least_threshold(fixture, request):
    S = sp.csr_array(scipy.io.mmread(request.getfixturevalue(fixture)))
    A = Gram.from_documents(S)
    eigen = top_eigenpairs(A, 2)
    out = greedy(A, 10)
    assert out.value >= threshold(A, 10, eigen=eigen).value
    assert out.value >= PUBLISHED[fixture] - 0.005
    assert out.value == pytest.approx(A.quadratic(dense_x(A, out)), rel=1e-10)


def test_deterministic_and_ties_to_the_lower_index():
    S = small_corpus()
    a = greedy(Gram.from_documents(S), 6)
    b = greedy(Gram.from_documents(S.copy()), 6)
    assert a.indices.tobytes() == b.indices.tobytes()
    assert a.weights.tobytes() == b.weights.tobytes()
    assert a.info == b.info
    out = greedy(Gram.from_dense(np.ones((8, 8)) + np.eye(8)), 3)
    assert out.info["order"] == [0, 1, 2]


def test_deflated_views():
    S = small_corpus()
    A = Gram.from_documents(S)
    first = greedy(A, 6)
    B = A.remove(first.indices)
    second = greedy(B, 6)
    assert not set(first.indices.tolist()) & set(second.indices.tolist())
    dense = greedy(Gram.from_dense(B.to_dense()).remove(first.indices), 6)
    assert second.info["order"] == dense.info["order"]
    P = A.project_out(dense_x(A, first))
    out = greedy(P, 6)
    assert out.info["order"] == greedy(Gram.from_dense(P.to_dense()), 6).info["order"]
    assert out.value == pytest.approx(P.quadratic(dense_x(P, out)), rel=1e-9)


def test_hundred_thousand_words():
    # a 100k-word vocabulary: columns of A come from S, A itself is never formed
    rng = np.random.RandomState(0)
    m, n = 20_000, 100_000
    nnz = 300_000
    rows = rng.randint(0, m, nnz)
    cols = np.minimum((rng.pareto(1.0, nnz) * 20).astype(np.int64), n - 1)
    S = sp.coo_array((np.ones(nnz), (rows, cols)), shape=(m, n)).tocsr()
    A = Gram.from_documents(S)
    out = greedy(A, 10)
    assert out.indices.size == 10
    path = out.info["path"]
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(path, path[1:]))
    sub = A.submatrix(out.indices)
    assert out.value == pytest.approx(np.linalg.eigvalsh(sub)[-1], rel=1e-10)
