"""The iterative eigensolver (ARPACK, n > DENSE_LIMIT) against LAPACK on the same matrices."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

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


@pytest.mark.parametrize("p", [1, 3, 6])
def test_arpack_matches_lapack(gram, p):
    eigen = top_eigenpairs(gram, p)
    vals, vecs = _dense_top(gram, p)
    scale = vals[0]
    np.testing.assert_allclose(eigen.values, vals, rtol=0, atol=1e-9 * scale)
    assert np.all(eigen.residuals <= 1e-9 * scale)
    assert 0 < eigen.products <= 400
    # vectors: same up to sign where the eigenvalues are apart
    overlap = np.abs(np.sum(eigen.vectors * vecs, axis=0))
    gaps = np.abs(np.diff(np.r_[np.inf, vals, 0.0]))
    apart = np.minimum(gaps[:-1], gaps[1:]) > 1e-3 * scale
    np.testing.assert_allclose(overlap[apart], 1.0, atol=1e-6)


def test_deflated_views(gram):
    """Deflated views of the same A match LAPACK on their dense copies."""
    first = top_eigenpairs(gram, 4)
    view = gram.remove(np.argsort(-np.abs(first.vectors[:, 0]))[:10])
    warm = top_eigenpairs(view, 3)
    vals, _ = _dense_top(view, 3)
    np.testing.assert_allclose(warm.values, vals, rtol=0, atol=1e-9 * vals[0])
    projected = gram.project_out(first.vectors[:, 0])
    eigen = top_eigenpairs(projected, 3)
    vals, _ = _dense_top(projected, 3)
    np.testing.assert_allclose(eigen.values, vals, rtol=0, atol=1e-9 * vals[0])


def test_same_calls_same_bits(gram):
    a = top_eigenpairs(Gram.from_documents(gram.S), 3, random_state=5)
    b = top_eigenpairs(Gram.from_documents(gram.S), 3, random_state=5)
    assert np.array_equal(a.values, b.values) and np.array_equal(a.vectors, b.vectors)


def test_few_products_on_a_real_corpus(kos_mtx):
    import scipy.io

    gram = Gram.from_documents(sp.csr_array(scipy.io.mmread(str(kos_mtx))))
    for p in (2, 4, 6):
        eigen = top_eigenpairs(gram, p)
        assert eigen.products <= 60, (p, eigen.products)
        assert np.all(eigen.residuals <= 1e-9 * eigen.values[0])
    assert eigen.values[0] == pytest.approx(128220.32, rel=1e-7)
