"""Topics over days: following topics from one analysed day to the next, their prevalence, and
the pages that show it (``index.md``, ``trends.png``, ``index.html`` of ``spca daily``).

**Same topic.** Two topics are the same when they share most of their weight:

    overlap(x, y) = sum over normalised words w of min(x_w^2, y_w^2)

x and y are unit vectors, so the squared weights of a topic sum to 1 and the overlap is the
share of weight the two have in common, between 0 (no word in common) and 1 (the same words
with the same weights). Words are normalised first by folding a plural or possessive onto its
singular (``thanks`` -> ``thank``, ``flights`` -> ``flight``, ``fleet's`` -> ``fleet``); when
a topic holds both forms their squared weights add up. A topic of today is the same as the
topic of the previous analysed day with which its overlap is largest, when that overlap is at
least :data:`SAME_TOPIC_OVERLAP` and no other topic of today has a larger overlap with it
(pairs are taken greedily, largest overlap first, each topic used once); otherwise it is new.

The threshold is measured on the airline tweets (``spca daily`` with the defaults, 17-24 Feb
2015, America/Los_Angeles; README, "Topics over days"): pairs that a reader calls the same
topic overlap 0.56-0.98, different topics at most 0.18, so 0.35 lies in a wide empty gap.
Reports without weights (written before weights were reported) count each word equally.

**Prevalence** of a topic on a day: the share of that day's documents that contain at least one
of its words (its ``coverage.share``).
"""

from __future__ import annotations

import base64
import html
import io
import math
from dataclasses import dataclass, field

__all__ = ["normalise_word", "topic_profile", "overlap", "match_topics", "Track",
           "follow_topics", "render_index", "render_html", "plot_trends", "SAME_TOPIC_OVERLAP",
           "PLOT_MISSING"]

SAME_TOPIC_OVERLAP = 0.5
TRACK_WINDOW = 7
PLOT_MISSING = ("trends.png needs matplotlib, which is not installed: "
                "pip install 'spca-cli[plot]'")
_MAX_CHART_TOPICS = 8


def normalise_word(word):
    """Fold a plural or possessive onto its singular: ``thanks`` -> ``thank``, ``bags`` ->
    ``bag``, ``fleet's`` -> ``fleet``; ``business``, ``bus`` and ``has`` stay as they are."""
    w = word.lower()
    for suffix in ("'s", "\u2019s"):
        if w.endswith(suffix) and len(w) > len(suffix) + 1:
            return w[:-len(suffix)]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def topic_profile(component):
    """{normalised word: squared weight} of a component of a report (sums to 1)."""
    words = component.get("words", [])
    weights = component.get("weights")
    if not weights or len(weights) != len(words):
        weights = [1.0 / math.sqrt(len(words))] * len(words) if words else []
    profile = {}
    for word, w in zip(words, weights):
        key = normalise_word(str(word))
        profile[key] = profile.get(key, 0.0) + float(w) ** 2
    total = sum(profile.values())
    return {k: v / total for k, v in profile.items()} if total > 0 else profile


def overlap(a, b):
    """The share of weight two profiles (from :func:`topic_profile`) have in common."""
    return sum(min(v, b[k]) for k, v in a.items() if k in b)


def _greedy(today, candidates, threshold):
    """{today's key: candidate key}: pairs with overlap >= threshold, largest first (ties:
    smaller keys first), each used once. Both arguments map keys to profiles."""
    pairs = sorted((-overlap(pt, pc), kt, kc) for kt, pt in today.items()
                   for kc, pc in candidates.items())
    matched, used = {}, set()
    for value, kt, kc in pairs:
        if -value >= threshold and kt not in matched and kc not in used:
            matched[kt] = kc
            used.add(kc)
    return matched


def match_topics(today, previous, threshold=SAME_TOPIC_OVERLAP):
    """{index of today's topic: index of the previous day's topic it continues}."""
    return _greedy({t["index"]: topic_profile(t) for t in today},
                   {p["index"]: topic_profile(p) for p in previous or []}, threshold)


@dataclass
class Track:
    """One topic followed across days: its number, its label (the first three words of its
    first day), and per day the topic index and prevalence (None when not reported)."""

    number: int
    label: str
    days: dict = field(default_factory=dict)  # day -> (topic index, prevalence or None)


