"""The dense eigen steps (LAPACK on A, the Rayleigh-Ritz of a topics run's coordinate start)
take the full decomposition when LAPACK's subset driver fails: its MRRR algorithm raised
"Internal Error" on a 42-word block diagonal matrix with entries from 1e-6 to 2e8 and a repeated
top eigenvalue, which ended ``run_topics(..., eigensolver="krylov")`` with a LinAlgError."""

from __future__ import annotations

import types

import numpy as np
import pytest
import scipy.linalg

from spca_cli import bounds, spectrum
from spca_cli.matrix import Gram
from spca_cli.spectrum import top_eigenpairs
from spca_cli.topics import run_topics
from _brute_force_bounds import draw_case


def _wide_range_matrix():
    """The matrix of the failure, its words in the coordinate start's order (largest diagonal
    first), where LAPACK's subset driver failed for 31-33 and 37-41 of its 42 pairs."""
    A = draw_case(4346, blocks=True)["A"]
    words = bounds.first_exact_words(Gram.from_dense(A))
    return A[np.ix_(words, words)]


def test_topics_run_on_the_wide_range_matrix():
    A = _wide_range_matrix()
    data = types.SimpleNamespace(A=A, labels=[str(i) for i in range(A.shape[0])], path="m.npy")
    result = run_topics(data, solver="greedy", k=4, n_components=3, rank=3,
                        eigensolver="krylov")
    for topic in result.components:
        assert topic.upper_bound >= topic.problem_value * (1 - 1e-9)


@pytest.mark.parametrize("p", [31, 32, 33, 37, 40, 41])
def test_dense_pairs_of_the_wide_range_matrix(p):
    A = _wide_range_matrix()
    lam = np.linalg.eigvalsh(A)[::-1]
    eigen = top_eigenpairs(Gram.from_dense(A), p, method="dense")
    assert eigen.values[:5] == pytest.approx(lam[:5], rel=1e-9)


def test_a_failing_subset_driver_falls_back_to_the_full_decomposition(monkeypatch):
    """Whatever the LAPACK build: a subset call that raises is answered by the full one."""
    eigh = scipy.linalg.eigh

    def refuse_subsets(M, *args, **kwargs):
        if "subset_by_index" in kwargs:
            raise np.linalg.LinAlgError("Internal Error.")
        return eigh(M, *args, **kwargs)

    monkeypatch.setattr(spectrum.scipy.linalg, "eigh", refuse_subsets)
    rng = np.random.default_rng(0)
    B = rng.random((30, 12))
    A = B @ B.T
    lam = np.linalg.eigvalsh(A)[::-1]
    gram = Gram.from_dense(A)
    assert top_eigenpairs(gram, 4, method="dense").values == pytest.approx(lam[:4], rel=1e-9)
    eigen = top_eigenpairs(gram, 4, method="krylov", coordinates=np.arange(30))
    assert eigen.values == pytest.approx(lam[:4], rel=1e-6)
