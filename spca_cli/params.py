"""Checks of :func:`spca_cli.topics.run_topics`'s parameters, made before any work.

The CLI's click types already constrain what a user types; these checks give the Python API and
``spca reproduce`` configs the same guarantees: a bad value is a
:class:`~spca_cli.errors.SpcaParameterError` naming the parameter, and an unknown solver option
is an error, never silently ignored: the options and their constraints are the solver's entry in
:mod:`spca_cli.solvers.registry`.
"""

from __future__ import annotations

import math
import numbers
import sys

from spca_cli.errors import SpcaParameterError
from spca_cli.solvers.registry import COMMON_INPUTS

__all__ = ["SEED_MAX", "DEFLATIONS", "DEFAULTS", "OptionError", "FitError",
           "check_random_state_param", "check_eigensolver", "check_time_limit",
           "check_solver_options", "solver_option_names", "check_fit", "check_run",
           "resolve_deflation"]

#: NumPy's RandomState takes seeds in [0, 2**32 - 1]
SEED_MAX = 2 ** 32 - 1

#: how the topics are found together: as a set of disjoint topics searched jointly, or one at
#: a time, A changed between them (remove the topic's words, or project the topic out)
DEFLATIONS = ("joint", "remove", "projection")

#: The defaults of run_topics, ``spca topics`` and :class:`~spca_cli.estimator.SparseTopics`
DEFAULTS = {"solver": "auto", "k": 10, "n_components": 5, "rank": 2, "deflation": None,
            "random_state": 0}

#: arguments the pipeline passes to solvers itself; not options
RESERVED = frozenset({"A", "k", "n_components", *COMMON_INPUTS})


def resolve_deflation(solver, deflation):
    """``deflation`` as given, or, for None (the default), what the solver's topics are by
    default: the best set searched jointly for ``auto`` ("joint"), one topic at a time with
    each topic's words removed for a named solver ("remove": its paper's procedure, which the
    reproduced tables use)."""
    if deflation is not None:
        return deflation
    return "joint" if solver == "auto" else "remove"


class OptionError(SpcaParameterError):
    """A bad solver option; ``option`` is its name (reproduce adds it to the key path)."""

    def __init__(self, option, message):
        self.option = option
        self.reason = message
        super().__init__(f"solver_options: {option!r}: {message}")


class FitError(SpcaParameterError):
    """A run that does not fit its data; ``param`` is the run parameter at fault (``k``,
    ``rank``, ``n_components`` or ``solver_options``; reproduce turns it into a key path)."""

    def __init__(self, param, message):
        self.param = param
        super().__init__(message)


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value):
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(value))


def check_random_state_param(random_state, name="random_state"):
    """None, an int in [0, 2**32 - 1], or a ``numpy.random.RandomState``."""
    numpy = sys.modules.get("numpy")  # a RandomState is NumPy's: no import to tell one
    if random_state is None or (numpy is not None
                                and isinstance(random_state, numpy.random.RandomState)):
        return random_state
    if _is_int(random_state) and 0 <= random_state <= SEED_MAX:
        return int(random_state)
    raise SpcaParameterError(f"{name} must be None, an int in [0, {SEED_MAX}] or a "
                             f"numpy.random.RandomState, got {random_state!r}")


def check_eigensolver(eigensolver):
    from spca_cli.spectrum import METHODS

    if not isinstance(eigensolver, str) or eigensolver not in METHODS:
        raise SpcaParameterError(f"eigensolver must be one of {', '.join(METHODS)}, got "
                                 f"{eigensolver!r}")
    return eigensolver


def check_time_limit(time_limit):
    if time_limit is None:
        return None
    if not _is_real(time_limit) or time_limit <= 0:
        raise SpcaParameterError(f"time_limit must be None or a number of seconds > 0, got "
                                 f"{time_limit!r}")
    return float(time_limit)


def solver_option_names(solver):
    """The options ``solver`` takes, as its registry entry declares them."""
    from spca_cli.solvers.registry import solver_spec

    return solver_spec(solver).option_names


