"""Render a :class:`~spca_cli.topics.TopicsResult`: JSON (SPEC names), rich table, CSV, Markdown.

:func:`to_dict` is the only place the SPEC field names are written; every other format is built
from its output, so the formats cannot disagree.
"""

from __future__ import annotations

import csv
import io
import json

__all__ = ["to_dict", "render", "render_json", "render_table", "render_csv", "render_markdown",
           "grouped_to_dict", "render_grouped", "distinctive_cells", "shown_distinctive", "counted",
           "constraints_text", "FORMATS", "LEGEND", "DISTINCTIVE_LEGEND", "set_search_text"]

FORMATS = ("table", "json", "csv", "markdown")
#: the ``input`` field (and ``spca info``'s) of the documents set aside as duplicates, by reason:
#: ``{"exact": n, "near": m}``, null when duplicates were kept
DUPLICATES_SET_ASIDE = "duplicates_set_aside"


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
        if t.coherence is not None:
            item["coherence"] = _round(t.coherence)
        if "apriori_ratio" in t.info:
            item["apriori_ratio"] = _round(t.info["apriori_ratio"])
        solver_info = {key: v for key, v in t.info.items() if key != "apriori_ratio"}
        if t.exact is not None:
            solver_info["exact"] = t.exact
        solver_info["time_limited"] = t.time_limited
        item["solver_info"] = {key: (_round(v) if isinstance(v, float) else v)
                               for key, v in solver_info.items()}
        components.append(item)
    doc = {
        "solver": result.solver,
        "params": result.params,
    }
    if result.constraints is not None:
        # the words as given; every topic holds the included ones, none the excluded ones
        doc["constraints"] = {"include": list(result.constraints.include_words),
                              "exclude": list(result.constraints.exclude_words)}
    doc.update({
        "input": result.input,
        "eigenvalues": [_round(v) for v in result.eigenvalues],
        "components": components,
        "total_explained_variance": _round(result.total_explained_variance),
    })
    coherences = [t.coherence for t in result.components if t.coherence is not None]
    if coherences:
        doc["mean_coherence"] = _round(sum(coherences) / len(coherences))
    if result.total_bound is not None:
        doc["total_upper_bound"] = _round(result.total_bound.value)
        doc["total_bound_source"] = result.total_bound.source
        doc["total_certified_ratio"] = _round(result.total_bound.certified_ratio)
    if result.set_search is not None:
        doc["set_search"] = {key: (_round(v) if isinstance(v, float) else v)
                             for key, v in result.set_search.items()}
    if result.eigensolver:
        doc["eigensolver"] = {key: (_round(v) if isinstance(v, float) else v)
                              for key, v in result.eigensolver.items()}
    doc["seconds"] = {key: _round(v, 4) for key, v in result.seconds.items()}
    doc["notes"] = list(result.notes)
    return doc


def render_json(doc):
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


#: What each figure of the table means, in plain words; printed under every table.
LEGEND = (
    ("explained", "how much of the corpus's word co-occurrence (variance) the topic's "
                  "words explain, x'Ax"),
    ("var ratio", "explained / lambda_i, what the i-th eigenvector explains; topics are not "
                  "orthogonal, so past the first it can exceed 1"),
    ("cum ratio", "the same for topics 1..i together"),
    ("upper bound", "proved: no topic of k words could explain more than this here (joint: "
                    "with the other topics' words taken out; remove: those of the topics "
                    "before it)"),
    ("certified", "explained / upper bound: the topic is at least this close to the best "
                  "possible k-word topic"),
)

_FIGURES = (("#", 3), ("explained", 12), ("var ratio", 12), ("cum ratio", 12),
            ("upper bound", 14), ("certified", 12))
_INDENT = "    "


def _figure_row(cells):
    return "".join(cell.rjust(w) if i else cell.ljust(w)
                   for i, (cell, (_, w)) in enumerate(zip(cells, _FIGURES)))


