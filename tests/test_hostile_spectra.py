"""No printed bound below what some topic attains, on the spectra that make eigensolvers miss:
a top eigenvalue repeated 2-60 times, clusters within 1e-12, a matrix PSD only up to rounding,
views that are zero. Every solver, every eigensolver, both deflations, 1-15 topics.

The matrices are block diagonal (shuffled), so what the best topics attain is known: a topic
inside one block is scored exactly by brute force over that block's words, and one topic per
block gives disjoint topics whose total some set of topics attains. Every bound the pipeline
considers for a topic or a total (spied on where it picks the tightest trusted one, so a lie
hidden behind a sharper bound is still caught) must be at least that value. On small matrices
the projection-deflated views are checked against brute force over every support.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from spca_cli import bounds
from spca_cli.corpus.core import MatrixInput
from spca_cli.matrix import Gram
from spca_cli.solvers.registry import REGISTRY
from spca_cli.topics import run_topics
from test_topics import corpus_input

EIGENSOLVERS = ("auto", "krylov", "arpack", "dense")
RTOL = 1e-9


def _block_factor(rng, size, nonnegative):
    """A small document-word block G (its Gram G^T G is one block of A)."""
    rows = size + int(rng.integers(0, 4))
    G = rng.random((rows, size)) if nonnegative else rng.standard_normal((rows, size))
    return np.round(G * 4) / 4 if nonnegative else G


def hostile_corpus(kind, seed, *, nonnegative, words=320):
    """(S, blocks): a document-word matrix whose Gram matrix is block diagonal, and each block's
    word indices. ``kind``: "repeated" (the strongest block 2-60 times), "cluster" (its copies
    scaled by 1 + i 1e-13), "zero" (copies, and words without any entry)."""
    rng = np.random.default_rng(seed)
    strong = _block_factor(rng, int(rng.integers(2, 6)), nonnegative) * 3.0
    copies = int(rng.choice([2, 3, 5, 12, 20, 60]))
    factors = []
    for i in range(copies):
        scale = 1.0 + i * 1e-13 if kind == "cluster" else 1.0
        factors.append(strong * scale)
    used = sum(f.shape[1] for f in factors)
    while used < words - 8:
        f = _block_factor(rng, int(rng.integers(1, 6)), nonnegative)
        if rng.random() < 0.3:  # weaker copies of one block: repeated eigenvalues lower down
            factors += [f, f]
            used += 2 * f.shape[1]
        else:
            factors.append(f)
            used += f.shape[1]
    if kind == "zero":
        factors += [np.zeros((1, 4))]  # four words that never occur
    S = sp.block_diag(factors, format="csr")
    n = S.shape[1]
    perm = rng.permutation(n)
    S = S[:, perm]
    where = np.argsort(perm)  # old column -> new column
    blocks, start = [], 0
    for f in factors:
        blocks.append(np.sort(where[start:start + f.shape[1]]))
        start += f.shape[1]
    return sp.csr_array(S), blocks


def near_psd_matrix(seed, n_blocks=2):
    """A dense matrix PSD up to -1e-9 lambda_max: 5-word PSD blocks and a 5-word block c (J - I)
    whose diagonal is zero and whose eigenvalues are 4c and -c (c = 5e-10 lambda_max). With
    k = 5 and remove deflation the last view holds that block alone."""
    rng = np.random.default_rng(seed)
    parts = []
    for _ in range(n_blocks):
        G = rng.random((6, 5))
        parts.append(G.T @ G)
    top = max(np.linalg.eigvalsh(P)[-1] for P in parts)
    c = 5e-10 * top
    parts.append(c * (np.ones((5, 5)) - np.eye(5)))
    A = sp.block_diag(parts).toarray()
    n = A.shape[0]
    perm = rng.permutation(n)
    A = A[np.ix_(perm, perm)]
    where = np.argsort(perm)
    blocks, start = [], 0
    for P in parts:
        blocks.append(np.sort(where[start:start + P.shape[0]]))
        start += P.shape[0]
    return A, blocks


def _best_inside(M, k):
    """max lambda_max(M[I, I]) over |I| = min(k, size): brute force."""
    size = M.shape[0]
    if size == 0:
        return 0.0
    best = 0.0
    for support in itertools.combinations(range(size), min(k, size)):
        best = max(best, float(np.linalg.eigvalsh(M[np.ix_(support, support)])[-1]))
    return best


def _block_values(A_dense, blocks, active, k):
    """Per block, the best topic inside its still active words."""
    values = []
    for block in blocks:
        words = block[active[block]]
        values.append(_best_inside(A_dense[np.ix_(words, words)], k))
    return np.array(values)


class _Spy:
    """Records every bound list the pipeline picks a certificate from, in order."""

    def __init__(self, monkeypatch):
        self.calls = []
        original = bounds.trusted

        def spy(bound_list, attained):
            self.calls.append(list(bound_list))
            return original(bound_list, attained)

        monkeypatch.setattr(bounds, "trusted", spy)


def _check_run(result, spy, A_dense, blocks, k, *, joint, deflation):
    """Every bound of every topic and of the total at or above what that view's topics attain."""
    n = A_dense.shape[0]
    K = len(result.components)
    topic_lists, total_list = spy.calls[:K], spy.calls[K:]
    active = np.ones(n, dtype=bool)
    for index, (topic, bound_list) in enumerate(zip(result.components, topic_lists)):
        if joint or index == 0 or deflation == "remove":
            best = float(np.max(_block_values(A_dense, blocks, active, k), initial=0.0))
            for value, source in bound_list:
                assert value >= best * (1 - RTOL) - 1e-9, (index + 1, source, value, best)
        if not joint and deflation == "remove":
            active[topic.indices] = False
    if total_list:
        # one topic per block, the K strongest blocks: a total some disjoint topics attain
        values = np.sort(_block_values(A_dense, blocks, np.ones(n, dtype=bool), k))[::-1]
        attainable = float(np.sum(values[:K]))
        for value, source in total_list[0]:
            assert value >= attainable * (1 - RTOL) - 1e-9, ("total", source, value, attainable)


