"""The pages a person looks at: ``spca topics --format html`` (with ``--by``, one page of every
group) and ``spca daily``'s index.html.

Both are pure functions from the report dictionaries the JSON outputs are made of
(:func:`spca_cli.report.to_dict`, the daily ``YYYY-MM-DD.json``) to one self-contained HTML
string: CSS inline, every chart inline SVG (or the trend PNG as a ``data:`` URI), no script and
no address on the network, so the file opens from disk anywhere, offline. Every text that comes
from a corpus (words, documents, ids, paths) is escaped with :func:`html.escape`.

The layout is one column that reflows: at a phone's width (390 px) nothing makes the page
scroll sideways (long words and links break, a wide table scrolls inside its own box), and at a
desktop's the figures of a topic sit beside its words. Dates never break.

Exact figures ride along in ``<data value="...">`` elements (the JSON's number, at full
precision) beside the rounded text a reader sees, so a script or a test can read them back.
"""

from __future__ import annotations

import base64
import html

from spca_cli import trends
from spca_cli.report import (BUDGET, BY, DISTINCTIVE_LEGEND, DUPLICATES_SET_ASIDE, GROUP, GROUPS,
                             LEGEND, NOT_SOLVED, constraints_text, counted, distinctive_cells,
                             set_aside_text, shown_distinctive)

__all__ = ["render_topics_page", "render_groups_page", "render_index_page", "word_bars",
           "certificate_bar", "documents_list", "STYLE"]

STYLE = """
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.45;
       color: #1f2328; background: #fff; margin: 0 auto; max-width: 64rem; padding: 1rem;
       overflow-wrap: break-word; }
h1 { font-size: 1.55rem; margin: 0.3rem 0 0.5rem; }
h2 { font-size: 1.25rem; margin: 1.8rem 0 0.5rem; }
h3 { font-size: 1rem; margin: 0.8rem 0 0.3rem; }
a { color: #0b57d0; }
.meta { color: #59636e; }
.date, .num { white-space: nowrap; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.4rem 0; }
th, td { border-bottom: 1px solid #d8dee4; padding: 0.25rem 0.5rem; text-align: left;
         vertical-align: top; }
th { font-weight: 600; }
img { max-width: 100%; height: auto; display: block; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.2rem 1rem;
           margin: 0.5rem 0; }
dl.facts dt { color: #59636e; }
dl.facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
nav ol, nav ul { padding-left: 1.4rem; margin: 0.3rem 0; }
.topic { border-top: 1px solid #d8dee4; margin-top: 1.2rem; }
.topic h2, .topic h3.name { margin-top: 0.8rem; }
.panels { display: grid; grid-template-columns: repeat(auto-fit, minmax(17rem, 1fr));
          gap: 0.4rem 1.5rem; }
.panels > div { min-width: 0; }
table.bars { width: 100%; }
table.bars td { border: 0; padding: 0.1rem 0.3rem; vertical-align: middle; }
table.bars td.word { width: 40%; overflow-wrap: anywhere; }
table.bars td.bar { width: 45%; }
svg.bar { display: block; width: 100%; height: 0.85rem; }
svg.spark { display: block; width: 9rem; height: 2.2rem; }
.figure { margin: 0.2rem 0 0.6rem; }
ol.docs { padding-left: 1.4rem; margin: 0.3rem 0; }
ol.docs li { margin: 0.35rem 0; }
.text { overflow-wrap: anywhere; }
.note { background: #fff8c5; padding: 0.3rem 0.6rem; border-radius: 4px; }
.padded { white-space: pre-wrap; }
table.distinctive td.word { max-width: 16rem; overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  body { padding: 0.6rem; }
  dl.facts { grid-template-columns: minmax(0, 1fr); }
  dl.facts dd { margin-bottom: 0.35rem; }
  svg.spark { width: 6rem; }
  th, td { padding: 0.25rem 0.3rem; }
}
"""

