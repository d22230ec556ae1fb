"""The one table of solvers: each entry declares its function, its parameters with their
constraints, and which common inputs of the pipeline it uses.

Everything that needs to know about a solver's parameters reads it here: run_topics (which
inputs to pass, which options are allowed, :mod:`spca_cli.params`), the CLI (its solver
options, their help and the "--samples applies to --solver nonneg or bipartite" errors) and
``spca reproduce``'s config check. Adding a solver is one module plus one :class:`SolverSpec`
in :data:`REGISTRY`. The constraint table plays the role of scikit-learn's
``_parameter_constraints``.

The table imports no solver module: every CLI start reads it for the ``--solver`` choices and
the solver options' help, while the solver modules load NumPy, SciPy and the numba kernels. An
entry names its function by the module that defines it, imported when the function is first
asked for (:attr:`SolverSpec.function`). So the table sits below the solvers, which may read it
(auto's note names ``budget``'s option from here).
"""

from __future__ import annotations

import importlib
import math
import numbers
import sys
from dataclasses import dataclass

from spca_cli.errors import SpcaParameterError
from spca_cli.limits import bipartite_work, nonneg_work
from spca_cli.solvers._choices import INITS

__all__ = ["COMMON_INPUTS", "Interval", "Choice", "Boolean", "Unchecked", "Param", "SolverSpec",
           "REGISTRY", "solver_spec", "solver_names", "cli_params", "solvers_taking"]

#: What the pipeline can hand a solver besides A and k: the leading eigenpairs of the view, the
#: rank d, the seed, the per-component time limit, the weighted row certificate of the view and
#: the words every topic must hold (``include``, :mod:`spca_cli.constraints`; None without).
#: A solver receives exactly the ones its entry lists; the pipeline repairs the topics of a
#: solver that does not take ``forced``.
#: ``incumbent``: a topic of the view already in hand (the joint set's); a solver that takes
#: it (exact, auto) starts its proof search from it instead of running its cheap solvers.
#: ``goal``: the certified ratio the pipeline needs of that topic; a solver that takes it
#: (auto) may stop its proof search there instead of at the proof of optimality.
#: ``progress``: a callback ``progress(text)`` (or None) a solver with a long search (exact,
#: auto) tells what it is doing; the CLI shows it on a terminal.
COMMON_INPUTS = ("eigen", "rank", "random_state", "time_limit", "certificate", "forced",
                 "incumbent", "goal", "progress")


# ---------------------------------------------------------------------- constraints
def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value):
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(value))


@dataclass(frozen=True)
class Interval:
    """An int or a number in [low, high] (``low_open``: (low, high]), plus ``extra`` values."""

    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    extra: tuple = ()
    extra_text: str = ""

    def check(self, value):
        if value in self.extra and not isinstance(value, bool):
            return True
        if not (_is_int(value) if self.kind is int else _is_real(value)):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        if self.high is None:
            return True
        return value < self.high if self.high_open else value <= self.high

    @property
    def text(self):
        what = "an int" if self.kind is int else "a number"
        if self.high is not None:
            left = "(" if self.low_open else "["
            right = ")" if self.high_open else "]"
            text = f"must be {what} in {left}{self.low}, {self.high}{right}"
        else:
            text = f"must be {what} {'>' if self.low_open else '>='} {self.low}"
        if self.extra_text:
            return f"{text}, {self.extra_text}"
        return text + "".join(f" or {e!r}" for e in self.extra)


@dataclass(frozen=True)
class Choice:
    values: tuple

    def check(self, value):
        return isinstance(value, str) and value in self.values

    @property
    def text(self):
        return f"must be one of {', '.join(self.values)}"


@dataclass(frozen=True)
class Boolean:
    def check(self, value):
        # NumPy's bool too, without importing NumPy: a value of NumPy's means it is loaded
        numpy = sys.modules.get("numpy")
        return isinstance(value, bool) or (numpy is not None and isinstance(value, numpy.bool_))

    @property
    def text(self):
        return "must be true or false"


@dataclass(frozen=True)
class Unchecked:
    """A value the solver checks itself (a warm start is an object, not a scalar)."""

    def check(self, value):
        return True

    text = ""