def _pack(items, width, indent=_INDENT, sep="  "):
    """Lines of ``items`` joined by ``sep``, each starting with ``indent`` and (when ``width``
    is given) no wider than it; an item is never split, so a word is never broken."""
    from rich.cells import cell_len

    lines, current = [], ""
    for item in items:
        candidate = item if not current else current + sep + item
        if current and width is not None and cell_len(indent + candidate) > width:
            lines.append(indent + current)
            candidate = item
        current = candidate
    if current:
        lines.append(indent + current)
    return lines


def _fit(text, width):
    """``text`` cut at a word boundary (ending in an ellipsis) to at most ``width`` cells."""
    from rich.cells import cell_len, set_cell_size

    if width is None or cell_len(text) <= width:
        return text
    room = max(width - 1, 0)
    cut = set_cell_size(text, room).rstrip()
    if " " in cut and not text[len(cut):len(cut) + 1].isspace():
        cut = cut[:cut.rindex(" ")].rstrip()  # do not end in the middle of a word
    return cut + "\u2026"


def _document_line(item, width):
    when = (item["time"][:16].replace("T", " ") if item.get("time")
            else f"id {item['id']}" if item.get("id") is not None else f"row {item['row']}")
    text = " ".join((item.get("text") or "").split())  # tweets hold newlines and runs of spaces
    line = f"{_INDENT}{item['score']:.2f}  {when}" + (f"  {text}" if text else "")
    return _fit(line, width)


def set_aside_text(counts):
    """``"36 duplicates set aside, "`` (``"36 exact and 4 near duplicates ..."``) for the
    ``duplicates_set_aside`` counts; "" when none were."""
    if not counts or not any(counts.values()):
        return ""
    exact, near = counts.get("exact", 0), counts.get("near", 0)
    if not near:
        return f"{exact} duplicates set aside, "
    return f"{exact} exact and {near} near duplicates set aside, "


def constraints_text(constraints):
    """", every topic containing refund, without delta" for the words a run included and
    excluded (``{"include": [...], "exclude": [...]}``), "" without any."""
    text = ""
    if constraints.get("include"):
        text += f", every topic containing {', '.join(constraints['include'])}"
    if constraints.get("exclude"):
        text += f", without {', '.join(constraints['exclude'])}"
    return text


def render_table(doc, *, width=None, legend=True):
    """Plain text: per topic its figures, then its words with their weights, its coverage and
    top documents (when the JSON document has them), then a legend of the figures.

    ``width`` (a terminal's columns) wraps the words between words and cuts each document to
    one line; ``None`` (output to a file or pipe) wraps and cuts nothing, and the rule under the
    header is ASCII ``-`` instead of the terminal's box-drawing line.
    """
    inp = doc["input"]
    docs = f"{inp['documents']} documents, " if inp.get("documents") is not None else ""
    docs += set_aside_text(inp.get(DUPLICATES_SET_ASIDE))
    title = (f"{doc['solver']} on {inp['path']} ({docs}{inp['words']} words): "
             f"k={doc['params']['k']}, rank={doc['params']['rank']}")
    title += constraints_text(doc.get("constraints") or {})
    lines = _pack(title.split(" "), width, indent="", sep=" ")
    # auto and exact say which method found each topic
    found_by = [c.get("solver_info", {}).get("found_by") for c in doc["components"]]
    finder_column = "  found by" if any(found_by) else ""
    header = _figure_row([name for name, _ in _FIGURES]) + finder_column
    lines += [header, "-" * len(header) if width is None else "\u2500" * min(width, len(header))]
    sources = []
    for c, finder in zip(doc["components"], found_by):
        lines.append(_figure_row([str(c["index"]), f"{c['explained_variance']:.6g}",
                                  f"{c['variance_ratio']:.4f}", f"{c['cumulative_ratio']:.4f}",
                                  f"{c['upper_bound']:.6g}", f"{c['certified_ratio']:.4f}"])
                     + (f"  {finder}" if finder else ""))
        weights = c.get("weights") or [None] * len(c["words"])
        lines += _pack([word if w is None else f"{word} {w:.2f}"
                        for word, w in zip(c["words"], weights)], width)
        if "coverage" in c:
            cov = c["coverage"]
            lines.append(_fit(f"{_INDENT}in {cov['documents']:,} documents "
                              f"({cov['share']:.1%})" + ("; top documents:"
                                                         if c.get("top_documents") else ""),
                              width))
        for item in c.get("top_documents", []):
            lines.append(_document_line(item, width))
        if c["bound_source"] not in sources:
            sources.append(c["bound_source"])
    lines.append("")
    lines += _pack([f"total explained variance {doc['total_explained_variance']:.6g};",
                    "bounds", "from:", ", ".join(sources)], width, indent="", sep=" ")
    if "total_upper_bound" in doc:
        lines.append(f"total upper bound {doc['total_upper_bound']:.6g} "
                     f"({doc['total_bound_source']}), certified "
                     f"{doc['total_certified_ratio']:.4f}")
    if "set_search" in doc:
        lines += _pack(set_search_text(doc["set_search"]).split(" "), width, indent="", sep=" ")
    if legend:
        lines.append("")
        lines += _legend_lines(width)
    return "\n".join(lines) + "\n"


