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

The threshold is measured on the airline tweets (``spca daily``, 17-24 Feb 2015,
America/Los_Angeles, with ``-k 6 -c 3`` and with the defaults; docs/daily.md): pairs that a
reader calls the same topic overlap 0.64-0.98, every other pair at most 0.37, so 0.5 lies in
the gap.
Reports without weights (written before weights were reported) count each word equally.

**Prevalence** of a topic on a day: the share of that day's documents that contain at least one
of its words (its ``coverage.share``).
"""

from __future__ import annotations

import datetime as dt
import io
import math
from dataclasses import dataclass, field

__all__ = ["normalise_word", "topic_profile", "overlap", "match_topics", "Track", "finite_number",
           "follow_topics", "chart_tracks", "other_share", "mean_share", "analysed_days",
           "summary_line", "chart_explained", "day_ticks", "render_index", "plot_trends",
           "SAME_TOPIC_OVERLAP", "CHART_TRACKS", "PLOT_MISSING", "TRACKS_EXPLAINED",
           "CHART_TITLE"]

SAME_TOPIC_OVERLAP = 0.5
TRACK_WINDOW = 7
PLOT_MISSING = ("trends.png needs matplotlib, which is not installed: "
                "pip install 'spca-cli[plot]'")
#: topics drawn on the chart; the others are summed as "other" (every one is listed on the pages)
CHART_TRACKS = 6
#: words of a topic's first day that name it
NAME_WORDS = 3
NAME_SEPARATOR = " \u00b7 "


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
    if (not isinstance(weights, list) or len(weights) != len(words)
            or not all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights)):
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
    """One topic followed across days: its number (1 for the first seen), its top words (the
    first three of its first day) and per day the topic index and prevalence (None when not
    reported)."""

    number: int
    words: tuple
    days: dict = field(default_factory=dict)  # day -> (topic index, prevalence or None)

    @property
    def label(self):
        """Its top words, ``refund · cancelled · hold``: a name that stays put as the words'
        order changes from day to day."""
        return NAME_SEPARATOR.join(self.words)

    @property
    def name(self):
        """``T3 refund · cancelled · hold``, as every page calls it."""
        return f"T{self.number} {self.label}"

    @property
    def total_share(self):
        """The sum of its known daily shares: large for a topic that is big, lasting or both."""
        return sum(share for _, share in self.days.values() if share is not None)

    def share(self, day):
        """Its share of ``day``'s documents, None when it is not among that day's topics."""
        return self.days[day][1] if day in self.days else None


def finite_number(value):
    """``value`` as a float when it is a finite number, else None (a bool, a string, NaN, or an
    integer too large for a float: a report edited by hand may hold any of them)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def _share(component):
    """The component's ``coverage.share``; None when the report has none or another thing than
    a share in [0, 1] (a matrix, or a report edited by hand), so such a day is left blank
    rather than stopping the index."""
    coverage = component.get("coverage")
    share = finite_number(coverage.get("share") if isinstance(coverage, dict) else None)
    return share if share is not None and 0.0 <= share <= 1.0 else None


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
                track = Track(number=len(tracks) + 1,
                              words=tuple(comp["words"][:NAME_WORDS]))
                tracks.append(track)
            track.days[report["day"]] = (comp["index"], _share(comp))
            today_tracks[comp["index"]] = track
            latest[track.number] = (position, profiles[comp["index"]])
        by_day[report["day"]] = today_tracks
    return tracks, by_day


def chart_tracks(tracks, limit=CHART_TRACKS):
    """(shown, rest): the ``limit`` tracks of largest total share (sum of their daily shares;
    ties: more days, then the first seen), in track order, and the others, summed as "other".

    The total share ranks a topic that is large on one day against one that is smaller every
    day by what a reader sees on the chart: the area under its line."""
    ranked = sorted(tracks, key=lambda t: (-t.total_share, -len(t.days), t.number))
    shown = sorted(ranked[:limit], key=lambda t: t.number)
    rest = sorted(ranked[limit:], key=lambda t: t.number)
    return shown, rest


def other_share(rest, day):
    """The sum of the shares of the ``rest`` tracks on ``day`` (None when none of them is among
    that day's topics). A document holding words of two of them counts twice, so it is a sum of
    shares, not a share of the documents."""
    shares = [t.share(day) for t in rest if t.share(day) is not None]
    return sum(shares) if shares else None


def mean_share(track):
    """The mean of its known daily shares, None when none is known."""
    known = [share for _, share in track.days.values() if share is not None]
    return sum(known) / len(known) if known else None


def analysed_days(reports):
    """The days that have topics, in order."""
    return [r["day"] for r in reports if r.get("components")]


def _percent(share):
    return "" if share is None else f"{100 * share:.0f}%"


def _md(text):
    return str(text).replace("|", "\\|")


def summary_line(reports, tracks):
    """``8 days, 2015-02-17 to 2015-02-24 (America/Los_Angeles), 14,351 documents; 24 topics
    followed, numbered as first seen``: what the index covers, in one line."""
    if not reports:
        return "No day analysed yet."
    zones = sorted({r["timezone"] for r in reports if r.get("timezone")})
    zone = f" ({', '.join(zones)})" if zones else ""
    documents = sum(r.get("documents", 0) for r in reports)
    span = (reports[0]["day"] if len(reports) == 1
            else f"{reports[0]['day']} to {reports[-1]['day']}")
    count = f"{len(reports)} day{'s' if len(reports) != 1 else ''}"
    return (f"{count}, {span}{zone}, {documents:,} documents; {len(tracks)} topic"
            f"{'s' if len(tracks) != 1 else ''} followed, numbered as first seen (T1 first).")