_VALUE_COLOUR = "#1a7f37"
_BOUND_COLOUR = "#d8dee4"
_WORD_COLOUR = "#0969da"
_NEGATIVE_COLOUR = "#cf222e"
_SHARE_COLOUR = "#8250df"


def _e(text):
    return html.escape(str(text), quote=True)


def _isolated(text):
    """Corpus text inside a line of the page's own: escaped and bidi-isolated, so that a
    right-to-left word or a stray direction override (U+202E) stays within it instead of
    reordering the numbers around it."""
    return f"<bdi>{_e(text)}</bdi>"


def _group_label(name):
    """A group's name as shown: isolated, and quoted with its spaces kept when it has leading
    or trailing whitespace or is nothing but whitespace (" Delta " is another group than
    "Delta", and a blank name would be an empty link)."""
    if name and name == name.strip():
        return _isolated(name)
    return f'<bdi class="padded">&ldquo;{_e(name)}&rdquo;</bdi>'


def _data(value, text, name):
    """``text`` for the reader, with the exact ``value`` (a JSON number) behind it."""
    return f'<data class="{name}" value="{_e(repr(float(value)))}">{_e(text)}</data>'


def _page(title, body):
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>", f"<style>{STYLE}</style>", "</head>", "<body>",
        *body, "</body>", "</html>"]) + "\n"


def _svg_bar(parts, label, css_class="bar"):
    """A horizontal bar 100 units wide: ``parts`` are (start, width, colour) rectangles, drawn
    in order; the SVG stretches to its box's width."""
    rects = "".join(f'<rect x="{start:.3f}" y="0" width="{max(width, 0):.3f}" height="10" '
                    f'fill="{colour}"/>' for start, width, colour in parts)
    return (f'<svg class="{css_class}" viewBox="0 0 100 10" preserveAspectRatio="none" '
            f'role="img" aria-label="{_e(label)}">{rects}</svg>')


def _number(value):
    """``value`` as a float when it is a finite number, else None: a day's report edited by
    hand may lack a figure or hold another thing, and the index is still drawn."""
    return trends.finite_number(value)


def word_bars(words, weights):
    """A topic's words as a bar chart: one row per word, the bar its |weight| against the
    largest (a negative weight in red), the signed weight beside it."""
    weights = [_number(w) for w in weights] if isinstance(weights, list) else []
    weights += [None] * (len(words) - len(weights))
    largest = max((abs(w) for w in weights if w is not None), default=0.0) or 1.0
    rows = []
    for word, weight in zip(words, weights):
        if weight is None:
            bar, number = "", ""
        else:
            colour = _NEGATIVE_COLOUR if weight < 0 else _WORD_COLOUR
            bar = _svg_bar([(0, 100 * abs(weight) / largest, colour)],
                           f"{word}: weight {weight:.3f}")
            number = f"{weight:.2f}"
        rows.append(f'<tr><td class="word">{_e(word)}</td><td class="bar">{bar}</td>'
                    f'<td class="num">{number}</td></tr>')
    return '<table class="bars">' + "".join(rows) + "</table>"


def certificate_bar(component):
    """The certificate as a picture: the upper bound is the whole bar, the value found on the
    topic's problem (certified ratio x bound) the green part; the gap is what a better topic
    could at most add. "" when the component has no certificate."""
    bound = _number(component.get("upper_bound"))
    ratio = _number(component.get("certified_ratio"))
    if bound is None or ratio is None:
        return ""
    found = ratio * bound
    bar = _svg_bar([(0, 100, _BOUND_COLOUR), (0, 100 * min(max(ratio, 0.0), 1.0),
                                              _VALUE_COLOUR)],
                   f"value found {found:.6g} of upper bound {bound:.6g}")
    source = component.get("bound_source")
    return (f'<div class="figure certificate">{bar}<div>certified ratio '
            f'<b>{_data(ratio, f"{ratio:.4f}", "certified-ratio")}</b>: value found '
            f'{found:.6g} &le; upper bound {_data(bound, f"{bound:.6g}", "upper-bound")}'
            + (f' <span class="meta">({_e(source)})</span>' if source else "")
            + "</div></div>")


