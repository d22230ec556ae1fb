"""Reproduce output: Markdown and JSON documents, and the PNG plot of a sweep."""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import math

import numpy as np



logger = logging.getLogger(__name__)

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


