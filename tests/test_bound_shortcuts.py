"""Every shortcut of the certificate (exact rows stopped early on their sorted prefixes, the
weight iteration stopped by its projected gain, every row made exact at once) gives a bound at
or above the one computed the long way, and at or above the optimum (brute force), on random
matrices of both signs and on the bundled real sample."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from spca_cli import bounds
from spca_cli.corpus import load_input
from spca_cli.corpus.core import input_gram
from spca_cli.matrix import Gram
from conftest import REPO

KOS_SAMPLE = REPO / "data_samples" / "docword.kos-sample.txt.gz"


def _brute(A, k):
    D = A.to_dense()
    return max(float(np.linalg.eigvalsh(D[np.ix_(I, I)])[-1])
               for I in itertools.combinations(range(A.n), k))


def _gram(rng, kind):
    if kind == "counts":
        S = sp.csr_array(rng.poisson(0.4, (80, 13)).astype(float))
        return Gram.from_documents(S)
    B = rng.standard_normal((13, 6))
    return Gram.from_dense(B @ B.T)


@pytest.mark.parametrize("kind", ["counts", "mixed"])
@pytest.mark.parametrize("seed", range(10))
def test_early_stopped_iteration_bounds_at_or_above_the_long_one(kind, seed):
    rng = np.random.default_rng(seed)
    A = _gram(rng, kind)
    k = int(rng.integers(2, 5))
    model = bounds.RowModel.of(A, exact_rows=int(rng.integers(1, A.n + 1)))
    short = bounds.weighted_row_bound(model, k, rtol=1e-2)
    long = bounds.weighted_row_bound(model, k, rtol=0.0, max_iter=400)
    optimum = _brute(A, k)
    assert short.value >= long.value * (1 - 1e-12)
    assert long.value >= optimum * (1 - 1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_every_row_exact_at_once_bounds_at_or_above_the_optimum(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    A = _gram(rng, "counts")
    k = 3
    monkeypatch.setattr(bounds, "EXACT_ROWS", 2)
    at_once = bounds.row_certificate(A, k).bound.value
    monkeypatch.setattr(bounds, "_EXACT_ENTRIES", A.n * (A.n - 1))
    monkeypatch.setattr(bounds, "_ESCALATION_ENTRIES", (A.n * 6, A.n * (A.n - 1)))
    in_steps = bounds.row_certificate(A, k).bound.value
    optimum = _brute(A, k)
    assert at_once >= optimum * (1 - 1e-12) and in_steps >= optimum * (1 - 1e-12)


def test_real_sample_certificate_with_and_without_prefixes_is_the_same(monkeypatch):
    """The bundled KOS sample (5,125 active words, every row exact): the prefixes change how
    many entries a weight step reads, not the bound."""
    A = input_gram(load_input(str(KOS_SAMPLE))).gram
    _with_and_without_prefixes(monkeypatch, A, 1e-4, ("_PREFIX_ENTRIES", "_SPARSE_PREFIX_ENTRIES"))


def _with_and_without_prefixes(monkeypatch, A, rtol, switches):
    """The certificate of every row of A with its prefixes and with the ``switches`` (the
    sizes from which a model sorts them) turned off: the same iterations and bound."""
    model = bounds.RowModel.of(A, exact_rows=A.n)
    assert model.prefixes is not None
    fast = bounds.weighted_row_bound(model, 10, rtol=rtol)
    for switch in switches:
        monkeypatch.setattr(bounds, switch, 1 << 62)
    plain_model = bounds.RowModel.of(A, exact_rows=A.n)
    assert plain_model.prefixes is None
    plain = bounds.weighted_row_bound(plain_model, 10, rtol=rtol)
    assert fast.iterations == plain.iterations
    assert fast.value == pytest.approx(plain.value, rel=1e-12)
    return fast, plain


def test_short_texts_sparse_rows_read_their_nonzeros_for_the_same_bound(monkeypatch):
    """A fortunes category (co-occurrences of short texts: exact rows a few percent nonzero)
    is below the size from which prefixes pay on dense rows, but its rows' prefixes are their
    nonzeros: the same iterations and bound, reading a fraction of the entries."""
    from test_groups import fortunes_csv

    from spca_cli.groups import _group_rows, _sub_corpus

    corpus = load_input(str(fortunes_csv()), groups="category")
    rows = dict(_group_rows(corpus.groups))["platitudes"]
    A = input_gram(_sub_corpus(corpus, rows, 2)[0]).gram
    assert A.n * A.n < bounds._PREFIX_ENTRIES
    fast, plain = _with_and_without_prefixes(monkeypatch, A, 1e-6, ("_SPARSE_PREFIX_ENTRIES",))
    assert fast.entries < 0.2 * plain.entries


@pytest.mark.parametrize("kind", ["counts", "mixed"])
@pytest.mark.parametrize("seed", range(6))
def test_a_search_skipped_for_its_budget_keeps_the_certificates_bound(kind, seed):
    """A budget below one screening round skips auto's search: no work spent, the topic of
    the cheap solvers with the certificate's bound, at or above the search's and the optimum."""
    from spca_cli.solvers.exact import auto

    rng = np.random.default_rng(seed)
    A = _gram(rng, kind)
    k = int(rng.integers(2, 5))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        skipped = auto(A, k, budget=1e-15)
    searched = auto(A, k, budget=10.0)
    optimum = _brute(A, k)
    certificate = bounds.row_certificate(A, k).bound.value
    assert skipped.info["budget_used"] == 0.0 and skipped.info["nodes"] == 0
    if not skipped.exact:  # (the row bound alone may already meet the topic)
        assert skipped.bounds[0][0] == pytest.approx(certificate, rel=1e-12)
        assert any("proof budget (1e-15 s of work) ran out" in str(w.message) for w in caught)
    assert skipped.bounds[0][0] >= searched.bounds[0][0] * (1 - 1e-12)
    assert searched.bounds[0][0] >= optimum * (1 - 1e-9)
    assert searched.exact and searched.value == pytest.approx(optimum, rel=1e-9)


@pytest.mark.parametrize("kind", ["counts", "mixed"])
@pytest.mark.parametrize("seed", range(8))
def test_a_view_certified_on_shared_exact_rows_bounds_its_optimum(monkeypatch, kind, seed):
    """The set's views take their extra exact rows from one model of A restricted to them
    (SharedRows): every bound at or above the brute-force best of the view (A without the
    other topics' words)."""
    monkeypatch.setattr(bounds, "EXACT_ROWS", 2)
    rng = np.random.default_rng(seed)
    A = _gram(rng, kind)
    k = 3
    shared = bounds.SharedRows(A)
    narrow = bounds.RowModel.of(A, exact_rows=2)
    first = bounds.RowCertificate(narrow, bounds.weighted_row_bound(narrow, k))
    used = 0
    for removed in ([0, 1, 2], [3, 4, 5], [0, 5, 9]):
        view = A.remove(removed)
        certificate = bounds.row_certificate(view, k, previous=first, shared=shared)
        own = bounds.row_certificate(view, k)
        D = view.to_dense()
        keep = [i for i in range(A.n) if i not in removed]
        optimum = max(float(np.linalg.eigvalsh(D[np.ix_(I, I)])[-1])
                      for I in itertools.combinations(keep, k))
        assert certificate.bound.value >= optimum * (1 - 1e-12)
        assert own.bound.value >= optimum * (1 - 1e-12)
        assert not np.isin(removed, certificate.model.words).any()
        used += len(shared._models)
    if kind == "counts":
        assert used  # (the Cauchy-Schwarz pairs of counts ask for more rows)


@pytest.mark.parametrize("kind", ["counts", "mixed"])
@pytest.mark.parametrize("seed", range(8))
def test_a_view_certified_on_shared_rows_formed_ahead_bounds_its_optimum(monkeypatch, kind,
                                                                          seed, rows_formed_on):
    """The set's views may take A's model with more exact rows formed beside the run before
    they ask (SharedRows.ahead): the same certificate as one formed when asked, at or above the
    brute-force best of the view, and the model formed once, on the second thread."""
    import threading

    from spca_cli import threads

    monkeypatch.setattr(bounds, "EXACT_ROWS", 2)
    monkeypatch.setattr(threads, "kernels_run_beside", lambda: True)
    rng = np.random.default_rng(seed)
    A = _gram(rng, kind)
    k = 3
    narrow = bounds.RowModel.of(A, exact_rows=2)
    first = bounds.RowCertificate(narrow, bounds.weighted_row_bound(narrow, k))
    removed = rng.choice(A.n, 3, replace=False)
    view = A.remove(removed)
    # a value to prove below the start model's floor: its certificate takes more rows at once
    floor = bounds.MaskedModel(narrow, view.active()[narrow.words]).floor(k)
    attained = 0.5 * floor
    formed = rows_formed_on
    ahead = bounds.SharedRows(A)
    ahead.ahead(view, k, attained, first)
    (pending,) = ahead._models.values()
    pending.result()
    assert formed == ["spca-beside"]
    made = bounds.row_certificate(view, k, previous=first, attained=attained, shared=ahead)
    asked = bounds.row_certificate(view, k, previous=first, attained=attained,
                                   shared=bounds.SharedRows(A))
    assert formed == ["spca-beside", threading.current_thread().name]  # (asked: formed then)
    assert made.bound.value == asked.bound.value
    assert made.model.hrow.size == asked.model.hrow.size > 2
    D = view.to_dense()
    keep = [i for i in range(A.n) if i not in removed]
    optimum = max(float(np.linalg.eigvalsh(D[np.ix_(I, I)])[-1])
                  for I in itertools.combinations(keep, k))
    assert made.bound.value >= optimum * (1 - 1e-12)


def test_no_model_is_formed_ahead_for_a_view_at_its_floor_or_columns_not_exact(monkeypatch):
    """SharedRows.ahead forms nothing when the view's certificate would not take more rows at
    once (the value to prove is above its start model's floor), nor where A's columns may
    differ with the kernel that forms them (weighted documents: Gram.exact_columns)."""
    from spca_cli import threads

    monkeypatch.setattr(bounds, "EXACT_ROWS", 2)
    monkeypatch.setattr(threads, "kernels_run_beside", lambda: True)
    rng = np.random.default_rng(3)
    counts = rng.poisson(0.4, (80, 13)).astype(float)
    k = 3
    for S, attained_at in ((counts, 2.0), (counts * 0.5, 0.5)):
        A = Gram.from_documents(sp.csr_array(S))
        narrow = bounds.RowModel.of(A, exact_rows=2)
        first = bounds.RowCertificate(narrow, bounds.weighted_row_bound(narrow, k))
        view = A.remove([0, 1, 2])
        floor = bounds.MaskedModel(narrow, view.active()[narrow.words]).floor(k)
        shared = bounds.SharedRows(A)
        shared.ahead(view, k, attained_at * floor, first)
        assert shared._models == {}


@pytest.mark.parametrize("kind", ["counts", "mixed"])
@pytest.mark.parametrize("seed", range(6))
def test_a_model_restricted_in_its_own_memory_equals_the_copy(monkeypatch, kind, seed):
    """Remove deflation's next view restricts the last model in place (its exact rows, sorted
    prefixes and outside columns written over their own arrays): the same model and bound as
    the copy, at or above the brute-force best of the view; the consumed model is unusable."""
    monkeypatch.setattr(bounds, "_PREFIX_ENTRIES", 1)  # (prefixes and columns at this size)
    rng = np.random.default_rng(seed)
    A = _gram(rng, kind)
    k = 3
    removed = rng.choice(A.n, 3, replace=False)
    view = A.remove(removed)
    keep = view.active()

    def model():
        m = bounds.RowModel.of(A, exact_rows=int(rng.integers(2, A.n)))
        m.prefixes, m.columns  # (made on first use)
        return m

    state = rng.bit_generator.state
    copied = model().restrict(keep)
    rng.bit_generator.state = state
    consumed = model()
    in_place = consumed.restrict(keep, in_place=True)
    assert consumed.CT is None
    np.testing.assert_array_equal(in_place.CT, copied.CT)
    (order_a, lengths_a, rest_a), (order_b, lengths_b, rest_b) = (in_place.prefixes,
                                                                 copied.prefixes)
    np.testing.assert_array_equal(lengths_a, lengths_b)
    np.testing.assert_array_equal(rest_a, rest_b)
    for row, length in enumerate(lengths_a):  # (past its length a prefix row is not written)
        np.testing.assert_array_equal(order_a[row, :length], order_b[row, :length])
    if copied.columns is not None:
        for a, b in zip(in_place.columns, copied.columns):
            np.testing.assert_array_equal(a, b)
    one = bounds.weighted_row_bound(in_place, k, rtol=0.0, max_iter=50)
    two = bounds.weighted_row_bound(copied, k, rtol=0.0, max_iter=50)
    assert one.value == two.value
    D = view.to_dense()
    words = np.flatnonzero(keep)
    optimum = max(float(np.linalg.eigvalsh(D[np.ix_(I, I)])[-1])
                  for I in itertools.combinations(words, k))
    assert one.value >= optimum * (1 - 1e-12)


@pytest.mark.parametrize("kind", ["counts", "mixed"])
@pytest.mark.parametrize("seed", range(8))
def test_a_view_read_through_a_mask_bounds_as_its_copy(monkeypatch, kind, seed):
    """The set's views read the model of A with the removed words weighted 0 (MaskedModel)
    instead of a copy of their rows: the same bound as the copy (to rounding), at or above the
    brute-force best of the view, and the same model once a search asks for it."""
    monkeypatch.setattr(bounds, "_PREFIX_ENTRIES", 1)  # (prefixes and columns at this size)
    rng = np.random.default_rng(seed)
    A = _gram(rng, kind)
    k = int(rng.integers(2, 5))
    model = bounds.RowModel.of(A, exact_rows=int(rng.integers(1, A.n)))
    model.prefixes, model.columns  # (made on first use)
    removed = rng.choice(A.n, int(rng.integers(1, 5)), replace=False)
    view = A.remove(removed)
    keep = view.active()[model.words]
    masked = bounds.MaskedModel(model, keep)
    copied = model.restrict(keep)
    one = bounds.weighted_row_bound(masked, k, rtol=0.0, max_iter=50)
    two = bounds.weighted_row_bound(copied, k, rtol=0.0, max_iter=50)
    assert one.value == pytest.approx(two.value, rel=1e-12)
    assert masked.floor(k) == copied.floor(k) and masked.is_exact == copied.is_exact
    np.testing.assert_array_equal(masked.hrow, copied.hrow)
    D = view.to_dense()
    optimum = max(float(np.linalg.eigvalsh(D[np.ix_(I, I)])[-1])
                  for I in itertools.combinations(np.flatnonzero(view.active()), k))
    assert one.value >= optimum * (1 - 1e-12)
    made = bounds.RowCertificate(masked, one).model
    np.testing.assert_array_equal(made.words, copied.words)
    np.testing.assert_array_equal(made.CT, copied.CT)


@pytest.mark.parametrize("kind", ["counts", "mixed"])
@pytest.mark.parametrize("seed", range(6))
def test_top_sums_through_a_chain_of_masks_equal_the_copys(monkeypatch, kind, seed):
    """Each row's top sums through a mask of a mask (one mask of the first model: its rows
    off the view not read, the removed exact rows' entries passed over in the outside rows'
    lists) equal those of the restricted copy, at any weights, with prefixes and outside
    columns made at this size."""
    monkeypatch.setattr(bounds, "_PREFIX_ENTRIES", 1)
    rng = np.random.default_rng(100 + seed)
    A = _gram(rng, kind)
    model = bounds.RowModel.of(A, exact_rows=int(rng.integers(1, A.n)))
    model.prefixes, model.columns  # (made on first use)
    view, masked = A, model
    for _ in range(2):
        view = view.remove(rng.choice(np.flatnonzero(view.active()), 2, replace=False))
        masked = bounds.MaskedModel(masked, view.active()[masked.words])
    assert masked.base is model
    copied = model.restrict(view.active()[model.words])
    for count in (1, 2, 4):
        for _ in range(3):
            w = rng.random(masked.size) ** 4 + 1e-6
            np.testing.assert_allclose(masked.top_sums(w, count), copied.top_sums(w, count),
                                       rtol=1e-12, atol=0)


def test_real_sample_views_through_a_mask_bound_as_their_copies():
    """The bundled KOS sample without its 10, 20 and 40 most frequent words: the masked
    model's certificate is the copy's (the set's views on a real corpus)."""
    A = input_gram(load_input(str(KOS_SAMPLE))).gram
    model = bounds.RowModel.of(A, exact_rows=bounds.EXACT_ROWS)
    top = np.argsort(-A.diagonal(), kind="stable")
    for count in (10, 20, 40):
        keep = A.remove(top[:count]).active()[model.words]
        one = bounds.weighted_row_bound(bounds.MaskedModel(model, keep), 10, rtol=1e-6)
        two = bounds.weighted_row_bound(model.restrict(keep), 10, rtol=1e-6)
        assert one.iterations == two.iterations
        assert one.value == pytest.approx(two.value, rel=1e-12)


@pytest.mark.parametrize("weighting", [None, "tfidf"])
def test_branch_and_bound_block_from_exact_rows_is_the_submatrix(monkeypatch, weighting):
    """On a nonnegative view the branch and bound takes the survivors' block from their exact
    rows instead of a submatrix: the same matrix (binary counts exactly; tf-idf weights to
    rounding, symmetric), so its proofs are the proofs on A'. Checked on the KOS sample's view
    without its first topic's words, as the search forms it."""
    from spca_cli.solvers import exact

    corpus = load_input(str(KOS_SAMPLE), weighting=weighting)
    A = input_gram(corpus).gram
    first = bounds.row_certificate(A, 10)
    view = A.remove(np.argsort(-A.diagonal())[:10])
    survivors = bounds.RowModel.of(view, exact_rows=400,
                                   words=np.flatnonzero(view.active())[:400])
    assert survivors.is_exact and view.is_nonnegative()
    blocks = []
    original = exact.branch_and_bound_prefixed

    def record(A_sub, B, *args):
        blocks.append(A_sub.copy())
        return original(A_sub, B, *args)

    monkeypatch.setattr(exact, "branch_and_bound_prefixed", record)
    work = exact._Work(units=1e9)
    exact._branch(view, survivors, 10, 0.0, first.bound.value, work)
    expected = view.submatrix(survivors.words)
    assert np.array_equal(blocks[0], blocks[0].T)
    if weighting is None:
        assert np.array_equal(blocks[0], expected)
    else:
        assert np.allclose(blocks[0], expected, rtol=1e-12, atol=1e-12 * expected.max())


def _reducible_gram(rng):
    """Three blocks of words that never share a document: |A'| is reducible (its ratios need
    not equalise), the case where a Perron vector has zeros."""
    blocks = [sp.csr_array(rng.poisson(0.6, (30, size)).astype(float)) for size in (5, 4, 4)]
    return Gram.from_documents(sp.block_diag(blocks, format="csr"))


@pytest.mark.parametrize("kind", ["counts", "mixed", "reducible"])
@pytest.mark.parametrize("seed", range(10))
def test_linearized_steps_bound_the_optimum_and_reach_the_long_bound(kind, seed):
    """Weight steps through the row-sum map with its terms held fixed (policy iteration):
    every bound at or above the brute-force optimum, and the value within 1e-5 of the plain
    iteration run to its end, on matrices of both signs and a reducible one, with some rows
    bounded by Cauchy-Schwarz."""
    rng = np.random.default_rng(seed)
    A = _reducible_gram(rng) if kind == "reducible" else _gram(rng, kind)
    k = int(rng.integers(2, 5))
    model = bounds.RowModel.of(A, exact_rows=int(rng.integers(1, A.n + 1)))
    linear = bounds.weighted_row_bound(model, k, rtol=1e-5, linearize=True)
    long = bounds.weighted_row_bound(model, k, rtol=0.0, max_iter=400)
    assert linear.value >= _brute(A, k) * (1 - 1e-12)
    assert linear.value <= long.value * (1 + 1e-5)


def test_linearized_steps_on_the_real_sample_reach_the_long_bound_in_fewer_steps():
    """The bundled KOS sample's certificate model (256 exact rows, the rest Cauchy-Schwarz):
    the linearized steps end within 1e-5 of the plain iteration run to its end, below the
    plain steps stopped at the same tolerance and in fewer steps."""
    A = input_gram(load_input(str(KOS_SAMPLE))).gram
    model = bounds.RowModel.of(A, exact_rows=bounds.EXACT_ROWS)
    linear = bounds.weighted_row_bound(model, 10, rtol=1e-5, linearize=True)
    plain = bounds.weighted_row_bound(model, 10, rtol=1e-5)
    long = bounds.weighted_row_bound(model, 10, rtol=0.0, max_iter=400)
    assert long.value <= linear.value <= min(long.value * (1 + 1e-5), plain.value)
    assert linear.iterations < plain.iterations


@pytest.mark.parametrize("kind", ["counts", "mixed"])
@pytest.mark.parametrize("seed", range(8))
def test_a_view_started_from_a_nearby_views_weights_bounds_its_optimum(kind, seed):
    """A view's certificate started from the weights of a view one word away (the set's views
    before and after a coherence exchange), or from random weights: at or above the brute-force
    best of the view, and within 1e-4 of the same certificate started cold."""
    rng = np.random.default_rng(seed)
    A = _gram(rng, kind)
    k = 3
    first = bounds.row_certificate(A, k)
    before = bounds.row_certificate(A.remove([0, 1, 2]), k, previous=first)
    near = np.zeros(A.n)
    near[first.words] = first.bound.weights
    near[before.words] = before.bound.weights
    near = np.maximum(near, 1e-300)
    view = A.remove([0, 1, 3])  # word 3 taken in place of word 2
    keep = [i for i in range(A.n) if i not in (0, 1, 3)]
    D = view.to_dense()
    optimum = max(float(np.linalg.eigvalsh(D[np.ix_(I, I)])[-1])
                  for I in itertools.combinations(keep, k))
    cold = bounds.row_certificate(view, k, previous=first).bound.value
    for start in (near, rng.uniform(1e-3, 1.0, A.n)):
        value = bounds.row_certificate(view, k, previous=first, near=start).bound.value
        assert value >= optimum * (1 - 1e-12)
        assert value == pytest.approx(cold, rel=1e-4)


def test_real_sample_set_views_started_from_nearby_views_take_fewer_steps():
    """The KOS sample's set views (each topic's, after the coherence step) started from the
    certificate of its view before that step: the same bound to 1e-4 in no more weight steps
    than from cold, fewer over the five."""
    import spca_cli.topics as topics

    corpus = load_input(str(KOS_SAMPLE))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = topics.run_topics(corpus)
    A = input_gram(corpus).gram
    supports = [np.asarray(c.indices, dtype=np.int64) for c in result.components]
    first = bounds.row_certificate(A, 10)
    warm_steps = cold_steps = 0
    for j, topic in enumerate(result.components):
        others = topics._others(supports, j)
        view = A.remove(others)
        cold = bounds.row_certificate(view, 10, previous=first, attained=topic.explained_variance)
        # the view with one of the other topics' words given back: what a coherence exchange
        # of another topic leaves
        nearby = bounds.row_certificate(A.remove(others[1:]), 10, previous=first)
        near = np.zeros(A.n)
        near[first.words] = first.bound.weights
        near[nearby.words] = nearby.bound.weights
        warm = bounds.row_certificate(view, 10, previous=first, attained=topic.explained_variance,
                                      near=np.maximum(near, 1e-300))
        assert warm.bound.value == pytest.approx(cold.bound.value, rel=1e-4)
        assert warm.bound.iterations <= cold.bound.iterations
        warm_steps += warm.bound.iterations
        cold_steps += cold.bound.iterations
    assert warm_steps < cold_steps


@pytest.mark.parametrize("kind", ["counts", "mixed"])
@pytest.mark.parametrize("seed", range(8))
def test_a_chain_of_masked_views_equals_the_restricted_ones(kind, seed):
    """Remove deflation's views with a solver that does not search from the certificate: each
    certified through a mask of the last one's model (a mask of a mask: one mask of the first
    model), and the same chain restricted in its own memory (as for auto and exact): the same
    bounds, at or above each view's optimum (brute force), on the same words."""
    rng = np.random.default_rng(seed)
    A = _gram(rng, kind)
    k = int(rng.integers(2, 5))
    masked, restricted = bounds.row_certificate(A, k), bounds.row_certificate(A, k)
    first = masked._model
    view = A
    for _ in range(3):
        view = view.remove(rng.choice(np.flatnonzero(view.active()), 2, replace=False))
        masked = bounds.row_certificate(view, k, previous=masked)
        restricted = bounds.row_certificate(view, k, previous=restricted,
                                            consume_previous=True)
        assert isinstance(masked._model, bounds.MaskedModel)
        assert masked._model.base is first or masked._model.base.hrow.size > first.hrow.size
        assert masked.bound.value == pytest.approx(restricted.bound.value, rel=1e-9)
        assert masked.bound.value >= _brute(view, k) * (1 - 1e-12)
        np.testing.assert_array_equal(masked.words, restricted.words)
    assert not isinstance(masked._model.base, bounds.MaskedModel)


def _rows_cannot_help_the_long_way(model, k, result):
    w = result.weights
    without = (model.diag * w + model.top_sums(w, k - 1, cauchy_schwarz=False)) / w
    return float(np.max(without)) >= result.value * (1.0 - bounds._CS_GAIN)


def _decisions_checked(monkeypatch):
    """Every test of row_certificate's whether more exact rows can help, checked against the
    pass over every row: (the decision, whether the exact rows alone decided it)."""
    seen = []
    shortcut = bounds._rows_cannot_help

    def checked(model, k, result):
        decision = shortcut(model, k, result)
        assert decision == _rows_cannot_help_the_long_way(model, k, result)
        on_exact = result.ratios[model.hrow]
        seen.append((decision, bool(on_exact.size and on_exact.max() >= result.value
                                    * (1.0 - bounds._CS_GAIN))))
        return decision

    monkeypatch.setattr(bounds, "_rows_cannot_help", checked)
    return seen


@pytest.mark.parametrize("kind", ["counts", "mixed"])
@pytest.mark.parametrize("seed", range(12))
def test_more_rows_decided_from_the_exact_rows_as_from_every_row(monkeypatch, kind, seed):
    """Whether more exact rows can help, read from the exact rows' ratios when they reach the
    level, is the decision the pass over every row makes; the certificate then bounds the
    optimum (brute force), with one exact row up to every row."""
    rng = np.random.default_rng(seed)
    A = _gram(rng, kind)
    k = int(rng.integers(2, 5))
    monkeypatch.setattr(bounds, "EXACT_ROWS", int(rng.integers(1, 5)))
    monkeypatch.setattr(bounds, "_EXACT_ENTRIES", A.n * (A.n - 1))
    monkeypatch.setattr(bounds, "_ESCALATION_ENTRIES", (A.n * 6, A.n * (A.n - 1)))
    seen = _decisions_checked(monkeypatch)
    certificate = bounds.row_certificate(A, k)
    assert seen
    assert certificate.bound.value >= _brute(A, k) * (1 - 1e-12)


def test_real_sample_set_views_decide_more_rows_from_their_exact_rows(monkeypatch):
    """The bundled KOS sample's default run: every certificate that asks whether more exact rows
    would help (A's and the set's views) is answered by its exact rows' ratios alone, and the
    answer is the one the pass over every row gives."""
    from spca_cli.topics import run_topics

    seen = _decisions_checked(monkeypatch)
    run_topics(load_input(str(KOS_SAMPLE)))
    assert len(seen) >= 6
    assert all(decision and by_exact for decision, by_exact in seen)
