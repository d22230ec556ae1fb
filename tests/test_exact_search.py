"""exact searches until it proves the topic or meets its time limit: no word count stops it
early (auto's budgeted search still stops where branching would cost more than it buys)."""

from __future__ import annotations

import itertools

import numpy as np

import spca_cli.solvers.exact as exact_module
from spca_cli.matrix import Gram
from spca_cli.solvers.exact import auto, exact
from _builders import small_corpus


def _brute(A, k):
    D = A.to_dense()
    return max(float(np.linalg.eigvalsh(D[np.ix_(I, I)])[-1])
               for I in itertools.combinations(range(A.n), k))


def test_exact_branches_over_more_survivors_than_auto_would(monkeypatch):
    monkeypatch.setattr(exact_module, "_MAX_BRANCH", 2)
    A = Gram.from_documents(small_corpus(m=200, n=16, seed=3))
    out = exact(A, 4)
    assert out.exact and out.info["survivors"] == 7  # more than auto branches over
    assert out.bounds[0][1] == "branch and bound: optimal"
    assert abs(out.value - _brute(A, 4)) <= 1e-9 * out.value
    stopped = auto(A, 4, budget=1e6)
    assert not stopped.exact
    assert stopped.bounds[0][1] == "weighted row sums of the screened words"
    assert stopped.bounds[0][0] >= out.value
