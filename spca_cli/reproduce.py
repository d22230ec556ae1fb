"""``spca reproduce CONFIG.yaml``: a paper's table, recomputed with the code users run.

A YAML config names a data set (a file, or a seeded generator), the solver runs, what to measure
and the published figures to print beside ours. It is read with ``yaml.safe_load`` and checked
key by key against the constraint tables below BEFORE anything runs; every problem is one line
naming the file and the key path, e.g. ``table1.yaml: runs[2].k: must be an int >= 1, got 'ten'``
(list positions count from 0). Each run then becomes the same
:func:`spca_cli.topics.run_topics` call ``spca topics`` makes.

Measures (the ``measure:`` key) and the table each prints:

``recovery``
    Spiked covariance support recovery (2013 paper, Table 1): for each sample size m and trial,
    draw m samples, A = their empirical covariance, run every solver; a trial succeeds when the
    supports of the first components are exactly the spikes' supports (in either order).
``components``
    The first C sparse PCs of one corpus per run (2013 paper, Tables 2-3): the cumulative
    performance ratio per PC (one column per run), x^T A x per PC and in total, and the words.
``daily``
    One run per local day of a corpus with document times (one column per day).
``total_variance``
    Total variance of C disjoint components per run, and each run's gain in percent over the
    best deflation-based run (2015 paper, Tables 2-3), with the words of every run.
``sparsity_sweep``
    Explained variance over lambda_1 versus k, with the certified upper bound as a band
    (2014 paper, Figures 4-6), as a table and a PNG plot.

Config keys (``defaults`` takes the run keys and applies them to every run):

=================  ========================================================================
``title``          required; the heading of the output
``reproduces``     required; which table or figure of which paper
``substitution``   what replaces the paper's data or methods, printed under the heading
``measure``        required; one of the measures above
``data``           ``path`` (relative to the config's folder; read by ``load_input``) with
                   optional ``ingest`` (its options: ``min_count``, ``since``, ...), or
                   ``generator: spiked_covariance`` (``n``, ``sparsity``, ``eigenvalues``,
                   ``noise``, ``samples`` (required: one table column per m), ``center``,
                   ``supports``) or ``generator: zipf_corpus`` (see
                   :func:`spca_cli.generate.zipf_corpus`)
``runs``           required list; each run: ``label`` (default: the solver), ``solver``,
                   ``k``, ``components``, ``rank``, ``deflation``, ``seed``, ``time_limit``,
                   ``options`` (named keyword parameters of the solver)
``seed``           default seed of every run and of the generators (default 0)
``trials``         recovery only: trials per sample size (default 100; ``--trials`` overrides)
``days``           daily only: ``first``, ``last`` (YYYY-MM-DD) and ``utc_offset`` (-08:00)
``k_values``       sparsity_sweep only: the k of each point
``plot``           sparsity_sweep only: PNG file name written to OUTDIR (default STEM.png)
``published``      ``source``; ``values`` (run label -> a number, or one per row/column);
                   ``final`` (label -> number after the last PC); ``best_first``,
                   ``best_total``, ``best_total_components`` (best known x^T A x of the first
                   component and of that many disjoint components); ``gain_percent``;
                   ``notes`` (list of strings)
``output``         file name stem of what is written (default: the config's stem)
=================  ========================================================================

The entry point is :func:`run_config`; :func:`load_config` only parses and checks.
"""

from __future__ import annotations

import datetime as dt
import inspect
import io
import json
import logging
import math
import numbers
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import yaml
from threadpoolctl import threadpool_limits

from spca_cli.errors import SpcaInputError, SpcaParameterError
from spca_cli.files import atomic_write
from spca_cli.generate import (MatrixData, empirical_covariance, spiked_covariance, spiked_samples,
                               zipf_corpus)
from spca_cli.report import to_dict
from spca_cli.solvers import JOINT_SOLVERS, SOLVERS
from spca_cli.topics import DEFLATIONS, run_topics

logger = logging.getLogger(__name__)

