"""The HTML pages on real data: ``spca topics --format html`` shows what the JSON holds, and
``spca daily``'s index.html names, numbers and links every topic it follows."""

from __future__ import annotations

import csv
import html
import json
import os

import pytest

from spca_cli.page import render_index_page, render_topics_page
from spca_cli.trends import chart_tracks, day_ticks, follow_topics, other_share, render_index

from _cli import spca
from _html_pages import network_loads, page_parts, unresolved_anchors
from conftest import REPO

KOS = REPO / "data_samples" / "docword.kos-sample.txt.gz"
TITLES = REPO / "data_samples" / "titles.kos-sample.txt"
KOS_RUN = [KOS, "--titles", TITLES, "-k", "5", "-c", "3", "--solver", "tpower",
           "--documents", "2"]
HOSTILE = "<script>alert('x')</script> & \"quoted\" <b>bold</b>"


@pytest.fixture(scope="module")
def kos_outputs(tmp_path_factory):
    """The JSON and the HTML page of one run on the bundled KOS sample (seeded: the same run)."""
    folder = tmp_path_factory.mktemp("kos")
    for name in ("topics.json", "topics.html"):
        result = spca("topics", *KOS_RUN, "-o", folder / name, "-q")
        assert result.exit_code == 0, result.output
    return (json.loads((folder / "topics.json").read_text(encoding="utf-8")),
            (folder / "topics.html").read_text(encoding="utf-8"))


def test_the_page_shows_each_topic_with_the_json_figures(kos_outputs):
    doc, page = kos_outputs
    parts = page_parts(page)
    comps = doc["components"]
    assert len(comps) == 3
    # the certificate, coherence and coverage are the JSON's numbers, exactly, in topic order
    assert parts.data["upper-bound"] == [c["upper_bound"] for c in comps]
    assert parts.data["certified-ratio"] == [c["certified_ratio"] for c in comps]
    assert parts.data["coherence"] == [c["coherence"] for c in comps]
    assert parts.data["coverage-share"] == [c["coverage"]["share"] for c in comps]
    assert parts.data["mean-coherence"] == [doc["mean_coherence"]]
    assert parts.data["total-explained-variance"] == [doc["total_explained_variance"]]
    assert parts.data["total-upper-bound"] == [doc["total_upper_bound"]]
    assert parts.data["total-certified-ratio"] == [doc["total_certified_ratio"]]
    for c in comps:
        section = page.split(f'id="topic-{c["index"]}"')[1].split("</section>")[0]
        text = page_parts(section).text
        for word, weight in zip(c["words"], c["weights"]):
            assert f"{word} {weight:.2f}" in text  # each word beside its weight
        assert section.count('<svg class="bar"') >= len(c["words"]) + 1  # bars, certificate
        assert f"certified ratio {c['certified_ratio']:.4f}" in text
        assert c["bound_source"] in text
        assert f"in {c['coverage']['documents']} of 300 documents" in text
        for item in c["top_documents"]:
            assert item["text"] in text and f"id {item['id']}" in text
    # the run's header
    assert f"input {doc['input']['path']}" in parts.text
    assert "documents 300" in parts.text and "words 6,906" in parts.text
    assert "solver tpower, k=5, components=3" in parts.text
    assert f"mean coherence {doc['mean_coherence']:.3f}" in parts.text


def test_the_page_is_one_file_that_loads_nothing(kos_outputs):
    _, page = kos_outputs
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert network_loads(page) == []
    assert "<script" not in page  # no JavaScript at all
    assert unresolved_anchors(page) == []
    parts = page_parts(page)
    assert len(parts.ids) == len(set(parts.ids))
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page