def _legend_lines(width, legend=LEGEND):
    lines = []
    for name, meaning in legend:
        lines += _pack(f"{name}: {meaning}".split(" "), width, indent="", sep=" ")
    return lines


def set_search_text(search):
    """One sentence on how the set was chosen: the best single topic, and what a set holding
    it would explain against this one."""
    words = " ".join(search["best_topic_words"][:5])
    best = f"the best single topic ({words} ...; {search['best_topic_value']:.6g})"
    if search["best_topic_kept"]:
        return f"topics searched as a set; topic 1 is {best}"
    total, kept = search["total"], search["total_with_best_topic"]
    less = 1.0 - kept / total if total > 0 else 0.0
    return (f"topics searched as a set; holding {best}, the set would explain {kept:.6g}, "
            f"{less:.1%} less (deflation 'remove': one topic at a time, the best first)")


CSV_FIELDS = ["component", "position", "word", "index", "weight", "explained_variance",
              "variance_ratio", "cumulative_ratio", "upper_bound", "bound_source",
              "certified_ratio", "coherence"]


def render_csv(doc):
    """One row per (topic, word), with the topic's figures repeated on each row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for c in doc["components"]:
        for pos, (word, index, weight) in enumerate(zip(c["words"], c["indices"], c["weights"]), 1):
            writer.writerow([c["index"], pos, word, index, weight, c["explained_variance"],
                             c["variance_ratio"], c["cumulative_ratio"], c["upper_bound"],
                             c["bound_source"], c["certified_ratio"], c.get("coherence", "")])
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
    lines += _markdown_documents(comps)
    return "\n".join(lines) + "\n"


def _md_text(text):
    """Document text as literal Markdown: the characters that would format or link escaped."""
    return "".join("\\" + ch if ch in "\\`*_[]<>|#" else ch for ch in text)


def _markdown_documents(comps):
    """Each topic's coverage and top documents as Markdown lists (nothing when absent)."""
    lines = []
    for c in comps:
        if "coverage" not in c:
            continue
        cov = c["coverage"]
        lines += ["", f"**PC {c['index']}** ({_md_cell(', '.join(c['words'][:3]))}): in "
                      f"{cov['documents']:,} documents ({cov['share']:.1%})", ""]
        for item in c.get("top_documents", []):
            where = ", ".join(x for x in (item.get("time"), item.get("id") and f"id {item['id']}")
                              if x) or f"row {item['row']}"
            text = " ".join((item.get("text") or "").split())
            lines.append(f"- {item['score']:.2f} ({where})" + (f": {_md_text(text)}"
                                                               if text else ""))
    return lines


def render(doc, fmt, *, width=None):
    if fmt == "json":
        return render_json(doc)
    if fmt == "csv":
        return render_csv(doc)
    if fmt == "markdown":
        return render_markdown(doc)
    return render_table(doc, width=width)