__all__ = ["run_config", "load_config", "Config", "RunSpec", "DataSpec", "DaysSpec",
           "PublishedSpec", "MEASURES", "FORMATS", "render_markdown", "render_json"]

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
_PATH_OPTIONS = ("vocab", "labels")


def _ingest_keys():
    """The options ``load_input`` accepts: ``read_corpus``'s keywords plus ``labels``."""
    from spca_cli.corpus import read_corpus

    params = inspect.signature(read_corpus).parameters
    return sorted({name for name, p in params.items()
                   if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "progress"} | {"labels"})


def _load_data(config):
    """The data set of a corpus-based config (generators for ``recovery`` are drawn per trial).

    Files go through :func:`spca_cli.corpus.load_input`, exactly as ``spca topics`` reads them;
    ``data.ingest`` holds its options.
    """
    spec = config.data
    if spec.generator == "zipf_corpus":
        params = dict(spec.params)
        seed = params.pop("seed", config.seed)
        if "start" in params:
            params["start"] = params["start"].isoformat()
        return zipf_corpus(**params, random_state=seed)
    from spca_cli.corpus import load_input

    ingest = dict(spec.ingest)
    known = _ingest_keys()
    for key, value in ingest.items():
        if key not in known:
            raise SpcaInputError(config.path, f"data.ingest.{key}: unknown ingest option; "
                                              f"expected one of {', '.join(known)}")
        if key in _PATH_OPTIONS and isinstance(value, str):
            ingest[key] = str((config.path.parent / value).resolve())
    try:
        return load_input(str(spec.path), **ingest)
    except SpcaParameterError as exc:
        raise SpcaInputError(config.path, f"data.ingest: {exc}") from None


def _n_words(data):
    if getattr(data, "S", None) is not None:
        return int(data.S.shape[1])
    return int(np.asarray(data.A).shape[0])


def _check_runs_fit(config, n_words):
    """Relations between the runs and the data size, checked before any run starts."""
    for i, run in enumerate(config.runs):
        where = f"runs[{i}]"
        ks = config.k_values if config.measure == "sparsity_sweep" else (run.k,)
        k = max(ks)
        key = "k_values" if config.measure == "sparsity_sweep" else f"{where}.k"
        if k > n_words:
            raise _Bad(key, f"must be <= the {n_words} words of the data, got {k}")
        if run.rank > n_words:
            raise _Bad(f"{where}.rank", f"must be <= the {n_words} words of the data, got "
                                        f"{run.rank}")
        if (run.joint or run.deflation == "remove") and run.components * k > n_words:
            raise _Bad(f"{where}.components", f"components * k must be <= the {n_words} words "
                                              f"for disjoint topics; got {run.components} * {k}")


# ====================================================================== measures


def _progress(progress, description, done, total):
    if progress is not None:
        progress(description, done, total)


def _topics(config, index, data, **override):
    """One run_topics call for ``config.runs[index]``; parameter errors name the run."""
    run = config.runs[index]
    kwargs = run.topics_kwargs(override.pop("k", None))
    kwargs.update(override)
    try:
        return run_topics(data, **kwargs)
    except SpcaParameterError as exc:
        raise SpcaInputError(config.path, f"runs[{index}] ({run.label}): {exc}") from None


def _fmt_ratio(x):
    return "—" if x is None else f"{x:.4f}"


def _fmt_var(x):
    return "—" if x is None else f"{x:.2f}"


def _fmt_paper(x):
    """A published figure as the paper printed it (3 significant digits for large numbers)."""
    if x is None:
        return "—"
    if isinstance(x, tuple):
        return " / ".join(_fmt_paper(v) for v in x)
    return f"{x:.3g}" if abs(x) >= 1000 or abs(x) < 0.01 else f"{x:g}"


def _table(title, columns, rows, note=None):
    table = {"title": title, "columns": list(columns), "rows": [list(r) for r in rows]}
    if note:
        table["note"] = note
    return table