def follow_topics(reports, threshold=SAME_TOPIC_OVERLAP, window=TRACK_WINDOW):
    """Tracks of the topics of ``reports`` (sorted by day) and, per day, {topic index: track}.

    Each day's topics are matched (:func:`_greedy`) with the tracks seen on one of the last
    ``window`` analysed days, each track by its latest topic; so a topic pushed aside for a day
    by a variant of itself is recognised when it comes back. Days without topics do not count.
    """
    tracks, by_day = [], {}
    latest = {}  # track number -> (position of the analysed day, profile)
    position = 0
    for report in reports:
        comps = report.get("components") or []
        if not comps:
            continue
        position += 1
        profiles = {c["index"]: topic_profile(c) for c in comps}
        recent = {n: prof for n, (pos, prof) in latest.items() if position - pos <= window}
        matched = _greedy(profiles, recent, threshold)
        today_tracks = {}
        for comp in comps:
            if comp["index"] in matched:
                track = tracks[matched[comp["index"]] - 1]
            else:
                track = Track(number=len(tracks) + 1, label=" ".join(comp["words"][:3]))
                tracks.append(track)
            coverage = comp.get("coverage")
            track.days[report["day"]] = (comp["index"],
                                         None if coverage is None else coverage["share"])
            today_tracks[comp["index"]] = track
            latest[track.number] = (position, profiles[comp["index"]])
        by_day[report["day"]] = today_tracks
    return tracks, by_day


def _recurring(tracks):
    """The tracks seen on at least two days, most days first, at most the chart's number."""
    recurring = [t for t in tracks if len(t.days) >= 2]
    recurring.sort(key=lambda t: (-len(t.days), t.number))
    return sorted(recurring[:_MAX_CHART_TOPICS], key=lambda t: t.number)


def _percent(share):
    return "" if share is None else f"{100 * share:.0f}%"


def _md(text):
    return str(text).replace("|", "\\|")


def render_index(reports, *, plot_note=None):
    """Markdown index: every analysed day (documents, first topic, each topic's followed
    number and prevalence, the topics new that day), then the recurring topics' prevalence
    day by day."""
    tracks, by_day = follow_topics(reports)
    lines = ["# Daily topics", "",
             "| day | documents | first topic | topics (share of the day's documents) "
             "| new topics |", "|---|---|---|---|---|"]
    seen = set()
    for report in reports:
        comps = report.get("components") or []
        day = report["day"]
        if comps:
            first = ", ".join(comps[0]["words"][:6])
            today = by_day[day]
            shares = ", ".join(
                f"T{today[c['index']].number} "
                f"{_percent(c.get('coverage', {}).get('share'))}".rstrip() for c in comps)
            fresh = [c for c in comps if today[c["index"]].number not in seen]
            fresh_text = ", ".join(f"{c['index']}: {' '.join(c['words'][:3])}" for c in fresh)
            seen.update(today[c["index"]].number for c in comps)
        else:
            first = "; ".join(report.get("notes", [])) or "(no documents)"
            shares = fresh_text = ""
        lines.append(f"| [{day}]({day}.md) | {report.get('documents', 0)} | {_md(first)} | "
                     f"{shares or '-'} | {_md(fresh_text) or '-'} |")
    recurring = _recurring(tracks)
    lines += ["", "## Topics over days", "",
              f"A topic is the same as a topic of the last {TRACK_WINDOW} analysed days when "
              f"they share at least {SAME_TOPIC_OVERLAP:.0%} of their weight (plural and "
              "singular counted as one word); Tn names a topic so followed. Share: the day's "
              "documents that contain at least one of its words (blank: not among that day's "
              "topics).", ""]
    if recurring:
        lines.append("| day | " + " | ".join(f"T{t.number} {_md(t.label)}" for t in recurring)
                     + " |")
        lines.append("|---|" + "---|" * len(recurring))
        for report in reports:
            if report.get("components"):
                cells = [_percent(t.days[report["day"]][1]) if report["day"] in t.days else ""
                         for t in recurring]
                lines.append(f"| {report['day']} | " + " | ".join(cells) + " |")
    else:
        lines.append("No topic recurs yet.")
    lines.append("")
    lines.append(plot_note or "![Prevalence of the recurring topics](trends.png)")
    return "\n".join(lines) + "\n"


