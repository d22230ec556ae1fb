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
``data``           ``path`` (relative to the config's folder; read by ``load_input``) or
                   ``dataset`` (a name of ``spca datasets list``, fetched on first use), with
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

import logging
import numbers
import time
from dataclasses import replace
from pathlib import Path

from spca_cli.corpus.core import input_gram
from spca_cli.errors import Name, SpcaInputError, SpcaParameterError
from spca_cli.files import atomic_write, check_output_folder, output_errors
from spca_cli.reproduce.config import (FORMATS, MEASURES, Config, DataSpec, DaysSpec,
                                       PublishedSpec, RunSpec, _Bad, check_work, load_config)
from spca_cli.reproduce.measures import (_MEASURE_FUNCS, _check_runs_fit, _load_data, _recovery,
                                         fetch_data)
from spca_cli.reproduce.render import _plot_png, _published_dict, render_json, render_markdown

logger = logging.getLogger(__name__)

__all__ = ["run_config", "load_config", "Config", "RunSpec", "DataSpec", "DaysSpec",
           "PublishedSpec", "MEASURES", "FORMATS", "render_markdown", "render_json"]


def _config_inputs(path, config):
    """The files a config reads: itself, its data file and any file-valued ingest option."""
    files = [path]
    if config.data.path is not None:
        files.append(config.data.path)
    for key, value in config.data.ingest:
        if key in ("vocab", "labels", "stopwords") and isinstance(value, str):
            files.append(config.path.parent / value)
    return files


def _output_names(config, fmt):
    names = [f"{config.stem}.{'json' if fmt == 'json' else 'md'}"]
    if config.measure == "sparsity_sweep":
        names.append(config.plot or f"{config.stem}.png")
    return names


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
            raise SpcaParameterError([Name("trials"), f" must be an int >= 1, got {trials!r}"])
        if config.measure != "recovery":
            raise SpcaParameterError([Name("trials"), " applies only to measure 'recovery'; "
                                      f"{path} measures {config.measure!r}"])
        try:
            check_work(config, trials=int(trials))
        except _Bad as exc:
            raise SpcaParameterError([Name("trials"), f" {trials}: "
                                      f"{str(exc).split(': ', 1)[1]}"]) from None
        config = replace(config, trials=int(trials))
    if outdir is not None:
        check_output_folder(outdir, _config_inputs(path, config),
                            files=_output_names(config, fmt))

    t0 = time.perf_counter()
    if config.measure == "recovery":
        body = _recovery(config, progress)
        source = config.data.describe()
    else:
        config = fetch_data(config, progress)  # a data set's first use downloads it
        t_load = time.perf_counter()
        data = _load_data(config)
        load_seconds = time.perf_counter() - t_load
        try:
            _check_runs_fit(config, input_gram(data).gram.n)
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
        with output_errors(out):
            out.mkdir(parents=True, exist_ok=True)
        target = out / f"{config.stem}.{'json' if fmt == 'json' else 'md'}"
        atomic_write(target, text)
        files.append(target)
        if png is not None:
            plot_path = out / (config.plot or f"{config.stem}.png")
            atomic_write(plot_path, png)
            files.append(plot_path)
    return text, files