def _recovery(config, progress):
    with threadpool_limits(limits=1, user_api="blas"):
        # every product here is on a small dense matrix (500 x 500), where one BLAS thread is
        # fastest; a multi-threaded BLAS on busy shared cores was measured 10-40x slower here
        return _recovery_trials(config, progress)


def _recovery_trials(config, progress):
    params = dict(config.data.params)
    samples = params.pop("samples")
    center = params.pop("center", False)
    supports_mode = params.pop("supports", "first")
    model = spiked_covariance(**params)
    truth = set(model.supports)
    spikes = len(model.supports)
    labels = [str(i) for i in range(model.n)]
    trials = config.trials
    total = len(samples) * trials
    success = {(run.label, m): 0 for run in config.runs for m in samples}
    certified = {(run.label, m): [] for run in config.runs for m in samples}
    seconds = {run.label: 0.0 for run in config.runs}
    notes = []
    done = 0
    for j, m in enumerate(samples):
        for t in range(trials):
            # one seeded stream per (sample size, trial): every solver sees the same samples
            rng = np.random.RandomState([config.seed, j, t])
            if supports_mode == "random":
                model = spiked_covariance(**params, supports="random", random_state=rng)
                truth = set(model.supports)
            A = empirical_covariance(spiked_samples(model, m, random_state=rng), center=center)
            data = MatrixData(A=A, labels=labels,
                              path=f"spiked covariance n={model.n} m={m} trial {t}")
            for i, run in enumerate(config.runs):
                t0 = time.perf_counter()
                result = _topics(config, i, data)
                seconds[run.label] += time.perf_counter() - t0
                found = {frozenset(int(x) for x in c.indices) for c in result.components[:spikes]}
                success[(run.label, m)] += int(found == truth)
                certified[(run.label, m)].append(result.components[0].certified_ratio)
                for note in result.notes:
                    if note not in notes:
                        notes.append(note)
            done += 1
            _progress(progress, f"m={m} trial {t + 1}/{trials}", done, total)

    n = model.n
    columns = ["method", "solver", "k"]
    for m in samples:
        columns += [f"p_rec {n}×{m} (ours, {trials} trials)", f"{n}×{m} (paper)"]
    rows, results = [], []
    for run in config.runs:
        published = config.published.value(run.label)
        if published is not None and not isinstance(published, tuple):
            published = (published,)
        row = [run.label, _solver_text(run), str(run.k)]
        entry = {"label": run.label, "solver": run.solver, "k": run.k, "rank": run.rank,
                 "components": run.components, "deflation": run.deflation,
                 "seconds": round(seconds[run.label], 3), "by_samples": []}
        for j, m in enumerate(samples):
            p = success[(run.label, m)] / trials
            se = math.sqrt(p * (1 - p) / trials)
            paper = published[j] if published is not None and j < len(published) else None
            row += [f"{p:.3f} ± {se:.3f}", _fmt_paper(paper)]
            entry["by_samples"].append({
                "samples": m, "trials": trials, "recovered": success[(run.label, m)],
                "probability": p, "standard_error": se, "published": paper,
                "mean_certified_ratio_pc1": float(np.mean(certified[(run.label, m)]))})
        rows.append(row)
        results.append(entry)
    cert_rows = [[run.label] + [f"{np.mean(certified[(run.label, m)]):.4f}" for m in samples]
                 for run in config.runs]
    tables = [
        _table(f"Probability of recovering {'both' if spikes == 2 else 'all'} supports", columns,
               rows,
               note=f"± is one standard error over the trials; a trial succeeds when the "
                    f"supports of the first {spikes} components are exactly the {spikes} "
                    f"spikes' supports (in any order)."),
        _table("Mean certified ratio of the first component (x^T A x / upper bound)",
               ["method"] + [f"{n}×{m}" for m in samples], cert_rows),
    ]
    return {"tables": tables, "results": results, "notes": notes,
            "data_summary": {"generator": "spiked_covariance", "n": n,
                             "eigenvalues": [float(v) for v in model.eigenvalues],
                             "noise": model.noise, "sparsity": int(len(model.supports[0])),
                             "samples": list(samples), "trials": trials, "center": center}}


