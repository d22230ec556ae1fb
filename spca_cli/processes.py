"""How spca's own processes start and end: the command line's process and the worker
processes of a parallel read (:mod:`spca_cli.corpus.read`) and of ``--by``
(:mod:`spca_cli.groups`).

* :func:`own_process`: a process that runs spca's work and then ends (the command line's, a
  worker's) differs in two ways from a library caller's, which goes on after spca's work:

  - it skips the garbage collection of the objects it still holds at its exit. The
    interpreter's shutdown runs the cyclic garbage collector over every object alive, and with
    numba's typing registries loaded that took 0.25-0.3 s at the end of every run (0.06 s with
    them frozen): a fifth of the in-process time of a default run on the airline tweets, and
    as much again in each ``--by`` worker, whose end the run waits for. Nothing of spca's
    needs that collection: outputs are written and closed before (atomically,
    :mod:`spca_cli.files`), temporary files are removed by their own exit handlers, and the
    operating system takes the memory back;
  - it collects its young objects less often (:data:`_YOUNG_OBJECTS`): the default, a
    collection every 700 new container objects, spent 0.135 s of a default run on the bundled
    KOS sample (258 young collections, 23 middle, 2 full, the full ones walking numba's
    registries). Most of a run's new container objects are the code it loads (the modules
    imported when a command runs, numba's typing of each kernel loaded from its cache), which
    all survive: at 50,000 three young collections over them took 0.05 s (22, 17 and 10 ms); at
    1,000,000 a default run on the KOS sample, the airline tweets or KOS makes none (mypy's
    command line raises the threshold for the same reason). Cycles still go, later: a run's
    objects are mostly NumPy arrays, which the collector does not count, freed by their
    reference counts (the peak memory of those runs and of the fortunes' is the same).
* :func:`end_process`: the command line's process ends by ``os._exit`` once its exit
  handlers have run and its standard streams are flushed, as a forked ``multiprocessing``
  worker does: the interpreter's teardown of every module and object (numba's compiled code
  and registries among them) took 45-55 ms of every run (56-87 ms after the last exit handler,
  against 15-24 ms; six runs each on the bundled KOS sample), a fiftieth of a default run
  there. It ends the normal way (the same status) when a thread that is not a daemon is still
  running, whose end the interpreter would wait for, or when a stream's flush fails, so that
  the interpreter reports that as it would.
* :func:`keep_freed_memory`: once the command line has read its corpus, the memory it frees is
  kept for its next arrays (with the GNU C library; nothing elsewhere). By default every
  allocation above 32 MB is a fresh mapping, given back when freed, so each eigen step's blocks,
  each product's sums and each certificate's rows were new memory, whose first touch costs here
  1-3 ms per MB. On the dupes-1M benchmark's topics (926,752 documents, 197,316 words; three
  alternating fresh processes each) the page faults went from 181,000 to 120,000 and the topics
  after the read from a median of 8.14 s to 6.77 s; the whole run's peak from 1.423 to 1.436 GB.
  Not from the start: the read's freed memory, kept, fragmented the heap (peak 1.47-1.52 GB).
  From the same point NumPy no longer advises the kernel to back its large arrays with
  transparent huge pages (:func:`huge_page_advice`): where the system's policy is ``madvise``
  (many distributions', this machine's), a region so advised is faulted in as 2 MB pages, and
  when none is free at once the fault waits for the kernel to compact memory; the advice stays
  on heap memory after its array is freed, and every later array there (the numba kernels',
  which never ask) inherits it (numpy/numpy#31590). On the dupes-1M benchmark's topics after
  its read, three alternating processes each: system time 1.8-2.0 s -> 0.6-0.7 s, the topics
  7.2-7.6 s -> 6.1-6.7 s.
* :func:`worker_start`: the initializer of every worker pool.
* :func:`usable_cores`: how many processes a pool of them may keep busy.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import signal
import sys
import threading

__all__ = ["own_process", "end_process", "keep_freed_memory", "huge_page_advice", "worker_start",
           "children_ignore_ctrl_c", "usable_cores"]


def usable_cores():
    """The cores this process may run on (its CPU affinity; every core where there is none)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on every platform)
        return os.cpu_count() or 1


#: a young collection every this many new container objects (Python's default: 700), the older
#: generations every 20 of the one below (default: 10)
_YOUNG_OBJECTS, _OLDER_EVERY = 1_000_000, 20


