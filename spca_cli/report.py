"""Render a :class:`~spca_cli.topics.TopicsResult`: JSON (SPEC names), rich table, CSV, Markdown.

:func:`to_dict` is the only place the SPEC field names are written; every other format is built
from its output, so the formats cannot disagree.
"""

from __future__ import annotations

import csv
import io
import json

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["to_dict", "render", "render_json", "render_table", "render_csv", "render_markdown",
           "FORMATS"]

FORMATS = ("table", "json", "csv", "markdown")


def _round(x, digits=None):
    """A JSON number: full precision (scripts compare values to 1e-9), timings rounded."""
    if x is None:
        return None
    return float(x) if digits is None else float(round(float(x), digits))


def to_dict(result):
    """The SPEC JSON document of ``spca topics --format json``."""
    components = []
    for t in result.components:
        item = {
            "index": t.index,
            "words": list(t.words),
            "weights": [_round(w) for w in t.weights],
            "indices": [int(i) for i in t.indices],
            "explained_variance": _round(t.explained_variance),
            "variance_ratio": _round(t.variance_ratio),
            "cumulative_ratio": _round(t.cumulative_ratio),
            "upper_bound": _round(t.upper_bound),
            "bound_source": t.bound_source,
            "certified_ratio": _round(t.certified_ratio),
        }
        if "apriori_ratio" in t.info:
            item["apriori_ratio"] = _round(t.info["apriori_ratio"])
        item["solver_info"] = {key: (_round(v) if isinstance(v, float) else v)
                               for key, v in t.info.items() if key != "apriori_ratio"}
        components.append(item)
    doc = {
        "solver": result.solver,
        "params": result.params,
        "input": result.input,
        "eigenvalues": [_round(v) for v in result.eigenvalues],
        "components": components,
        "total_explained_variance": _round(result.total_explained_variance),
    }
    if result.total_bound is not None:
        ub, source, ratio = result.total_bound
        doc["total_upper_bound"] = _round(ub)
        doc["total_bound_source"] = source
        doc["total_certified_ratio"] = _round(ratio)
    if result.eigensolver:
        doc["eigensolver"] = {key: (_round(v) if isinstance(v, float) else v)
                              for key, v in result.eigensolver.items()}
    doc["seconds"] = {key: _round(v, 4) for key, v in result.seconds.items()}
    doc["notes"] = list(result.notes)
    return doc


def render_json(doc):
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render_table(doc, *, width=None):
    """A rich table: one row per topic with its words and certificates, as plain text."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("words", overflow="fold", ratio=1)
    table.add_column("explained", justify="right")
    table.add_column("var ratio", justify="right")
    table.add_column("cum ratio", justify="right")
    table.add_column("upper bound", justify="right")
    table.add_column("certified", justify="right")
    # auto and exact say which method found each topic
    found_by = [c.get("solver_info", {}).get("found_by") for c in doc["components"]]
    if any(found_by):
        table.add_column("found by")
    sources = []
    for c, finder in zip(doc["components"], found_by):
        # words come from tweets and may contain '[': Text() keeps rich from reading markup
        # a phrase of --ngrams holds a space, so the words are then separated by commas
        sep = ", " if any(" " in w for w in c["words"]) else " "
        cells = [str(c["index"]), Text(sep.join(c["words"])),
                 f"{c['explained_variance']:.6g}", f"{c['variance_ratio']:.4f}",
                 f"{c['cumulative_ratio']:.4f}", f"{c['upper_bound']:.6g}",
                 f"{c['certified_ratio']:.4f}"]
        table.add_row(*cells, *([Text(finder or "")] if any(found_by) else []))
        if c["bound_source"] not in sources:
            sources.append(c["bound_source"])
    out = io.StringIO()
    console = Console(file=out, width=width or 100, force_terminal=False, color_system=None,
                      highlight=False, markup=False, legacy_windows=False)
    inp = doc["input"]
    docs = f"{inp['documents']} documents, " if inp.get("documents") is not None else ""
    console.print(Text(f"{doc['solver']} on {inp['path']} ({docs}{inp['words']} words): "
                       f"k={doc['params']['k']}, rank={doc['params']['rank']}"))
    console.print(table)
    console.print(Text(f"total explained variance {doc['total_explained_variance']:.6g}; "
                       f"bounds from: {', '.join(sources)}"))
    if "total_upper_bound" in doc:
        console.print(Text(f"total upper bound {doc['total_upper_bound']:.6g} "
                           f"({doc['total_bound_source']}), certified "
                           f"{doc['total_certified_ratio']:.4f}"))
    return out.getvalue()


CSV_FIELDS = ["component", "position", "word", "index", "weight", "explained_variance",
              "variance_ratio", "cumulative_ratio", "upper_bound", "bound_source",
              "certified_ratio"]


def render_csv(doc):
    """One row per (topic, word), with the topic's figures repeated on each row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for c in doc["components"]:
        for pos, (word, index, weight) in enumerate(zip(c["words"], c["indices"], c["weights"]), 1):
            writer.writerow([c["index"], pos, word, index, weight, c["explained_variance"],
                             c["variance_ratio"], c["cumulative_ratio"], c["upper_bound"],
                             c["bound_source"], c["certified_ratio"]])
    return out.getvalue()


def _md_cell(text):
    return str(text).replace("|", "\\|")


def render_markdown(doc):
    """The papers' layout: one column per topic, its words down the rows, then its figures."""
    comps = doc["components"]
    head = "| " + " | ".join(f"PC {c['index']}" for c in comps) + " |"
    rule = "|" + "---|" * len(comps)
    lines = [f"**{doc['solver']}**, k={doc['params']['k']}, rank={doc['params']['rank']}", "",
             "| |" + head[1:], "|---" + rule]
    depth = max(len(c["words"]) for c in comps)
    for row in range(depth):
        cells = [_md_cell(c["words"][row]) if row < len(c["words"]) else "" for c in comps]
        lines.append(f"| {row + 1} | " + " | ".join(cells) + " |")
    for key, label in [("explained_variance", "explained variance"),
                       ("variance_ratio", "variance ratio"),
                       ("cumulative_ratio", "cumulative ratio"),
                       ("upper_bound", "upper bound"),
                       ("certified_ratio", "certified ratio")]:
        lines.append(f"| {label} | " + " | ".join(f"{c[key]:.6g}" for c in comps) + " |")
    lines.append("")
    lines.append(f"Total explained variance: {doc['total_explained_variance']:.6g}.")
    return "\n".join(lines) + "\n"


def render(doc, fmt, *, width=None):
    if fmt == "json":
        return render_json(doc)
    if fmt == "csv":
        return render_csv(doc)
    if fmt == "markdown":
        return render_markdown(doc)
    return render_table(doc, width=width)
