"""The spannogram's early refusal counts classes from the leading ones first
(``_fewest_classes``): the same count as looking at every class, on random class sets whose
norms fall fast (heavy tails) and with heads of 1-50 classes, so most directions need the rest."""

from __future__ import annotations

import numpy as np
import pytest

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
