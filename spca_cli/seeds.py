"""``random_state`` -> a ``numpy.random.RandomState``: the one place a seed becomes a generator."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["random_state_of"]


def random_state_of(seed):
    """The generator of ``seed``: an int seeds a new one, a RandomState is used as is, None
    draws fresh entropy.

    What scikit-learn's ``check_random_state`` does for the seeds spca accepts
    (:func:`spca_cli.params.check_random_state_param` checks them first), without importing
    scikit-learn here: its package import (scipy.stats, and pandas when installed) took
    1.2-1.6 s, more than half of every CLI start.

    >>> random_state_of(0).randint(100) == random_state_of(0).randint(100)
    True
    """
    if isinstance(seed, np.random.RandomState):
        return seed
    if seed is None or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool)):
        return np.random.RandomState(seed)
    raise ValueError(f"{seed!r} cannot seed a numpy.random.RandomState")
