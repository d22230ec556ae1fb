"""Reproduce configs: the schema, the constraint tables, and YAML loading with one-line errors."""

from __future__ import annotations

import datetime as dt
import inspect
import logging
import math
import numbers
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from spca_cli.errors import SpcaInputError
from spca_cli.solvers import JOINT_SOLVERS, SOLVERS
from spca_cli.topics import DEFLATIONS

from spca_cli.reproduce.render import _plain

logger = logging.getLogger(__name__)

MEASURES = ("recovery", "components", "daily", "total_variance", "sparsity_sweep")
FORMATS = ("markdown", "json")
GENERATORS = ("spiked_covariance", "zipf_corpus")


# ====================================================================== the checked config


@dataclass(frozen=True)
class RunSpec:
    """One solver run: the arguments of one :func:`~spca_cli.topics.run_topics` call."""

    label: str
    solver: str
    k: int = 10
    components: int = 1
    rank: int = 2
    deflation: str = "remove"
    seed: int = 0
    time_limit: float | None = None
    options: tuple = ()  # sorted (name, value) pairs, passed as solver_options

    @property
    def joint(self):
        return self.solver in JOINT_SOLVERS

    def topics_kwargs(self, k=None):
        """Keyword arguments of :func:`run_topics` for this run (``k`` overridden by sweeps)."""
        return {"solver": self.solver, "k": self.k if k is None else k,
                "n_components": self.components, "rank": self.rank,
                "deflation": self.deflation, "random_state": self.seed,
                "time_limit": self.time_limit, "solver_options": dict(self.options)}


@dataclass(frozen=True)
class DataSpec:
    """Where the data comes from: a file (``path``, resolved) or a generator and its params."""

    path: Path | None = None
    given_path: str | None = None
    ingest: tuple = ()
    generator: str | None = None
    params: tuple = ()  # sorted (name, value) pairs for the generator

    def describe(self):
        if self.path is not None:
            return self.given_path
        args = ", ".join(f"{key}={_plain(val)}" for key, val in self.params)
        return f"{self.generator}({args})"


@dataclass(frozen=True)
class DaysSpec:
    """Local days ``first`` .. ``last`` (inclusive) at a fixed UTC offset."""

    first: dt.date
    last: dt.date
    utc_offset: str = "+00:00"

    def tzinfo(self):
        sign = -1 if self.utc_offset[0] == "-" else 1
        hours, minutes = int(self.utc_offset[1:3]), int(self.utc_offset[4:6])
        return dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))

    def dates(self):
        n = (self.last - self.first).days + 1
        return [self.first + dt.timedelta(days=i) for i in range(n)]


@dataclass(frozen=True)
class PublishedSpec:
    """Published figures printed beside ours (all optional)."""

    source: str | None = None
    values: tuple = ()  # (label, number or tuple of numbers/None) pairs, in config order
    final: tuple = ()  # (label, number) pairs
    best_first: float | None = None
    best_total: float | None = None
    best_total_components: int | None = None
    gain_percent: float | None = None
    notes: tuple = ()

    def value(self, label):
        return dict(self.values).get(label)


@dataclass(frozen=True)
class Config:
    """A validated ``spca reproduce`` config (see the module docstring for the measures)."""

    path: Path
    title: str
    reproduces: str
    measure: str
    data: DataSpec
    runs: tuple
    substitution: str | None = None
    trials: int = 100
    seed: int = 0
    days: DaysSpec | None = None
    k_values: tuple = ()
    plot: str | None = None
    published: PublishedSpec = field(default_factory=PublishedSpec)
    output: str | None = None

    @property
    def stem(self):
        return self.output or self.path.stem


# ====================================================================== constraint tables


class _Bad(Exception):
    """A config problem at a key path; turned into SpcaInputError(config file, 'key: message')."""

    def __init__(self, where, message):
        super().__init__(f"{where}: {message}" if where else message)