def test_without_o_the_page_goes_to_stdout(kos_outputs, tmp_path):
    _, page = kos_outputs
    result = spca("topics", *KOS_RUN, "--format", "html", "-q")
    assert result.exit_code == 0
    assert result.stdout == page
    # the format from the extension, as for .json and .md
    result = spca("topics", *KOS_RUN, "-o", tmp_path / "t.htm", "-q")
    assert (tmp_path / "t.htm").read_text(encoding="utf-8") == page
    # "-o -" is stdout, as in other command-line tools, not a file named "-"
    result = spca("topics", *KOS_RUN, "--format", "html", "-o", "-", "-q")
    assert result.exit_code == 0 and result.stdout == page
    assert not os.path.exists("-")


def test_corpus_text_is_escaped_everywhere(kos_outputs):
    doc, _ = kos_outputs
    doc = json.loads(json.dumps(doc))
    doc["input"]["path"] = HOSTILE
    doc["notes"] = [HOSTILE]
    first = doc["components"][0]
    first["words"][0] = HOSTILE
    first["bound_source"] = HOSTILE
    first["top_documents"][0]["text"] = HOSTILE
    first["top_documents"][0]["id"] = HOSTILE
    page = render_topics_page(doc)
    assert "<script" not in page and "<b>bold" not in page
    assert page.count(html.escape(HOSTILE, quote=True)) >= 6
    assert HOSTILE in page_parts(page).text  # the reader sees the text as it was written