def _coherence_bar(coherence):
    """NPMI runs from -1 to 1: the bar starts at the middle (0) and goes right or left."""
    clipped = min(max(coherence, -1.0), 1.0)
    start, width = (50, 50 * clipped) if clipped >= 0 else (50 + 50 * clipped, -50 * clipped)
    bar = _svg_bar([(0, 100, _BOUND_COLOUR), (start, width, _VALUE_COLOUR if clipped >= 0
                                                 else _NEGATIVE_COLOUR), (49.6, 0.8, "#59636e")],
                   f"coherence {coherence:.3f} on a scale from -1 to 1")
    return (f'<div class="figure coherence">{bar}<div>NPMI of its word pairs (-1 to 1) '
            f'<b>{_data(coherence, f"{coherence:.3f}", "coherence")}</b></div></div>')


def _coverage_bar(coverage, n_documents):
    share, count = _number(coverage.get("share")), _number(coverage.get("documents"))
    if share is None or count is None:
        return ""
    bar = _svg_bar([(0, 100, _BOUND_COLOUR), (0, 100 * min(max(share, 0.0), 1.0),
                                              _SHARE_COLOUR)],
                   f"in {share:.1%} of the documents")
    of = f" of {n_documents:,}" if _number(n_documents) is not None else ""
    return (f'<div class="figure coverage">{bar}<div>in {count:,.0f}{of} '
            f'documents ({_data(share, f"{share:.1%}", "coverage-share")})</div></div>')


def _document_where(item):
    parts = []
    if item.get("time"):
        parts.append(f'<span class="date">{_e(str(item["time"])[:19].replace("T", " "))}'
                     "</span>")
    if item.get("id") is not None:
        parts.append(_e(f"id {item['id']}"))
    elif item.get("row") is not None:
        parts.append(_e(f"row {item['row']}"))
    return " &middot; ".join(parts)


def documents_list(items):
    """The top documents: score, time, id, and the text (spaces and newlines collapsed)."""
    rows = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        text = " ".join(str(item.get("text") or "").split())
        score = _number(item.get("score"))
        where = [f"score {_data(score, f'{score:.2f}', 'score')}"] if score is not None else []
        where += [_document_where(item)] if _document_where(item) else []
        rows.append(f'<li><span class="meta">{" &middot; ".join(where)}</span>'
                    + (f'<br><span class="text" dir="auto">{_e(text)}</span>' if text else "")
                    + "</li>")
    return '<ol class="docs">' + "".join(rows) + "</ol>" if rows else ""


def _figures_table(component):
    rows = [(name, f"{value:{spec}}") for name, key, spec in (
        ("explained", "explained_variance", ".6g"), ("var ratio", "variance_ratio", ".4f"),
        ("cum ratio", "cumulative_ratio", ".4f"))
        for value in [_number(component.get(key))] if value is not None]
    solver_info = component.get("solver_info")
    found_by = solver_info.get("found_by") if isinstance(solver_info, dict) else None
    if found_by:
        rows.append(("found by", found_by))
    if not rows:
        return ""
    return ('<table class="figures">' + "".join(
        f'<tr><th scope="row">{_e(name)}</th><td class="num">{_e(value)}</td></tr>'
        for name, value in rows) + "</table>")


def topic_body(component, n_documents, level=3):
    """A topic's words (bar chart) beside its certificate, coherence, coverage and figures,
    then its top documents; a figure the component lacks is left out. Its headings are
    ``<h{level}>``."""
    def heading(text):
        return f"<h{level}>{text}</h{level}>"

    figures = []
    certificate = certificate_bar(component)
    if certificate:
        figures += [heading("Certificate"), certificate]
    coherence = _number(component.get("coherence"))
    if coherence is not None:
        figures += [heading("Coherence"), _coherence_bar(coherence)]
    coverage = component.get("coverage")
    if isinstance(coverage, dict) and _coverage_bar(coverage, n_documents):
        figures += [heading("Coverage"), _coverage_bar(coverage, n_documents)]
    figures.append(_figures_table(component))
    parts = ['<div class="panels">',
             f'<div class="words">{heading("Words")}'
             f'{word_bars(component["words"], component.get("weights"))}</div>',
             '<div class="figures">' + "".join(figures) + "</div>", "</div>"]
    documents = documents_list(component.get("top_documents"))
    if documents:
        parts += [heading("Top documents"), documents]
    return "\n".join(parts)


