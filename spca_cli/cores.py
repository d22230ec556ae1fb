"""How many cores this process may use: the one answer every parallel stage asks."""

from __future__ import annotations

import os

__all__ = ["available_cores"]


def available_cores():
    """The cores this process may run on (its CPU affinity on Linux, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
