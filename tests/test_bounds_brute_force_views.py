"""Every bound a topics run considers, per topic and for the total, against the brute-force
optimum of the problem it bounds, on hostile matrices (tests/_brute_force_bounds.py): small
ones of 6-12 words of every kind, and block diagonal ones of 14-48 words where the eigensolvers'
bases do not fill the space. Every solver of the registry, the eigensolvers auto, krylov,
arpack and dense, both deflations, 1-4 topics of 2-4 words, with the certificate's budgets
shrunk at random (row prefixes of 1-3 entries and their fallback, 1-3 exact rows, escalation
steps of a few rows, every row exact at once, the parallel kernel).

The bound lists are taken where the run picks each certificate (a spy on ``bounds.trusted``),
so a bound that lies behind a sharper one, or one the run drops, is checked too; a view's
optimum is the best support of its active words (remove: the earlier topics' words taken out;
projection: the view made again from the reported topics), the total's the best K disjoint
supports of the original matrix. On the seeds kept here every bound holds; the seeds of the
failures found are kept as well, as plain tests.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from _brute_force_bounds import draw_case, matrix_input, run_case, violations
from spca_cli.topics import run_topics

NONNEG = {"exact": False, "samples": 100}

# block diagonal seeds whose run takes seconds: 9 (a rank-3 spannogram, as auto's incumbent,
# on a view whose eigenvalues 2-6 are equal: 28 s for 29 words), 45 and 274
SLOW = {9, 45, 274}


def _check(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result, calls = run_case(case)
    bad = violations(case, result, calls)
    assert not bad, (case["seed"], case["kind"], case["solver"], case["eigensolver"],
                     case["deflation"], bad)


@pytest.mark.parametrize("seed", range(88))
def test_small_hostile_matrices(seed):
    """11 kinds x 8 solvers, one draw each (the suite's time: a sweep of 3 draws, 264 seeds,
    ran clean)."""
    _check(draw_case(seed))


@pytest.mark.parametrize("seed", [s for s in range(80) if s not in SLOW])
def test_block_diagonal_matrices(seed):
    _check(draw_case(seed, blocks=True))


# Failures found by the search (seeds 0-8999 of each generator, and runs of them with other
# solvers), now fixed:
FIXED = {
    # threshold filled a remove view's support with removed words (a rank-1 matrix: its leading
    # eigenvector has fewer than k nonzero active entries); the third topic's variance took the
    # total above its bound, a RuntimeError
    (2183, False): {},
    # LAPACK's subset eigh raised "Internal Error" in the coordinate start (entries 1e-6 to
    # 2e8, a repeated eigenvalue): a LinAlgError
    (4346, True): {},
    # a rank-1 matrix under projection deflation: once two topics took its variance the view is
    # zero, the spannogram (auto's first topic there) scored its candidates at rounding's size,
    # the best below zero, and its window (best * (1 - 1e-10), above a negative best) kept none
    # of them: a TypeError
    (36085, False): {},
    # a rank-1 matrix under projection deflation: the second view is zero up to rounding, and
    # the test whether the next view may guess compared the truncated power method's value
    # (3.48e-17) with a row bound of rounding's size (3.39e-17) without the rounding the report
    # covers (bounds.cover_rounding): a RuntimeError
    (6154, False): {},
}


@pytest.mark.parametrize("seed,blocks", sorted(FIXED))
def test_cases_that_failed(seed, blocks):
    _check(draw_case(seed, blocks=blocks, **FIXED[seed, blocks]))


# A later eigen call (a warm start from the last Ritz block after projection, or the carried
# basis of a remove view) ended with converged residuals after one or two block products and
# missed an eigenvalue that projecting or removing the last topic brought up, yet counted its
# pairs as verified (Eigen.verified = min(p, random columns), which had not been multiplied
# often enough to show it). The topic's lambda_1 bound, theta_1 + r_1, was then below what
# another support of that view attains, and when the solver followed the same eigenvector it was
# printed (tests/test_eigen_ceilings_adversarial.py has the calls alone). "printed": the topic's
# upper_bound itself; else a bound the run dropped as below the topic found.
MISSED_EIGENVALUE = {
    (975, True, "threshold"): "printed: topic 4 upper_bound 3.862 (lambda_1), optimum 4.485",
    (975, True, "auto"): "topic 4 lambda_1 3.862, optimum 4.485 (dropped)",
    (1612, True, "nonneg"): "printed: topic 4 upper_bound 4.682 (lambda_1), optimum 4.950",
    (13704, True, "nonneg"): "printed, remove deflation: topic 4 upper_bound 6.405, optimum 6.729",
    (3460, True, "exact"): "topic 2 lambda_1 15.79, optimum 22.28 (dropped)",
    (8322, True, "nonneg"): "printed: topic 2 upper_bound 9.709 (lambda_1), optimum 11.115",
    (8327, True, "spannogram"): "printed: topic 2 upper_bound 7.197 (lambda_1), optimum 12.122",
}
_OVERRIDES = {
    (975, True, "threshold"): dict(solver="threshold", eigensolver="krylov",
                                   deflation="projection", K=5, options={}),
    (1612, True, "nonneg"): dict(solver="nonneg", eigensolver="krylov", deflation="projection",
                                 K=4, options=NONNEG),
    (13704, True, "nonneg"): dict(solver="nonneg", eigensolver="krylov", deflation="remove",
                                  K=4, options=NONNEG),
}


def _missed_case(seed, blocks, solver):
    case = draw_case(seed, blocks=blocks, **_OVERRIDES.get((seed, blocks, solver), {}))
    assert case["solver"] == solver
    return case


@pytest.mark.parametrize("seed,blocks,solver", sorted(MISSED_EIGENVALUE))
def test_later_eigen_call_missed_an_eigenvalue(seed, blocks, solver):
    _check(_missed_case(seed, blocks, solver))


def _arpack_topics():
    n = 30
    d = np.linspace(1.0, 9.0, n)
    d[3] = d[7] = 10.0
    A = np.diag(d)
    result = run_topics(matrix_input(A), solver="nonneg", k=2, n_components=3, rank=1,
                        deflation="projection", eigensolver="arpack")
    first, second = result.components[:2]
    x = np.zeros(n)
    x[first.indices] = first.weights
    P = np.eye(n) - np.outer(x, x)
    view = P @ A @ P
    pair = np.array([3, 7])
    return second, float(np.linalg.eigvalsh(view[np.ix_(pair, pair)])[-1])


def test_arpack_after_projecting_its_own_ritz_vector_bounds_above_the_optimum():
    """A diagonal matrix with 10 on two words among 30: ARPACK's Ritz vector of 10 is its
    start's part on those words, nonneg takes it as the first topic's weights, and projection
    leaves the other copy of 10, orthogonal to that same start in the next call, which
    reported 9 as lambda_1 (its one verified pair): the second topic, 9, was printed as proven
    optimal beside the support of the two words, which attains 10 in that view."""
    second, attained = _arpack_topics()
    assert attained == pytest.approx(10.0)
    assert second.upper_bound >= attained * (1 - 1e-9), (second.upper_bound,
                                                         second.bound_source)