def plot_trends(reports):
    """PNG bytes of the recurring topics' prevalence over the days, or None when matplotlib is
    not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    tracks, _ = follow_topics(reports)
    recurring = _recurring(tracks)
    days = [r["day"] for r in reports if r.get("components")]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for track in recurring:
        values = [100 * track.days[d][1] if d in track.days and track.days[d][1] is not None
                  else float("nan") for d in days]
        ax.plot(range(len(days)), values, "o-", label=f"T{track.number} {track.label}")
    ax.set_xticks(range(len(days)))
    ax.set_xticklabels([d[5:] for d in days], rotation=45 if len(days) > 10 else 0)
    ax.set_ylabel("share of the day's documents (%)")
    ax.set_ylim(bottom=0)
    ax.set_title("Prevalence of the recurring topics")
    if recurring:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=110)
    plt.close(fig)
    return out.getvalue()


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
td.num { text-align: right; }
.topic { margin: 0.6em 0 1em 0; }
.words { font-weight: 600; }
.weight { color: #777; font-weight: normal; font-size: 0.85em; }
.doc { margin: 0.2em 0 0.2em 1.5em; font-size: 0.92em; }
.meta { color: #777; }
img { max-width: 100%; }
"""


def _e(text):
    return html.escape(str(text), quote=True)


def render_html(reports, png=None):
    """A self-contained page: the trend chart (embedded as a data URI), the recurring topics
    day by day, and each day's topics with their top documents. Every text is escaped."""
    tracks, by_day = follow_topics(reports)
    recurring = _recurring(tracks)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>Daily topics</title>", f"<style>{_CSS}</style></head><body>",
           "<h1>Daily topics</h1>"]
    if png is not None:
        data = base64.b64encode(png).decode("ascii")
        out.append(f'<img alt="Prevalence of the recurring topics" '
                   f'src="data:image/png;base64,{data}">')
    else:
        out.append(f"<p>{_e(PLOT_MISSING)}</p>")
    if recurring:
        out.append("<table><tr><th>day</th>"
                   + "".join(f"<th>T{t.number} {_e(t.label)}</th>" for t in recurring) + "</tr>")
        for report in reports:
            if report.get("components"):
                out.append(f'<tr><td><a href="#d{_e(report["day"])}">{_e(report["day"])}</a></td>'
                           + "".join(
                    f'<td class="num">{_e(_percent(t.days[report["day"]][1]))}</td>'
                    if report["day"] in t.days else "<td></td>" for t in recurring) + "</tr>")
        out.append("</table>")
    for report in reversed(reports):
        day = report["day"]
        out.append(f'<h2 id="d{_e(day)}">{_e(day)}</h2>')
        out.append(f"<p>{_e(report.get('documents', 0))} documents"
                   + (f" ({_e(report['timezone'])})" if report.get("timezone") else "") + "</p>")
        comps = report.get("components") or []
        if not comps:
            out.append(f"<p>{_e('; '.join(report.get('notes', [])) or 'no documents')}</p>")
        for comp in comps:
            out.append(_html_topic(comp, by_day.get(day, {}).get(comp["index"])))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _html_topic(comp, track):
    weights = comp.get("weights") or [None] * len(comp["words"])
    words = " ".join(f"{_e(w)}" + ("" if x is None else f' <span class="weight">{x:.2f}</span>')
                     for w, x in zip(comp["words"], weights))
    name = f"T{track.number}" if track is not None else ""
    cov = comp.get("coverage")
    covered = (f" &middot; in {cov['documents']:,} documents ({cov['share']:.1%})"
               if cov else "")
    parts = [f'<div class="topic"><div>{comp["index"]}. <span class="meta">{_e(name)}</span> '
             f'<span class="words">{words}</span><span class="meta">{covered}</span></div>']
    for item in comp.get("top_documents", []):
        when = item.get("time") or ""
        ident = f"id {item['id']}" if item.get("id") is not None else f"row {item['row']}"
        parts.append(f'<div class="doc"><span class="meta">{item["score"]:.2f} &middot; '
                     f'{_e(when)} {_e(ident)}</span><br>{_e(item.get("text") or "")}</div>')
    parts.append("</div>")
    return "\n".join(parts)
