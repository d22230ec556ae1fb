"""How spca's own processes start and end: the command line's process and the worker
processes of a parallel read (:mod:`spca_cli.corpus.read`) and of ``--by``
(:mod:`spca_cli.groups`).

* :func:`quick_exit`: a process that is about to end skips the collection of the objects it
  still holds. The interpreter's shutdown runs the cyclic garbage collector over every object
  alive, and with numba's typing registries loaded that took 0.25-0.3 s at the end of every
  run (0.06 s with them frozen): a fifth of the in-process time of a default run on the
  airline tweets, and as much again in each ``--by`` worker, whose end the run waits for.
  Nothing of spca's needs that collection: outputs are written and closed before (atomically,
  :mod:`spca_cli.files`), temporary files are removed by their own exit handlers, and the
  operating system takes the memory back.
* :func:`worker_start`: the initializer of every worker pool.
"""

from __future__ import annotations

import atexit
import gc
import os
import signal

__all__ = ["quick_exit", "worker_start"]


def quick_exit():
    """At this process's exit, after the other exit handlers (registered later, they run
    first), freeze every object so that the shutdown's garbage collections pass over them
    (:func:`gc.freeze`). For a process that ends after its work: the command line, a worker;
    never a library caller's, which goes on."""
    atexit.register(gc.freeze)


def worker_start():
    """A worker's SIGTERM ends it (the default): the pool ends the others that way when one
    dies, and a worker forked inside the CLI inherits its handler, which turns SIGTERM into
    SystemExit, whose exit then waits on a result pipe the pool no longer reads. Ctrl-C (SIGINT
    to the terminal's whole process group) ends a worker at once and without a word: the
    process that started it reports the interruption (a worker's KeyboardInterrupt printed its
    traceback under the command's "Aborted!"). A spawned worker ends quickly
    (:func:`quick_exit`; a forked one leaves by ``os._exit``)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, _interrupted)
    quick_exit()


def _interrupted(signum, _frame):
    os._exit(128 + signum)