# ---------------------------------------------------------------------- topics per group
# The JSON names of ``spca topics --by`` (docs/output.md, "Topics per group"). The document is
# {BY, "input", "solver", "params", GROUPS: [...], "seconds", "notes"}; each group is
# {GROUP, "documents", "words", NOT_SOLVED, BUDGET, DISTINCTIVE, then the fields of a
# topics document of the group's own run (to_dict), its indices the corpus's columns}.
BY = "by"
GROUPS = "groups"
GROUP = "group"
NOT_SOLVED = "not_solved"
BUDGET = "budget"
DISTINCTIVE = "distinctive_words"
#: the fields of one distinctive word, in the order of the tables
DISTINCTIVE_FIELDS = ("word", "topic", "documents", "share", "documents_elsewhere",
                      "share_elsewhere", "lift")

#: The figures of the distinctive-words table, in plain words; printed under it.
DISTINCTIVE_LEGEND = (
    ("in group", "share of the group's documents that contain the word"),
    ("elsewhere", "share of the corpus's other documents that contain it"),
    ("lift", "in group / elsewhere; 'only here' when no other document has it"),
)


def grouped_to_dict(grouped, add_documents=None):
    """The JSON document of ``spca topics --by`` for a :class:`~spca_cli.groups.GroupedResult`;
    ``add_documents(doc, corpus)`` adds each group's coverage and top documents (its rows)."""
    import numpy as np

    groups = []
    for outcome in grouped.groups:
        item = {GROUP: outcome.name, "documents": outcome.documents, "words": outcome.words,
                NOT_SOLVED: outcome.not_solved, BUDGET: _round(outcome.budget),
                DISTINCTIVE: [dict(entry) for entry in outcome.distinctive]}
        if outcome.result is not None:
            doc = to_dict(outcome.result)
            if add_documents is not None:
                doc = add_documents(doc, outcome.corpus)
            for comp in doc["components"]:
                # the group's vocabulary is a part of the corpus's: its columns, as the corpus
                # numbers them, compare across groups
                comp["indices"] = [int(outcome.columns[i]) for i in comp["indices"]]
            doc.pop("input", None)
            item.update(doc)
        else:
            item["components"] = []
        groups.append(item)
    return {BY: grouped.by, "input": grouped.input, "solver": grouped.solver,
            "params": grouped.params, GROUPS: groups,
            "seconds": {key: _round(v, 4) for key, v in grouped.seconds.items()},
            "notes": list(grouped.notes)}


def _share(x):
    return "-" if x is None else f"{x:.1%}"


def _lift(entry):
    if entry["lift"] is None:
        return "only here" if entry["share_elsewhere"] is not None else "-"
    return f"{entry['lift']:.2f}"


def counted(n, noun):
    """``n`` with thousands separators and ``noun``, plural but for 1: "1 document"."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def _group_title(g):
    return f"{g[GROUP]}: {counted(g['documents'], 'document')}, {counted(g['words'], 'word')}"


def _group_doc(doc, g):
    """A group's entry as a topics document (what render_table and render_markdown take)."""
    return {**g, "input": {**doc["input"], "documents": g["documents"], "words": g["words"],
                           DUPLICATES_SET_ASIDE: None}}


def distinctive_cells(entry):
    """A distinctive word's row as the tables print it: word, topic, in group, elsewhere, lift."""
    return [entry["word"], str(entry["topic"]), _share(entry["share"]),
            _share(entry["share_elsewhere"]), _lift(entry)]


def shown_distinctive(doc, group):
    """The distinctive words of ``group`` the outputs show: its first ``params.distinctive``."""
    return group[DISTINCTIVE][:doc["params"].get("distinctive", 5)]


def _distinctive_rows(doc):
    """The tables' rows: the distinctive words shown of each group."""
    return [[g[GROUP], *distinctive_cells(e)] for g in doc[GROUPS]
            for e in shown_distinctive(doc, g)]


_DISTINCTIVE_HEADER = ["group", "word", "topic", "in group", "elsewhere", "lift"]


