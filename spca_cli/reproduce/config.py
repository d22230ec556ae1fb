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

from spca_cli import limits
from spca_cli.corpus._io import read_all
from spca_cli.errors import SpcaInputError, SpcaParameterError
from spca_cli.params import SEED_MAX, FitError, OptionError, check_fit, check_solver_options
from spca_cli.solvers.registry import REGISTRY, solver_names
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
        return REGISTRY[self.solver].joint

    def topics_kwargs(self, k=None):
        """Keyword arguments of :func:`run_topics` for this run (``k`` overridden by sweeps)."""
        return {"solver": self.solver, "k": self.k if k is None else k,
                "n_components": self.components, "rank": self.rank,
                "deflation": self.deflation, "random_state": self.seed,
                "time_limit": self.time_limit, "solver_options": dict(self.options)}


@dataclass(frozen=True)
class DataSpec:
    """Where the data comes from: a file (``path``, resolved), a registered data set
    (``dataset``; ``path`` is where its main file is or will be once fetched) or a generator
    and its params."""

    path: Path | None = None
    given_path: str | None = None
    ingest: tuple = ()
    generator: str | None = None
    params: tuple = ()  # sorted (name, value) pairs for the generator
    dataset: str | None = None

    def describe(self):
        if self.dataset is not None:
            return f"data set {self.dataset} ({self.path.name})"
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
    "seed": (_int(0, SEED_MAX), False),
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
    "seed": (_int(0, SEED_MAX), False),
}

def _time_ok(v):
    return isinstance(v, (dt.date, str)) and (not isinstance(v, str) or v.strip() != "")


#: ``data.ingest`` options with the type each must have (``load_input``'s keywords; a keyword
#: it gains later is still accepted by name, see ``_check_ingest``)
_INGEST_RULES = {
    "format": _choice(("auto", "uci", "csv", "jsonl", "text")),
    "vocab": _str(), "labels": _str(), "text_column": _str(), "time_column": _str(),
    "since": _Rule("must be a date or ISO date-time", _time_ok),
    "until": _Rule("must be a date or ISO date-time", _time_ok),
    "contains": _ListOf(_str(), "must be a list of words"),
    "min_count": _int(1), "min_length": _int(1),
    "stopwords": _str(text="must be english, none or a file name"),
    "weighting": _choice(("binary", "count", "tfidf")),
    "lang": _ListOf(_str(), "must be a list of language codes"),
    "ngrams": _str(text="must be MIN-MAX, e.g. 1-2"), "titles": _str(),
    "keep_duplicates": _BOOL,
    "near_duplicates": _Rule("must be true, false or a Jaccard index in (0, 1]",
                             lambda v: isinstance(v, bool) or (_is_number(v) and 0 < v <= 1)),
}


class _IngestOptions:
    """``data.ingest``: a mapping of load_input options, each of its type (kept as pairs)."""

    def __call__(self, value, where):
        if not isinstance(value, dict):
            raise _Bad(where, f"must be a mapping, got {_show(value)}")
        known = _ingest_keys()
        out = {}
        for key, item in value.items():
            if not isinstance(key, str) or key not in known:
                raise _Bad(f"{where}.{key}", f"unknown ingest option; expected one of "
                                             f"{', '.join(known)}")
            rule = _INGEST_RULES.get(key)
            out[key] = item if rule is None else rule(item, f"{where}.{key}")
            if key == "contains":
                out[key] = list(out[key])
        return tuple(sorted(out.items()))


def _ingest_keys():
    """The options ``load_input`` accepts: ``read_corpus``'s keywords plus ``labels`` (not
    ``groups``: a reproduced table is of the whole corpus)."""
    from spca_cli.corpus import read_corpus

    params = inspect.signature(read_corpus).parameters
    return sorted({name for name, p in params.items()
                   if p.kind is inspect.Parameter.KEYWORD_ONLY
                   and name not in ("progress", "groups")} | {"labels"})


_DATA_KEYS = {"path": (_str(), False), "dataset": (_str(), False),
              "ingest": (_IngestOptions(), False),
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
    "seed": (_int(0, SEED_MAX), False),
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

    def construct_checked_timestamp(self, node):
        """A YAML date or time that is one (2015-02-30 looks like a date to YAML, which then
        fails in Python with a ValueError and no line)."""
        try:
            return self.construct_yaml_timestamp(node)
        except ValueError as exc:
            raise yaml.constructor.ConstructorError(
                None, None, f"{node.value} is not a valid date ({exc})", node.start_mark) from None


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:timestamp",
                                 _UniqueKeyLoader.construct_checked_timestamp)


def _read_yaml(path):
    try:
        text = read_all(path).decode("utf-8")
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
    known = solver_names()
    return _choice(known)


