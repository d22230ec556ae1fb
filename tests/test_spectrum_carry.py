"""Ritz vectors carried from one remove-deflated view to the next (``previous=`` of
``top_eigenpairs``, ``Gram.carried``): the same eigenpairs as a fresh call, honest residuals,
and never an eigenvector missed because the carried vectors do not reach it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from spca_cli.matrix import Gram
from spca_cli.spectrum import CANDIDATE_TOL, top_eigenpairs
from test_spectrum_clusters import _clustered_documents


def _lapack(A, p):
    vals = np.linalg.eigvalsh(A.to_dense())
    return vals[::-1][:p]


def _true_residuals(A, eigen):
    V = eigen.vectors
    return np.linalg.norm(A.matmat(V) - V * eigen.values, axis=0)


def _clustered(seed=0):
    return _clustered_documents(topics=12, words=600, documents=4000, seed=seed)


@pytest.mark.parametrize("tol", [1e-8, CANDIDATE_TOL])
def test_a_carried_basis_gives_the_eigenpairs_of_the_next_view(tol):
    A = _clustered()
    first = top_eigenpairs(A, 6, tol=1e-5, method="krylov")
    assert first.carry is not None and first.carry[0].shape[1] == 2 * (6 + 3)
    view = A
    for removed in (np.arange(0, 11), np.arange(11, 21), np.arange(21, 31)):
        nxt = view.remove(removed)
        eigen = top_eigenpairs(nxt, 3, tol=tol, method="krylov", start=first.basis,
                               previous=(view, first))
        assert eigen.products >= 1  # the random columns are always multiplied once
        truth = _lapack(nxt, 3)
        lam1 = eigen.values[0]
        # the residuals reported are the true ones (the images were never multiplied again)
        np.testing.assert_allclose(eigen.residuals, _true_residuals(nxt, eigen),
                                   rtol=0, atol=1e-10 * lam1)
        assert np.all(eigen.residuals <= tol * lam1)
        # every eigenvalue bound adds the residual to the Ritz value
        assert np.all(eigen.values + eigen.residuals >= truth - 1e-9 * lam1)
        assert np.all(np.abs(eigen.values - truth) <= eigen.residuals + 1e-9 * lam1)
        view, first = nxt, eigen


def test_the_carried_basis_saves_products_on_a_cluster():
    A = _clustered()
    first = top_eigenpairs(A, 6, tol=1e-5, method="krylov")
    nxt = A.remove(np.arange(0, 11))
    warm = top_eigenpairs(nxt, 3, tol=CANDIDATE_TOL, method="krylov", start=first.basis)
    carried = top_eigenpairs(nxt, 3, tol=CANDIDATE_TOL, method="krylov", start=first.basis,
                             previous=(A, first))
    assert carried.products < warm.products
    np.testing.assert_allclose(carried.values, warm.values,
                               atol=CANDIDATE_TOL * warm.values[0] * 3)


def test_a_vocabulary_the_carried_vectors_never_touched_is_still_found():
    # two disjoint vocabularies: every carried vector lives in the first; removing its strong
    # words makes the second hold the top eigenvalue, which only the random columns reach
    rng = np.random.RandomState(1)
    blocks = []
    for strength, words in ((3.0, 40), (2.0, 40)):
        M = rng.rand(300, words) < 0.15
        blocks.append(M * strength)
    S = sp.csr_array(sp.block_diag([sp.csr_array(blocks[0]), sp.csr_array(blocks[1])]))
    A = Gram.from_documents(S)
    first = top_eigenpairs(A, 3, tol=1e-8, method="krylov")
    # carried: eigenvectors of the first vocabulary alone, exactly nothing of the second
    _, vecs = np.linalg.eigh(A.to_dense()[:40, :40])
    V = np.zeros((A.n, 12))
    V[:40] = vecs[:, ::-1][:, :12]
    first = dataclasses.replace(first, carry=(V, A.matmat(V)))
    assert np.argmax(np.abs(first.vectors[:, 0])) < 40  # the first vocabulary leads
    nxt = A.remove(np.arange(0, 38))  # all but two words of the first vocabulary
    assert nxt.carried(A, *first.carry)[0].any()  # the carried vectors keep those two
    # now the second vocabulary leads, far above what is left of the first
    assert _lapack(nxt, 1)[0] > 2 * _lapack(nxt.remove(np.arange(40, 80)), 1)[0]
    eigen = top_eigenpairs(nxt, 3, tol=1e-8, method="krylov", start=first.basis,
                           previous=(A, first))
    np.testing.assert_allclose(eigen.values, _lapack(nxt, 3), rtol=1e-8)


def test_unconfirmed_pairs_are_the_carried_ones_with_true_residuals_and_no_product():
    A = _clustered()
    first = top_eigenpairs(A, 6, tol=1e-5, method="krylov")
    weight = np.abs(first.vectors[:, :3]).max(axis=1)
    # the words that carry the leading eigenvectors removed: the carried pairs are far from
    # converged, and come back as they are
    for removed in (np.argsort(weight, kind="stable")[:10],
                    np.argsort(-weight, kind="stable")[:10]):
        view = A.remove(removed)
        eigen = top_eigenpairs(view, 3, tol=CANDIDATE_TOL, method="krylov", start=first.basis,
                               previous=(A, first), confirm=False)
        lam1 = eigen.values[0]
        assert eigen.products == 0 and not eigen.confirmed and eigen.method == "krylov"
        # the residuals reported are the true ones (the images are carried exactly), and
        # every eigenvalue bound adds them to the Ritz value
        np.testing.assert_allclose(eigen.residuals, _true_residuals(view, eigen),
                                   rtol=0, atol=1e-10 * lam1)
        assert np.all(eigen.ceilings >= _lapack(view, 3) - 1e-9 * lam1)
        # asked again from them, the random columns are multiplied and the pairs converge
        again = top_eigenpairs(view, 3, tol=CANDIDATE_TOL, method="krylov", start=eigen.basis,
                               previous=(view, eigen))
        assert again.confirmed and again.products >= 1
        assert np.all(again.residuals <= CANDIDATE_TOL * again.values[0])
        np.testing.assert_array_less(np.abs(again.values - _lapack(view, 3)),
                                     again.residuals + 1e-9 * lam1)
    # removing the strong words leaves pairs well above the tolerance: a guess indeed
    assert np.max(eigen.residuals) > CANDIDATE_TOL * lam1


def test_unconfirmed_pairs_may_miss_a_vocabulary_which_confirming_them_finds():
    # two disjoint vocabularies, the carry on the first alone (as in the test above): with no
    # product the pairs stay on what is left of the first, below the second's eigenvalue;
    # asked again with confirm, the random columns find it
    rng = np.random.RandomState(1)
    blocks = [(rng.rand(300, 40) < 0.15) * strength for strength in (3.0, 2.0)]
    A = Gram.from_documents(sp.csr_array(sp.block_diag([sp.csr_array(b) for b in blocks])))
    first = top_eigenpairs(A, 3, tol=1e-8, method="krylov")
    _, vecs = np.linalg.eigh(A.to_dense()[:40, :40])
    V = np.zeros((A.n, 12))
    V[:40] = vecs[:, ::-1][:, :12]
    first = dataclasses.replace(first, carry=(V, A.matmat(V)))
    nxt = A.remove(np.arange(0, 38))
    truth = _lapack(nxt, 3)
    missed = top_eigenpairs(nxt, 3, tol=1e-8, method="krylov", start=first.basis,
                            previous=(A, first), confirm=False)
    assert missed.products == 0 and not missed.confirmed
    assert missed.values[0] < 0.5 * truth[0]
    found = top_eigenpairs(nxt, 3, tol=1e-8, method="krylov", start=missed.basis,
                           previous=(nxt, missed))
    assert found.confirmed
    np.testing.assert_allclose(found.values, truth, rtol=1e-8)


def test_no_carry_across_a_projection_or_a_different_matrix():
    A = _clustered()
    first = top_eigenpairs(A, 4, tol=1e-6, method="krylov")
    x = np.zeros(A.n)
    x[:10] = 1.0
    assert A.project_out(x).carried(A, *first.carry) is None
    assert _clustered(seed=3).carried(A, *first.carry) is None
    assert A.carried(A.remove([5]), *first.carry) is None  # words came back: not a removal
    V, AV = A.remove([5]).carried(A, *first.carry)
    assert np.all(V[5] == 0) and np.all(AV[5] == 0)
    # and a view made by projection still takes the warm start
    eigen = top_eigenpairs(A.project_out(x), 3, tol=1e-8, method="krylov", start=first.basis,
                           previous=(A, first))
    np.testing.assert_allclose(eigen.values, _lapack(A.project_out(x), 3), rtol=1e-8)


def test_a_view_far_weaker_than_the_carrying_one_gets_its_residuals_from_a_product(monkeypatch):
    # a word 1e6 times stronger than the rest, removed: the carried images hold rounding of its
    # size, so the residuals of the next view come from one product of the 3 pairs (counted)
    widths = []
    original = Gram.matmat

    def counting(self, V, out=None):
        widths.append(V.shape[1])
        return original(self, V, out=out)

    rng = np.random.default_rng(2)
    U = rng.standard_normal((80, 80))
    w = np.full(80, 1e-6)
    w[:2] = 1.0
    A = Gram.from_dense(U @ U.T / 80 + 1e6 * np.outer(w, w))
    first = top_eigenpairs(A, 3, tol=1e-8, method="krylov")
    view = A.remove([0, 1])
    assert first.values[0] > 1e3 * _lapack(view, 1)[0]
    monkeypatch.setattr(Gram, "matmat", counting)
    carried = top_eigenpairs(view, 3, tol=1e-8, method="krylov", start=first.basis,
                             previous=(A, first))
    assert len(widths) == carried.products and widths[-1] == 3
    np.testing.assert_allclose(carried.residuals, _true_residuals(view, carried),
                               rtol=0, atol=1e-13 * carried.values[0])
    np.testing.assert_allclose(carried.values, _lapack(view, 3), rtol=1e-8)
    # on an ordinary pair of views (text: theta_1 falls by 4-6 times) no extra product
    B = _clustered()
    first = top_eigenpairs(B, 6, tol=1e-5, method="krylov")
    widths.clear()
    eigen = top_eigenpairs(B.remove(np.arange(11)), 3, tol=CANDIDATE_TOL, method="krylov",
                           start=first.basis, previous=(B, first))
    assert first.values[0] < 10 * eigen.values[0] and len(widths) == eigen.products