def _solver_text(run):
    if run.solver in ("spannogram", "nonneg") or run.joint:
        return f"{run.solver} (rank {run.rank})"
    return run.solver


def _run_all(config, data, progress):
    docs, seconds = {}, {}
    for i, run in enumerate(config.runs):
        _progress(progress, f"{run.label}", i, len(config.runs))
        t0 = time.perf_counter()
        docs[run.label] = to_dict(_topics(config, i, data))
        seconds[run.label] = time.perf_counter() - t0
        logger.info("%s: %.1f s", run.label, seconds[run.label])
    _progress(progress, "done", len(config.runs), len(config.runs))
    return docs, seconds


def _collect_notes(docs):
    notes = []
    for label, doc in docs.items():
        for note in doc.get("notes", []):
            notes.append(f"{label}: {note}")
    return notes


def _words_table(title, headers, word_lists, k):
    rows = []
    for r in range(k):
        rows.append([str(r + 1)] + [words[r] if r < len(words) else "" for words in word_lists])
    return _table(title, ["#"] + list(headers), rows)


def _components(config, data, progress):
    docs, seconds = _run_all(config, data, progress)
    pub = config.published
    labels = [run.label for run in config.runs]
    n_pc = max(run.components for run in config.runs)

    ratio_rows = []
    for pc in range(n_pc):
        row = [f"PC{pc + 1}"]
        for label in labels:
            comps = docs[label]["components"]
            ours = comps[pc]["cumulative_ratio"] if pc < len(comps) else None
            paper = pub.value(label)
            paper = paper[pc] if isinstance(paper, tuple) and pc < len(paper) else None
            row.append(_fmt_ratio(ours) + ("" if paper is None else f" (paper {paper:.4f})"))
        ratio_rows.append(row)
    tables = [_table("Cumulative performance ratio  Σ_{j≤i} x_j^T A x_j / Σ_{j≤i} λ_j",
                     ["PC"] + labels, ratio_rows,
                     note="(paper ...) is the published figure for the same method and PC.")]
    if pub.final:
        final = dict(pub.final)
        rows = [[label, _fmt_ratio(docs[label]["components"][-1]["cumulative_ratio"]),
                 "—" if final.get(label) is None else f"{final[label]:.3f}"] for label in labels]
        tables.append(_table(f"Cumulative ratio after {n_pc} PCs", ["method", "ours", "paper"],
                             rows))

    var_rows = []
    n_best = pub.best_total_components or n_pc
    for pc in range(n_pc):
        row = [f"PC{pc + 1}"]
        for label in labels:
            comps = docs[label]["components"]
            row.append(_fmt_var(comps[pc]["explained_variance"]) if pc < len(comps) else "—")
        row.append(_fmt_var(pub.best_first) if pc == 0 else "")
        var_rows.append(row)
    if n_best != n_pc:
        row = [f"total of PC1..PC{n_best}"]
        for label in labels:
            comps = docs[label]["components"]
            row.append(_fmt_var(sum(c["explained_variance"] for c in comps[:n_best])))
        row.append(_fmt_var(pub.best_total))
        var_rows.append(row)
    var_rows.append(["total"] + [_fmt_var(docs[label]["total_explained_variance"])
                                 for label in labels]
                    + [_fmt_var(pub.best_total) if n_best == n_pc else ""])
    var_rows.append(["seconds"] + [f"{seconds[label]:.1f}" for label in labels] + [""])
    tables.append(_table("Explained variance x^T A x (on the original A)",
                         ["PC"] + labels + ["best published"], var_rows))

    for pc in range(n_pc):
        word_lists = [docs[label]["components"][pc]["words"]
                      if pc < len(docs[label]["components"]) else [] for label in labels]
        k = max((len(w) for w in word_lists), default=0)
        tables.append(_words_table(f"PC{pc + 1} words", labels, word_lists, k))
    return {"tables": tables, "results": {"runs": docs,
                                          "seconds": {k: round(v, 3) for k, v in seconds.items()}},
            "notes": _collect_notes(docs), "data_summary": _summary(data)}


