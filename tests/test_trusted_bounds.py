"""A bound below what the topics attain proves that the eigenpairs behind it missed an
eigenvalue; the certificate then rests on the bounds that use none (bounds.trusted).

ARPACK, the block method's last resort, runs one Lanczos vector and finds one copy of a
repeated eigenvalue. On a corpus whose word counts repeat (998 three times) the block method
from a random block gave up after 45 products, ARPACK reported 998 twice, and the total bound of
three topics (a Ky Fan sum) came out at 3,010 against the 3,016 they attain: run_topics raised a
RuntimeError. Matrices are generated: the failure is a property of the eigensolver."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spca_cli.topics as topics_module
from spca_cli import bounds
from spca_cli.matrix import Gram
from spca_cli.spectrum import Eigen
from spca_cli.topics import run_topics
from test_topics import corpus_input, matrix_input


def test_trusted_keeps_bounds_that_hold():
    bound_list = [(12.0, "lambda_1"), (15.0, bounds.ROW_BOUND_SOURCE)]
    assert bounds.trusted(bound_list, 11.0) == (bound_list, False)


def test_trusted_drops_the_eigenpair_bounds_below_a_value_attained():
    bound_list = [(9.0, "sum of top-3 eigenvalues"), (9.5, "rank-2 split: sketch part + "
                  "spectral tail"), (13.0, "top-9 diagonal"),
                  (12.0, f"{bounds.ROW_BOUND_SOURCE} (3 largest ratios)")]
    kept, dropped = bounds.trusted(bound_list, 10.0)
    assert dropped
    assert kept == [(13.0, "top-9 diagonal"), (12.0, f"{bounds.ROW_BOUND_SOURCE} (3 largest ratios)")]


def test_trusted_with_nothing_else_keeps_the_list():
    """No bound without eigenpairs: nothing to fall back on, the list is kept (and
    certified_ratio then says the bound is below the value)."""
    bound_list = [(9.0, "lambda_1")]
    assert bounds.trusted(bound_list, 10.0) == (bound_list, False)


def _repeated_counts_corpus(seed, singles=300, bulk=300, spam_documents=340, k=3):
    """Words each alone in their documents (random counts 600-999, so counts repeat: with seed 0
    998 three times), three words that always occur together in 340 documents (eigenvalue
    1,020), and 3-word blocks below (counts up to 280): A is block diagonal, and three disjoint
    3-word topics attain 1,020 + 998 + 998 at best."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(600, 1000, singles)
    counts[:3] = 990
    blocks = [spam_documents] + list(rng.integers(0, 281, bulk))
    words, documents, d = [], [], 0
    for w, c in enumerate(counts):
        words.append(np.full(c, w))
        documents.append(np.arange(d, d + c))
        d += c
    w0 = singles
    for c in blocks:
        words.append(np.tile(np.arange(w0, w0 + k), c))
        documents.append(np.repeat(np.arange(d, d + c), k))
        d, w0 = d + c, w0 + k
    words, documents = np.concatenate(words), np.concatenate(documents)
    P = rng.permutation(w0)
    return sp.csr_array((np.ones(words.size), (documents, P[words])), shape=(d, w0))


def test_arpack_missing_a_copy_leaves_an_honest_total(monkeypatch):
    """From a random block (a backend that keeps no columns) the first call falls back to
    ARPACK; whatever it reports, the run certifies every topic and the total with bounds at or
    above the best the topics can attain."""
    monkeypatch.setattr(Gram, "column_room", lambda self: 0)
    result = run_topics(corpus_input(_repeated_counts_corpus(0)), solver="spannogram", k=3,
                        n_components=3, rank=2, eigensolver="krylov")
    assert "arpack" in result.eigensolver["method"]
    assert result.total_explained_variance == pytest.approx(3016.0)
    assert result.total_bound.value >= 3016.0
    for topic in result.components:
        assert topic.upper_bound >= topic.problem_value * (1 - 1e-9)


def test_a_missed_copy_gives_a_note_and_an_eigen_free_certificate(monkeypatch):
    """The first eigen step made to lose one copy of a repeated eigenvalue (a diagonal matrix:
    6 three times): the total bound of three 1-word topics that rested on the Ky Fan sum now
    rests on a bound that uses no eigenpair, at or above the 18 they attain, with a note."""
    A = np.diag([6.0, 6.0, 6.0, 3.0, 2.0, 1.0] + [0.5] * 20)
    original = topics_module.top_eigenpairs

    def losing_a_copy(G, p, **kw):
        e = original(G, p, **kw)
        if not G.is_deflated:  # the first call: report 6, 6, 3, 2 instead of 6, 6, 6, 3
            values = np.concatenate([e.values[:2], e.values[3:], [e.values[-1]]])
            return Eigen(values=values, vectors=e.vectors, residuals=e.residuals * 0.0,
                         products=e.products, method=e.method, basis=e.basis)
        return e

    monkeypatch.setattr(topics_module, "top_eigenpairs", losing_a_copy)
    result = run_topics(matrix_input(A), solver="spannogram", k=1, n_components=3, rank=1,
                        eigensolver="krylov")
    assert result.total_explained_variance == pytest.approx(18.0)
    assert result.total_bound.value >= 18.0 * (1 - 1e-12)
    assert not result.total_bound.source.startswith("sum of top")
    assert any(note.startswith("the total: a bound from the eigenpairs was below")
               for note in result.notes)