class _Rule:
    """One allowed form of a value: ``check(value)`` is True when allowed, ``convert`` maps it."""

    def __init__(self, description, check, convert=None):
        self.description = description
        self.check = check
        self.convert = convert or (lambda v: v)

    def __call__(self, value, where):
        if not self.check(value):
            raise _Bad(where, f"{self.description}, got {_show(value)}")
        return self.convert(value)


def _show(value):
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def _int(low=None, high=None):
    if low is not None and high is not None:
        text = f"must be an int in [{low}, {high}]"
    elif low is not None:
        text = f"must be an int >= {low}"
    else:
        text = "must be an int"
    return _Rule(text, lambda v: _is_int(v) and (low is None or v >= low)
                 and (high is None or v <= high), int)


def _number(low=None, *, open_low=False):
    if low is None:
        text = "must be a number"
    else:
        text = f"must be a number {'>' if open_low else '>='} {low:g}"
    return _Rule(text, lambda v: _is_number(v) and (
        low is None or (v > low if open_low else v >= low)), float)


def _str(pattern=None, text="must be a non-empty string"):
    return _Rule(text, lambda v: isinstance(v, str) and v.strip() != "" and (
        pattern is None or re.fullmatch(pattern, v) is not None))


def _choice(options):
    options = tuple(options)
    return _Rule(f"must be one of {', '.join(options)}",
                 lambda v: isinstance(v, str) and v in options)


_BOOL = _Rule("must be true or false", lambda v: isinstance(v, bool))


def _to_date(v):
    return v if isinstance(v, dt.date) else dt.date.fromisoformat(v)


def _date_ok(v):
    if isinstance(v, dt.datetime):
        return False
    if isinstance(v, dt.date):
        return True
    try:
        dt.date.fromisoformat(v)
        return isinstance(v, str)
    except (TypeError, ValueError):
        return False


_DATE = _Rule("must be a date YYYY-MM-DD", _date_ok, _to_date)
_OFFSET = _str(r"[+-](?:[01]\d|2[0-3]):[0-5]\d", "must be a UTC offset such as -08:00")


class _ListOf:
    """A non-empty list whose items each follow ``item`` (errors name the item's position)."""

    def __init__(self, item, description, min_len=1):
        self.item, self.description, self.min_len = item, description, min_len

    def __call__(self, value, where):
        if not isinstance(value, list) or len(value) < self.min_len:
            raise _Bad(where, f"{self.description}, got {_show(value)}")
        return tuple(self.item(v, f"{where}[{i}]") for i, v in enumerate(value))


class _Optional:
    """``item`` or null (YAML ``~``), kept as None."""

    def __init__(self, item):
        self.item = item

    def __call__(self, value, where):
        return None if value is None else self.item(value, where)


class _AnyMapping:
    """A mapping with string keys and plain (scalar or list) values, kept as sorted pairs."""

    description = "must be a mapping"

    def __call__(self, value, where):
        if not isinstance(value, dict):
            raise _Bad(where, f"{self.description}, got {_show(value)}")
        for key in value:
            if not isinstance(key, str):
                raise _Bad(where, f"keys must be strings, got {key!r}")
        return tuple(sorted(value.items()))


# key -> (rule, required). A rule may be a callable(value, where) or a nested table (dict).
_RUN_KEYS = {
    "label": (_str(), False),
    "solver": (None, False),  # checked against the registries at validation time
    "k": (_int(1), False),
    "components": (_int(1), False),
    "rank": (_int(1), False),
    "deflation": (_choice(DEFLATIONS), False),
    "seed": (_int(0), False),
    "time_limit": (_Optional(_number(0, open_low=True)), False),
    "options": (_AnyMapping(), False),
}

_SPIKED_KEYS = {
    "n": (_int(2), False),
    "sparsity": (_int(1), False),
    "eigenvalues": (_ListOf(_number(0, open_low=True), "must be a list of numbers > 0"), False),
    "noise": (_number(0, open_low=True), False),
    "samples": (_ListOf(_int(1), "must be a list of ints >= 1"), True),
    "center": (_BOOL, False),
    "supports": (_choice(("first", "random")), False),
}