def _summary(data):
    if getattr(data, "S", None) is not None:
        S = data.S
        return {"documents": int(S.shape[0]), "words": int(S.shape[1]), "nonzeros": int(S.nnz)}
    return {"documents": None, "words": _n_words(data)}


@dataclass
class _DaySubset:
    """The documents of one day, shaped like a corpus for run_topics."""

    S: sp.csr_array
    vocabulary: list
    path: str


def _daily(config, data, progress):
    times = getattr(data, "times", None)
    if times is None:
        raise SpcaInputError(config.path, f"data.path: {config.data.describe()} has no document "
                                          "times; measure 'daily' needs them")
    times = np.asarray(times, dtype=np.int64)
    tz = config.days.tzinfo()
    S = sp.csr_array(data.S)
    run = config.runs[0]
    days = config.days.dates()
    docs, counts, seconds = {}, {}, {}
    for d_index, day in enumerate(days):
        _progress(progress, day.isoformat(), d_index, len(days))
        start = int(dt.datetime.combine(day, dt.time(0), tzinfo=tz).timestamp())
        rows = np.flatnonzero((times >= start) & (times < start + 86400))
        counts[day] = int(rows.size)
        if rows.size == 0:
            continue
        subset = _DaySubset(S=S[rows, :], vocabulary=data.vocabulary,
                            path=f"{data.path} [{day.isoformat()} {config.days.utc_offset}]")
        t0 = time.perf_counter()
        docs[day] = to_dict(_topics(config, 0, subset))
        seconds[day] = time.perf_counter() - t0
    _progress(progress, "done", len(days), len(days))

    heads = [day.isoformat() for day in days]
    rows = [["documents"] + [str(counts[day]) for day in days]]
    for pc in range(run.components):
        row = [f"PC{pc + 1} cumulative ratio"]
        for day in days:
            comps = docs[day]["components"] if day in docs else []
            row.append(_fmt_ratio(comps[pc]["cumulative_ratio"]) if pc < len(comps) else "—")
        rows.append(row)
    rows.append(["PC1 x^T A x"] + [_fmt_var(docs[day]["components"][0]["explained_variance"])
                                   if day in docs else "—" for day in days])
    rows.append(["total x^T A x"] + [_fmt_var(docs[day]["total_explained_variance"])
                                     if day in docs else "—" for day in days])
    rows.append(["seconds"] + [f"{seconds[day]:.1f}" if day in docs else "—" for day in days])
    tables = [_table(f"{run.label}: one column per day (local time {config.days.utc_offset})",
                     ["", *heads], rows)]
    for pc in range(run.components):
        word_lists = [docs[day]["components"][pc]["words"]
                      if day in docs and pc < len(docs[day]["components"]) else []
                      for day in days]
        tables.append(_words_table(f"PC{pc + 1} words", heads, word_lists, run.k))
    notes = _collect_notes({day.isoformat(): doc for day, doc in docs.items()})
    notes += [f"{day.isoformat()}: no documents" for day in days if counts[day] == 0]
    return {"tables": tables,
            "results": {"days": {day.isoformat(): {"documents": counts[day],
                                                   "topics": docs.get(day)} for day in days}},
            "notes": notes, "data_summary": _summary(data)}