def render_grouped_table(doc, *, width=None):
    """Per group a section: its title, then its topics as :func:`render_table` draws them (or
    why it was not solved); then the distinctive words and the legends."""
    inp = doc["input"]
    lines = _pack((f"{doc['solver']} on {inp['path']} by {doc[BY]} ({inp['documents']:,} "
                   f"documents, {inp['words']:,} words, {len(doc[GROUPS])} groups)"
                   + constraints_text(doc["params"])).split(" "), width, indent="", sep=" ")
    for g in doc[GROUPS]:
        lines += ["", "=" * min(width or 79, 79), _group_title(g)]
        if g[NOT_SOLVED]:
            lines.append(f"not solved: {g[NOT_SOLVED]}")
            continue
        if g[BUDGET] is not None and doc["solver"] == "auto":
            lines.append(f"proof budget {g[BUDGET]:.3g} s of work per topic")
        lines += render_table(_group_doc(doc, g), width=width, legend=False).splitlines()[1:]
    rows = _distinctive_rows(doc)
    if rows:
        lines += ["", "=" * min(width or 79, 79), "Distinctive words of each group's topics"]
        table = [_DISTINCTIVE_HEADER] + rows
        widths = [max(len(r[i]) for r in table) for i in range(len(_DISTINCTIVE_HEADER))]
        for n, row in enumerate(table):
            lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(row, widths))).rstrip())
            if n == 0:
                lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    lines += _legend_lines(width)
    if rows:
        lines += _legend_lines(width, DISTINCTIVE_LEGEND)
    return "\n".join(lines) + "\n"


GROUPED_CSV_FIELDS = ["group", "group_documents", NOT_SOLVED, *CSV_FIELDS, "share",
                      "share_elsewhere", "lift"]


def render_grouped_csv(doc):
    """One row per (group, topic, word) with the topic's figures and the word's shares; a group
    not solved is one row with its reason. share, share_elsewhere and lift are given for every
    topic word (the distinctive words are the first of them by lift)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(GROUPED_CSV_FIELDS)
    for g in doc[GROUPS]:
        if g[NOT_SOLVED]:
            writer.writerow([g[GROUP], g["documents"], g[NOT_SOLVED]]
                            + [""] * (len(GROUPED_CSV_FIELDS) - 3))
            continue
        shares = {e["word"]: e for e in g[DISTINCTIVE]}
        for c in g["components"]:
            for pos, (word, index, weight) in enumerate(zip(c["words"], c["indices"],
                                                            c["weights"]), 1):
                e = shares.get(word, {})
                writer.writerow([g[GROUP], g["documents"], "", c["index"], pos, word, index,
                                 weight, c["explained_variance"], c["variance_ratio"],
                                 c["cumulative_ratio"], c["upper_bound"], c["bound_source"],
                                 c["certified_ratio"], c.get("coherence", ""),
                                 _csv_value(e.get("share")), _csv_value(e.get("share_elsewhere")),
                                 _csv_value(e.get("lift"))])
    return out.getvalue()


def _csv_value(x):
    return "" if x is None else x


def render_grouped_markdown(doc):
    """A section per group (the papers' layout of its topics, or why it was not solved), then
    the distinctive words as one table."""
    lines = [f"# Topics of {_md_cell(doc['input']['path'])} by {_md_cell(doc[BY])}"
             f"{_md_text(constraints_text(doc['params']))}", ""]
    for g in doc[GROUPS]:
        lines += [f"## {_md_text(_group_title(g))}", ""]
        if g[NOT_SOLVED]:
            lines += [f"Not solved: {_md_text(g[NOT_SOLVED])}.", ""]
            continue
        lines += render_markdown(_group_doc(doc, g)).splitlines() + [""]
    rows = _distinctive_rows(doc)
    if rows:
        lines += ["## Distinctive words", "", "| " + " | ".join(_DISTINCTIVE_HEADER) + " |",
                  "|" + "---|" * len(_DISTINCTIVE_HEADER)]
        lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
        lines += [""] + [f"- {name}: {meaning}" for name, meaning in DISTINCTIVE_LEGEND]
    return "\n".join(lines).rstrip("\n") + "\n"


def render_grouped(doc, fmt, *, width=None):
    if fmt == "json":
        return render_json(doc)
    if fmt == "csv":
        return render_grouped_csv(doc)
    if fmt == "markdown":
        return render_grouped_markdown(doc)
    return render_grouped_table(doc, width=width)
