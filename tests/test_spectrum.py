"""The iterative eigensolvers (n > DENSE_LIMIT) against LAPACK on the same matrices."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spca_cli.spectrum as spectrum
from spca_cli.matrix import Gram
from spca_cli.spectrum import DENSE_LIMIT, top_eigenpairs


def _dense_top(A, p):
    vals, vecs = np.linalg.eigh(A.to_dense())
    return vals[::-1][:p], vecs[:, ::-1][:, :p]


@pytest.fixture(scope="module")
def gram():
    rng = np.random.RandomState(0)
    n = DENSE_LIMIT + 300
    S = sp.random(3000, n, density=0.004, random_state=rng, format="csr")
    S.data[:] = 1.0
    S = S + sp.csr_matrix((np.ones(3000 * 3), (np.repeat(np.arange(3000), 3),
                                               rng.randint(0, 40, 3000 * 3))), shape=S.shape)
    return Gram.from_documents(sp.csr_array(S))


def _assert_matches_lapack(eigen, A, p, tol):
    vals, vecs = _dense_top(A, p)
    scale = vals[0]
    assert np.all(eigen.residuals <= tol * scale)
    # a Ritz value is within its residual of an eigenvalue (and far closer in practice)
    np.testing.assert_allclose(eigen.values, vals, rtol=0, atol=tol * scale)
    # vectors: same up to sign where the eigenvalues are apart
    overlap = np.abs(np.sum(eigen.vectors * vecs, axis=0))
    gaps = np.abs(np.diff(np.r_[np.inf, vals, 0.0]))
    apart = np.minimum(gaps[:-1], gaps[1:]) > 1e-3 * scale
    np.testing.assert_allclose(overlap[apart], 1.0, atol=1e-5)


@pytest.mark.parametrize("method", ["auto", "krylov", "arpack"])
@pytest.mark.parametrize("p", [1, 3, 6])
def test_iterative_paths_match_lapack(gram, p, method):
    eigen = top_eigenpairs(gram, p, method=method)
    assert eigen.method == ("krylov" if method == "auto" else method)
    _assert_matches_lapack(eigen, gram, p, 1e-8)
    assert eigen.products > 0


def test_tighter_tolerance_is_honoured(gram):
    eigen = top_eigenpairs(gram, 4, tol=1e-12)
    _assert_matches_lapack(eigen, gram, 4, 1e-12)
    assert eigen.products > top_eigenpairs(gram, 4, tol=1e-6).products


def test_deflated_views(gram):
    """Deflated views of the same A match LAPACK on their dense copies, warm-started or not."""
    first = top_eigenpairs(gram, 4)
    view = gram.remove(np.argsort(-np.abs(first.vectors[:, 0]))[:10])
    _assert_matches_lapack(top_eigenpairs(view, 3, start=first.basis), view, 3, 1e-8)
    _assert_matches_lapack(top_eigenpairs(view, 3), view, 3, 1e-8)
    projected = gram.project_out(first.vectors[:, 0])
    _assert_matches_lapack(top_eigenpairs(projected, 3, start=first.basis), projected, 3, 1e-8)


def test_warm_start_does_not_miss_an_eigenvector_the_old_block_cannot_see():
    """Two disjoint vocabularies: after most words of the first are removed, the deflated view's
    second eigenvalue has an eigenvector the first call's Ritz block is (numerically) orthogonal
    to. A start made of that block alone misses it with every residual small; the random
    columns added to a warm block find it."""
    def block(m, n, scale, seed):
        # (drawn with NumPy's generator: SciPy's sparse.random draws other entries across
        # versions, and the case needs this spectrum)
        rng = np.random.default_rng(seed)
        return sp.csr_array((rng.random((m, n)) < 0.02) * scale)

    S = sp.csr_array(sp.block_diag([block(2000, 1000, 1.0, 9), block(600, 1000, 0.52, 109)]))
    gram = Gram.from_documents(S)
    first = top_eigenpairs(gram, 6)
    view = gram.remove(np.argsort(-gram.diagonal()[:1000])[:600])
    warm = top_eigenpairs(view, 3, start=first.basis)
    vals, vecs = _dense_top(view, 3)
    np.testing.assert_allclose(warm.values, vals, rtol=0, atol=1e-8 * vals[0])
    # the case: the second eigenvector lies on the second vocabulary, which the old block
    # does not see
    assert vals[1] == pytest.approx(72.6489, abs=1e-4)
    assert np.linalg.norm(first.basis.T @ vecs[:, 1]) < 1e-6


def test_auto_takes_the_block_method_for_many_pairs(gram):
    """One Lanczos vector (ARPACK) can miss copies of a repeated eigenvalue; the block method
    serves any number of pairs, and knows all of them to be the leading ones."""
    eigen = top_eigenpairs(gram, 16)
    assert eigen.method == "krylov"
    assert eigen.known == 16
    _assert_matches_lapack(eigen, gram, 16, 1e-8)


def test_fallback_to_arpack_when_the_block_method_runs_out(gram, monkeypatch):
    monkeypatch.setattr(spectrum, "_MAX_PRODUCTS", 2)
    eigen = top_eigenpairs(gram, 3)
    assert eigen.method == "krylov+arpack"
    assert eigen.products > 2  # the block method's two are counted too
    _assert_matches_lapack(eigen, gram, 3, 1e-8)


def test_invariant_subspace_stops_early():
    """A rank-2 A: the second block is empty, the pairs are exact, and the third is zero."""
    rng = np.random.RandomState(1)
    S = sp.csr_array(rng.rand(50, 2) @ rng.rand(2, DENSE_LIMIT + 10))
    eigen = top_eigenpairs(Gram.from_documents(S), 3, method="krylov")
    vals = np.linalg.svd(S.toarray(), compute_uv=False) ** 2
    np.testing.assert_allclose(eigen.values[:2], vals[:2], rtol=1e-10)
    assert eigen.values[2] == pytest.approx(0.0, abs=1e-8 * vals[0])
    assert eigen.products <= 2


def test_dense_path_and_bad_arguments(gram):
    small = Gram.from_dense(np.diag([5.0, 4.0, 1.0]))
    eigen = top_eigenpairs(small, 2)
    assert eigen.method == "dense" and eigen.products == 0
    np.testing.assert_allclose(eigen.values, [5.0, 4.0])
    with pytest.raises(ValueError, match="method must be one of"):
        top_eigenpairs(small, 2, method="lobpcg")
    with pytest.raises(ValueError, match="start must have shape"):
        top_eigenpairs(gram, 2, start=np.ones((5, 2)))


def test_same_calls_same_bits(gram):
    a = top_eigenpairs(Gram.from_documents(gram.S), 3, random_state=5)
    b = top_eigenpairs(Gram.from_documents(gram.S), 3, random_state=5)
    assert np.array_equal(a.values, b.values) and np.array_equal(a.vectors, b.vectors)


def test_few_products_on_a_real_corpus(kos_mtx):
    """The eigen step's budget, about 20 sparse products with S per call, on the KOS matrix."""
    import scipy.io

    gram = Gram.from_documents(sp.csr_array(scipy.io.mmread(str(kos_mtx))))
    for p in (2, 4, 6):
        eigen = top_eigenpairs(gram, p)
        assert eigen.sparse_products <= 24, (p, eigen.products)
        assert np.all(eigen.residuals <= 1e-8 * eigen.values[0])
    assert eigen.values[0] == pytest.approx(128220.32, rel=1e-7)
    # the next component's view, started from the Ritz block: fewer products than cold
    view = gram.remove(np.argsort(-np.abs(eigen.vectors[:, 0]))[:10])
    warm = top_eigenpairs(view, 4, start=eigen.basis)
    cold = top_eigenpairs(view, 4)
    assert warm.products < cold.products
    np.testing.assert_allclose(warm.values, cold.values, rtol=0, atol=1e-8 * warm.values[0])


def test_dense_path_returns_every_pair_of_a_repeated_eigenvalue():
    """LAPACK's subset driver returned 2 of 4 pairs for I + 0.01 J (eigenvalue 1 repeated 29
    times); the dense path falls back to the full decomposition."""
    import numpy as np

    from spca_cli.matrix import Gram
    from spca_cli.spectrum import top_eigenpairs

    eigen = top_eigenpairs(Gram.from_dense(np.eye(30) + 0.01), 4)
    assert np.allclose(eigen.values, [1.3, 1.0, 1.0, 1.0])
    assert eigen.vectors.shape == (30, 4)
    assert np.allclose(eigen.vectors.T @ eigen.vectors, np.eye(4))