# ---------------------------------------------------------------------- entries
@dataclass(frozen=True)
class Param:
    """One solver parameter.

    Attributes
    ----------
    name : str
        The keyword argument of the solver function (and the key in ``solver_options``).
    rule : Interval, Choice, Boolean or Unchecked
        The values it accepts.
    optional : bool
        None is accepted as well (the solver then chooses).
    flag : str or None
        Its CLI option (``--samples``; ``--exact/--no-exact`` for an on/off switch), or None
        when it is set only from Python and reproduce configs.
    help : str
        What it does for this solver, for the CLI's help (``solver: help``).
    flag_value : bool or None
        For a one-way CLI flag (``--no-elimination``): the value it sets.
    cli_rule : constraint, optional
        What the CLI accepts when it is narrower than ``rule``.
    metavar : str or None
        The CLI's placeholder (``N``, ``SECONDS``).
    """

    name: str
    rule: object
    optional: bool = False
    flag: str | None = None
    help: str = ""
    flag_value: bool | None = None
    cli_rule: object = None
    metavar: str | None = None

    def check(self, value):
        return (self.optional and value is None) or self.rule.check(value)

    @property
    def text(self):
        return self.rule.text + (" (or None)" if self.optional else "")


@dataclass(frozen=True)
class SolverSpec:
    """One solver.

    Attributes
    ----------
    name : str
        The ``--solver`` name.
    function : callable
        ``function(A, k, **inputs, **options)`` for a single-component solver,
        ``function(A, k, n_components, **inputs, **options)`` for a joint one: the function of
        the same name in ``spca_cli.solvers.<module>``, imported on first use.
    module : str or None
        The solver's module in :mod:`spca_cli.solvers` when it is not named after the solver
        (``auto`` is in ``exact``).
    params : tuple of Param
        Its options; anything else given as an option is an error.
    inputs : frozenset of str
        The :data:`COMMON_INPUTS` it takes.
    joint : bool
        Computes all components at once (disjoint supports); deflation does not apply.
    exact_on : str or None
        What the answer is exact on when the solver finishes (``"A_d"`` for the spannogram), for
        the note that says a time limit stopped it before.
    prepare : callable, optional
        ``prepare(spec_options, A, k, inputs) -> options``: options this solver derives from
        another solver's answer before it runs (tpower's spannogram start).
    check_work : callable, optional
        ``check_work(n_words, rank=, time_limit=, options=)``: refuses, before any data is
        read or any work done, a run whose sampling cannot finish or fit (:mod:`spca_cli.limits`).
    nonnegative_bounds : bool
        Its own bounds bound the best *nonnegative* topic only. On an entrywise nonnegative A'
        that is the best topic (Perron-Frobenius: every A'[I, I] has a nonnegative leading
        eigenvector), elsewhere a signed topic can explain more, and the pipeline reports them
        apart (``nonnegative_upper_bound``) instead of as the topic's certificate.
    """

    name: str
    module: str | None = None
    params: tuple = ()
    inputs: frozenset = frozenset()
    joint: bool = False
    exact_on: str | None = None
    prepare: object = None
    check_work: object = None
    nonnegative_bounds: bool = False

    @property
    def function(self):
        module = importlib.import_module(f"spca_cli.solvers.{self.module or self.name}")
        return getattr(module, self.name)

    def param(self, name):
        return next((p for p in self.params if p.name == name), None)

    @property
    def option_names(self):
        return sorted(p.name for p in self.params)

    def arguments(self, available, options):
        """The keyword arguments of one call: the inputs it uses, then its options."""
        return {**{name: available[name] for name in COMMON_INPUTS
                   if name in self.inputs and name in available}, **options}

    def run(self, A, k, available, options=None):
        """Call a single-component solver with the common inputs it uses and ``options``; its
        :class:`~spca_cli.errors.ConvergenceWarning` messages become the output's ``notes``."""
        from spca_cli.solvers._base import with_notes

        options = dict(options or {})
        if self.prepare is not None:
            options = self.prepare(options, A, k, available)
        return with_notes(lambda: self.function(A, k, **self.arguments(available, options)))

    def run_joint(self, A, k, n_components, available, options=None):
        """As :meth:`run`, for a joint solver."""
        from spca_cli.solvers._base import with_notes

        return with_notes(lambda: self.function(A, k, n_components,
                                                **self.arguments(available, options or {})))


def _tpower_start(options, A, k, available):
    """``init="spannogram"``: the rank-d spannogram's component starts TPower."""
    if options.get("init") != "spannogram" or options.get("warm_start") is not None:
        return options
    start = REGISTRY["spannogram"].run(A, k, available)
    return {**options, "warm_start": (start.indices, start.weights)}


