"""The first eigen step of a topics run starts from the certificate's exact rows
(``coordinates`` of spectrum.top_eigenpairs): Rayleigh-Ritz on those words' unit vectors, read
from the columns of A the certificate forms anyway, with no product.

What must hold: the pairs are as accurate as from a random block (each within its tolerance,
Ritz values never above the eigenvalues and within their residuals of them), also when the
words span an invariant subspace that misses the leading eigenvectors; a run's topics and
certificates do not change on real text; the columns are formed once; and the start is used
only for words the column cache keeps."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spca_cli.topics as topics_module
from spca_cli import bounds
from spca_cli.backend import LocalBackend
from spca_cli.corpus.read import load_input
from spca_cli.matrix import Gram
from spca_cli.spectrum import TOPICS_TOL, first_call_tolerances, top_eigenpairs
from spca_cli.topics import input_gram, run_topics


def test_first_exact_words_are_the_first_certificates_rows(kos_mtx):
    """The words the start uses are exactly the exact rows of the first certificate's model,
    largest diagonal first."""
    A, _, _ = input_gram(load_input(kos_mtx))
    words = bounds.first_exact_words(A)
    model = bounds.RowModel.of(A, exact_rows=bounds.EXACT_ROWS)
    assert words.size == bounds.EXACT_ROWS
    assert sorted(words.tolist()) == model.words[model.hrow].tolist()
    assert np.all(np.diff(A.diagonal()[words]) <= 0)


def test_kos_pairs_from_the_exact_rows(kos_mtx):
    """KOS (6,906 words, real counts), the first call of a 5-topic run: from the 256 exact rows
    each pair meets its tolerance, every value is within its residual of ARPACK's at 1e-10 and
    never above it, and fewer block products are needed than from a random block."""
    A, _, _ = input_gram(load_input(kos_mtx))
    tol = first_call_tolerances(6, 3)
    words = bounds.first_exact_words(A)
    start = top_eigenpairs(A, 6, tol=tol, method="krylov", coordinates=words)
    cold = top_eigenpairs(A, 6, tol=tol, method="krylov")
    exact = top_eigenpairs(A, 6, tol=1e-10, method="arpack")
    theta1 = exact.values[0]
    assert np.all(start.residuals <= tol * start.values[0])
    assert np.all(start.values <= exact.values + 1e-9 * theta1)
    assert np.all(np.abs(start.values - exact.values) <= start.residuals + 1e-9 * theta1)
    assert np.abs(start.vectors.T @ start.vectors - np.eye(6)).max() < 1e-10
    assert start.products < cold.products


def _block_matrix(rng, n, strong, nonnegative):
    """A PSD matrix whose first ``strong`` words form a block with the leading eigenvalues, the
    other words a weaker block of their own (no pair across the blocks)."""
    def psd(size, scale):
        V = rng.random((size, size)) ** 3 if nonnegative else rng.standard_normal((size, size))
        return scale * (V @ V.T) / size

    A = np.zeros((n, n))
    A[:strong, :strong] = psd(strong, 10.0)
    A[strong:, strong:] = psd(n - strong, 1.0)
    P = rng.permutation(n)
    return A[np.ix_(P, P)], P


@pytest.mark.parametrize("nonnegative", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_an_invariant_block_without_the_leading_eigenvectors(seed, nonnegative):
    """The start's words span an exact invariant subspace (the weak block: its Ritz pairs have
    zero residuals) and the leading eigenvectors lie on the other words: the call still finds
    the leading eigenvalues (the first product's random columns reach them), as LAPACK does."""
    rng = np.random.default_rng(seed)
    n, strong = 60, 8
    A, P = _block_matrix(rng, n, strong, nonnegative)
    weak_words = np.flatnonzero(P >= strong)  # the rows of the weak block after permuting
    e = top_eigenpairs(Gram.from_dense(A), 4, tol=TOPICS_TOL, method="krylov",
                       coordinates=weak_words, random_state=seed)
    lam = np.linalg.eigvalsh(A)[::-1][:4]
    np.testing.assert_allclose(e.values, lam, rtol=1e-8)
    assert np.all(e.residuals <= TOPICS_TOL * e.values[0])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(12, 40), words=st.integers(1, 40),
       p=st.integers(1, 6), nonnegative=st.booleans())
def test_any_coordinates_give_honest_pairs(seed, n, words, p, nonnegative):
    """Random PSD matrices (low rank plus noise, nonnegative or mixed-sign) and any set of
    start words: Ritz values never above the eigenvalues, each within its residual of one,
    orthonormal vectors, residuals within tolerance."""
    rng = np.random.default_rng(seed)
    V = rng.random((n, 4)) if nonnegative else rng.standard_normal((n, 4))
    V *= [6.0, 4.0, 3.0, 2.0]
    N = rng.random((n, n)) if nonnegative else rng.standard_normal((n, n))
    A = V @ V.T + 0.1 * (N @ N.T) / n
    A = 0.5 * (A + A.T)
    chosen = rng.choice(n, size=min(words, n), replace=False)
    e = top_eigenpairs(Gram.from_dense(A), p, tol=1e-6, method="krylov", coordinates=chosen,
                       random_state=seed)
    lam = np.linalg.eigvalsh(A)[::-1][:p]
    scale = lam[0]
    assert np.all(e.values <= lam + 1e-10 * scale)
    assert np.all(np.abs(e.values - lam) <= e.residuals + 1e-10 * scale)
    assert np.all(e.residuals <= 1e-6 * e.values[0] * (1 + 1e-12))
    assert np.abs(e.vectors.T @ e.vectors - np.eye(p)).max() < 1e-10