def _short_name(component, count=3):
    return trends.NAME_SEPARATOR.join(component["words"][:count])


def _solver_text(doc):
    params = doc.get("params") or {}
    return ", ".join([doc["solver"]] + [f"{name}={params[name]}" for name in
                                        ("k", "components", "rank", "deflation", "seed")
                                        if params.get(name) is not None])


def _total_facts(doc):
    """A topics document's totals as (name, html) pairs: mean coherence, what the topics
    explain together and, for disjoint topics, the bound on that and its certified ratio."""
    facts = []
    if doc.get("mean_coherence") is not None:
        facts.append(("mean coherence", _data(doc["mean_coherence"],
                                              f"{doc['mean_coherence']:.3f}",
                                              "mean-coherence")))
    facts.append(("total explained variance",
                  _data(doc["total_explained_variance"],
                        f"{doc['total_explained_variance']:.6g}", "total-explained-variance")))
    if "total_upper_bound" in doc:
        facts.append(("total upper bound",
                      _data(doc["total_upper_bound"], f"{doc['total_upper_bound']:.6g}",
                            "total-upper-bound")
                      + f' <span class="meta">({_e(doc["total_bound_source"])})</span>'))
        facts.append(("total certified ratio",
                      _data(doc["total_certified_ratio"], f"{doc['total_certified_ratio']:.4f}",
                            "total-certified-ratio")))
    return facts


def _documents_text(inp):
    """The input's documents, with the duplicates set aside ("" for a matrix)."""
    if inp.get("documents") is None:
        return ""
    documents = f"{inp['documents']:,}"
    set_aside = set_aside_text(inp.get(DUPLICATES_SET_ASIDE)).rstrip(", ")
    return f"{documents} ({set_aside})" if set_aside else documents


def _header_facts(doc):
    """The run's header as (name, html) pairs: what was read, how, and the set's totals."""
    inp = doc["input"]
    documents = _documents_text(inp)
    facts = [("input", _e(inp["path"]))]
    if documents:
        facts.append(("documents", _e(documents)))
    facts += [("words", _e(f"{inp['words']:,}")), ("solver", _e(_solver_text(doc)))]
    return facts + _total_facts(doc)


def _facts_list(facts):
    return ('<dl class="facts">' + "".join(f"<dt>{_e(name)}</dt><dd>{value}</dd>"
                                           for name, value in facts) + "</dl>")


def _notes(notes):
    return [f'<p class="note">{_e(note)}</p>' for note in notes or []]


def _legend():
    items = list(LEGEND) + [
        ("coherence", "mean NPMI over the pairs of the topic's words, from how often they occur "
                      "in the same documents: 1 always together, 0 independent, -1 never"),
        ("coverage", "the documents that contain at least one of the topic's words")]
    return ('<h2 id="legend">What the figures mean</h2>'
            + _facts_list([(name, _e(meaning)) for name, meaning in items]))


def render_topics_page(doc):
    """``spca topics --format html``: the run's header, a list of the topics, then per topic its
    words as a bar chart, its certificate against its bound, coherence, coverage and top
    documents, and a legend of the figures."""
    comps = doc["components"]
    n_documents = doc["input"].get("documents")
    body = ["<header>", f"<h1>Topics of {_e(doc['input']['path'])}</h1>",
            _facts_list(_header_facts(doc)), "</header>", *_notes(doc.get("notes"))]
    body.append('<nav><h2>Topics</h2><ol>' + "".join(
        f'<li><a href="#topic-{c["index"]}">{_isolated(_short_name(c))}</a> '
        f'<span class="meta">certified {c["certified_ratio"]:.4f}</span></li>'
        for c in comps) + '</ol><p><a href="#legend">What the figures mean</a></p></nav>')
    for c in comps:
        body += [f'<section class="topic" id="topic-{c["index"]}">',
                 f'<h2>Topic {c["index"]} <span class="meta">{_isolated(_short_name(c))}</span>'
                 "</h2>",
                 topic_body(c, n_documents), "</section>"]
    body.append(_legend())
    return _page(f"Topics of {doc['input']['path']}", body)