def _build():
    positive_int = Interval(int, 1)
    max_candidates = Param("max_candidates", positive_int)
    specs = [
        SolverSpec("threshold", inputs=frozenset({"eigen"})),
        SolverSpec("tpower", params=(
            Param("init", Choice(INITS), flag="--init",
                  help="start vector [default: auto, several starts, best kept]",
                  cli_rule=Choice(tuple(i for i in INITS if i != "eigenvector"))),
            Param("max_iter", positive_int, flag="--max-iter", help="iteration limit"),
            Param("tol", Interval(float, 0, low_open=True), flag="--tol",
                  help="convergence tolerance"),
            Param("n_starts", Interval(int, 0)),
            Param("local_search", Boolean()),
            Param("warm_start", Unchecked(), optional=True),
        ), inputs=frozenset({"eigen", "random_state", "time_limit", "forced"}),
            prepare=_tpower_start),
        SolverSpec("greedy", inputs=frozenset({"forced"})),
        SolverSpec("nonneg", params=(
            Param("exact", Boolean(), optional=True, flag="--exact/--no-exact",
                  help="force (or forbid) the exact enumeration"),
            Param("samples", positive_int, optional=True, flag="--samples", metavar="N",
                  help="epsilon-net samples"),
            Param("epsilon", Interval(float, 0, 1, low_open=True), optional=True,
                  flag="--epsilon", help="epsilon-net accuracy (sets the number of samples)",
                  cli_rule=Interval(float, 0, 1, low_open=True, high_open=True)),
            max_candidates,
        ), inputs=frozenset({"eigen", "rank", "random_state", "time_limit"}), exact_on="A_d",
            check_work=nonneg_work, nonnegative_bounds=True),
        SolverSpec("spannogram", params=(
            Param("eliminate", Boolean(), flag="--no-elimination", flag_value=False,
                  help="skip the (provably safe) feature elimination"),
            Param("nonnegative", Boolean(), optional=True, flag="--sign-reduction",
                  flag_value=True,
                  help="the 2^(d-1) sign-pattern reduction for an entrywise nonnegative A "
                       "(exact; turns elimination off)"),
            max_candidates,
        ), inputs=frozenset({"eigen", "rank", "random_state", "time_limit"}), exact_on="A_d"),
        SolverSpec("exact", inputs=frozenset({"eigen", "rank", "random_state", "time_limit",
                                              "certificate", "forced", "incumbent",
                                              "progress"})),
        SolverSpec("auto", module="exact", params=(
            Param("budget", Interval(float, 0), flag="--budget", metavar="SECONDS",
                  help="seconds of branch and bound per topic [default: 3]"),
        ), inputs=frozenset({"eigen", "rank", "random_state", "time_limit", "certificate",
                             "forced", "incumbent", "goal", "progress"})),
        SolverSpec("bipartite", joint=True, check_work=bipartite_work, params=(
            Param("samples", positive_int, optional=True, flag="--samples", metavar="N",
                  help="sampled sketch directions"),
            Param("n_jobs", Interval(int, 1, extra=(-1,), extra_text="or -1 for every core"),
                  flag="--jobs", help="cores", cli_rule=positive_int),
            Param("refine", Interval(int, 0)),
        ), inputs=frozenset({"eigen", "rank", "random_state", "time_limit"})),
    ]
    return {spec.name: spec for spec in specs}


#: ``--solver`` name -> its :class:`SolverSpec`, single-component solvers first
REGISTRY = _build()


def solver_names():
    """Every solver name, sorted."""
    return sorted(REGISTRY)


def solver_spec(name):
    """The entry of solver ``name``; an unknown name is an error listing the known ones."""
    if not isinstance(name, str) or name not in REGISTRY:
        raise SpcaParameterError(f"unknown solver {name!r}; choose one of "
                                 f"{', '.join(solver_names())}")
    return REGISTRY[name]


def solvers_taking(name):
    """The solvers (registry order) that have the parameter ``name``."""
    return [spec.name for spec in REGISTRY.values() if spec.param(name) is not None]


def cli_params():
    """One :class:`Param` per CLI flag, in registry order, with the help of every solver that
    takes it joined (``nonneg: epsilon-net samples; bipartite: sampled sketch directions``)."""
    seen = {}
    for spec in REGISTRY.values():
        for p in spec.params:
            if p.flag is None:
                continue
            if p.name in seen:
                first = seen[p.name]
                seen[p.name] = Param(first.name, first.rule, first.optional, first.flag,
                                     f"{first.help}; {spec.name}: {p.help}", first.flag_value,
                                     first.cli_rule, first.metavar)
            else:
                seen[p.name] = Param(p.name, p.rule, p.optional, p.flag, f"{spec.name}: {p.help}",
                                     p.flag_value, p.cli_rule, p.metavar)
    return list(seen.values())