def _cases():
    solvers = [name for name in REGISTRY]
    out = []
    rng = np.random.default_rng(2026)
    for i, (kind, nonnegative) in enumerate(itertools.product(
            ("repeated", "cluster", "zero"), (True, False))):
        for eigensolver in EIGENSOLVERS:
            solver = solvers[(i * 3 + EIGENSOLVERS.index(eigensolver)) % len(solvers)]
            components = int(rng.choice([1, 2, 5, 12, 15]))
            out.append((kind, nonnegative, eigensolver, solver, components, 100 * i + len(out)))
    return out


@pytest.mark.parametrize("kind,nonnegative,eigensolver,solver,components,seed", _cases())
def test_no_bound_below_what_disjoint_topics_attain_on_hostile_spectra(
        monkeypatch, kind, nonnegative, eigensolver, solver, components, seed):
    S, blocks = hostile_corpus(kind, seed, nonnegative=nonnegative)
    A_dense = (S.T @ S).toarray()
    spec = REGISTRY[solver]
    k = 2 if spec.joint else 3
    options = {"time_limit": None}
    if solver == "nonneg":
        options = {"exact": False, "samples": 200}  # (exact enumeration grows with n^rank)
    spy = _Spy(monkeypatch)
    result = run_topics(corpus_input(S), solver=solver, k=k, n_components=components, rank=2,
                        eigensolver=eigensolver, deflation="remove",
                        solver_options={key: v for key, v in options.items() if v is not None})
    _check_run(result, spy, A_dense, blocks, k, joint=spec.joint, deflation="remove")