def _least_certified(group):
    ratios = [c["certified_ratio"] for c in group["components"]]
    return min(ratios) if ratios else None


# word and topic as text, the shares and the lift as numbers
_DISTINCTIVE_CELLS = ('<td class="word">', "<td>", '<td class="num">', '<td class="num">',
                      '<td class="num">')


def _distinctive_table(doc, group):
    """The group's distinctive words shown (the text table's columns), or "" without any."""
    entries = shown_distinctive(doc, group)
    if not entries:
        return ""
    header = "".join(f'<th scope="col">{name}</th>' for name in
                     ("word", "topic", "in group", "elsewhere", "lift"))
    rows = "".join("<tr>" + "".join(f"{opening}{_e(cell)}</td>" for opening, cell in
                                    zip(_DISTINCTIVE_CELLS, distinctive_cells(e))) + "</tr>"
                   for e in entries)
    return (f'<div class="scroll"><table class="distinctive"><tr>{header}</tr>{rows}</table>'
            "</div>")


def _group_section(doc, number, group):
    """One group: its size, then (solved) its proof budget and totals, its topics as the
    topics page draws them and its distinctive words; (not solved) why."""
    anchor = f"group-{number}"
    size = f"{counted(group['documents'], 'document')}, {counted(group['words'], 'word')}"
    parts = [f'<section class="group" id="{anchor}">',
             f'<h2>{_group_label(group[GROUP])} <span class="meta">{_e(size)}</span></h2>']
    if group[NOT_SOLVED]:
        parts += [f'<p class="note">Not solved: {_e(group[NOT_SOLVED])}</p>', "</section>"]
        return parts
    facts = []
    if group.get(BUDGET) is not None and doc["solver"] == "auto":
        facts.append(("proof budget", _e(f"{group[BUDGET]:.3g} s of work per topic")))
    parts += [_facts_list(facts + _total_facts(group)), *_notes(group.get("notes"))]
    for c in group["components"]:
        parts += [f'<section class="topic" id="{anchor}-topic-{c["index"]}">',
                  f'<h3 class="name">Topic {c["index"]} '
                  f'<span class="meta">{_isolated(_short_name(c))}</span></h3>',
                  topic_body(c, group["documents"], level=4), "</section>"]
    table = _distinctive_table(doc, group)
    if table:
        parts += ["<h3>Distinctive words</h3>", table]
    parts.append("</section>")
    return parts


def render_groups_page(doc):
    """``spca topics --by --format html``: the run's header, the groups (each a link, with its
    documents and its least certified topic, or why it was not solved), then per group its
    proof budget and totals, its topics as :func:`render_topics_page` draws them, and its
    distinctive words; then the legends."""
    inp, groups = doc["input"], doc[GROUPS]
    solved = sum(1 for g in groups if not g[NOT_SOLVED])
    title = f"Topics of {inp['path']} by {doc[BY]}"
    facts = [("input", _e(inp["path"])), ("by", _e(doc[BY])),
             ("documents", _e(_documents_text(inp))), ("words", _e(f"{inp['words']:,}")),
             ("groups", _e(f"{len(groups):,} ({solved:,} solved)")),
             ("solver", _e(_solver_text(doc) + constraints_text(doc["params"])))]
    body = ["<header>", f"<h1>{_e(title)}</h1>", _facts_list(facts), "</header>",
            *_notes(doc.get("notes"))]
    items = []
    for number, g in enumerate(groups, 1):
        least = _least_certified(g)
        what = ("not solved" if g[NOT_SOLVED] else
                f"least certified {least:.4f}" if least is not None else "no topics")
        items.append(f'<li><a href="#group-{number}">{_group_label(g[GROUP])}</a> '
                     f'<span class="meta">{counted(g["documents"], "document")} &middot; {what}'
                     "</span></li>")
    body.append('<nav><h2>Groups</h2><ol>' + "".join(items)
                + '</ol><p><a href="#legend">What the figures mean</a></p></nav>')
    for number, g in enumerate(groups, 1):
        body += _group_section(doc, number, g)
    body += [_legend(), _facts_list([(name, _e(meaning))
                                     for name, meaning in DISTINCTIVE_LEGEND])]
    return _page(title, body)


