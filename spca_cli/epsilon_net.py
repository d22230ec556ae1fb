"""How many random directions an epsilon-net of the unit sphere of R^d needs, and what a
given number reaches: the arithmetic of the nonnegative spannogram's epsilon-net mode
(:mod:`spca_cli.solvers.nonneg`), here below both that solver and :mod:`spca_cli.limits`, which
refuses a net too large to draw before any work starts.
"""

from __future__ import annotations

import math

from scipy.special import betainc, betaincinv

__all__ = ["cap_probability", "samples_for_epsilon", "epsilon_for_samples"]


def cap_probability(epsilon, d):
    """P(|c^T c*|^2 >= 1 - epsilon) for c uniform on the unit sphere of R^d and any fixed c*.

    c_1^2 ~ Beta(1/2, (d-1)/2), so 1 - c_1^2 ~ Beta((d-1)/2, 1/2) and the probability is the
    regularised incomplete beta function I_epsilon((d-1)/2, 1/2). For d = 3 it is
    1 - sqrt(1 - epsilon).
    """
    if d <= 1:
        return 1.0
    return float(betainc((d - 1) / 2.0, 0.5, epsilon))


def samples_for_epsilon(epsilon, d, delta):
    """Smallest N with (1 - p)^N <= delta, p = :func:`cap_probability` (epsilon, d).

    With N such samples, some sample c has |c^T c*|^2 >= 1 - epsilon with probability at least
    1 - delta, where c* = V^T x_d / ||V^T x_d|| belongs to the rank-d optimum x_d; the rank-1
    solver on that c then returns x with x^T A_d x >= (c^T V^T x_d)^2 >= (1 - epsilon) OPT_d.
    """
    p = cap_probability(epsilon, d)
    if p >= 1.0:
        return 1
    return max(1, math.ceil(math.log(delta) / math.log1p(-p)))


def epsilon_for_samples(samples, d, delta):
    """The epsilon that ``samples`` random directions reach with probability >= 1 - delta."""
    if d <= 1:
        return 0.0
    p_needed = -math.expm1(math.log(delta) / samples)  # 1 - delta^(1/N)
    return float(min(1.0, betaincinv((d - 1) / 2.0, 0.5, p_needed)))
