"""The Ritz vectors carried between remove-deflated eigen calls (``Gram.carried``,
``top_eigenpairs(previous=...)``) keep the residuals honest.

Every eigenvalue bound adds a reported residual to a Ritz value, so a carried call must report
residuals no smaller than the true ||A' v - theta v|| (recomputed here with ``A.matmat``), its
leading Ritz value plus residual must reach LAPACK's lambda_1, and a topics run that carries must
keep every bound above its view's brute-force optimum. The hard case: a carried direction that
keeps a tiny share of its norm (nearly all of it on removed words) multiplies the rounding of its
image by up to 1e5 when normalised, so next to a strong removed word the residuals would come out
1e-7 theta_1 below the true ones; ``_orthonormal_pair`` drops such directions.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spca_cli.topics as topics_module
from spca_cli.corpus.read import load_input
from spca_cli.matrix import Gram
from spca_cli.spectrum import CANDIDATE_TOL, TOPICS_TOL, top_eigenpairs
from spca_cli.topics import run_topics
from test_candidate_tolerance import _best_on_view, _views
from test_topics import matrix_input


def _true_residuals(A, eigen):
    V = eigen.vectors
    return np.linalg.norm(A.matmat(V) - V * eigen.values, axis=0)


def _check_carried_call(view, source, before, p, tol, seed):
    """One carried call on ``view``: honest residuals and lambda_1 reached; returns the Eigen."""
    eigen = top_eigenpairs(view, p, tol=tol, method="krylov", start=before.basis,
                           previous=(source, before), random_state=seed)
    lam = np.linalg.eigvalsh(view.to_dense())[::-1]
    scale = max(lam[0], 1e-300)
    under = _true_residuals(view, eigen) - eigen.residuals
    assert under.max() <= 1e-10 * scale, (under.max() / scale, eigen.products)
    assert eigen.values[0] + eigen.residuals[0] >= lam[0] - 1e-10 * scale
    return eigen


def _dominant_word_matrix(n, big, seed):
    """A full-rank PSD noise plus big * w w^T, w on words 0-2 and 3e-5 of its length on the
    others: the carried leading Ritz vector keeps a share ~1e-9 of its norm once words 0-2 are
    removed, while the images it is computed from are of the size of big."""
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((n, n)) / np.sqrt(n)
    w = np.zeros(n)
    w[:3] = 1.0
    w[3:] = rng.standard_normal(n - 3) * 3e-5 / np.sqrt(n)
    w *= np.sqrt(big)
    return U @ U.T + np.outer(w, w)


@settings(max_examples=6, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), big=st.sampled_from([1e9, 1e10, 1e11]))
def test_carried_residuals_stay_honest_next_to_a_dominant_removed_word(seed, big):
    """n = 60 next to a removed word 1e9-1e11 times stronger: reported residuals are the true
    ones (keeping the weak directions would report them 3e-9 to 3e-7 theta_1 too small)."""
    A = Gram.from_dense(_dominant_word_matrix(60, big, seed))
    before = top_eigenpairs(A, 3, tol=TOPICS_TOL, method="krylov", random_state=seed)
    view = A
    for removed in (np.arange(3), np.arange(3, 6)):
        nxt = view.remove(removed)
        before = _check_carried_call(nxt, view, before, 3, TOPICS_TOL, seed)
        view = nxt


def test_smallest_case_of_a_dominant_removed_word_reports_true_residuals():
    A = Gram.from_dense(_dominant_word_matrix(60, 1e10, 0))
    first = top_eigenpairs(A, 3, tol=TOPICS_TOL, method="krylov", random_state=0)
    eigen = top_eigenpairs(A.remove([0, 1, 2]), 3, tol=TOPICS_TOL, method="krylov",
                           start=first.basis, previous=(A, first), random_state=0)
    theta1 = eigen.values[0]
    # keeping the weak carried directions would report 5.7e-8 theta_1 below the truth
    assert np.max(_true_residuals(A.remove([0, 1, 2]), eigen) - eigen.residuals) \
        <= 1e-10 * theta1


def _random_gram(kind, n, rng, seed):
    if kind == "documents":
        return Gram.from_documents(sp.random(30, n, density=0.3, random_state=seed,
                                             format="csr"))
    V = rng.standard_normal((n, int(rng.integers(1, n + 1))))
    if kind == "nonnegative":
        V = np.abs(V)
    V *= 10.0 ** rng.uniform(-3, 3, size=(n, 1))  # rows of very different scales
    return Gram.from_dense(V @ V.T)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), n=st.integers(3, 13),
       kind=st.sampled_from(["documents", "nonnegative", "mixed"]),
       tol=st.sampled_from([1e-8, TOPICS_TOL, CANDIDATE_TOL, 0.3]), data=st.data())
def test_chains_of_removals_on_small_matrices(seed, n, kind, tol, data):
    """Tiny n, p up to n - 2, removals of 0-3 words per step (words already removed, and all
    words in the end): no crash, honest residuals, lambda_1 reached (2,400 chains of 4 steps
    hold the same way)."""
    rng = np.random.default_rng(seed)
    p = data.draw(st.integers(1, max(1, n - 2)))
    A = _random_gram(kind, n, rng, seed)
    before = top_eigenpairs(A, p, tol=tol, method="krylov", random_state=seed)
    view = A
    for step in range(4):
        removed = data.draw(st.lists(st.integers(0, n - 1), max_size=3))
        nxt = view.remove(removed)
        before = _check_carried_call(nxt, view, before, p, tol, seed)
        view = nxt
    everything = view.remove(np.arange(n))  # all words removed: a zero view
    last = top_eigenpairs(everything, p, tol=tol, method="krylov", start=before.basis,
                          previous=(view, before), random_state=seed)
    assert np.all(last.values == 0) and np.all(last.residuals == 0)


_SOLVERS = ["exact", "greedy", "nonneg", "spannogram", "threshold", "tpower", "auto"]


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**16), solver=st.sampled_from(_SOLVERS),
       k=st.integers(2, 4), components=st.integers(3, 5), rank=st.integers(1, 3),
       eigensolver=st.sampled_from(["krylov", "auto"]), loose=st.booleans(),
       scaled=st.booleans())
def test_topics_runs_that_carry_keep_their_bounds(monkeypatch, seed, solver, k, components,
                                                  rank, eigensolver, loose, scaled):
    """remove deflation, each solver, later steps at CANDIDATE_TOL or at 30% of theta_1: every
    bound >= its view's brute-force optimum and every value <= it (160 runs hold the same
    way)."""
    rng = np.random.default_rng(seed)
    n = min(20, k * components + int(rng.integers(0, 4)))
    nonnegative = solver == "nonneg" or bool(seed % 2)
    V = rng.random((n, int(rng.integers(1, n)))) if nonnegative else \
        rng.standard_normal((n, int(rng.integers(1, n))))
    if scaled:
        V *= 10.0 ** rng.uniform(-2, 2, size=(n, 1))
    A = V @ V.T
    with monkeypatch.context() as patch:
        patch.setattr(topics_module, "CANDIDATE_TOL", 0.3 if loose else CANDIDATE_TOL)
        result = run_topics(matrix_input(A), solver=solver, k=k, n_components=components,
                            rank=rank, deflation="remove", eigensolver=eigensolver,
                            random_state=seed)
    scale = result.eigenvalues[0]
    for topic, (view, words) in zip(result.components, _views(A, result, "remove")):
        best = _best_on_view(view, words, k, solver == "nonneg")
        assert topic.upper_bound >= best - 1e-10 * scale
        assert topic.problem_value <= best + 1e-10 * scale


def test_a_carry_is_refused_unless_the_view_is_a_pure_removal_of_its_source():
    rng = np.random.default_rng(0)
    V = rng.random((30, 30))
    A = Gram.from_dense(V @ V.T)
    first = top_eigenpairs(A, 3, tol=1e-8, method="krylov")
    assert first.carry[0].shape == first.carry[1].shape == (30, 2 * (3 + 3))  # 2b vectors
    # another base matrix, even one with the very same entries
    assert Gram.from_dense(V @ V.T).remove([1]).carried(A, *first.carry) is None
    # a removed word that comes back, and a view with a word back but others removed
    assert A.remove([1]).carried(A.remove([1, 2]), *first.carry) is None
    assert A.remove([1, 3]).carried(A.remove([1, 2]), *first.carry) is None
    # projection in the source or in the view
    x = np.zeros(30)
    x[:4] = 0.5
    assert A.project_out(x).remove([7]).carried(A.project_out(x), *first.carry) is None
    assert A.remove([7]).project_out(x).carried(A.remove([7]), *first.carry) is None
    # removing words never active changes nothing: the images are A' V exactly as computed
    view = A.remove([4, 5])
    before = top_eigenpairs(view, 3, tol=1e-8, method="krylov")
    Vc, AVc = view.remove([4]).carried(view, *before.carry)
    np.testing.assert_array_equal(AVc, before.carry[1] * view.mask[:, None])
    np.testing.assert_allclose(AVc, view.matmat(Vc), atol=1e-12 * before.values[0])


def test_a_carried_call_on_the_words_left_after_all_but_one_block():
    """p >= the words left: the carried basis holds every active word after the removal."""
    rng = np.random.default_rng(3)
    V = rng.random((12, 12))
    A = Gram.from_dense(V @ V.T)
    first = top_eigenpairs(A, 8, tol=1e-8, method="krylov")
    nxt = A.remove(np.arange(9))  # three words left, p = 8
    eigen = top_eigenpairs(nxt, 8, tol=1e-8, method="krylov", start=first.basis,
                           previous=(A, first))
    lam = np.linalg.eigvalsh(nxt.to_dense())[::-1][:8]
    np.testing.assert_allclose(eigen.values, lam, atol=1e-10 * lam[0])
    assert eigen.products >= 1


def test_the_dask_backend_carries_the_same_honest_pairs():
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    from spca_cli.distributed.backend import DaskBackend, make_shards

    S = sp.random(400, 120, density=0.08, random_state=5, format="csr") * 3
    S = sp.csr_array(S)
    local = Gram.from_documents(S)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        blocks = [client.scatter(_Block(S[lo:hi]))
                  for lo, hi in ((0, 150), (150, 260), (260, 400))]
        remote = Gram.from_backend(DaskBackend(client, make_shards(client, blocks), S.shape[1]))
        first = top_eigenpairs(remote, 4, tol=TOPICS_TOL, method="krylov", random_state=1)
        view, before = remote, first
        order = np.argsort(-np.abs(first.vectors[:, 0]))
        for removed in (order[:4], order[4:8], order[8:12]):
            nxt = view.remove(removed)
            assert nxt.carried(view, *before.carry) is not None  # the carry is used
            eigen = top_eigenpairs(nxt, 4, tol=CANDIDATE_TOL, method="krylov",
                                   start=before.basis, previous=(view, before), random_state=1)
            assert eigen.method == "krylov"
            dense = local.remove(np.flatnonzero(~nxt.active()))
            lam = np.linalg.eigvalsh(dense.to_dense())[::-1]
            under = _true_residuals(dense, eigen) - eigen.residuals
            assert under.max() <= 1e-10 * lam[0]
            assert eigen.values[0] + eigen.residuals[0] >= lam[0] * (1 - 1e-10)
            view, before = nxt, eigen


class _Block:
    """A row block as the Dask ingest leaves it on a worker (an object with ``S``)."""

    def __init__(self, S):
        self.S = S


def test_real_tweets_topics_run_reports_honest_carried_residuals(monkeypatch, airline_mtx):
    """The airline tweets (5,374 words), remove deflation, krylov: every eigen call that carried
    reports residuals no smaller than the true ones, and its theta_1 + r_1 reaches lambda_1
    (ARPACK at 1e-12 on the view)."""
    from scipy.sparse.linalg import eigsh

    calls = []

    def recording(A, p, **options):
        eigen = top_eigenpairs(A, p, **options)
        calls.append((A, eigen, options.get("previous")))
        return eigen

    monkeypatch.setattr(topics_module, "top_eigenpairs", recording)
    result = run_topics(load_input(airline_mtx), solver="greedy", k=6, n_components=4, rank=2,
                        eigensolver="krylov")
    carried = [(A, e) for A, e, previous in calls
               if previous is not None and previous[1].carry is not None]
    assert len(carried) >= 3 and len(result.components) == 4
    for A, eigen in carried:
        under = _true_residuals(A, eigen) - eigen.residuals
        lam1 = eigsh(A.as_linear_operator(), k=1, which="LA", tol=1e-12,
                     v0=np.ones(A.n))[0][0]
        assert under.max() <= 1e-10 * lam1
        assert eigen.values[0] + eigen.residuals[0] >= lam1 * (1 - 1e-12)



def test_a_topics_run_keeps_only_the_carried_vectors_in_use(monkeypatch):
    """Each krylov call carries 2b Ritz vectors and their images (4b columns of n, on top of
    its Ritz block of b): kept to the end by the run's record of its calls, they would hold
    about 0.5 GB (19 calls of 10 topics on 100k words); only the first call's (its values serve
    the total bounds) and the last one's are alive when a call starts."""
    import gc
    import weakref

    alive = []
    seen = []

    def recording(A, p, **options):
        gc.collect()
        alive.append(sum(ref() is not None for ref in seen))
        eigen = top_eigenpairs(A, p, **options)
        seen.append(weakref.ref(eigen.carry[0]))
        return eigen

    monkeypatch.setattr(topics_module, "top_eigenpairs", recording)
    rng = np.random.default_rng(0)
    V = rng.random((40, 40))
    result = run_topics(matrix_input(V @ V.T), solver="greedy", k=3, n_components=6, rank=2,
                        eigensolver="krylov")
    assert len(result.components) == 6 and result.eigensolver["calls"] == len(alive) >= 6
    assert max(alive) <= 2
