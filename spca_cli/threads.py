"""The threads of a run beside numba's.

:func:`beside` runs a step on a second thread while the run goes on, where numba's parallel
kernels may be launched from two threads at once. A default run's own steps keep the second
core busy only part of the time (on the bundled KOS sample, one core and a third on average
with the kernels' threads waiting passively), so a step that waits on nothing the run does
next takes little wall time there: A's certificate beside the first eigen step, the sketch
and the first set search (``topics.run_topics``), the exact rows the set's views will take
beside the set search (``bounds.SharedRows.ahead``), and the disjoint stars that bound the
set's total (0.2-0.3 s) beside the set's last steps. The kernels the threads call release
the GIL (``nogil``); loading one from numba's cache does not (numba's compiler lock holds
its loads in turn).

One BLAS thread for the small dense steps (eigh of a few hundred rows, the matchings'
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
import threading
from concurrent.futures import Future

__all__ = ["one_blas_thread", "beside", "kernels_run_beside"]

#: numba's threading layers that launch parallel kernels from several threads at once (the
#: ``workqueue`` layer, numba's fallback without OpenMP or TBB, aborts the process instead)
_THREADSAFE_LAYERS = ("omp", "tbb")

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


def _run_into(future, context, threads, function, args, kwargs):
    """The second thread of :func:`beside`: ``function``'s value (or exception) into
    ``future``, its kernels on ``threads`` threads (numba's count is per thread)."""
    import numba

    numba.set_num_threads(threads)
    try:
        future.set_result(context.run(function, *args, **kwargs))
    except BaseException as error:  # (raised again where its result is asked for)
        future.set_exception(error)


def kernels_run_beside():
    """Whether a second thread may launch numba's parallel kernels while this one does: the
    process's threading layer launches them from several threads at once, and this thread
    runs them on more than one."""
    import numba

    # (numba.get_num_threads starts numba's threads, choosing the layer, as the process's
    # first parallel kernel would)
    count = numba.get_num_threads()
    return numba.threading_layer() in _THREADSAFE_LAYERS and count > 1


def beside(function, *args, **kwargs):
    """``function(*args, **kwargs)`` on a second thread where :func:`kernels_run_beside`, here
    and at once elsewhere; returns a :class:`concurrent.futures.Future` whose ``result()`` waits
    for its value (or raises its exception). The second thread runs numba's kernels on as many
    threads as this one. ``function`` must share no state the caller changes meanwhile: the
    same value either way."""
    future = Future()
    if not kernels_run_beside():
        future.set_result(function(*args, **kwargs))
        return future
    import numba

    # a daemon: a run stopped early (Ctrl-C, a time limit) does not wait for it
    threading.Thread(target=_run_into, name="spca-beside", daemon=True,
                     args=(future, contextvars.copy_context(), numba.get_num_threads(),
                           function, args, kwargs)).start()
    return future
