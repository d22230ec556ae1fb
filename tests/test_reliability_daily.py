"""Reliability, mechanism 5: cron never stays broken. Foreign or damaged reports are skipped
with one warning and the index is always rebuilt; the lock is a kernel flock, so nothing stale
or garbage can block a later run; --quiet leaves stderr to errors."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from spca_cli.cli import cli
from spca_cli.daily import DirLock
from spca_cli.errors import SpcaError, SpcaOutputError

DATA = Path(__file__).resolve().parent / "data"
TOPICS = ["--solver", "threshold", "-k", "1", "-c", "1", "-d", "1", "--min-count", "1",
          "--timezone", "America/Los_Angeles"]


def daily(*args):
    result = CliRunner().invoke(cli, ["daily", *[str(a) for a in args]])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


FOREIGN = {
    "2015-02-10.json": b"{}",
    "2015-02-11.json": b"[]",
    "2015-02-12.json": b"null",
    "2015-02-13.json": b"\xff\xfe not utf-8",
    "2015-02-14.json": b'{"day": "2015-02-14", "components": [{"index": 1}]}',
    "2015-02-15.json": b'{"day": "2015-02-15", "n": ' + b"9" * 5000 + b"}",
    "2015-02-08.json": b'{"day": "2015-02-08", "timezone": 5, "components": []}',
    "2015-02-09.json": b'{"day": "2015-02-09", "documents": 1' + b"0" * 400 + b"}",
}


def test_foreign_reports_are_skipped_once_and_the_index_is_written(tmp_path):
    out = tmp_path / "reports"
    out.mkdir()
    for name, payload in FOREIGN.items():
        (out / name).write_bytes(payload)
    log = tmp_path / "daily.log"
    result = daily(DATA / "tiny.csv", "--out", out, "--date", "2015-02-17", "--log", log,
                   *TOPICS)
    assert result.exit_code == 0, result.output
    warning = (f"{out}: skipped 8 files that are not spca daily reports: 2015-02-08.json "
               "(its 'timezone' is not a time zone's name); 2015-02-09.json (its 'documents' is "
               "not a count); 2015-02-10.json "
               "(its 'day' is None, not '2015-02-10'); 2015-02-11.json (holds an array, not a "
               "report object); 2015-02-12.json (holds null, not a report object); "
               "2015-02-13.json (not readable as JSON (UnicodeDecodeError)); 2015-02-14.json "
               "(component 1 has no list of words); 2015-02-15.json (not readable as JSON "
               "(ValueError))")
    assert result.stderr == f"Warning: {warning}\n"
    index = (out / "index.md").read_text()
    assert "[2015-02-17](2015-02-17.md)" in index and "2015-02-10" not in index
    lines = log.read_text().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith(f" warning: {warning}")
    assert " day=2015-02-17 status=ok documents=2 " in lines[1]
    for name, payload in FOREIGN.items():  # not ours: left exactly as found
        assert (out / name).read_bytes() == payload
    quiet = daily(DATA / "tiny.csv", "--out", out, "--date", "2015-02-17", "--quiet", *TOPICS)
    assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == ""


def test_the_index_is_rebuilt_even_when_the_day_fails(tmp_path):
    out = tmp_path / "reports"
    out.mkdir()
    (out / "2015-02-16.json").write_text(json.dumps({"day": "2015-02-16", "documents": 3,
                                                     "components": [], "notes": ["quiet day"]}))
    bad = tmp_path / "bad.csv"
    bad.write_text("text,created_at\nhello,not a time\n")
    result = daily(bad, "--out", out, "--date", "2015-02-17", *TOPICS)
    assert result.exit_code == 1
    assert "[2015-02-16](2015-02-16.md) | 3 | quiet day" in (out / "index.md").read_text()


def test_quiet_means_only_errors_on_stderr(tmp_path):
    tweets = tmp_path / "t.jsonl"
    tweets.write_text((DATA / "tiny.jsonl").read_text() + '{"delete": {"id": 9}}\n' * 3)
    loud = daily(tweets, "--out", tmp_path / "r", "--date", "2015-02-17", *TOPICS)
    assert loud.exit_code == 0
    assert loud.stderr == f"Warning: {tweets}: skipped 3 objects without text\n"
    quiet = daily(tweets, "--out", tmp_path / "r", "--date", "2015-02-17", "--quiet", *TOPICS)
    assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == ""


@pytest.mark.parametrize("content", [b"garbage\n", b"", b"\x00\xff", b"1\n"])
def test_any_lock_file_content_left_behind_is_harmless(tmp_path, content):
    out = tmp_path / "reports"
    out.mkdir()
    (out / ".lock").write_bytes(content)  # pid 1 is alive: a pid is no evidence of a holder
    result = daily(DATA / "tiny.csv", "--out", out, "--date", "2015-02-17", *TOPICS)
    assert result.exit_code == 0, result.output
    assert not (out / ".lock").exists()


def test_a_directory_at_the_lock_path(tmp_path):
    out = tmp_path / "reports"
    (out / ".lock").mkdir(parents=True)  # empty: removed, the run goes on
    assert daily(DATA / "tiny.csv", "--out", out, "--date", "2015-02-17", *TOPICS).exit_code == 0
    (out / ".lock" / "something").mkdir(parents=True)  # not empty: not ours to delete
    result = daily(DATA / "tiny.csv", "--out", out, "--date", "2015-02-17", *TOPICS)
    assert result.exit_code == 1
    assert result.output == (f"Error: {out / '.lock'}: is a directory, not spca's lock file; "
                             "remove it\n")


HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, b"%d\\n" % os.getpid())
print("held", flush=True)
time.sleep(60)
"""


def test_the_kernel_releases_the_lock_of_a_killed_holder(tmp_path):
    lock = tmp_path / ".lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(SpcaError) as caught:
            DirLock(tmp_path).acquire()
        assert str(caught.value) == (f"another spca daily run holds {lock} (pid {holder.pid}); "
                                     "wait for it to finish")
    finally:
        holder.kill()
        holder.wait()
    with DirLock(tmp_path):  # no stale state: the lock went with the process
        assert lock.read_text() == f"{os.getpid()}\n"
    assert not lock.exists()


def test_a_run_that_opened_the_lock_before_it_was_removed_retries(tmp_path):
    """The takeover race: B opens .lock, A releases (unlinks, unlocks), C locks a new .lock;
    B's flock on the old file succeeds but B must notice the path moved on."""
    first = DirLock(tmp_path).acquire()
    early = os.open(tmp_path / ".lock", os.O_RDWR)  # B's open, before A releases
    first.release()
    third = DirLock(tmp_path).acquire()  # C holds the new file
    try:
        fcntl.flock(early, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the old inode is free...
        assert not os.path.samestat(os.fstat(early), os.stat(tmp_path / ".lock"))
        with pytest.raises(SpcaError, match="another spca daily run holds"):
            DirLock(tmp_path).acquire()  # ...but a real acquire looks at the path, not it
    finally:
        os.close(early)
        third.release()


def test_lock_errors_name_the_lock(tmp_path):
    (tmp_path / ".lock").mkdir()
    (tmp_path / ".lock" / "x").write_text("")
    with pytest.raises(SpcaOutputError) as caught:
        DirLock(tmp_path).acquire()
    assert caught.value.path == str(tmp_path / ".lock")