def test_small_matrices_whose_basis_fills_every_dimension():
    """300 random matrices of 12-40 words, any start words, 1-6 pairs: the start plus the
    probe's blocks can fill all n dimensions before the probe's last product; a thick restart
    then ended the call (the basis invariant) with the Ritz vectors of the basis before it, and
    carrying them over raised a ValueError (81 of 3,000 such calls). Every call now returns
    honest pairs."""
    for seed in range(300):
        rng = np.random.default_rng(seed)
        n, words, p = int(rng.integers(12, 41)), int(rng.integers(1, 41)), int(rng.integers(1, 7))
        nonnegative = bool(rng.integers(2))
        V = (rng.random((n, 4)) if nonnegative else rng.standard_normal((n, 4))) * [6, 4, 3, 2]
        N = rng.random((n, n)) if nonnegative else rng.standard_normal((n, n))
        A = V @ V.T + 0.1 * (N @ N.T) / n
        A = 0.5 * (A + A.T)
        chosen = rng.choice(n, size=min(words, n), replace=False)
        e = top_eigenpairs(Gram.from_dense(A), p, tol=1e-6, method="krylov",
                           coordinates=chosen, random_state=seed)
        lam = np.linalg.eigvalsh(A)[::-1][:p]
        assert np.all(e.values <= lam + 1e-10 * lam[0]), seed
        assert np.all(np.abs(e.values - lam) <= e.residuals + 1e-10 * lam[0]), seed
        assert e.carry[0].shape == e.carry[1].shape, seed


@pytest.fixture(scope="module")
def airline_runs(request):
    """Five spannogram topics of the real airline tweets, with the start and (a backend that
    keeps no columns) without it; the columns each run forms are counted."""
    from conftest import shared_file

    corpus = load_input(str(shared_file("twitter_us_airline_sentiment.csv")))
    runs = {}
    for mode in ("coordinates", "random block"):
        patch = pytest.MonkeyPatch()
        formed = []
        original = LocalBackend.rows

        def counting(self, idx, *args, **kwargs):
            formed.extend(np.asarray(idx).tolist())
            return original(self, idx, *args, **kwargs)

        patch.setattr(LocalBackend, "rows", counting)
        if mode == "random block":
            patch.setattr(Gram, "column_room", lambda self: 0)
        try:
            runs[mode] = (run_topics(corpus, solver="spannogram", k=10, n_components=5, rank=2,
                                     eigensolver="krylov"), formed)
        finally:
            patch.undo()
    return runs


def test_airline_topics_and_certificates_do_not_change(airline_runs):
    """On the real airline tweets the start changes no topic, bound or certified ratio, and the
    first call needs fewer sparse products."""
    started, _ = airline_runs["coordinates"]
    cold, _ = airline_runs["random block"]
    for a, b in zip(started.components, cold.components):
        assert a.words == b.words
        assert a.upper_bound == pytest.approx(b.upper_bound, rel=1e-9)
        assert a.certified_ratio == pytest.approx(b.certified_ratio, rel=1e-9)
    assert started.eigensolver["sparse_products"][0] < cold.eigensolver["sparse_products"][0]
    assert started.components[0].words[:3] == cold.components[0].words[:3]
    np.testing.assert_allclose(started.eigenvalues, cold.eigenvalues, rtol=1e-4)


def test_airline_columns_are_formed_once(airline_runs):
    """The start forms the exact rows' columns and the certificate reads them from the cache:
    no word's column is formed twice in the run."""
    _, formed = airline_runs["coordinates"]
    assert len(formed) == len(set(formed))
    assert len(formed) >= bounds.EXACT_ROWS


def test_only_words_the_cache_keeps(monkeypatch):
    """With room for 40 more columns, the first call starts from the 40 exact words of largest
    diagonal (the others would be formed twice: once for the start, once for the certificate)."""
    rng = np.random.default_rng(3)
    S = (rng.random((400, 500)) < 0.02).astype(float)
    corpus_A = Gram.from_documents(S)
    monkeypatch.setattr(Gram, "column_room", lambda self: 40)
    seen = {}
    original = topics_module.top_eigenpairs

    def spy(A, p, **kw):
        if "first" not in seen:
            seen["first"] = kw.get("coordinates")
        return original(A, p, **kw)

    monkeypatch.setattr(topics_module, "top_eigenpairs", spy)
    monkeypatch.setattr(topics_module, "input_gram", lambda data: (corpus_A, [str(i) for i in
                                                                              range(500)], {}))
    run_topics(None, solver="spannogram", k=3, n_components=2, rank=2, eigensolver="krylov")
    assert seen["first"].tolist() == bounds.first_exact_words(corpus_A)[:40].tolist()