def _total_variance(config, data, progress):
    docs, seconds = _run_all(config, data, progress)
    pub = config.published
    deflation_totals = [docs[run.label]["total_explained_variance"]
                        for run in config.runs if not run.joint]
    best_deflation = max(deflation_totals) if deflation_totals else None
    n_best = pub.best_total_components
    comps = {run.components for run in config.runs}
    n_pc = max(comps)
    columns = ["method", "solver", "PC1 x^T A x"]
    if n_best and n_best != n_pc:
        columns.append(f"PC1..PC{n_best} total")
    columns += [f"total of {n_pc} components", "gain over best deflation", "certified total",
                "seconds", "paper", "paper gain"]
    rows, results = [], []
    for run in config.runs:
        doc = docs[run.label]
        total = doc["total_explained_variance"]
        gain = (None if best_deflation in (None, 0)
                else 100.0 * (total - best_deflation) / best_deflation)
        first = doc["components"][0]["explained_variance"]
        partial = sum(c["explained_variance"] for c in doc["components"][:n_best or n_pc])
        # a joint solver's components have no order, so "its PC1" is not comparable to a
        # deflation method's first component
        row = [run.label, _solver_text(run) + (", joint" if run.joint else f", {run.deflation}"),
               "n/a (joint)" if run.joint else _fmt_var(first)]
        if n_best and n_best != n_pc:
            row.append("n/a (joint)" if run.joint else _fmt_var(partial))
        row += [_fmt_var(total), "—" if gain is None else f"{gain:+.2f}%",
                _fmt_ratio(doc.get("total_certified_ratio")), f"{seconds[run.label]:.1f}",
                _fmt_paper(pub.value(run.label)),
                f"{pub.gain_percent:+.2f}%" if run.joint and pub.gain_percent is not None else ""]
        rows.append(row)
        results.append({"label": run.label, "solver": run.solver, "joint": run.joint,
                        "total_explained_variance": total, "gain_percent": gain,
                        "first_component": None if run.joint else first,
                        "total_upper_bound": doc.get("total_upper_bound"),
                        "seconds": round(seconds[run.label], 3)})
    if pub.best_first is not None or pub.best_total is not None:
        row = ["best published", "", _fmt_var(pub.best_first)]
        if n_best and n_best != n_pc:
            row.append(_fmt_var(pub.best_total))
            row.append("")
        else:
            row.append(_fmt_var(pub.best_total))
        row += ["", "", "", "", ""]
        rows.append(row)
    tables = [_table("Total explained variance of disjoint components (x^T A x on the original A)",
                     columns, rows)]
    for run in config.runs:
        doc = docs[run.label]
        word_lists = [c["words"] for c in doc["components"]]
        tables.append(_words_table(f"{run.label} topics", [f"Topic {c['index']}"
                                                           for c in doc["components"]],
                                   word_lists, run.k))
    return {"tables": tables,
            "results": {"runs": results, "best_deflation_total": best_deflation,
                        "topics": docs},
            "notes": _collect_notes(docs), "data_summary": _summary(data)}


def _sparsity_sweep(config, data, progress):
    total = len(config.runs) * len(config.k_values)
    done = 0
    curves, tables, notes = {}, [], []
    for i, run in enumerate(config.runs):
        points = []
        for k in config.k_values:
            _progress(progress, f"{run.label} k={k}", done, total)
            t0 = time.perf_counter()
            result = _topics(config, i, data, k=k)
            elapsed = time.perf_counter() - t0
            comp = result.components[0]
            lam1 = float(result.eigenvalues[0])
            weights = np.asarray(comp.weights)
            points.append({
                "k": k, "explained_variance": comp.explained_variance, "lambda_1": lam1,
                "variance_ratio": comp.variance_ratio, "upper_bound": comp.upper_bound,
                "upper_bound_ratio": comp.upper_bound / lam1 if lam1 > 0 else 0.0,
                "certified_ratio": comp.certified_ratio, "bound_source": comp.bound_source,
                "nonnegative": bool(np.all(weights >= 0)), "words": list(comp.words),
                "seconds": round(elapsed, 3)})
            for note in result.notes:
                if f"{run.label} k={k}: {note}" not in notes:
                    notes.append(f"{run.label} k={k}: {note}")
            done += 1
        curves[run.label] = points
        rows = [[str(p["k"]), _fmt_var(p["explained_variance"]), _fmt_ratio(p["variance_ratio"]),
                 _fmt_var(p["upper_bound"]), _fmt_ratio(p["upper_bound_ratio"]),
                 _fmt_ratio(p["certified_ratio"]), p["bound_source"],
                 "yes" if p["nonnegative"] else "no"] for p in points]
        tables.append(_table(
            f"{run.label} ({_solver_text(run)}): explained variance versus k",
            ["k", "x^T A x", "÷ λ1", "upper bound", "bound ÷ λ1", "certified ratio",
             "bound source", "nonnegative"], rows,
            note="the best possible k-sparse value lies between x^T A x and the upper bound "
                 "(with the probability the bound source states, if any)"))
    _progress(progress, "done", total, total)
    return {"tables": tables, "results": {"curves": curves}, "notes": notes,
            "data_summary": _summary(data)}


