"""Topics around chosen words against brute force: on small matrices (6-12 words; nonnegative
counts, mixed signs, PSD only up to -1e-10 of lambda_max, repeated eigenvalues, zero rows), k in
2..5 and 0-2 included words, every bound of the constrained problem is at least the best support
holding the included words, screening never drops a word of a support above its bound, ``exact``
finds that support, and every solver's topic holds the included words and none of the excluded.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from _brute_force_bounds import (KINDS, corpus_input, hostile_matrix, matrix_input, patched,
                                 spy_on_trusted, support_values)
from spca_cli.bounds import RowModel, row_certificate
from spca_cli.constraints import (ForcedColumns, forced_bounds, forced_row_bound,
                                  forced_screen_bounds)
from spca_cli.matrix import Gram
from spca_cli.solvers.exact import exact
from spca_cli.solvers.registry import REGISTRY
from spca_cli.spectrum import top_eigenpairs
from spca_cli.topics import run_topics

RTOL = 1e-9
SINGLE = sorted(name for name, spec in REGISTRY.items() if not spec.joint)


def best_holding(D, active, k, forced):
    """max lambda_max(D[T, T]) over supports T of k active words holding ``forced``."""
    forced = [int(f) for f in forced]
    others = [i for i in np.flatnonzero(active).tolist() if i not in forced]
    supports = np.array([forced + list(c) for c in itertools.combinations(others, k - len(forced))],
                        dtype=np.int64).reshape(-1, k)
    return float(support_values(D, supports).max())


def draw(seed):
    """(A as Gram, its dense matrix, k, included words, S or None) from ``seed``."""
    rng = np.random.default_rng(seed)
    kind = KINDS[seed % len(KINDS)]
    A, S = hostile_matrix(rng, kind, int(rng.integers(6, 13)))
    n = A.shape[0]
    k = int(rng.integers(2, min(5, n - 1) + 1))
    forced = np.sort(rng.choice(n, size=int(rng.integers(0, min(2, k) + 1)), replace=False))
    G = Gram.from_documents(sp.csr_array(S)) if S is not None and seed % 2 else Gram.from_dense(A)
    return G, G.to_dense(), k, forced.astype(np.int64), S, rng


@pytest.mark.parametrize("seed", range(140))
def test_forced_bounds_hold_and_exact_finds_the_best(seed):
    G, D, k, forced, _, rng = draw(seed)
    scale = max(float(np.abs(np.linalg.eigvalsh(D)).max()), 1e-300)
    best = best_holding(D, G.active(), k, forced)
    floor = best * (1 - RTOL) - 1e-12 * scale
    # a model with few exact rows too, so the Cauchy-Schwarz pairs enter the sums
    model = RowModel.of(G, exact_rows=int(rng.integers(1, G.n + 1)))
    fc = ForcedColumns(G, model, forced)
    row = forced_row_bound(model, fc, k)
    assert row.value >= floor, (seed, row.value, best)
    eigen = top_eigenpairs(G, 3, method="dense")
    for value, source in forced_bounds(G, k, eigen, forced):
        assert value >= floor, (seed, source, value, best)
    # screening: every word outside F is bounded over the supports holding F and it
    if forced.size < k:
        bound, _ = forced_screen_bounds(model, fc, k, 1.0)
        for position, word in enumerate(model.words.tolist()):
            if word in forced:
                assert bound[position] == np.inf
                continue
            holding = best_holding(D, G.active(), k, np.append(forced, word))
            assert bound[position] >= holding * (1 - RTOL) - 1e-12 * scale, (seed, word)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = exact(G, k, eigen=eigen, forced=forced if forced.size else None)
    assert set(forced.tolist()) <= set(out.indices.tolist())
    assert out.exact
    assert out.value == pytest.approx(best, rel=1e-9, abs=1e-9 * scale)


@pytest.mark.parametrize("seed", range(220, 260))
def test_exact_proves_under_a_tight_certificate(seed):
    """exact with the certificate the pipeline gives it (a few exact rows, its weights), and
    the view's certificate budgets shrunk: the same optimum as brute force."""
    G, D, k, forced, _, rng = draw(seed)
    scale = max(float(np.abs(np.linalg.eigvalsh(D)).max()), 1e-300)
    best = best_holding(D, G.active(), k, forced)
    with patched({"EXACT_ROWS": int(rng.integers(1, 4))}):
        certificate = row_certificate(G, k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = exact(G, k, eigen=top_eigenpairs(G, 3, method="dense"), certificate=certificate,
                    forced=forced if forced.size else None)
    assert set(forced.tolist()) <= set(out.indices.tolist()) and out.exact
    assert out.value == pytest.approx(best, rel=1e-9, abs=1e-9 * scale)


def test_the_forced_bound_is_below_every_unconstrained_one():
    """A weak word included next to a strong block: its bound is below the unconstrained
    optimum, which no bound of the unconstrained problem can be, and exact proves the best
    support holding it."""
    rng = np.random.default_rng(5)
    S = np.zeros((40, 8))
    S[:30, :4] = rng.random((30, 4)) < 0.8  # four strong words, often together
    S[30:, 4:] = rng.random((10, 4)) < 0.5
    S[0, 6] = 1.0  # the weak word 6 once beside the strong block
    G = Gram.from_documents(sp.csr_array(S))
    D = G.to_dense()
    k, forced = 3, np.array([6])
    best = best_holding(D, G.active(), k, forced)
    unconstrained = best_holding(D, G.active(), k, np.array([], dtype=np.int64))
    model = RowModel.of(G, exact_rows=8)
    row = forced_row_bound(model, ForcedColumns(G, model, forced), k)
    assert best <= row.value < 0.75 * unconstrained
    out = exact(G, k, eigen=top_eigenpairs(G, 3, method="dense"), forced=forced)
    assert out.exact and 6 in out.indices and out.value == pytest.approx(best, rel=1e-12)


def _run(case_seed, solver):
    rng = np.random.default_rng(case_seed)
    kind = KINDS[case_seed % len(KINDS)]
    A, S = hostile_matrix(rng, kind, int(rng.integers(8, 13)))
    n = A.shape[0]
    k = int(rng.integers(2, 5))
    include = rng.choice(n, size=int(rng.integers(1, min(2, k - 1) + 1)), replace=False)
    exclude = rng.choice(np.setdiff1d(np.arange(n), include), size=int(rng.integers(0, 3)),
                         replace=False)
    deflation = "remove" if rng.random() < 0.6 else "projection"
    K = int(rng.integers(1, 4))
    if deflation == "remove":
        K = max(1, min(K, (n - exclude.size - include.size) // (k - include.size)))
    data = corpus_input(S) if S is not None and rng.random() < 0.5 else matrix_input(A)
    labels = data.vocabulary if hasattr(data, "vocabulary") else data.labels
    options = {"exact": False, "samples": 100} if solver == "nonneg" else {}
    with warnings.catch_warnings(), spy_on_trusted() as calls:
        warnings.simplefilter("ignore")
        result = run_topics(data, solver=solver, k=k, n_components=K, rank=2,
                            deflation=deflation, include=[labels[i] for i in include],
                            exclude=[labels[i] for i in exclude], solver_options=options)
    G = (Gram.from_documents(sp.csr_array(S)) if hasattr(data, "vocabulary")
         else Gram.from_dense(A))
    return G, k, include, exclude, deflation, result, calls


@pytest.mark.parametrize("solver", SINGLE)
@pytest.mark.parametrize("seed", range(5))
def test_every_solver_keeps_the_words_and_its_bounds_hold(seed, solver):
    """Every topic holds the included words and none of the excluded; every bound the run
    considers is at least the best topic holding the included words on that topic's view."""
    G, k, include, exclude, deflation, result, calls = _run(1000 + 17 * seed, solver)
    view = G.remove(exclude) if exclude.size else G
    scale = max(float(np.abs(np.linalg.eigvalsh(G.to_dense())).max()), 1e-300)
    for topic, bound_list in zip(result.components, calls):
        words = set(topic.indices.tolist())
        assert set(include.tolist()) <= words, (seed, solver)
        assert not words & set(exclude.tolist()), (seed, solver)
        best = best_holding(view.to_dense(), view.active(), k, include)
        floor = best * (1 - RTOL) - 1e-12 * scale
        for value, source in bound_list:
            assert value >= floor, (seed, solver, topic.index, source, value, best)
        assert topic.upper_bound >= floor
        if solver == "exact":
            assert topic.problem_value == pytest.approx(best, rel=1e-9, abs=1e-9 * scale)
        if deflation == "remove":
            view = view.remove(np.setdiff1d(topic.indices, include))
        else:
            x = np.zeros(G.n)
            x[topic.indices] = topic.weights
            view = view.project_out(x)
    assert result.constraints is not None and result.total_bound is None