def test_a_tweet_with_a_script_is_shown_as_text(airline_csv, tmp_path):
    """End to end: a hostile tweet among real ones becomes a top document, and both pages show
    it as text."""
    with open(airline_csv, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    day = [r for r in rows if r["tweet_created"].startswith("2015-02-17")][:600]
    tweet = dict(day[0], tweet_id="666", text="@united <script>alert('x')</script> flight "
                 "cancelled flightled late delayed hours help hold time")
    path = tmp_path / "tweets.csv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows([*day, tweet])
    result = spca("topics", path, "-k", "6", "-c", "2", "--solver", "tpower", "-o",
                  tmp_path / "t.html", "-q")
    assert result.exit_code == 0, result.output
    out = tmp_path / "daily"
    result = spca("daily", path, "--out", out, "--date", "2015-02-17", "--timezone",
                  "America/Los_Angeles", "-k", "6", "-c", "2", "--solver", "tpower", "-q")
    assert result.exit_code == 0, result.output
    for page in ((tmp_path / "t.html").read_text(encoding="utf-8"),
                 (out / "index.html").read_text(encoding="utf-8")):
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
        assert "<script" not in page and network_loads(page) == []


# ---------------------------------------------------------------------- the daily index
def _report(day, topics, documents=100):
    """A daily report with the given topics: (words, share) each."""
    return {"day": day, "timezone": "UTC", "documents": documents,
            "components": [{"index": i, "words": words, "weights": [0.8, 0.5, 0.3][:len(words)],
                            "coverage": {"documents": round(share * documents), "share": share},
                            "top_documents": []}
                           for i, (words, share) in enumerate(topics, 1)]}


REFUND = ["refund", "cancelled", "hold"]
BAGS = ["bag", "lost", "luggage"]
SEATS = ["seat", "upgrade", "class"]


def _eight_topic_days():
    """Three days with eight different one-day topics beside a lasting one (refund)."""
    small = [[f"w{i}a", f"w{i}b", f"w{i}c"] for i in range(8)]
    return [_report("2014-12-31", [(REFUND, 0.4), (small[0], 0.05), (small[1], 0.04)]),
            _report("2015-01-01", [(REFUND, 0.3), (BAGS, 0.2), (small[2], 0.03),
                                   (small[3], 0.02)]),
            _report("2015-01-02", [(BAGS, 0.25), (SEATS, 0.1), *[(w, 0.01) for w in small[4:]]])]


def test_tracks_are_numbered_as_first_seen_and_named_by_their_words():
    reports = _eight_topic_days()
    tracks, by_day = follow_topics(reports)
    assert [t.number for t in tracks] == list(range(1, 12))
    assert tracks[0].name == "T1 refund \u00b7 cancelled \u00b7 hold"
    assert tracks[3].name == "T4 bag \u00b7 lost \u00b7 luggage"  # first seen on the 2nd day
    assert by_day["2015-01-02"][1] is tracks[3]  # and followed on the 3rd
    shown, rest = chart_tracks(tracks, limit=3)
    assert [t.number for t in shown] == [1, 4, 7]  # refund 0.7, bags 0.45, seats 0.1
    assert len(rest) == 8
    assert other_share(rest, "2015-01-02") == pytest.approx(0.04)
    assert other_share(rest, "2014-12-31") == pytest.approx(0.09)


def test_the_chart_axis_says_the_year():
    assert day_ticks(["2014-12-31", "2015-01-01", "2015-01-02"]) == [
        "Dec 31\n2014", "Jan 1\n2015", "Jan 2"]


def test_the_index_page_lists_and_links_every_topic(tmp_path):
    reports = [*_eight_topic_days(), {"day": "2015-01-03", "timezone": "UTC", "documents": 0,
                                      "components": [], "notes": ["no documents on this day"]}]
    existing = [f"{r['day']}.{ext}" for r in reports for ext in ("json", "md")]
    existing.remove("2015-01-01.md")
    page = render_index_page(reports, None, existing)
    parts = page_parts(page)
    tracks, _ = follow_topics(reports)
    for track in tracks:
        assert f"t{track.number}" in parts.ids and track.name in parts.text
        assert f"#t{track.number}" in parts.hrefs
    assert unresolved_anchors(page) == []
    files = [h for h in parts.hrefs if not h.startswith("#")]
    assert "2015-01-01.json" in files and "2015-01-01.md" not in files
    assert set(files) <= set(existing)
    assert "no documents on this day" in parts.text
    assert network_loads(page) == [] and "<script" not in page
    # the Markdown index numbers and names them the same way
    markdown = render_index(reports, plot_note="(no chart)")
    for track in tracks:
        assert f"| {track.name} |" in markdown
    assert "| day | T1 refund \u00b7 cancelled \u00b7 hold |" in markdown
    assert markdown.count(" | other |") == 1


def test_hostile_words_and_days_are_escaped_on_the_index():
    report = _report("2015-02-17", [(["<script>", "x\"y", "a&b"], 0.3)])
    report["components"][0]["top_documents"] = [
        {"row": 0, "score": 1.0, "time": None, "id": "<i>1</i>", "text": HOSTILE}]
    report["notes"] = [HOSTILE]
    page = render_index_page([report], None, ())
    assert "<script" not in page and "<i>1" not in page and "<b>bold" not in page
    assert HOSTILE in page_parts(page).text
    assert "T1 &lt;script&gt; \u00b7 x&quot;y \u00b7 a&amp;b" in page


def test_a_report_edited_by_hand_still_gives_both_indexes():
    """A day's JSON that lost its figures or holds other things (it passes the check of a
    report: day, numbered components with words) is drawn without them, never a crash."""
    edited = {"day": "2015-03-01", "documents": 5, "components": [
        {"index": 1, "words": ["a", "b", "c"], "coverage": {"documents": "x", "share": -5},
         "upper_bound": 10 ** 400},
        {"index": 2, "words": ["d", "e"], "coverage": "bad", "weights": "no",
         "upper_bound": "high", "top_documents": [1, {"text": "<x>"}]}]}
    page = render_index_page([_report("2015-02-28", [(REFUND, 0.4)]), edited], None, ())
    assert "T2 a \u00b7 b \u00b7 c" in page and "&lt;x&gt;" in page
    assert "-500%" not in page  # (a share outside [0, 1] is no share)
    assert unresolved_anchors(page) == []
    markdown = render_index([edited], plot_note="(no chart)")
    assert "| T1 a \u00b7 b \u00b7 c | 2015-03-01 | 2015-03-01 | 1 | - |" in markdown