_ZIPF_KEYS = {
    "documents": (_int(1), False),
    "words": (_int(2), False),
    "topics": (_int(0), False),
    "topic_words": (_int(1), False),
    "topic_rate": (_Rule("must be a number in [0, 1]",
                         lambda v: _is_number(v) and 0 <= v <= 1, float), False),
    "words_per_document": (_int(0), False),
    "exponent": (_number(0), False),
    "days": (_int(1), False),
    "start": (_DATE, False),
    "utc_offset_minutes": (_int(-1439, 1439), False),
    "seed": (_int(0), False),
}

_DATA_KEYS = {"path": (_str(), False), "ingest": (_AnyMapping(), False),
              "generator": (_choice(GENERATORS), False),
              **{key: (rule, False) for key, (rule, _) in {**_SPIKED_KEYS, **_ZIPF_KEYS}.items()}}

_DAYS_KEYS = {"first": (_DATE, True), "last": (_DATE, True), "utc_offset": (_OFFSET, False)}

_LABEL_NUMBERS = _ListOf(_Optional(_number()), "must be a number or a list of numbers (or null)")


class _PublishedValues:
    """A mapping run label -> a number, or a list of numbers/nulls (one per table row)."""

    def __call__(self, value, where):
        if not isinstance(value, dict):
            raise _Bad(where, f"must be a mapping of run labels to numbers, got {_show(value)}")
        out = []
        for label, item in value.items():
            key = f"{where}.{label}"
            if isinstance(item, list):
                out.append((str(label), _LABEL_NUMBERS(item, key)))
            else:
                out.append((str(label), _number()(item, key)))
        return tuple(out)


_PUBLISHED_KEYS = {
    "source": (_str(), False),
    "values": (_PublishedValues(), False),
    "final": (_PublishedValues(), False),
    "best_first": (_number(0, open_low=True), False),
    "best_total": (_number(0, open_low=True), False),
    "best_total_components": (_int(1), False),
    "gain_percent": (_number(), False),
    "notes": (_ListOf(_str(), "must be a list of strings"), False),
}

_TOP_KEYS = {
    "title": (_str(), True),
    "reproduces": (_str(), True),
    "substitution": (_str(), False),
    "measure": (_choice(MEASURES), True),
    "data": (None, True),
    "defaults": (None, False),
    "runs": (None, True),
    "trials": (_int(1), False),
    "seed": (_int(0), False),
    "days": (None, False),
    "k_values": (_ListOf(_int(1), "must be a list of ints >= 1"), False),
    "plot": (_str(r"[^/\\]+\.png", "must be a file name ending in .png"), False),
    "published": (None, False),
    "output": (_str(r"[A-Za-z0-9._-]+", "must be a file name stem (letters, digits, . _ -)"),
               False),
}

# keys that only make sense for some measures
_MEASURE_ONLY = {"trials": ("recovery",), "days": ("daily",), "k_values": ("sparsity_sweep",),
                 "plot": ("sparsity_sweep",)}


def _section(value, table, where):
    """Check a mapping against ``table``: unknown keys, missing required keys, each value."""
    if not isinstance(value, dict):
        raise _Bad(where, f"must be a mapping, got {_show(value)}")
    prefix = f"{where}." if where else ""
    for key in value:
        if key not in table:
            known = ", ".join(sorted(table))
            raise _Bad(f"{prefix}{key}", f"unknown key; expected one of {known}")
    for key, (_, required) in table.items():
        if required and key not in value:
            raise _Bad(f"{prefix}{key}", "required key is missing")
    out = {}
    for key, item in value.items():
        rule = table[key][0]
        out[key] = item if rule is None else rule(item, f"{prefix}{key}")
    return out