def _check_options(solver, options, where):
    """Solver options must be named keyword parameters of the solver, each of its type (the
    same check run_topics makes, here before any run starts)."""
    try:
        check_solver_options(solver, dict(options))
    except OptionError as exc:
        raise _Bad(f"{where}.{exc.option}", exc.reason) from None


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
    generator = data.get("generator")
    sources = [key for key in ("path", "dataset") if key in data] + ["generator"] * (
        generator is not None)
    if len(sources) != 1:
        raise _Bad("data", "give exactly one of data.path, data.dataset and data.generator")
    if sources[0] in ("path", "dataset"):
        key = sources[0]
        extra = sorted(set(data) - {key, "ingest"})
        if extra:
            raise _Bad(f"data.{extra[0]}", f"is a generator parameter; data.{key} takes only "
                                           "ingest")
        if key == "dataset":
            # a registered data set (spca_cli.datasets): fetched when the config runs
            from spca_cli import datasets

            if data["dataset"] not in datasets.REGISTRY:
                raise _Bad("data.dataset", f"unknown data set {data['dataset']!r}; expected one"
                                           f" of {', '.join(datasets.names())}")
            spec = DataSpec(path=datasets.main_path(data["dataset"]), dataset=data["dataset"],
                            ingest=data.get("ingest", ()))
        else:
            resolved = (config_path.parent / data["path"]).resolve()
            if not resolved.is_file():
                raise _Bad("data.path", f"file not found: {data['path']} (looked for "
                                        f"{resolved})")
            spec = DataSpec(path=resolved, given_path=data["path"],
                            ingest=data.get("ingest", ()))
    else:
        if "ingest" in data:
            raise _Bad("data.ingest", "applies only to data.path and data.dataset")
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
        raise _Bad("data.generator", f"measure {measure!r} needs a corpus (data.path, "
                                     "data.dataset or generator 'zipf_corpus')")
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
    config = Config(path=path, title=top["title"], reproduces=top["reproduces"], measure=measure,
                    data=data, runs=runs, substitution=top.get("substitution"),
                    trials=top.get("trials", 100), seed=seed, days=days,
                    k_values=top.get("k_values", ()), plot=top.get("plot"),
                    published=_build_published(top, runs), output=top.get("output"))
    _check_generator(config.data)
    check_work(config)
    n_words = generated_words(config.data)
    if n_words is not None:
        check_runs_fit(config, n_words)
    return config


# ====================================================================== before any run


def generated_words(spec):
    """The words (columns) a generator makes, or None for a data file (known once read)."""
    params = dict(spec.params)
    if spec.generator == "spiked_covariance":
        return params.get("n", 500)
    if spec.generator == "zipf_corpus":
        return params.get("words", 1000)
    return None


def _check_generator(spec):
    """The generator's own constraints and memory, with the key path of the value at fault."""
    params = dict(spec.params)
    if spec.generator == "spiked_covariance":
        n, sparsity = params.get("n", 500), params.get("sparsity", 10)
        spikes = params.get("eigenvalues", (400.0, 300.0))
        noise = params.get("noise", 1.0)
        if len(spikes) * sparsity > n:
            raise _Bad("data.sparsity", f"spikes * sparsity must be <= n; got {len(spikes)} * "
                                        f"{sparsity} > {n}")
        for i, value in enumerate(spikes):
            if value <= noise:
                raise _Bad(f"data.eigenvalues[{i}]", f"must be > noise ({noise:g}), got {value:g}")
        m = max(params.get("samples", (1,)))
        # per trial: A = X^T X and its symmetrised copy, the solver's view, the samples X, Z
        need = 3 * limits.dense_matrix_bytes(n) + 2 * 8 * m * n
        problem = limits.memory_exceeded(need)
        if problem is not None:
            raise _Bad("data.n", f"n = {n:,} with {m:,} samples {problem}")
    elif spec.generator == "zipf_corpus":
        words = params.get("words", 1000)
        topics, topic_words = params.get("topics", 5), params.get("topic_words", 10)
        if topics * topic_words >= words:
            raise _Bad("data.topics", f"topics * topic_words must be < words; got {topics} * "
                                      f"{topic_words} >= {words}")
        documents = params.get("documents", 2000)
        per_doc = params.get("words_per_document", 12) + topic_words
        # int32 word index + float64 value per nonzero, twice while the matrix is built
        problem = limits.memory_exceeded(2 * 12 * documents * per_doc + 8 * documents)
        if problem is not None:
            raise _Bad("data.documents", f"{documents:,} documents {problem}")


def check_work(config, trials=None):
    """Refuse a config whose solver runs cannot all finish, before the first one starts."""
    runs = len(config.runs)
    if config.measure == "recovery":
        sizes = len(dict(config.data.params).get("samples", ()))
        trials = config.trials if trials is None else trials
        count, key = trials * sizes * runs, "trials"
        what = f"{trials:,} trials x {sizes} sample sizes x {runs} runs"
    elif config.measure == "daily":
        days = (config.days.last - config.days.first).days + 1
        if days > limits.MAX_DAYS:
            raise _Bad("days.last", f"{config.days.first} .. {config.days.last} is {days:,} days,"
                                    f" more than the {limits.MAX_DAYS:,} a config may cover")
        count, key, what = days * runs, "days", f"{days:,} days x {runs} runs"
    elif config.measure == "sparsity_sweep":
        points = len(config.k_values)
        count, key, what = points * runs, "k_values", f"{points} k values x {runs} runs"
    else:
        return
    try:
        limits.check_run_count(count, what)
    except SpcaParameterError as exc:
        raise _Bad(key, str(exc)) from None


def check_runs_fit(config, n_words):
    """Every run fits the data, as run_topics will check it (:func:`spca_cli.params.check_fit`:
    k, rank, disjoint topics, a sampling solver's work), before any run starts; an error names
    the run's key."""
    sweep = config.measure == "sparsity_sweep"
    for i, run in enumerate(config.runs):
        where = f"runs[{i}]"
        keys = {"k": "k_values" if sweep else f"{where}.k", "rank": f"{where}.rank",
                "n_components": f"{where}.components", "solver_options": f"{where}.options"}
        try:
            check_fit(run.solver, n_words, k=max(config.k_values) if sweep else run.k,
                      n_components=run.components, rank=run.rank, deflation=run.deflation,
                      time_limit=run.time_limit, solver_options=dict(run.options))
        except FitError as exc:
            raise _Bad(keys[exc.param], str(exc)) from None


# ====================================================================== data


# ingest options whose values are file names, resolved against the config's folder