@pytest.mark.parametrize("eigensolver", EIGENSOLVERS)
@pytest.mark.parametrize("solver", ["spannogram", "tpower", "exact", "nonneg", "auto"])
def test_repeated_top_eigenvalue_every_eigensolver_total_bound_holds(monkeypatch, solver,
                                                                    eigensolver):
    """The shape of the failure ARPACK showed: 15 copies of the top block, 12 topics of k = 2."""
    S, blocks = hostile_corpus("repeated", 7, nonnegative=True)
    A_dense = (S.T @ S).toarray()
    spy = _Spy(monkeypatch)
    options = {"exact": False, "samples": 200} if solver == "nonneg" else {}
    result = run_topics(corpus_input(S), solver=solver, k=2, n_components=12, rank=1,
                        eigensolver=eigensolver, solver_options=options)
    _check_run(result, spy, A_dense, blocks, 2, joint=False, deflation="remove")


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("deflation", ["remove", "projection"])
def test_small_hostile_matrices_against_brute_force_on_every_view(monkeypatch, seed, deflation):
    """n = 12: every view's bounds against the best support of that view, by brute force."""
    rng = np.random.default_rng(seed)
    G = _block_factor(rng, 3, nonnegative=seed % 2 == 0)
    factors = [G, G, G, _block_factor(rng, 3, nonnegative=True)]
    S = sp.csr_array(sp.block_diag(factors))
    A0 = Gram.from_documents(S)
    k = 2
    for eigensolver in ("krylov", "arpack"):
        for solver in ("spannogram", "tpower", "threshold", "greedy"):
            spy = _Spy(monkeypatch)
            result = run_topics(corpus_input(S), solver=solver, k=k, n_components=4, rank=2,
                                eigensolver=eigensolver, deflation=deflation)
            view = A0
            for topic, bound_list in zip(result.components, spy.calls):
                dense = view.to_dense()
                act = np.flatnonzero(view.active())
                best = max(float(np.linalg.eigvalsh(dense[np.ix_(I, I)])[-1])
                           for I in itertools.combinations(act, k))
                for value, source in bound_list:
                    assert value >= best * (1 - RTOL) - 1e-9, (solver, eigensolver, source)
                if deflation == "remove":
                    view = view.remove(topic.indices)
                else:
                    x = np.zeros(A0.n)
                    x[topic.indices] = topic.weights
                    view = view.project_out(x)
            monkeypatch.undo()


@pytest.mark.parametrize("solver", ["threshold", "auto", "spannogram", "exact"])
@pytest.mark.parametrize("deflation", ["remove", "projection"])
def test_nearly_psd_matrix_bounds_cover_its_zero_diagonal_block(monkeypatch, solver, deflation):
    """A 5-word block c (J - I) explains 4c with a zero diagonal: the top-k diagonal of a view
    holding only it would say 0; the bounds add the matrix's negative part."""
    A, blocks = near_psd_matrix(3)
    data = MatrixInput(A=A, labels=np.array([str(i) for i in range(A.shape[0])]), path="m.npy")
    spy = _Spy(monkeypatch)
    K = 3
    result = run_topics(data, solver=solver, k=5, n_components=K, rank=2, deflation=deflation)
    _check_run(result, spy, A, blocks, 5, joint=False, deflation=deflation)
    for topic in result.components:
        assert topic.upper_bound >= topic.problem_value * (1 - RTOL)


def test_nonneg_on_a_mixed_sign_matrix_does_not_certify_with_its_nonnegative_bound():
    """nonneg's own bound covers nonnegative topics only; exact finds a signed 3-word topic above
    it, and nonneg's certificate must stay above that topic."""
    rng = np.random.default_rng(18)  # a matrix whose best signed topic beats every nonnegative
    B = rng.standard_normal((8, 8))
    A = B @ B.T
    data = MatrixInput(A=A, labels=np.array([str(i) for i in range(8)]), path="m.npy")
    best = run_topics(data, solver="exact", k=3, n_components=1).components[0]
    nonneg = run_topics(data, solver="nonneg", k=3, n_components=1)
    topic = nonneg.components[0]
    assert topic.upper_bound >= best.explained_variance * (1 - RTOL)
    assert topic.info["nonnegative_upper_bound"] < best.explained_variance
    assert any("nonnegative topics only" in note for note in nonneg.notes)