_MEASURE_FUNCS = {"components": _components, "daily": _daily,
                  "total_variance": _total_variance, "sparsity_sweep": _sparsity_sweep}


# ====================================================================== output


def _plot_png(config, doc):
    """PNG bytes of the sparsity sweep, or raise ImportError when matplotlib is missing."""
    import matplotlib  # lazily: plotting is optional (pip install 'spca-cli[plot]')

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2), dpi=120)
    ax = fig.add_subplot()
    for label, points in doc["results"]["curves"].items():
        ks = [p["k"] for p in points]
        low = [p["variance_ratio"] for p in points]
        high = [p["upper_bound_ratio"] for p in points]
        (line,) = ax.plot(ks, low, marker="o", markersize=3, label=f"{label}: x^T A x / λ1")
        ax.fill_between(ks, low, high, color=line.get_color(), alpha=0.2,
                        label=f"{label}: optimum lies here (certified band)")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xlabel("sparsity k")
    ax.set_ylabel("explained variance / λ1")
    ax.set_title(config.title, fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()


def _plain(value):
    """A JSON-ready copy of ``value`` (tuples -> lists, dates -> ISO, numpy -> Python)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(doc):
    """The reproduction as Markdown: header, each table, notes, timing."""
    lines = [f"## {doc['title']}", "", f"Reproduces: {doc['reproduces']}."]
    if doc.get("substitution"):
        lines.append(f"Substituted: {doc['substitution']}")
    data = doc["data"]
    size = ", ".join(f"{data[key]} {key}" for key in ("documents", "words", "nonzeros")
                     if data.get(key) is not None)
    lines.append(f"Data: `{data['source']}`" + (f" ({size})." if size else "."))
    lines.append("")
    for table in doc["tables"]:
        lines.append(f"**{table['title']}**")
        lines.append("")
        lines.append("| " + " | ".join(_md_cell(c) for c in table["columns"]) + " |")
        lines.append("|" + "---|" * len(table["columns"]))
        for row in table["rows"]:
            lines.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
        if table.get("note"):
            lines += ["", table["note"]]
        lines.append("")
    published = doc.get("published") or {}
    extra = list(published.get("notes", []))
    if published.get("source"):
        extra.insert(0, f"Published figures: {published['source']}")
    if extra or doc["notes"]:
        lines.append("Notes:")
        lines.append("")
        lines += [f"- {_md_cell(note)}" for note in extra + doc["notes"]]
        lines.append("")
    lines.append(f"Computed in {doc['seconds']:.1f} s by spca reproduce {doc['config']}.")
    return "\n".join(lines) + "\n"


def render_json(doc):
    return json.dumps(_plain(doc), indent=2, ensure_ascii=False) + "\n"


def _published_dict(pub):
    out = {"source": pub.source, "values": {label: _plain(v) for label, v in pub.values},
           "final": dict(pub.final), "best_first": pub.best_first, "best_total": pub.best_total,
           "best_total_components": pub.best_total_components,
           "gain_percent": pub.gain_percent, "notes": list(pub.notes)}
    return {key: val for key, val in out.items() if val not in (None, {}, [])}


# ====================================================================== entry point


def run_config(path, outdir=None, fmt="markdown", trials=None, progress=None):
    """Run a reproduce config and return its table, writing it to ``outdir`` if given.

    Parameters
    ----------
    path : str or Path
        The YAML config (see ``configs/*.yaml`` and the module docstring for its keys).
    outdir : str or Path, optional
        Folder for ``STEM.md`` or ``STEM.json`` (and ``STEM.png``/the config's ``plot`` file for
        sweeps), STEM being the config's ``output`` key or its file name stem. Created if
        missing; every file is written atomically (temp file + ``os.replace``).
    fmt : {'markdown', 'json'}, default='markdown'
        Output format of the returned text and the written table.
    trials : int, optional
        Overrides the config's ``trials`` (measure ``recovery`` only).
    progress : callable(description, done, total), optional
        Called as the work advances (the CLI draws a progress bar with it).

    Returns
    -------
    text : str
        The rendered table(s).
    files_written : list of Path
        Files written to ``outdir`` (empty without one).

    Raises
    ------
    SpcaInputError
        The config is invalid (one line: file, key path, what is wrong), or its data file is.
    SpcaParameterError
        ``fmt`` or ``trials`` is not allowed.

    Examples
    --------
    From the repository's root (where ``make test`` runs the doctests):

    >>> text, files = run_config("configs/2013-table1-spiked.yaml", trials=2)
    >>> text.splitlines()[0]
    '## Spiked covariance support recovery (2013 paper, Table 1)'
    >>> files  # nothing is written without an outdir
    []
    """
    if fmt not in FORMATS:
        raise SpcaParameterError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    config = load_config(path)
    if trials is not None:
        if isinstance(trials, bool) or not isinstance(trials, numbers.Integral) or trials < 1:
            raise SpcaParameterError(f"--trials must be an int >= 1, got {trials!r}")
        if config.measure != "recovery":
            raise SpcaParameterError(f"--trials applies only to measure 'recovery'; {path} "
                                     f"measures {config.measure!r}")
        config = replace(config, trials=int(trials))
    if outdir is not None and Path(outdir).exists() and not Path(outdir).is_dir():
        raise SpcaParameterError(f"output folder {outdir} exists and is not a folder")

    t0 = time.perf_counter()
    if config.measure == "recovery":
        body = _recovery(config, progress)
        source = config.data.describe()
    else:
        t_load = time.perf_counter()
        data = _load_data(config)
        load_seconds = time.perf_counter() - t_load
        try:
            _check_runs_fit(config, _n_words(data))
        except _Bad as exc:
            raise SpcaInputError(path, str(exc)) from None
        body = _MEASURE_FUNCS[config.measure](config, data, progress)
        body["data_summary"]["load_seconds"] = round(load_seconds, 3)
        source = config.data.describe()
    doc = {
        "config": str(path), "title": config.title, "reproduces": config.reproduces,
        "substitution": config.substitution, "measure": config.measure,
        "data": {"source": source, **body["data_summary"]},
        "runs": [{"label": r.label, **{k: v for k, v in r.topics_kwargs().items()
                                      if k != "solver_options"},
                  "options": dict(r.options)} for r in config.runs],
        "tables": body["tables"], "published": _published_dict(config.published),
        "results": body["results"], "notes": list(body["notes"]),
    }

    files, png = [], None
    if config.measure == "sparsity_sweep":
        if outdir is None:
            doc["notes"].append("plot not written: give an output folder (-o OUTDIR)")
        else:
            try:
                png = _plot_png(config, doc)
            except ImportError:
                doc["notes"].append("plot skipped: matplotlib is not installed "
                                    "(pip install 'spca-cli[plot]')")
    doc["seconds"] = time.perf_counter() - t0
    text = render_json(doc) if fmt == "json" else render_markdown(doc)
    if outdir is not None:
        out = Path(outdir)
        out.mkdir(parents=True, exist_ok=True)
        target = out / f"{config.stem}.{'json' if fmt == 'json' else 'md'}"
        atomic_write(target, text)
        files.append(target)
        if png is not None:
            plot_path = out / (config.plot or f"{config.stem}.png")
            atomic_write(plot_path, png)
            files.append(plot_path)
    return text, files