def own_process():
    """Set up a process that runs spca's work and then ends (see the module's docstring):
    garbage collected less often (:data:`_YOUNG_OBJECTS`) and, at its exit, after
    the other exit handlers (registered later, they run first), every object frozen so that
    the shutdown's garbage collections pass over them (:func:`gc.freeze`). Never for a library
    caller's process, which goes on."""
    gc.set_threshold(_YOUNG_OBJECTS, _OLDER_EVERY, _OLDER_EVERY)
    atexit.register(gc.freeze)


def end_process(code):
    """End this process with the status of ``SystemExit(code)`` (see the module's docstring):
    once the exit handlers have run and stdout and stderr are flushed, by ``os._exit``, without
    the interpreter's teardown. Raises ``SystemExit(code)`` instead, the interpreter's own end,
    when a thread that is not a daemon is still running, when ``code`` is neither None nor an
    int, or when a flush fails. For spca's own process only (:func:`own_process`)."""
    if code is None:
        code = 0
    if (not isinstance(code, int) or isinstance(code, bool)
            or any(t.is_alive() and not t.daemon and t is not threading.main_thread()
                   for t in threading.enumerate())):
        raise SystemExit(code)
    if not _flushed():
        raise SystemExit(code)
    atexit._run_exitfuncs()  # (as multiprocessing's workers do before their os._exit)
    if not _flushed():  # (what the handlers wrote)
        raise SystemExit(code)
    os._exit(code & 0xFF)


def _flushed():
    """Whether stdout and stderr (any that are open) flushed without an error."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:
                stream.flush()
        except (OSError, ValueError):
            return False
    return True


#: with the GNU C library: allocations up to this size come from (and return to) the process's
#: heap instead of fresh mappings, and up to this much free memory at its top is kept
_KEEP_BYTES = 1 << 30
# mallopt's parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def keep_freed_memory():
    """From here on, keep the memory this process frees for its next allocations (see the
    module's docstring; :data:`_KEEP_BYTES`), without NumPy's huge-page advice
    (:func:`huge_page_advice`): for spca's own process once its input is read, never for a
    library caller's. Returns whether the C library took it (the GNU C library's ``mallopt``;
    elsewhere its own policy stands)."""
    import ctypes

    huge_page_advice(False)
    try:
        mallopt = ctypes.CDLL(None).mallopt  # (the C library this interpreter runs on)
    except (AttributeError, OSError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, _KEEP_BYTES)) and bool(
        mallopt(_M_TRIM_THRESHOLD, _KEEP_BYTES))


def huge_page_advice(enabled):
    """Set whether NumPy advises the kernel (``madvise(MADV_HUGEPAGE)``) to back each new array
    of 4 MB or more with transparent huge pages, for this process (NumPy's default: yes, on
    Linux 4.6 and later; ``NUMPY_MADVISE_HUGEPAGE`` at its import). Returns the setting it had,
    to restore; None where this NumPy has no such switch (nothing changes)."""
    try:
        from numpy._core.multiarray import _set_madvise_hugepage
    except ImportError:
        try:
            from numpy.core.multiarray import _set_madvise_hugepage
        except ImportError:
            return None
    return bool(_set_madvise_hugepage(bool(enabled)))


def worker_start():
    """A worker's SIGTERM ends it (the default): the pool ends the others that way when one
    dies, and a worker forked inside the CLI inherits its handler, which turns SIGTERM into
    SystemExit, whose exit then waits on a result pipe the pool no longer reads. Ctrl-C (SIGINT
    to the terminal's whole process group) ends a worker at once and without a word: the
    process that started it reports the interruption (a worker's KeyboardInterrupt printed its
    traceback under the command's "Aborted!"). A worker that starts with SIGINT ignored keeps
    ignoring it: a run started so (``spca ... &`` in a script) goes on through a Ctrl-C, and a
    ``--by`` worker is started so (:func:`children_ignore_ctrl_c`) and stopped by the process
    that started it. A worker is spca's own process (:func:`own_process`; a forked one leaves
    by ``os._exit``)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _interrupted)
    own_process()


@contextlib.contextmanager
def children_ignore_ctrl_c():
    """Processes started inside the block ignore SIGINT (an ignored signal stays ignored
    through their exec), so that a Ctrl-C that reaches them while they start (before their
    :func:`worker_start`) prints no traceback; this process ignores it only for the block's
    few milliseconds, and the one that started them stops them (``GroupWorkers``). Not in the
    main thread: nothing changes."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # (signals are the main thread's)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _interrupted(signum, _frame):
    os._exit(128 + signum)
