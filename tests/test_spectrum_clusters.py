"""The eigen step on clustered spectra, the dense-path rule, and the certificate of a
view restricted from the last one."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_info

import spca_cli.spectrum as spectrum
from spca_cli import bounds
from spca_cli.matrix import Gram
from spca_cli.spectrum import DENSE_LIMIT, DENSE_MATRIX_LIMIT, top_eigenpairs


def _clustered_documents(topics=20, words=900, documents=6000, seed=0):
    """A frequent head word plus ``topics`` disjoint 10-word topics of equal strength over a
    thin background: after the head, A = S^T S has a cluster of ``topics`` near-equal
    eigenvalues (the spectrum shape of the issue's 20-topic tweets)."""
    rng = np.random.RandomState(seed)
    rows, cols = [], []
    for d in range(documents):
        t = rng.randint(topics)
        group = 1 + 10 * t + np.flatnonzero(rng.rand(10) < 0.8)
        noise = rng.randint(1 + 10 * topics, words, size=4)
        chosen = np.unique(np.r_[0, group, noise])
        rows.append(np.full(chosen.size, d))
        cols.append(chosen)
    S = sp.csr_array((np.ones(sum(map(len, cols))), (np.concatenate(rows), np.concatenate(cols))),
                     shape=(documents, words))
    return Gram.from_documents(S)


def _lapack(A, p):
    vals, vecs = np.linalg.eigh(A.to_dense())
    return vals[::-1][:p], vecs[:, ::-1][:, :p]


def test_a_cluster_is_held_by_a_larger_basis_within_100_sparse_products():
    gram = _clustered_documents()
    first = top_eigenpairs(gram, 6, tol=1e-8)
    view = gram.remove(np.arange(11))  # the head word and the first topic are used
    vals, _ = _lapack(view, 4)
    assert vals[1] / vals[3] < 1.1  # the wanted pairs sit in a cluster
    for start in (None, first.basis):
        eigen = top_eigenpairs(view, 3, tol=1e-8, start=start)
        assert eigen.method == "krylov"
        assert eigen.sparse_products <= 100, eigen.sparse_products
        # the basis grew beyond 6 blocks to hold the cluster; the block multiplied did not
        assert eigen.basis_size > spectrum._MAX_BLOCKS * (3 + spectrum._EXTRA)
        assert eigen.block_width <= 3 + 2 * spectrum._EXTRA  # a warm start's 3 random columns
        assert np.all(eigen.residuals <= 1e-8 * eigen.values[0])
        np.testing.assert_allclose(eigen.values, vals[:3], rtol=0, atol=1e-8 * vals[0])


def test_without_growing_the_basis_the_cluster_costs_more_products(monkeypatch):
    gram = _clustered_documents()
    view = gram.remove(np.arange(11))
    grown = top_eigenpairs(view, 3, tol=1e-8)
    monkeypatch.setattr(spectrum, "_MAX_HOLD", 3 + spectrum._EXTRA)
    fixed = top_eigenpairs(view, 3, tol=1e-8)
    assert fixed.basis_size == spectrum._MAX_BLOCKS * (3 + spectrum._EXTRA)
    assert fixed.products > grown.products


def test_arpack_is_the_last_resort_and_says_so(monkeypatch):
    gram = _clustered_documents()
    monkeypatch.setattr(spectrum, "_MAX_PRODUCTS", 2)
    eigen = top_eigenpairs(gram.remove(np.arange(11)), 3, tol=1e-8)
    assert eigen.method == "krylov+arpack" and eigen.products > 2


def test_topics_ask_for_the_documented_tolerance():
    gram = _clustered_documents()
    eigen = top_eigenpairs(gram, 3, tol=spectrum.TOPICS_TOL)
    vals, _ = _lapack(gram, 3)
    assert np.all(eigen.residuals <= spectrum.TOPICS_TOL * eigen.values[0])
    # Ritz values are far closer than the residuals: r^2 / gap
    np.testing.assert_allclose(eigen.values, vals, rtol=1e-8)


def test_dense_rule_by_input_and_size(monkeypatch):
    rng = np.random.RandomState(0)
    S = sp.csr_array((rng.rand(400, DENSE_LIMIT + 1) < 0.05).astype(float))
    assert top_eigenpairs(Gram.from_documents(S), 3).method == "krylov"
    assert top_eigenpairs(Gram.from_documents(S[:, :DENSE_LIMIT]), 3).method == "dense"
    M = rng.rand(DENSE_LIMIT + 50, 20)
    assert top_eigenpairs(Gram.from_dense(M @ M.T), 3).method == "dense"
    assert DENSE_MATRIX_LIMIT > DENSE_LIMIT
    seen = []
    real = spectrum.scipy.linalg.eigh

    def eigh(*args, **kwargs):
        seen.append(max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"))
        return real(*args, **kwargs)

    monkeypatch.setattr(spectrum.scipy.linalg, "eigh", eigh)
    top_eigenpairs(Gram.from_dense(M @ M.T), 3)
    assert seen == [1]  # LAPACK on one BLAS thread: no spin-waiting on busy cores


def test_certificate_restricted_from_the_last_view_matches_a_fresh_one(kos_mtx):
    import scipy.io

    gram = Gram.from_documents(sp.csr_array(scipy.io.mmread(str(kos_mtx))))
    k = 5
    first = bounds.row_certificate(gram, k)
    used = np.argsort(-gram.diagonal())[:k]
    view = gram.remove(used)
    warm = bounds.row_certificate(view, k, previous=first)
    cold = bounds.row_certificate(view, k)
    np.testing.assert_array_equal(warm.model.words, cold.model.words)
    np.testing.assert_array_equal(warm.model.diag, cold.model.diag)
    # a valid bound: above lambda_max of the view's best diagonal support
    best = np.argsort(-view.diagonal())[:k]
    assert warm.bound.value >= np.linalg.eigvalsh(view.submatrix(best))[-1]
    assert warm.bound.value == pytest.approx(cold.bound.value, rel=2e-3)
