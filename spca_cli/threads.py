"""One BLAS thread for the small dense steps (eigh of a few hundred rows, the matchings'
products, a ``--by`` group): two BLAS threads spin-waiting for each other on busy cores made
a 100 x 100 eigh take 0.1 s instead of 1 ms.

:func:`one_blas_thread` asks threadpoolctl (scikit-learn's own dependency, which knows every
BLAS a process has loaded, OpenBLAS or MKL, numpy's or scipy's) only when no enclosing call
holds the limit already: each of its calls looks up the loaded libraries again (1.5 ms), and
the steps of a ``--by`` run, each group already on one thread, made 219 such calls (0.33 s of
the fortunes' 35 groups).
"""

from __future__ import annotations

import contextlib
import contextvars

__all__ = ["one_blas_thread"]

#: True inside :func:`one_blas_thread` (per thread and task, as a context variable is)
_HELD = contextvars.ContextVar("spca_one_blas_thread", default=False)


@contextlib.contextmanager
def one_blas_thread():
    """BLAS on one thread inside the block (nested blocks cost nothing)."""
    if _HELD.get():
        yield
        return
    from threadpoolctl import threadpool_limits

    token = _HELD.set(True)
    try:
        with threadpool_limits(1, user_api="blas"):
            yield
    finally:
        _HELD.reset(token)
