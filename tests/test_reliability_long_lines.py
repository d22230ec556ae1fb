"""Reliability: a line longer than ``limits.MAX_LINE_BYTES`` (a file without line ends, a gzip of
NUL bytes) is refused with ``line N too long``, naming the line counted from the file's start,
by every reader, instead of growing one string until memory runs out.

The limit is lowered for the tests (it is read when each block is read), so the files stay
small; a line exactly at the limit is read as any other."""

from __future__ import annotations

import gzip
import json

import pytest
from click.testing import CliRunner

from spca_cli import limits
from spca_cli.cli import cli

from _cli import assert_error, spca

LIMIT = 4096


@pytest.fixture
def limit(monkeypatch):
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", LIMIT)
    return LIMIT


def too_long(path, line, limit=LIMIT):
    return f"{path}: line {line} too long (over {limit:,} bytes)"


def tweets(n):
    return "".join(json.dumps({"text": f"fares went up again {i}"}) + "\n" for i in range(n))


def test_a_gzip_of_nul_bytes_without_a_line_end_is_refused(tmp_path, limit):
    path = tmp_path / "nul.txt.gz"
    path.write_bytes(gzip.compress(b"\0" * (3 * LIMIT)))
    assert_error(spca("info", path), too_long(path, 1))


def test_a_long_line_is_refused_in_every_text_reader(tmp_path, limit):
    long = "x" * (LIMIT + 1)
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(tweets(3) + json.dumps({"text": long}) + "\n" + tweets(2))
    csv = tmp_path / "t.csv"
    csv.write_text("text\nfares went up\n" + long + "\nlate again\n")
    text = tmp_path / "t.txt"
    text.write_text("fares went up\n" * 5 + long)  # the last line, without its line end
    for path, line in ((jsonl, 4), (csv, 3), (text, 6)):
        assert_error(spca("info", path), too_long(path, line))
        assert_error(spca("ingest", path, "-o", tmp_path / "out.npz"), too_long(path, line))
    assert not (tmp_path / "out.npz").exists()


def test_a_long_line_is_refused_in_uci_files_and_their_vocabulary(tmp_path, limit):
    docword, vocab = tmp_path / "docword.x.txt", tmp_path / "vocab.x.txt"
    docword.write_text("1\n2\n2\n1 1 1\n1 2 " + "1" * (LIMIT + 1) + "\n")
    vocab.write_text("apple\nbanana\n")
    assert_error(spca("info", docword), too_long(docword, 5))
    docword.write_text("1\n2\n2\n1 1 1\n1 2 1\n")
    vocab.write_text("apple\n" + "b" * (LIMIT + 1) + "\n")
    assert_error(spca("info", docword), too_long(vocab, 2))


def test_a_long_line_is_refused_in_standard_input_stop_words_and_configs(tmp_path, limit):
    long = "x" * (LIMIT + 1)
    result = CliRunner().invoke(cli, ["info", "-", "--input-format", "text"],
                                input="fares went up\n" + long + "\n")
    assert_error(result, too_long("-", 2))
    stop = tmp_path / "stop.txt"
    stop.write_text("the\n" + long + "\n")
    data = tmp_path / "t.txt"
    data.write_text("fares went up\nfares went down\n")
    assert_error(spca("info", data, "--stopwords", stop), too_long(stop, 2))
    config = tmp_path / "c.yaml"
    config.write_text("title: " + long + "\n")
    assert_error(spca("reproduce", config), too_long(config, 1))


def test_a_line_at_the_limit_is_read(tmp_path, limit):
    path = tmp_path / "t.txt"
    at_limit = ("fares " * LIMIT)[:LIMIT - 1] + "z"
    path.write_text("fares went up\n" + at_limit + "\nfares went down\n")
    result = spca("info", path, "--format", "json", "--eigenvalues", "0")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["documents"] == 3


def test_a_line_longer_than_a_read_block_is_counted_across_blocks(tmp_path, monkeypatch):
    # a limit above the 1 MiB blocks the readers take: the line is seen a block at a time
    limit = 3 << 19
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", limit)
    path = tmp_path / "t.jsonl"
    path.write_text(tweets(2) + json.dumps({"text": "y" * limit}) + "\n" + tweets(2))
    assert_error(spca("info", path), too_long(path, 3, limit))
    path.write_text(tweets(2) + json.dumps({"text": "y" * (limit - 20)}) + "\n" + tweets(2))
    assert spca("info", path, "--eigenvalues", "0", "--format", "json").exit_code == 0


def test_the_parallel_reader_names_the_long_line_from_the_file_start(tmp_path, limit,
                                                                   monkeypatch):
    from spca_cli.corpus import read

    monkeypatch.setattr(read, "PARALLEL_MIN_BYTES", 1 << 16)
    monkeypatch.setattr(read, "usable_cores", lambda: 2)
    path = tmp_path / "t.jsonl"
    path.write_text(tweets(3000) + json.dumps({"text": "x" * LIMIT}) + "\n" + tweets(3000))
    assert_error(spca("info", path), too_long(path, 3001))
