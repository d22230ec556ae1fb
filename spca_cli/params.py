"""Checks of :func:`spca_cli.topics.run_topics`'s parameters, made before any work.

The CLI's click types already constrain what a user types; these checks give the Python API and
``spca reproduce`` configs the same guarantees: a bad value is a
:class:`~spca_cli.errors.SpcaParameterError` naming the parameter, and an unknown solver option
is an error, never silently ignored (solvers accept ``**_ignored`` for the pipeline's common
arguments, so only their named parameters count as options).
"""

from __future__ import annotations

import inspect
import math
import numbers

import numpy as np

from spca_cli.errors import SpcaParameterError

__all__ = ["SEED_MAX", "OptionError", "check_random_state_param", "check_eigensolver",
           "check_time_limit", "check_solver_options", "solver_option_names", "check_run"]

#: NumPy's RandomState takes seeds in [0, 2**32 - 1]
SEED_MAX = 2 ** 32 - 1

#: arguments the pipeline passes to every solver itself; not options
RESERVED = frozenset({"A", "k", "n_components", "eigen", "rank", "random_state", "time_limit",
                      "certificate"})


class OptionError(SpcaParameterError):
    """A bad solver option; ``option`` is its name (reproduce adds it to the key path)."""

    def __init__(self, option, message):
        self.option = option
        self.reason = message
        super().__init__(f"solver_options: {option!r}: {message}")


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value):
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(value))


def check_random_state_param(random_state, name="random_state"):
    """None, an int in [0, 2**32 - 1], or a ``numpy.random.RandomState``."""
    if random_state is None or isinstance(random_state, np.random.RandomState):
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


def _int_rule(low, extra=()):
    text = f"must be an int >= {low}" + "".join(f" or {e!r}" for e in extra)
    return (lambda v: (_is_int(v) and v >= low) or (v in extra and not isinstance(v, bool))), text


def _optional(rule):
    check, text = rule
    return (lambda v: v is None or check(v)), text + " (or None)"


def _choice(values):
    return (lambda v: isinstance(v, str) and v in values), f"must be one of {', '.join(values)}"


_BOOL = ((lambda v: isinstance(v, (bool, np.bool_))), "must be true or false")


def _rules():
    """Option name -> (check, description): the values every solver that takes it accepts."""
    from spca_cli.solvers.tpower import INITS

    return {
        "init": _choice(INITS),
        "max_iter": _int_rule(1),
        "tol": ((lambda v: _is_real(v) and v > 0), "must be a number > 0"),
        "n_starts": _int_rule(0),
        "local_search": _BOOL,
        "exact": _optional(_BOOL),
        "samples": _optional(_int_rule(1)),
        "epsilon": _optional(((lambda v: _is_real(v) and 0 < v <= 1),
                              "must be a number in (0, 1]")),
        "max_candidates": _int_rule(1),
        "n_jobs": ((lambda v: _is_int(v) and (v >= 1 or v == -1)),
                   "must be an int >= 1, or -1 for every core"),
        "refine": _int_rule(0),
        "eliminate": _BOOL,
        "nonnegative": _optional(_BOOL),
        "budget": ((lambda v: _is_real(v) and v >= 0), "must be a number of seconds >= 0"),
    }


def solver_option_names(solver):
    """The options ``solver`` takes: its named keyword parameters beyond the pipeline's own."""
    from spca_cli.solvers import JOINT_SOLVERS, SOLVERS

    fn = SOLVERS.get(solver) or JOINT_SOLVERS.get(solver)
    named = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sorted(name for name, p in inspect.signature(fn).parameters.items()
                  if name not in RESERVED and p.kind in named)


def check_solver_options(solver, options):
    """Every key is an option of ``solver`` and every value of a known option has its type.

    Raises
    ------
    OptionError
        Naming the option (``.option``) and what is wrong.
    """
    if not isinstance(options, dict):
        raise SpcaParameterError(f"solver_options must be a dict, got {type(options).__name__}")
    allowed = solver_option_names(solver)
    rules = _rules()
    for name, value in options.items():
        if name in RESERVED:
            raise OptionError(name, "is set by the run itself, not as a solver option")
        if name not in allowed:
            raise OptionError(name, f"not an option of solver {solver!r} (its options: "
                                    f"{', '.join(allowed) or 'none'})")
        if name in rules:
            check, text = rules[name]
            if not check(value):
                raise OptionError(name, f"{text}, got {value!r}")
    return options


def check_run(solver, n_words, *, rank, random_state, eigensolver, time_limit, solver_options):
    """All of run_topics's checks that need no eigenpairs: parameter types, solver options,
    and the work and memory a sampling solver would need (:mod:`spca_cli.limits`)."""
    from spca_cli.limits import check_solver_work

    check_random_state_param(random_state)
    check_eigensolver(eigensolver)
    time_limit = check_time_limit(time_limit)
    check_solver_options(solver, solver_options)
    check_solver_work(solver, n_words, rank=rank, time_limit=time_limit, options=solver_options)
