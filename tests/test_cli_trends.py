"""``spca daily --from --to``, prevalence, topics followed across days, trends.png and
index.html."""

from __future__ import annotations

import json
import sys

from click.testing import CliRunner

from spca_cli.cli import cli
from spca_cli.trends import follow_topics, normalise_word, overlap, topic_profile

from _html_pages import page_parts, unresolved_anchors

WEEK = ["2015-02-17", "2015-02-18", "2015-02-19", "2015-02-20", "2015-02-21", "2015-02-22",
        "2015-02-23"]
TOPICS = ["-k", "6", "-c", "3", "--timezone", "America/Los_Angeles"]
# the default solver without branch and bound: the same topics every day of the week (checked
# against the default budget) in 7 s instead of 50 -- these tests are about the days
QUICK = ["--budget", "0"]


def run(args):
    return CliRunner().invoke(cli, ["daily", *args], catch_exceptions=False)


def _without_seconds(report):
    return {k: v for k, v in report.items() if k != "seconds"}


def test_a_week_in_one_call(airline_csv, tmp_path):
    out = tmp_path / "week"
    result = run([str(airline_csv), "--out", str(out), "--from", WEEK[0], "--to", WEEK[-1],
                  *TOPICS, *QUICK])
    assert result.exit_code == 0, result.output
    # 1,408 tweets that day, 10 of them repeating one read before them
    assert result.stdout.splitlines()[0].startswith("2015-02-17: 1,398 documents -> ")
    assert result.stdout.splitlines()[-1].startswith("7 days -> ")
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([f"{d}.json" for d in WEEK] + [f"{d}.md" for d in WEEK]
                           + ["index.md", "index.html", "trends.png"])
    reports = [json.loads((out / f"{d}.json").read_text()) for d in WEEK]
    for report in reports:
        for comp in report["components"]:
            assert comp["coverage"]["documents"] > 0 and len(comp["top_documents"]) == 3
    # each day exactly as a single-day run gives it
    single = tmp_path / "single"
    assert run([str(airline_csv), "--out", str(single), "--date", "2015-02-20", *TOPICS,
                *QUICK, "-q"]).exit_code == 0
    assert (_without_seconds(json.loads((single / "2015-02-20.json").read_text()))
            == _without_seconds(reports[3]))

    index = (out / "index.md").read_text()
    lines = index.splitlines()
    assert lines[2].startswith("7 days, 2015-02-17 to 2015-02-23 (America/Los_Angeles), ")
    assert lines[4].startswith("| day | documents | first topic | topics (share of the day's")
    # "flight cancelled flightled" is one topic all week, and its share is the day's coverage
    for line, report in zip(lines[6:13], reports):
        share = report["components"][0]["coverage"]["share"]
        assert f"T1 {100 * share:.0f}%" in line
    assert "T2 service \u00b7 customer \u00b7 worst" in index
    # the service topic is followed, not new, on every day it returns after the first
    returns = 0
    for line in lines[7:13]:
        shares, fresh = line.split(" | ")[-2:]
        returns += "T2 " in shares
        assert "T2 " not in fresh, line
    assert returns == 4
    # a topic new on the last day is named by its number and words, as on every page
    tracks, _ = follow_topics(reports)
    fleek = next(t for t in tracks if "fleek" in t.words)
    assert fleek.name == f"T{len(tracks)} fleek \u00b7 fleet \u00b7 yall"
    assert lines[12].endswith(f"| {fleek.name} |")
    for track in tracks:
        assert f"| {track.name} | " in index  # every followed topic is listed
    assert "![Prevalence of the topics over days](trends.png)" in index

    png = (out / "trends.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    page = (out / "index.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "data:image/png;base64," in page
    assert "<script" not in page and 'src="http' not in page  # needs no server, no network
    assert "<style>" in page and "fleet&#x27;s" in page and "fleet's" not in page
    first_tweet = reports[-1]["components"][0]["top_documents"][0]
    assert first_tweet["id"] in page
    # every topic reachable; every link leads to an element or to a file of the folder
    parts = page_parts(page)
    assert {f"t{t.number}" for t in tracks} <= set(parts.ids)
    assert unresolved_anchors(page) == []
    files = [h for h in parts.hrefs if not h.startswith("#")]
    assert len(files) == 2 * len(WEEK) * 2  # each day's .md and .json, in the table and below
    assert all((out / name).is_file() for name in files)


def test_range_options_are_checked(airline_csv, tmp_path):
    out = tmp_path / "r"
    result = run([str(airline_csv), "--out", str(out), "--from", "2015-02-17"])
    assert result.exit_code == 2 and "--from and --to go together" in result.output
    result = run([str(airline_csv), "--out", str(out), "--from", "2015-02-17", "--to",
                  "2015-02-18", "--date", "2015-02-17"])
    assert result.exit_code == 2
    assert "use either --from/--to or one of --date and --yesterday" in result.output
    result = run([str(airline_csv), "--out", str(out), "--from", "2015-02-18", "--to",
                  "2015-02-17"])
    assert result.exit_code == 1
    assert result.output == "Error: --from 2015-02-18 is later than --to 2015-02-17\n"
    result = run([str(airline_csv), "--out", str(out), "--from", "17.2.2015", "--to",
                  "2015-02-17"])
    assert result.exit_code == 1
    assert result.output == "Error: --from must be YYYY-MM-DD, got '17.2.2015'\n"
    assert not out.exists()


def test_without_matplotlib_the_index_says_how_to_get_the_chart(airline_csv, tmp_path,
                                                                  monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    out = tmp_path / "noplot"
    result = run([str(airline_csv), "--out", str(out), "--from", "2015-02-17", "--to",
                  "2015-02-18", "--solver", "threshold", *TOPICS, "--documents", "1", "-q"])
    assert result.exit_code == 0, result.output
    assert not (out / "trends.png").exists()
    hint = "pip install 'spca-cli[plot]'"
    assert hint in (out / "index.md").read_text()
    assert "pip install &#x27;spca-cli[plot]&#x27;" in (out / "index.html").read_text()
    report = json.loads((out / "2015-02-18.json").read_text())
    assert all(len(c["top_documents"]) == 1 for c in report["components"])


def test_plural_folding_and_weight_overlap():
    assert [normalise_word(w) for w in ["thanks", "bags", "fleet's", "business", "bus", "has",
                                        "Flights"]] == ["thank", "bag", "fleet", "business",
                                                        "bus", "has", "flight"]
    a = topic_profile({"words": ["service", "customer", "thanks"], "weights": [0.7, 0.6, 0.39]})
    b = topic_profile({"words": ["service", "customer", "thank"], "weights": [0.75, 0.6, 0.28]})
    assert 0.9 < overlap(a, b) <= 1.0
    c = topic_profile({"words": ["thanks", "service", "great"], "weights": [0.9, 0.3, 0.3]})
    assert overlap(a, c) < 0.5  # led by another word: another topic
    days = [{"day": f"2015-02-{d}", "components": [dict(index=1, **comp)]}
            for d, comp in (("17", {"words": ["service", "customer", "thanks"],
                                    "weights": [0.7, 0.6, 0.39]}),
                            ("18", {"words": ["thanks", "service", "great"],
                                    "weights": [0.9, 0.3, 0.3]}),
                            ("19", {"words": ["service", "customer", "thank"],
                                    "weights": [0.75, 0.6, 0.28]}))]
    tracks, by_day = follow_topics(days)
    # the service topic is recognised on the 19th although the 18th had a variant in between
    assert [t.name for t in tracks] == ["T1 service \u00b7 customer \u00b7 thanks",
                                        "T2 thanks \u00b7 service \u00b7 great"]
    assert sorted(tracks[0].days) == ["2015-02-17", "2015-02-19"]
