"""Reliability, mechanism 1: every output is checked before any work, and any OSError while
writing one is a one-line error; an input is never overwritten and no partial file is left."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest


from _cli import spca

DATA = Path(__file__).resolve().parent / "data"
TOPICS = ["--solver", "threshold", "-k", "1", "-c", "1", "-d", "1"]



@pytest.fixture
def tweets(tmp_path):
    path = tmp_path / "tiny.csv"
    shutil.copy(DATA / "tiny.csv", path)
    return path


def assert_refused(result, message):
    assert result.exit_code == 1
    assert result.output == f"Error: {message}\n"


def destroy(path):
    return f"{path}: is the input {path}; writing it would destroy the input, give another " \
           "output name"


def same_file(out, source):
    return f"{out}: is the same file as the input {source}; writing it would destroy the " \
           "input, give another output name"


def test_ingest_and_topics_refuse_to_overwrite_their_input(tweets):
    before = tweets.read_bytes()
    assert_refused(spca("ingest", tweets, "-o", tweets), destroy(tweets))
    assert_refused(spca("topics", tweets, *TOPICS, "-o", tweets), destroy(tweets))
    assert tweets.read_bytes() == before


def test_a_hard_link_or_symlink_of_an_input_is_the_input(tweets, tmp_path):
    before = tweets.read_bytes()
    hard, soft = tmp_path / "hard.json", tmp_path / "soft.json"
    os.link(tweets, hard)
    soft.symlink_to(tweets)
    assert_refused(spca("topics", tweets, *TOPICS, "-o", hard), same_file(hard, tweets))
    assert_refused(spca("topics", tweets, *TOPICS, "-o", soft), same_file(soft, tweets))
    assert tweets.read_bytes() == before and soft.is_symlink()


def test_the_vocabulary_beside_a_docword_file_is_an_input_too(tmp_path):
    for name in ("docword.tiny.txt", "vocab.tiny.txt"):
        shutil.copy(DATA / name, tmp_path / name)
    vocab = tmp_path / "vocab.tiny.txt"
    assert_refused(spca("ingest", tmp_path / "docword.tiny.txt", "-o", vocab), destroy(vocab))
    assert vocab.read_text() == (DATA / "vocab.tiny.txt").read_text()


def test_outputs_that_cannot_be_written_are_refused_before_reading(tweets, tmp_path):
    assert_refused(spca("topics", tweets, *TOPICS, "-o", tmp_path),
                   f"{tmp_path}: is a directory; give a file name")
    missing = tmp_path / "no" / "such" / "out.json"
    assert_refused(spca("ingest", tweets, "-o", missing),
                   f"{missing}: the folder to write into does not exist")
    assert_refused(spca("spectrum", tweets, "--plot", tweets), destroy(tweets))
    not_a_folder = tweets / "x.png"
    assert_refused(spca("spectrum", tweets, "--plot", not_a_folder),
                   f"{not_a_folder}: {tweets} is not a folder")
    # checked before reading: an unreadable input is not even opened
    assert_refused(spca("ingest", tmp_path / "absent.csv", "-o", tmp_path),
                   f"{tmp_path}: is a directory; give a file name")


def test_daily_checks_out_and_log_before_any_work(tweets, tmp_path):
    day = ["--date", "2015-02-17", *TOPICS]
    assert_refused(spca("daily", tweets, "--out", tweets, *day),
                   f"{tweets}: exists and is not a folder")
    out = tmp_path / "reports"
    assert_refused(spca("daily", tweets, "--out", out, "--log", tmp_path, *day),
                   f"{tmp_path}: is a directory; give a file name")
    log = tmp_path / "missing" / "daily.log"
    assert_refused(spca("daily", tweets, "--out", out, "--log", log, *day),
                   f"{log}: the folder to write into does not exist")
    assert_refused(spca("daily", tweets, "--out", out, "--log", tweets, *day), destroy(tweets))
    assert_refused(spca("daily", tweets, "--out", out, "--log", out / "index.md", *day),
                   f"{out / 'index.md'}: is one of the files spca daily writes in --out; give "
                   "the log another name")
    assert not out.exists()  # nothing was written, not even the folder
    # the log is not the folder itself, not yet made, nor another day's report, a link to one
    # or a temp file of a write (a log line appended there damaged the report)
    assert_refused(spca("daily", tweets, "--out", out, "--log", out, *day),
                   f"{out}: is the --out folder; give the log a file name")
    assert not out.exists()
    out.mkdir()
    (out / "2015-02-16.json").write_text("{}", encoding="utf-8")
    link = tmp_path / "link.log"
    link.symlink_to(out / "2015-02-16.json")
    for log in (out / "2015-02-16.json", out / "2015-02-18.md", link, out / ".tmp-spca-x.part"):
        assert_refused(spca("daily", tweets, "--out", out, "--log", log, *day),
                       f"{log}: is one of the files spca daily writes in --out; give the log "
                       "another name")
    assert sorted(p.name for p in out.iterdir()) == ["2015-02-16.json"]
    shutil.rmtree(out)
    # an input inside the report folder, named like a report, is refused as well
    out.mkdir()
    inside = out / "2015-02-17.md"
    shutil.copy(tweets, inside)
    assert_refused(spca("daily", inside, "--out", out, "--input-format", "csv", *day),
                   destroy(inside))
    assert sorted(p.name for p in out.iterdir()) == ["2015-02-17.md"]


def test_reproduce_never_writes_over_its_config(tmp_path):
    config = tmp_path / "t.md"  # a config whose table would be t.md in the same folder
    shutil.copy(DATA / "tiny.csv", tmp_path / "tiny.csv")
    config.write_text("title: t\nreproduces: r\nmeasure: components\n"
                      "data: {path: tiny.csv, ingest: {min_count: 1}}\n"
                      "runs:\n  - {solver: threshold, k: 1}\n")
    before = config.read_bytes()
    assert_refused(spca("reproduce", config, "-o", tmp_path), destroy(config))
    assert config.read_bytes() == before
    assert_refused(spca("reproduce", config, "-o", tmp_path / "tiny.csv"),
                   f"{tmp_path / 'tiny.csv'}: exists and is not a folder")


def test_an_oserror_while_writing_is_one_line_and_leaves_nothing(tweets, tmp_path,
                                                                  monkeypatch):
    target = tmp_path / "topics.json"
    target.write_text("the previous report\n")

    def full_disk(src, dst):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full_disk)
    result = spca("topics", tweets, *TOPICS, "--format", "json", "-o", target)
    assert_refused(result, f"{target}: No space left on device")
    assert target.read_text() == "the previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.csv", "topics.json"]


def test_a_read_only_place_is_one_line(tweets, tmp_path):
    if os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        folder.chmod(0o555)
        result = spca("topics", tweets, *TOPICS, "-o", folder / "t.json")
        assert_refused(result, f"{folder / 't.json'}: the folder {folder} is not writable")
        return
    # root may write anywhere the file system allows: use one that does not allow it
    folder = Path("/sys")
    if not folder.is_dir() or os.access(folder, os.W_OK) and not _write_fails(folder):
        pytest.skip("run as root and /sys accepts writes here: no folder on this machine refuses "
                    "root, so a read-only destination cannot be made")
    result = spca("topics", tweets, *TOPICS, "-o", folder / "t.json")
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {folder / 't.json'}: ")
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


def _write_fails(folder):
    try:
        with open(folder / ".spca-probe", "w"):
            pass
    except OSError:
        return True
    os.unlink(folder / ".spca-probe")
    return False


def test_every_output_of_topics_is_checked_before_any_is_written(tweets, tmp_path):
    out = tmp_path / "topics.json"
    missing = tmp_path / "no" / "such" / "a.csv"
    assert_refused(spca("topics", tweets, *TOPICS, "-o", out, "--assignments", missing),
                   f"{missing}: the folder to write into does not exist")
    assert_refused(spca("topics", tweets, *TOPICS, "-o", out, "--assignments", tmp_path),
                   f"{tmp_path}: is a directory; give a file name")
    assert_refused(spca("topics", tweets, *TOPICS, "-o", out, "--assignments", tweets),
                   destroy(tweets))
    assert_refused(spca("topics", tweets, *TOPICS, "-o", out, "--assignments",
                        tmp_path / "." / "topics.json"),
                   f"{tmp_path / '.' / 'topics.json'}: is also the -o file; give --assignments "
                   "another name")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.csv"]


def test_an_assignments_write_that_fails_leaves_no_output_either(tweets, tmp_path,
                                                                  monkeypatch):
    from spca_cli.errors import SpcaOutputError

    out, assignments = tmp_path / "topics.json", tmp_path / "a.csv"

    def fails(path, corpus, components):
        raise SpcaOutputError(path, "No space left on device")

    monkeypatch.setattr("spca_cli.documents.write_assignments", fails)
    assert_refused(spca("topics", tweets, *TOPICS, "-o", out, "--assignments", assignments),
                   f"{assignments}: No space left on device")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.csv"]


def test_generate_checks_the_vocabulary_it_writes_beside_a_uci_corpus(tmp_path):
    (tmp_path / "vocab.g.txt").mkdir()
    docword = tmp_path / "docword.g.txt"
    assert_refused(spca("generate", "--kind", "uci", "--documents", "5", "--words", "20",
                        "-o", docword),
                   f"{tmp_path / 'vocab.g.txt'}: is a directory; give a file name")
    assert not docword.exists()
