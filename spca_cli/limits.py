"""Refusing work that cannot finish, before it starts, with the estimate that says why.

Every size a user can type (samples, trials, days, documents, matrix order) is checked here
against two budgets: memory (what the arrays would take, against this machine's physical
memory) and time (a count of elementary steps above which a run would take hours). A run over
the time budget is refused unless it has a time limit (``--time-limit``), which bounds it
anyway; a run over the memory budget is refused always, since no time limit saves an
allocation that fails. The spannogram's own refusal (more than 50 million intersection points)
works the same way and lives with the solver.

It imports only :mod:`spca_cli.errors` (and, to size nonneg's net for an epsilon,
:mod:`spca_cli.epsilon_net`), so that every layer can check its sizes here: the corpus readers,
the spectrum, the solver registry. Which check a solver's options get is its registry entry's
``check_work``, run by :func:`spca_cli.params.check_fit`.
"""

from __future__ import annotations

import os

from spca_cli.errors import Name, SpcaParameterError

__all__ = ["physical_memory", "memory_exceeded", "check_memory", "format_bytes",
           "MAX_BIPARTITE_SAMPLES", "MAX_NET_SAMPLES", "MAX_REPRODUCE_RUNS", "MAX_DAYS",
           "bipartite_work", "nonneg_work", "check_run_count",
           "dense_matrix_bytes", "MAX_GRAM_TRACE", "MAX_LINE_BYTES"]

#: bipartite samples without --time-limit: about an hour at the 2,800 samples/s measured on
#: KOS (K = 8, k = 10, rank 4, two threads)
MAX_BIPARTITE_SAMPLES = 10_000_000
#: nonneg epsilon-net directions without --time-limit: each costs a pass over the words
#: (about 0.5 ms on KOS), so this is again about an hour there
MAX_NET_SAMPLES = 10_000_000
#: run_topics calls of one reproduce config (trials x sample sizes x runs, or days x runs);
#: the largest shipped config makes 1,000, each taking from milliseconds to seconds
MAX_REPRODUCE_RUNS = 200_000
#: days of one ``daily`` reproduce config: ten years, one table column per day
MAX_DAYS = 3660
#: the largest trace(A) = sum of the squared entries of S a matrix input may have: every entry
#: and eigenvalue of A is at most its trace, and the solvers multiply entries of A together
#: (x'A^2 x, squared row norms over up to ~1e8 words), which stays finite in float64 (max
#: ~1.8e308) only while trace^2 times the words does; real counts give traces below 1e30
MAX_GRAM_TRACE = 1e100
#: the longest line (a JSON lines record, a CSV row, a text document, a UCI entry) an input may
#: hold: a tweet takes a few kB, a long article a few MB; a file without line ends (a gzip of
#: NUL bytes, a binary file named .txt) is refused here instead of growing one string until
#: memory runs out
MAX_LINE_BYTES = 64 * 2 ** 20


def physical_memory():
    """Bytes of physical memory of this machine, or None when the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def format_bytes(n):
    """``n`` bytes for a message: '3.2 GB', '728 TiB' style with decimal units."""
    n = float(n)
    for unit in ("bytes", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000:
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} EB" if n < 1e6 else f"{n:.3g} EB"


def memory_exceeded(n_bytes):
    """A sentence saying ``n_bytes`` exceed this machine's memory, or None when they fit."""
    total = physical_memory()
    if total is None or n_bytes <= total:
        return None
    return (f"needs about {format_bytes(n_bytes)} of memory, more than this machine's "
            f"{format_bytes(total)}")


def check_memory(n_bytes, what):
    """Raise SpcaParameterError naming ``what`` when ``n_bytes`` exceed physical memory."""
    problem = memory_exceeded(n_bytes)
    if problem is not None:
        raise SpcaParameterError(f"{what} {problem}")


def _count(n):
    return f"{n:,}" if n < 1e15 else f"{n:.3g}"


def bipartite_work(n_words, *, rank, time_limit, options):
    """bipartite's samples against the time budget (the memory per sample is small)."""
    samples = options.get("samples")
    n = 2000 if samples is None else samples
    if time_limit is None and n > MAX_BIPARTITE_SAMPLES:
        hours = n / 2800 / 3600
        raise SpcaParameterError([
            f"bipartite with {_count(n)} samples would take about {hours:,.3g} hours (at "
            "the ~2,800 samples/s measured on KOS); the limit without ", Name("time_limit"),
            f" is {MAX_BIPARTITE_SAMPLES:,}: give fewer ", Name("samples"), " or a ",
            Name("time_limit")])


def nonneg_work(n_words, *, rank, time_limit, options):
    """nonneg's epsilon-net samples (given, or needed for ``epsilon``) against both budgets."""
    samples, epsilon = options.get("samples"), options.get("epsilon")
    if samples is None and epsilon is None:
        return
    if samples is None:
        from spca_cli.epsilon_net import samples_for_epsilon  # SciPy: only for an epsilon

        # the solver uses delta = min(0.01, 1/n) and the effective rank <= rank, which
        # needs no more samples than rank itself
        try:
            n = samples_for_epsilon(epsilon, max(rank, 1), min(0.01, 1.0 / max(n_words, 1)))
        except (ZeroDivisionError, OverflowError, ValueError):
            n = None  # the cap probability underflows to 0: no number of samples is enough
        if n is None:
            raise SpcaParameterError(["nonneg: ", Name("epsilon"), f" {epsilon:g} is too "
                                      "small: the epsilon-net would need more samples than "
                                      "can be drawn; give a larger ", Name("epsilon")])
        what = [Name("epsilon"),
                f" {epsilon:g} needs {_count(n)} epsilon-net samples at rank {rank}"]
    else:
        n = samples
        what = [f"{_count(n)} epsilon-net samples"]
    problem = memory_exceeded(8 * n * max(rank, 1))
    if problem is not None:
        raise SpcaParameterError(["nonneg: ", *what, f", which {problem}; give a larger ",
                                  Name("epsilon"), " or fewer ", Name("samples")])
    if time_limit is None and n > MAX_NET_SAMPLES:
        raise SpcaParameterError([
            "nonneg: ", *what, f", more than the {MAX_NET_SAMPLES:,} allowed without ",
            Name("time_limit"), f" (each is a pass over the {n_words:,} words); give a "
            "larger ", Name("epsilon"), ", fewer ", Name("samples"), " or a ",
            Name("time_limit")])


def check_run_count(runs, what):
    """Refuse a reproduce config that would make more than MAX_REPRODUCE_RUNS solver runs."""
    if runs > MAX_REPRODUCE_RUNS:
        raise SpcaParameterError(f"{what} make {_count(runs)} solver runs, more than the "
                                 f"{MAX_REPRODUCE_RUNS:,} a config may make")


def dense_matrix_bytes(n, copies=1):
    """Bytes of ``copies`` dense float64 n x n matrices (exact, as a Python int)."""
    return 8 * int(n) * int(n) * copies
