"""``spca daily`` as cron runs it: real days of real tweets, real processes, real kills."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from spca_cli.cli import cli

TOPICS = ["--solver", "threshold", "-k", "6", "-c", "3", "--timezone", "America/Los_Angeles"]
DAYS = ["2015-02-17", "2015-02-18", "2015-02-19", "2015-02-20", "2015-02-21", "2015-02-22",
        "2015-02-23", "2015-02-24"]


def run(args):
    return CliRunner().invoke(cli, ["daily", *args], catch_exceptions=False)


def spca_process(args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "spca_cli", "daily", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


@pytest.fixture
def big_csv(airline_csv, tmp_path):
    """The airline CSV eight times over: slow enough to catch a run while it works."""
    text = airline_csv.read_text(encoding="utf-8")
    header, body = text.split("\n", 1)
    path = tmp_path / "big.csv"
    path.write_text(header + "\n" + body * 8, encoding="utf-8")
    return path


def test_every_day_of_the_airline_tweets(airline_csv, tmp_path):
    out = tmp_path / "reports"
    for day in DAYS:
        result = run([str(airline_csv), "--out", str(out), "--date", day, *TOPICS, "--quiet"])
        assert result.exit_code == 0, result.output
        assert result.output == ""  # --quiet: nothing on success
    per_day = {"2015-02-17": 1408, "2015-02-22": 3079, "2015-02-24": 1344}
    for day in DAYS:
        report = json.loads((out / f"{day}.json").read_text())
        assert report["day"] == day and len(report["components"]) == 3
        # the day's tweets, less those repeating a text of the day read before them
        set_aside = report["input"]["duplicates_set_aside"]["exact"]
        assert report["documents"] + set_aside == per_day.get(day, report["documents"] + set_aside)
        assert (out / f"{day}.md").read_text().startswith(f"# Topics of {day}")
    index = (out / "index.md").read_text()
    assert all(f"[{day}]({day}.md)" in index for day in DAYS)
    assert "flight" in index
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


def test_rerunning_a_day_gives_the_same_components(airline_csv, tmp_path):
    args = [str(airline_csv), "--out", str(tmp_path), "--date", "2015-02-20", *TOPICS]
    assert run(args).exit_code == 0
    first = json.loads((tmp_path / "2015-02-20.json").read_text())
    assert run(args).exit_code == 0
    second = json.loads((tmp_path / "2015-02-20.json").read_text())
    assert first["components"] == second["components"]


def test_an_empty_day_writes_a_report_and_succeeds(airline_csv, tmp_path):
    result = run([str(airline_csv), "--out", str(tmp_path), "--date", "2015-03-01", *TOPICS])
    assert result.exit_code == 0
    report = json.loads((tmp_path / "2015-03-01.json").read_text())
    assert report["documents"] == 0 and report["components"] == []
    assert "No documents" not in report["notes"][0] and "no documents" in report["notes"][0]
    assert "0 documents: no documents on this day" in (tmp_path / "2015-03-01.md").read_text()


def test_a_malformed_input_fails_with_one_line_and_writes_nothing(tmp_path):
    bad = tmp_path / "tweets.jsonl"
    bad.write_text('{"text": "fine", "created_at": "2015-02-17T10:00:00Z"}\n{"text": oops\n')
    log = tmp_path / "daily.log"
    out = tmp_path / "reports"
    result = CliRunner().invoke(cli, ["daily", str(bad), "--out", str(out), "--date",
                                      "2015-02-17", "--log", str(log), *TOPICS])
    assert result.exit_code == 1
    message = result.output.strip()
    assert message.startswith("Error: ") and str(bad) in message and "line 2" in message
    assert len(message.splitlines()) == 1
    assert not list(out.glob("*.json"))
    assert "status=error" in log.read_text()


def test_two_concurrent_runs_leave_one_report_and_one_clear_error(big_csv, tmp_path):
    out = tmp_path / "reports"
    args = [str(big_csv), "--out", str(out), "--date", "2015-02-18", *TOPICS]
    first = spca_process(args)
    lock = out / ".lock"
    deadline = time.time() + 60

    def holder():
        try:
            return lock.read_text().strip()
        except OSError:
            return ""

    # the file appears (O_CREAT) before the lock is taken and the pid written: wait for the pid,
    # or a second run stopped in between would rightly print "pid unknown"
    while holder() != str(first.pid) and time.time() < deadline:
        time.sleep(0.05)
    assert holder() == str(first.pid), "the first run never took the lock"
    # freeze the first run while it holds the lock, so the second surely meets it
    first.send_signal(signal.SIGSTOP)
    try:
        second = spca_process(args)
        err2 = second.communicate(timeout=120)[1]
    finally:
        first.send_signal(signal.SIGCONT)
    assert second.returncode == 1
    assert err2.strip() == (f"Error: another spca daily run holds {lock} (pid {first.pid}); "
                            "wait for it to finish")
    first.communicate(timeout=300)
    assert first.returncode == 0
    assert sorted(p.name for p in out.iterdir()) == ["2015-02-18.json", "2015-02-18.md",
                                                      "index.html", "index.md", "trends.png"]


def test_a_killed_run_leaves_the_previous_report_intact(big_csv, airline_csv, tmp_path):
    out = tmp_path / "reports"
    args = [str(airline_csv), "--out", str(out), "--date", "2015-02-19", *TOPICS]
    assert run(args).exit_code == 0
    before = (out / "2015-02-19.json").read_bytes()
    # a temp file as a run killed during its write would leave it
    (out / ".tmp-spca-killed.part").write_text('{"half": ')
    victim = spca_process([str(big_csv), "--out", str(out), "--date", "2015-02-19", *TOPICS])
    lock = out / ".lock"
    deadline = time.time() + 60
    while not lock.exists() and time.time() < deadline:
        time.sleep(0.01)
    victim.send_signal(signal.SIGKILL)  # mid-run: it holds the lock and is reading
    victim.communicate(timeout=60)
    assert victim.returncode == -signal.SIGKILL
    assert (out / "2015-02-19.json").read_bytes() == before
    assert json.loads(before)["day"] == "2015-02-19"
    # the next run recovers the stale lock and removes the dead run's temp file
    assert lock.exists() and int(lock.read_text()) == victim.pid
    assert run(args).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["2015-02-19.json", "2015-02-19.md",
                                                      "index.html", "index.md", "trends.png"]


def test_yesterday_and_globs(airline_csv, tmp_path, monkeypatch):
    monkeypatch.chdir(airline_csv.parent)
    result = run(["twitter_us_airline_*.csv", "--out", str(tmp_path / "r"), "--yesterday",
                  *TOPICS])
    assert result.exit_code == 0  # today's yesterday has no airline tweets: an empty day
    assert "0 documents" in result.output
    missing = CliRunner().invoke(cli, ["daily", "nothing-*.csv", "--out", str(tmp_path),
                                       *TOPICS])
    assert missing.exit_code == 1
    assert "nothing-*.csv: the pattern matches no files" in missing.output
    both = CliRunner().invoke(cli, ["daily", str(airline_csv), "--out", str(tmp_path),
                                    "--date", "2015-02-18", "--yesterday", *TOPICS])
    assert both.exit_code == 1 and "use just one of --date and --yesterday" in both.output


def test_crontab_line_in_readme_works_as_written(airline_csv, tmp_path):
    """The README's crontab line, run with its paths pointed at a test folder, succeeds."""
    import shlex

    readme = os.path.join(os.path.dirname(__file__), "..", "README.md")
    text = open(readme, encoding="utf-8").read()
    lines = [line for line in text.splitlines() if "spca daily " in line and line[:1].isdigit()]
    assert lines, "README shows no crontab line"
    fields = shlex.split(lines[0])
    assert fields[5].endswith("/spca") and fields[6] == "daily"
    args = fields[7:]
    out, log = str(tmp_path / "topics"), str(tmp_path / "daily.log")
    args = [str(airline_csv) if "*" in a else a for a in args]
    args = [out if a == "/srv/topics" else log if a.endswith("daily.log") else a for a in args]
    assert "--quiet" in args and "--yesterday" in args
    result = run(args)
    assert result.exit_code == 0 and result.output == ""
    assert "status=ok" in open(log, encoding="utf-8").read()