# ---------------------------------------------------------------------- the daily index
def _percent(share):
    return "" if share is None else f"{100 * share:.0f}%"


def _sparkline(track, days, top):
    """The track's share day by day on a common scale (``top`` = the largest share of any
    track): a line through the days it is among the topics, a dot for each, its share in the
    dot's tooltip."""
    width, height, pad = 100.0, 24.0, 3.0
    step = (width - 2 * pad) / max(len(days) - 1, 1)
    dots, segments, previous = [], [], None
    for i, day in enumerate(days):
        share = track.share(day)
        if share is None:
            previous = None
            continue
        x, y = pad + i * step, height - pad - (height - 2 * pad) * (share / top)
        dots.append(f'<circle cx="{x:.2f}" cy="{y:.2f}" r="2.4"><title>{_e(day)}: '
                    f'{_percent(share)}</title></circle>')
        if previous is not None:
            segments.append(f"M{previous[0]:.2f},{previous[1]:.2f}L{x:.2f},{y:.2f}")
        previous = (x, y)
    path = (f'<path d="{"".join(segments)}" fill="none" stroke="{_SHARE_COLOUR}" '
            'stroke-width="1.2"/>' if segments else "")
    return (f'<svg class="spark" viewBox="0 0 {width:g} {height:g}" role="img" '
            f'aria-label="{_e(track.name)}: share by day" fill="{_SHARE_COLOUR}">'
            f'<line x1="0" y1="{height - pad:g}" x2="{width:g}" y2="{height - pad:g}" '
            f'stroke="{_BOUND_COLOUR}"/>{path}{"".join(dots)}</svg>')


def _track_link(track):
    return f'<a href="#t{track.number}">{_isolated(track.name)}</a>'


def _day_link(day):
    return f'<a class="date" href="#d{_e(day)}">{_e(day)}</a>'


def _tracks_table(tracks, days):
    """Every followed topic: its name (a link to its latest day), the days it was seen, its mean
    share and its share day by day; three columns, so the table fits a phone."""
    top = max((s for t in tracks for _, s in t.days.values() if s is not None), default=0)
    top = top or 1.0
    rows = ['<table class="tracks"><tr><th>topic</th><th>mean share</th>'
            "<th>share by day</th></tr>"]
    for track in tracks:
        present = sorted(track.days)
        latest = present[-1]
        seen = (_day_link(present[0]) if len(present) == 1
                else f"{_day_link(present[0])} to {_day_link(latest)}")
        rows.append(f'<tr id="t{track.number}"><td><a href="#d{_e(latest)}-'
                    f'{track.days[latest][0]}">{_isolated(track.name)}</a><br><span class="meta">'
                    f"{len(present)} day{'s' if len(present) != 1 else ''}: {seen}</span></td>"
                    f'<td class="num">{_percent(trends.mean_share(track))}</td>'
                    f"<td>{_sparkline(track, days, top)}</td></tr>")
    rows.append("</table>")
    return '<div class="scroll">' + "".join(rows) + "</div>"


def _day_files(day, existing, short=False):
    """Links to the day's own files that are in DIR (named by their extension when short)."""
    return [f'<a href="{_e(name)}">{_e(name.rsplit(".", 1)[1] if short else name)}</a>'
            for name in (f"{day}.md", f"{day}.json") if name in existing]