def check_solver_options(solver, options):
    """Every key is an option of ``solver`` and every value satisfies its constraint in the
    solver registry (:mod:`spca_cli.solvers.registry`).

    Raises
    ------
    OptionError
        Naming the option (``.option``) and what is wrong.
    """
    from spca_cli.solvers.registry import solver_spec

    if not isinstance(options, dict):
        raise SpcaParameterError(f"solver_options must be a dict, got {type(options).__name__}")
    spec = solver_spec(solver)
    for name, value in options.items():
        if name in RESERVED:
            raise OptionError(name, "is set by the run itself, not as a solver option")
        param = spec.param(name)
        if param is None:
            raise OptionError(name, f"not an option of solver {solver!r} (its options: "
                                    f"{', '.join(spec.option_names) or 'none'})")
        if not param.check(value):
            raise OptionError(name, f"{param.text}, got {value!r}")
    return options


def check_fit(solver, n_words, *, k, n_components, rank, deflation, time_limit,
              solver_options, shared=0):
    """A run of well-typed parameters fits data of ``n_words`` words: k and rank at most
    n_words, disjoint topics (``remove`` deflation or a joint solver) at most n_words words in
    all, and a sampling solver's work and memory within :mod:`spca_cli.limits`. Shared by
    :func:`check_run` and ``spca reproduce`` (which checks every run before the first).
    ``shared``: words every topic holds (``include``), which remove deflation keeps, so the
    topics need ``n_components * (k - shared) + shared`` words.

    Raises
    ------
    FitError
        Naming the parameter at fault (``.param``).
    """
    from spca_cli.solvers.registry import solver_spec

    if k > n_words:
        raise FitError("k", f"k must be <= the number of words; got k={k} > {n_words}")
    if rank > n_words:
        raise FitError("rank", f"rank must be <= the number of words; got rank={rank} > "
                               f"{n_words}")
    disjoint = deflation in ("joint", "remove") or solver_spec(solver).joint
    if shared and deflation in ("joint", "remove"):
        need = n_components * (k - shared) + shared
        if need > n_words:
            raise FitError("n_components",
                           f"components * (k - included words) + included words must be <= "
                           f"the number of words; got {n_components} * ({k} - {shared}) + "
                           f"{shared} = {need} > {n_words}")
    elif disjoint and n_components * k > n_words:
        raise FitError("n_components",
                       f"components * k must be <= the number of words for disjoint topics; "
                       f"got {n_components} * {k} = {n_components * k} > {n_words}")
    # a sampler's work (nonneg's epsilon-net, bipartite's samples): its entry's check_work
    check_work = solver_spec(solver).check_work
    try:
        if check_work is not None:
            check_work(n_words, rank=rank, time_limit=time_limit, options=solver_options)
    except SpcaParameterError as exc:
        raise FitError("solver_options", list(exc.parts)) from None


def check_run(solver, n_words, *, k, n_components, rank, deflation, random_state, eigensolver,
              time_limit, solver_options, shared=0):
    """All of run_topics's checks that need no eigenpairs, before any: parameter types, the
    solver options, and that the run fits the data (:func:`check_fit`).

    Returns
    -------
    (k, n_components, rank) as ints
    """
    from spca_cli.solvers._base import check_int
    from spca_cli.solvers.registry import solver_spec

    solver_spec(solver)  # an unknown solver is the first thing to say
    k = check_int("k", k, 1)
    n_components = check_int("n_components", n_components, 1)
    rank = check_int("rank", rank, 1)
    if deflation not in DEFLATIONS:
        raise SpcaParameterError(f"deflation must be one of {', '.join(DEFLATIONS)}, got "
                                 f"{deflation!r}")
    check_random_state_param(random_state)
    check_eigensolver(eigensolver)
    time_limit = check_time_limit(time_limit)
    check_solver_options(solver, solver_options)
    check_fit(solver, n_words, k=k, n_components=n_components, rank=rank, deflation=deflation,
              time_limit=time_limit, solver_options=solver_options, shared=shared)
    return k, n_components, rank
