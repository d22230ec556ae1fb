"""The pieces of ``spca daily`` that need no corpus: days, the lock, atomic writes, the index."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys

import pytest

from spca_cli.daily import (DirLock, atomic_write, day_window, new_topics, render_index,
                            resolve_day, resolve_timezone)
from spca_cli.errors import SpcaError, SpcaParameterError


def test_yesterday_is_computed_in_the_given_timezone():
    now = dt.datetime(2015, 2, 18, 5, 0, tzinfo=dt.timezone.utc)  # 21:00 on the 17th in LA
    assert resolve_day(None, tz=resolve_timezone("UTC"), now=now) == dt.date(2015, 2, 17)
    la = resolve_timezone("America/Los_Angeles")
    assert resolve_day(None, yesterday=True, tz=la, now=now) == dt.date(2015, 2, 16)
    assert resolve_day("2015-02-20", tz=la) == dt.date(2015, 2, 20)


def test_day_options_are_checked():
    tz = resolve_timezone("UTC")
    with pytest.raises(SpcaParameterError, match="use just one of date_text and yesterday"):
        resolve_day("2015-02-20", yesterday=True, tz=tz)
    with pytest.raises(SpcaParameterError, match="^date_text must be YYYY-MM-DD, got '20/02/2015'"):
        resolve_day("20/02/2015", tz=tz)
    with pytest.raises(SpcaParameterError, match="unknown time zone 'Mars/Olympus'"):
        resolve_timezone("Mars/Olympus")
    # only YYYY-MM-DD (Python's reading also takes 20150220 and ISO weeks), no empty zone
    for text in ("20150220", "2015-W08-5", "2015-02-20T00:00"):
        with pytest.raises(SpcaParameterError, match=f"^date_text must be YYYY-MM-DD, got '{text}'"):
            resolve_day(text, tz=tz)
    with pytest.raises(SpcaParameterError, match="^unknown time zone ''"):
        resolve_timezone("")
    assert str(resolve_timezone(None)) == "UTC"


def test_day_window_follows_daylight_saving():
    la = resolve_timezone("America/Los_Angeles")
    start, end = day_window(dt.date(2015, 3, 8), la)  # DST starts: a 23-hour day
    # subtracting aware datetimes of one zone gives wall-clock time, so compare instants
    assert end.timestamp() - start.timestamp() == 23 * 3600
    assert start.utcoffset() == dt.timedelta(hours=-8)


def test_lock_refuses_a_live_holder_and_takes_over_a_stale_one(tmp_path):
    with DirLock(tmp_path):
        holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            (tmp_path / ".lock").write_text(f"{holder.pid}\n")
            with pytest.raises(SpcaError, match=rf"another spca daily run holds .*\.lock \(pid {holder.pid}\)"):
                DirLock(tmp_path).acquire()
        finally:
            holder.kill()
            holder.wait()
    # the holder is dead now: its lock is stale and is taken over
    (tmp_path / ".lock").write_text(f"{holder.pid}\n")
    with DirLock(tmp_path) as lock:
        assert (tmp_path / ".lock").read_text().strip() == str(os.getpid())
    assert not lock.path.exists()


def test_atomic_write_replaces_whole_files_only(tmp_path):
    target = tmp_path / "report.json"
    atomic_write(target, "old\n")
    atomic_write(target, "new\n")
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def _report(day, words_per_topic, documents=10):
    comps = [{"index": i + 1, "words": words} for i, words in enumerate(words_per_topic)]
    return {"day": day, "documents": documents, "components": comps}


def test_index_marks_topics_that_are_new_since_the_previous_day(tmp_path):
    (tmp_path / "2015-02-17.json").write_text(json.dumps(_report(
        "2015-02-17", [["flight", "cancelled", "late", "hours"], ["bag", "lost", "luggage", "claim"]])))
    (tmp_path / "2015-02-18.json").write_text(json.dumps(_report(
        "2015-02-18", [["flight", "cancelled", "late", "help"], ["snow", "storm", "weather", "delay"]])))
    (tmp_path / "2015-02-19.json").write_text(json.dumps(
        {"day": "2015-02-19", "documents": 0, "components": []}))
    index = render_index(tmp_path).splitlines()
    assert index[0] == "# Daily topics"
    assert index[2].startswith("3 days, 2015-02-17 to 2015-02-19, 20 documents; 3 topics")
    day17, day18, day19 = index[6], index[7], index[8]
    new17, new18 = day17.split(" | ")[-1], day18.split(" | ")[-1]
    assert new17 == "T1 flight \u00b7 cancelled \u00b7 late, T2 bag \u00b7 lost \u00b7 luggage |"
    assert new18 == "T3 snow \u00b7 storm \u00b7 weather |"  # T1 goes on: not new
    assert "no documents" in day19


def test_new_topics_needs_half_of_the_words_to_match():
    today = [{"index": 1, "words": ["a", "b", "c", "d"]}]
    assert new_topics(today, [{"index": 1, "words": ["a", "b", "x", "y"]}]) == []
    assert new_topics(today, [{"index": 1, "words": ["a", "x", "y", "z"]}]) == [1]
    assert new_topics(today, None) == [1]
