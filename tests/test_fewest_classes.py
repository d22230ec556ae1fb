"""The spannogram's early refusal counts classes from the leading ones first
(``_fewest_classes``): the same count as looking at every class, on random class sets whose
norms fall fast (heavy tails) and with heads of 1-50 classes, so most directions need the rest,
and against a brute-force count of the k-th largest amplitude over every word (ties, zero rows,
lattices, rows on one axis or parallel to a direction, tiny heads)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spca_cli.solvers.spannogram as spannogram


@pytest.mark.parametrize("seed", range(6))
def test_the_head_first_gives_the_count_of_every_class(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n, d, k = int(rng.integers(5, 3000)), int(rng.integers(2, 4)), int(rng.integers(1, 30))
        Vc = rng.standard_normal((n, d)) * rng.exponential(1.0, (n, 1)) ** 3
        norms = np.linalg.norm(Vc, axis=1)
        order = np.argsort(-norms, kind="stable")
        Vc, norms = Vc[order], norms[order]
        mult = rng.integers(1, 4, n)
        counts = []
        for head in (int(rng.integers(1, 50)), 10 ** 9):
            monkeypatch.setattr(spannogram, "_FEWEST_HEAD", head)
            counts.append(spannogram._fewest_classes(Vc, norms, mult, k, 1e-9,
                                                     np.random.default_rng(1)))
        assert counts[0] == counts[1]
    # classes of one norm along one direction: every one counts (the refusal's own cases are
    # in tests/test_spannogram.py)
    monkeypatch.setattr(spannogram, "_FEWEST_HEAD", 2)
    flat = np.ones((50, 2)) / np.sqrt(2.0)
    assert spannogram._fewest_classes(flat, np.ones(50), np.ones(50, dtype=np.int64), 3, 1e-9,
                                      np.random.default_rng(0)) == 50


def _fewest_by_brute_force(Vc, norms, mult, k, tol, rng, tries=64):
    d = Vc.shape[1]
    directions = np.vstack([np.eye(d), rng.standard_normal((tries, d))])
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    if int(mult.sum()) < k:
        return 0
    amp = np.abs(directions @ Vc.T)
    kth = [np.sort(np.repeat(a, mult))[::-1][k - 1] for a in amp]
    return int(np.sum(norms >= min(kth) - 4.0 * tol))


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(1, 300), d=st.integers(2, 4),
       k=st.integers(1, 12), kind=st.sampled_from(["ties", "zeros", "lattice", "heavy",
                                                   "one axis", "parallel"]),
       head=st.integers(1, 6), tol=st.sampled_from([0.0, 1e-9, 1e-3]))
def test_fewest_classes_is_the_count_of_every_class(monkeypatch, seed, n, d, k, kind, head,
                                                    tol):
    """Classes by decreasing norm with tied rows, zero rows, lattice rows (many equal norms and
    amplitudes), heavy tails, rows on one axis (amplitudes equal to norms) and rows parallel to
    one of the random directions; heads of 1-6 (at least 4 k are looked at), k above the number
    of classes: the same count as the k-th largest over every word."""
    monkeypatch.setattr(spannogram, "_FEWEST_HEAD", head)
    rng = np.random.default_rng(seed)
    if kind == "ties":
        Vc = rng.integers(-2, 3, (3, d)).astype(float)[rng.integers(0, 3, n)]
    elif kind == "zeros":
        Vc = rng.standard_normal((n, d)) * (rng.random((n, 1)) < 0.5)
    elif kind == "lattice":
        Vc = rng.integers(-1, 2, (n, d)).astype(float)
    elif kind == "heavy":
        Vc = rng.standard_normal((n, d)) * rng.exponential(1.0, (n, 1)) ** 4
    elif kind == "one axis":
        Vc = np.zeros((n, d))
        Vc[:, 0] = rng.choice([1.0, 0.5, 0.25, -1.0], n)
    else:
        directions = np.random.default_rng(seed + 1).standard_normal((64, d))
        c = directions[0] / np.linalg.norm(directions[0])
        Vc = rng.integers(1, 4, (n, 1)) * c[None, :] + rng.integers(-1, 2, (n, d)) * 1e-17
    norms = np.linalg.norm(Vc, axis=1)
    order = np.argsort(-norms, kind="stable")
    Vc, norms = np.ascontiguousarray(Vc[order]), norms[order]
    mult = rng.integers(1, 4, n).astype(np.int64)
    got = spannogram._fewest_classes(Vc, norms, mult, k, tol, np.random.default_rng(seed + 1))
    want = _fewest_by_brute_force(Vc, norms, mult, k, tol, np.random.default_rng(seed + 1))
    assert got == want