# ====================================================================== loading and checking


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that rejects a key given twice in one mapping (PyYAML keeps the last
    silently, which would hide a mistyped config)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _read_yaml(path):
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpcaInputError(path, "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpcaInputError(path, f"cannot read: {exc}") from None
    try:
        raw = yaml.load(text, Loader=_UniqueKeyLoader)  # safe_load plus the duplicate check
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "syntax error"
        raise SpcaInputError(path, f"invalid YAML: {problem}",
                             line=None if mark is None else mark.line + 1) from None
    except yaml.YAMLError as exc:
        raise SpcaInputError(path, f"invalid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise SpcaInputError(path, "must be a YAML mapping of keys such as title, data, runs")
    return raw


def load_config(path):
    """Parse and check a reproduce config; nothing is computed.

    Parameters
    ----------
    path : str or Path
        The YAML file. Relative data paths inside it are resolved against its folder.

    Returns
    -------
    Config

    Raises
    ------
    SpcaInputError
        One line naming the file and the key path: ``t.yaml: runs[2].k: must be an int >= 1,
        got 'ten'``; YAML syntax errors name the line.
    """
    raw = _read_yaml(path)
    try:
        return _build_config(Path(path), raw)
    except _Bad as exc:
        raise SpcaInputError(path, str(exc)) from None


def _solver_rule():
    known = sorted([*SOLVERS, *JOINT_SOLVERS])
    return _choice(known)


def _check_options(solver, options, where):
    """Solver options must be named keyword parameters of the solver."""
    fn = SOLVERS.get(solver) or JOINT_SOLVERS.get(solver)
    params = inspect.signature(fn).parameters
    reserved = {"A", "k", "n_components", "eigen", "rank", "random_state", "time_limit"}
    # solvers take **_ignored for the pipeline's common arguments; an option must still be
    # one of their named parameters, so a misspelt option is an error, not silently ignored
    named = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    allowed = sorted(name for name, p in params.items()
                     if name not in reserved and p.kind in named)
    for name, _ in options:
        if name in reserved:
            raise _Bad(f"{where}.{name}", "is set by the run itself, not as a solver option")
        if name not in allowed:
            choices = ", ".join(allowed) or "none"
            raise _Bad(f"{where}.{name}", f"not an option of solver {solver!r} (its options: "
                                          f"{choices})")


def _build_runs(top, seed):
    defaults = {}
    if "defaults" in top:
        defaults = _section(top["defaults"], _RUN_KEYS, "defaults")
        if "label" in defaults:
            raise _Bad("defaults.label", "each run needs its own label")
        if "solver" in defaults:
            defaults["solver"] = _solver_rule()(defaults["solver"], "defaults.solver")
    raw_runs = top["runs"]
    if not isinstance(raw_runs, list) or not raw_runs:
        raise _Bad("runs", f"must be a non-empty list of runs, got {_show(raw_runs)}")
    runs, labels = [], {}
    for i, item in enumerate(raw_runs):
        where = f"runs[{i}]"
        given = _section(item, _RUN_KEYS, where)
        merged = {"seed": seed, **defaults, **given}
        if "solver" not in merged:
            raise _Bad(f"{where}.solver", "required key is missing")
        if "solver" in given:
            merged["solver"] = _solver_rule()(given["solver"], f"{where}.solver")
        options = merged.get("options", ())
        _check_options(merged["solver"], options, f"{where}.options")
        label = merged.pop("label", merged["solver"])
        if label in labels:
            raise _Bad(f"{where}.label", f"duplicate label {label!r} (also runs[{labels[label]}]);"
                                         " give each run its own label")
        labels[label] = i
        runs.append(RunSpec(label=label, **merged))
    return tuple(runs)


def _build_data(config_path, top, measure):
    data = _section(top["data"], _DATA_KEYS, "data")
    has_path, generator = "path" in data, data.get("generator")
    if has_path == (generator is not None):
        raise _Bad("data", "give exactly one of data.path and data.generator")
    if has_path:
        extra = sorted(set(data) - {"path", "ingest"})
        if extra:
            raise _Bad(f"data.{extra[0]}", "is a generator parameter; data.path takes only ingest")
        resolved = (config_path.parent / data["path"]).resolve()
        if not resolved.is_file():
            raise _Bad("data.path", f"file not found: {data['path']} (looked for {resolved})")
        spec = DataSpec(path=resolved, given_path=data["path"], ingest=data.get("ingest", ()))
    else:
        if "ingest" in data:
            raise _Bad("data.ingest", "applies only to data.path")
        table = _SPIKED_KEYS if generator == "spiked_covariance" else _ZIPF_KEYS
        for key in data:
            if key != "generator" and key not in table:
                raise _Bad(f"data.{key}", f"not a parameter of generator {generator!r}; expected "
                                          f"one of {', '.join(sorted(table))}")
        for key, (_, required) in table.items():
            if required and key not in data:
                raise _Bad(f"data.{key}", f"required by generator {generator!r}")
        params = tuple(sorted((k, v) for k, v in data.items() if k != "generator"))
        spec = DataSpec(generator=generator, params=params)
    if measure == "recovery" and spec.generator != "spiked_covariance":
        raise _Bad("data.generator", "measure 'recovery' needs generator 'spiked_covariance'")
    if measure != "recovery" and spec.generator == "spiked_covariance":
        raise _Bad("data.generator", f"measure {measure!r} needs a corpus (data.path or "
                                     "generator 'zipf_corpus')")
    return spec


def _build_published(top, runs):
    if "published" not in top:
        return PublishedSpec()
    pub = _section(top["published"], _PUBLISHED_KEYS, "published")
    labels = {run.label for run in runs}
    for key in ("values", "final"):
        for label, _ in pub.get(key, ()):
            if label not in labels:
                raise _Bad(f"published.{key}.{label}", "no run has this label")
    return PublishedSpec(**pub)


def _build_config(path, raw):
    top = _section(raw, _TOP_KEYS, "")
    measure = top["measure"]
    for key, measures in _MEASURE_ONLY.items():
        if key in top and measure not in measures:
            raise _Bad(key, f"applies only to measure {' or '.join(measures)}, not {measure!r}")
    seed = top.get("seed", 0)
    runs = _build_runs(top, seed)
    data = _build_data(path, top, measure)
    days = None
    if measure == "daily":
        if "days" not in top:
            raise _Bad("days", "required by measure 'daily'")
        d = _section(top["days"], _DAYS_KEYS, "days")
        if d["last"] < d["first"]:
            raise _Bad("days.last", f"must not be before days.first ({d['first']}), got "
                                    f"{d['last']}")
        days = DaysSpec(**d)
        if len(runs) != 1:
            raise _Bad("runs", f"measure 'daily' takes exactly one run, got {len(runs)}")
    if measure == "sparsity_sweep":
        if "k_values" not in top:
            raise _Bad("k_values", "required by measure 'sparsity_sweep'")
    if measure == "recovery":
        spikes = len(dict(data.params).get("eigenvalues", (400.0, 300.0)))
        for i, run in enumerate(runs):
            if run.components < spikes:
                raise _Bad(f"runs[{i}].components", f"must be >= the {spikes} spikes to recover, "
                                                    f"got {run.components}")
    if measure == "total_variance" and not any(not run.joint for run in runs):
        logger.info("no deflation-based run: gains over the best deflation run are not shown")
    return Config(path=path, title=top["title"], reproduces=top["reproduces"], measure=measure,
                  data=data, runs=runs, substitution=top.get("substitution"),
                  trials=top.get("trials", 100), seed=seed, days=days,
                  k_values=top.get("k_values", ()), plot=top.get("plot"),
                  published=_build_published(top, runs), output=top.get("output"))


# ====================================================================== data


# ingest options whose values are file names, resolved against the config's folder