#: What a followed topic is and what its share means, said once on every index page.
TRACKS_EXPLAINED = (
    f"A topic is the same as a topic of the last {TRACK_WINDOW} analysed days when they share "
    f"at least {SAME_TOPIC_OVERLAP:.0%} of their weight (plural and singular counted as one "
    "word). Tn names a topic so followed, numbered as first seen, by the top three words of "
    "its first day. Share: the day's documents that contain at least one of its words.")


def chart_explained(shown, rest):
    """The sentence under the chart: which topics it draws and what "other" is."""
    text = (f"The chart draws the {len(shown)} topic{'s' if len(shown) != 1 else ''} of "
            "largest total share (the sum of their daily shares)")
    if rest:
        text += (f"; \"other\" is the sum of the shares of the {len(rest)} other"
                 f"{'s' if len(rest) != 1 else ''} (a document holding words of two of them "
                 "counts twice)")
    return text + ". Blank: not among that day's topics."


def render_index(reports, *, plot_note=None):
    """Markdown index: every analysed day (documents, first topic, each topic's followed
    number and prevalence, the topics new that day), every followed topic, then the charted
    topics' prevalence day by day."""
    tracks, by_day = follow_topics(reports)
    lines = ["# Daily topics", "", summary_line(reports, tracks), "",
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
                f"{_percent(_share(c))}".rstrip() for c in comps)
            fresh = [today[c["index"]] for c in comps if today[c["index"]].number not in seen]
            fresh_text = ", ".join(track.name for track in fresh)
            seen.update(today[c["index"]].number for c in comps)
        else:
            first = "; ".join(report.get("notes", [])) or "(no documents)"
            shares = fresh_text = ""
        lines.append(f"| [{day}]({day}.md) | {report.get('documents', 0)} | {_md(first)} | "
                     f"{shares or '-'} | {_md(fresh_text) or '-'} |")
    lines += ["", "## Topics over days", "", TRACKS_EXPLAINED, ""]
    if not tracks:
        lines.append("No topic yet.")
    else:
        lines += ["| topic | first seen | last seen | days | mean share |", "|---|---|---|---|---|"]
        for track in tracks:
            present = sorted(track.days)
            lines.append(f"| {_md(track.name)} | {present[0]} | {present[-1]} | {len(present)} "
                         f"| {_percent(mean_share(track)) or '-'} |")
        shown, rest = chart_tracks(tracks)
        lines += ["", "### Day by day", "", chart_explained(shown, rest), "",
                  "| day | " + " | ".join(_md(t.name) for t in shown)
                  + (" | other |" if rest else " |"),
                  "|---|" + "---|" * (len(shown) + bool(rest))]
        for day in analysed_days(reports):
            cells = [_percent(t.share(day)) for t in shown]
            if rest:
                cells.append(_percent(other_share(rest, day)))
            lines.append(f"| {day} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(plot_note or f"![{CHART_TITLE}](trends.png)")
    return "\n".join(lines) + "\n"


CHART_TITLE = "Prevalence of the topics over days"


def day_ticks(days):
    """Tick labels of ``days`` (ISO dates): ``Feb 17``, the year under the first and under each
    first day of a new year, so a reader always knows which year it is."""
    labels, year = [], None
    for text in days:
        day = dt.date.fromisoformat(text)
        label = f"{day:%b} {day.day}"
        if day.year != year:
            label += f"\n{day.year}"
            year = day.year
        labels.append(label)
    return labels


def plot_trends(reports):
    """PNG bytes of the charted topics' prevalence over the days (:func:`chart_tracks`, the
    others summed as "other"), or None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    tracks, _ = follow_topics(reports)
    shown, rest = chart_tracks(tracks)
    days = analysed_days(reports)
    # the x axis is the calendar: a day not analysed leaves a gap, not a squeezed tick
    first = dt.date.fromisoformat(days[0]) if days else None
    x = [(dt.date.fromisoformat(d) - first).days for d in days]

    def percents(share_of):
        return [float("nan") if share_of(d) is None else 100 * share_of(d) for d in days]

    fig, ax = plt.subplots(figsize=(9, 5.4))
    for track in shown:
        ax.plot(x, percents(track.share), "o-", label=track.name)
    if rest:
        ax.plot(x, percents(lambda d: other_share(rest, d)), "s--", color="0.55",
                label=f"other: {len(rest)} topics (sum of shares)")
    step = max(1, math.ceil(len(days) / 12))  # at most a dozen labels: none overlap
    ax.set_xticks(x[::step])
    ax.set_xticklabels(day_ticks(days)[::step])
    zones = sorted({r["timezone"] for r in reports if r.get("timezone")})
    ax.set_xlabel("day" + (f" ({', '.join(zones)})" if zones else ""))
    ax.set_ylabel("share of the day's documents (%)")
    ax.set_ylim(bottom=0)
    ax.set_title(CHART_TITLE)
    if shown:
        ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2,
                  frameon=False)
    ax.grid(alpha=0.3)
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=110, bbox_inches="tight")  # the legend under the axes
    plt.close(fig)
    return out.getvalue()
