"""Reproduce measures: each turns a checked config into the rows of a paper's table."""

from __future__ import annotations

import datetime as dt
import logging
import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from spca_cli.corpus.core import input_gram
from spca_cli.errors import SpcaInputError, SpcaParameterError
from spca_cli.generate import (MatrixData, empirical_covariance, spiked_covariance, spiked_samples,
                               zipf_corpus)
from spca_cli.report import to_dict
from spca_cli.threads import one_blas_thread
from spca_cli.topics import run_topics

from spca_cli.reproduce.config import _ingest_keys
from spca_cli.reproduce.config import check_runs_fit as _check_runs_fit  # noqa: F401 (re-export)

logger = logging.getLogger(__name__)

_PATH_OPTIONS = ("vocab", "labels")


def fetch_data(config, progress=None):
    """``config`` with its data set's files present: a ``data.dataset`` not in the data folder
    is fetched now (:func:`spca_cli.datasets.require`, its download drawn on ``progress``);
    one that cannot be is one line naming the data set and how to get it."""
    if config.data.dataset is None:
        return config
    from dataclasses import replace

    from spca_cli import datasets

    try:
        path = datasets.require(config.data.dataset, progress=datasets.task_bar(progress))
    except datasets.DatasetError as exc:
        raise SpcaInputError(config.path, f"data.dataset: {exc}") from None
    return replace(config, data=replace(config.data, path=path))


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
    with one_blas_thread():
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
    sizes = input_gram(data).summary
    # a matrix given as A reports no nonzeros here (its documents are unknown)
    keys = ("documents", "words") if sizes["documents"] is None else ("documents", "words",
                                                                        "nonzeros")
    return {key: sizes[key] for key in keys}


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


