"""Remove deflation gives disjoint topics of words still active, whatever the solver, also when a
view's leading eigenvector has fewer than k nonzero entries on its active words (a rank-1 or
block diagonal matrix: LAPACK's eigenvector is exactly zero off one block). threshold once
filled such a support with the lowest-numbered words, removed ones included: the second topic
of a rank-1 matrix reused a word of the first, and the third topic's explained variance,
measured on the original matrix, took the total above its own bound (a RuntimeError)."""

from __future__ import annotations

import types

import numpy as np
import pytest
import scipy.sparse as sp

from spca_cli.solvers.registry import REGISTRY
from spca_cli.topics import run_topics


def _matrix_input(A):
    return types.SimpleNamespace(A=A, labels=[str(i) for i in range(A.shape[0])], path="m.npy")


def test_threshold_on_a_rank1_matrix_keeps_its_topics_disjoint():
    s = np.array([3.0, 0, 2, 0, 1, 0, 0, 0, 1])
    result = run_topics(_matrix_input(np.outer(s, s)), solver="threshold", k=3, n_components=3,
                        rank=1, deflation="remove")
    supports = [set(t.indices.tolist()) for t in result.components]
    assert supports[0] == {0, 2, 4}
    assert not supports[0] & supports[1] and not (supports[0] | supports[1]) & supports[2]
    assert result.total_explained_variance == pytest.approx(15.0)
    assert result.total_bound.value >= result.total_explained_variance * (1 - 1e-9)


def _sparse_eigenvector_matrices():
    out = []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(9, 14))
        if seed % 2:  # rank 1 with zero entries
            s = rng.random(n) * (rng.random(n) < 0.5)
            s[0] = 1.0
            out.append(("rank1", np.outer(s, s)))
        else:  # blocks of 1-3 words, some words never occurring
            blocks = [rng.random((3, int(rng.integers(1, 4)))) for _ in range(3)]
            S = sp.block_diag(blocks).toarray()
            A = S.T @ S
            A = np.pad(A, (0, n - A.shape[0])) if n > A.shape[0] else A
            perm = rng.permutation(A.shape[0])
            out.append(("blocks", A[np.ix_(perm, perm)]))
    return out


@pytest.mark.parametrize("eigensolver", ["dense", "krylov"])
@pytest.mark.parametrize("solver", [name for name in sorted(REGISTRY) if not REGISTRY[name].joint])
def test_remove_deflation_topics_are_disjoint_and_active(solver, eigensolver):
    options = {"exact": False, "samples": 100} if solver == "nonneg" else {}
    for kind, A in _sparse_eigenvector_matrices():
        n = A.shape[0]
        k = 3
        K = n // k
        result = run_topics(_matrix_input(A), solver=solver, k=k, n_components=K, rank=2,
                            deflation="remove", eigensolver=eigensolver, solver_options=options)
        used = set()
        for topic in result.components:
            support = set(topic.indices.tolist())
            assert len(support) == k, (kind, topic.index)
            assert not support & used, (kind, topic.index, sorted(support & used))
            used |= support
        total = result.total_explained_variance
        assert result.total_bound.value >= total * (1 - 1e-9) - 1e-12
        # disjoint unit vectors of a PSD matrix explain at most its trace
        assert total <= np.trace(A) * (1 + 1e-9) + 1e-12