def _days_table(reports, by_day, existing):
    rows = ['<table class="days"><tr><th>day</th><th class="num">documents</th>'
            "<th>topics (share of the day's documents)</th></tr>"]
    for report in reports:
        day = report["day"]
        comps = report.get("components") or []
        today = by_day.get(day, {})
        if comps:
            topics = ", ".join(
                f'<span class="date"><a href="#t{today[c["index"]].number}">'
                f'T{today[c["index"]].number}</a> '
                f'{_percent(today[c["index"]].share(day))}</span>' for c in comps)
        else:
            topics = _e("; ".join(report.get("notes", [])) or "no documents")
        files = " ".join(_day_files(day, existing, short=True))
        rows.append(f"<tr><td>{_day_link(day)}"
                    + (f'<br><span class="meta">{files}</span>' if files else "") + "</td>"
                    f'<td class="num">{report.get("documents", 0):,}</td><td>{topics}</td></tr>')
    rows.append("</table>")
    return '<div class="scroll">' + "".join(rows) + "</div>"


def _day_section(report, today, existing):
    day = report["day"]
    comps = report.get("components") or []
    files = ", ".join(_day_files(day, existing))
    zone = f" ({_e(report['timezone'])})" if report.get("timezone") else ""
    parts = [f'<section class="day" id="d{_e(day)}">', f'<h2 class="date">{_e(day)}</h2>',
             f"<p>{report.get('documents', 0):,} documents{zone}"
             + (f' &middot; <span class="meta">{files}</span>' if files else "") + "</p>"]
    if not comps:
        parts.append(f"<p>{_e('; '.join(report.get('notes', [])) or 'no documents')}</p>")
    n_documents = report.get("documents")
    for comp in comps:
        track = today.get(comp["index"])
        title = _track_link(track) if track is not None else _isolated(_short_name(comp))
        new = (' <span class="meta">(new)</span>'
               if track is not None and min(track.days) == day else "")
        parts += [f'<div class="topic" id="d{_e(day)}-{comp["index"]}">',
                  f'<h3 class="name">{title}{new} <span class="meta">topic {comp["index"]} of '
                  f"the day</span></h3>", topic_body(comp, n_documents), "</div>"]
    parts.append("</section>")
    return "\n".join(parts)


def render_index_page(reports, png=None, existing=()):
    """``DIR/index.html`` of ``spca daily``: what it covers, the trend chart (``png``, embedded;
    or how to get it), every followed topic with its share day by day, every day with its
    topics, then each day (newest first) with its topics in full.

    ``existing``: the names of the files in DIR, so that a link to a day's ``.md`` or ``.json``
    is written only when that file is there.
    """
    tracks, by_day = trends.follow_topics(reports)
    days = trends.analysed_days(reports)
    existing = set(existing)
    body = ["<header><h1>Daily topics</h1>",
            f'<p class="meta">{_e(trends.summary_line(reports, tracks))}</p>',
            '<nav><a href="#chart">chart</a> &middot; <a href="#topics">topics over days</a> '
            '&middot; <a href="#days">days</a></nav></header>',
            '<section id="chart"><h2>Prevalence of the topics</h2>']
    if png is not None:
        data = base64.b64encode(png).decode("ascii")
        body.append(f'<img alt="{_e(trends.CHART_TITLE)}" src="data:image/png;base64,{data}">')
    else:
        body.append(f"<p>{_e(trends.PLOT_MISSING)}</p>")
    shown, rest = trends.chart_tracks(tracks)
    if tracks:
        body.append(f'<p class="meta">{_e(trends.chart_explained(shown, rest))}</p>')
    body += ["</section>", '<section id="topics"><h2>Topics over days</h2>',
             f"<p>{_e(trends.TRACKS_EXPLAINED)}</p>",
             _tracks_table(tracks, days) if tracks else "<p>No topic yet.</p>", "</section>",
             '<section id="days"><h2>Days</h2>', _days_table(reports, by_day, existing),
             "</section>"]
    for report in reversed(reports):
        body.append(_day_section(report, by_day.get(report["day"], {}), existing))
    return _page("Daily topics", body)
