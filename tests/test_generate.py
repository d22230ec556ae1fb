"""The benchmark corpus generator: seeded bytes, valid files, planted topics found by spca."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from click.testing import CliRunner

from spca_cli.cli import cli
from spca_cli.corpus import read_corpus
from spca_cli.errors import SpcaParameterError
from spca_cli.generate import word_names, write_corpus


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("kind, name", [("jsonl", "t.jsonl"), ("uci", "docword.t.txt")])
def test_same_seed_same_bytes(tmp_path, kind, name):
    kw = dict(documents=3000, words=800, topics=3, topic_repeat=1.0, seed=7)
    first = write_corpus(tmp_path / name, kind, **kw)
    digest = _digest(tmp_path / name)
    (tmp_path / "b").mkdir()
    second = write_corpus(tmp_path / "b" / name, kind, **kw)
    assert _digest(tmp_path / "b" / name) == digest
    assert first.topics == second.topics and first.bytes == second.bytes
    if kind == "uci":
        assert _digest(tmp_path / "vocab.t.txt") == _digest(tmp_path / "b" / "vocab.t.txt")
    (tmp_path / "c").mkdir()
    write_corpus(tmp_path / "c" / name, kind, **{**kw, "seed": 8})
    assert _digest(tmp_path / "c" / name) != digest


def test_chunks_do_not_change_validity(tmp_path):
    """Files written in small chunks read back with the header's counts and the planted words."""
    out = write_corpus(tmp_path / "docword.t.txt", "uci", documents=2500, words=600,
                       words_per_document=40, topics=2, seed=1, chunk_documents=333)
    corpus = read_corpus(out.path)
    assert corpus.S.shape == (2500, 600) and corpus.nnz == out.nonzeros
    assert corpus.S.sum() == out.tokens
    assert set(out.topics[0]) <= set(corpus.vocabulary.tolist())
    tweets = write_corpus(tmp_path / "t.jsonl", documents=2500, words=600, seed=1,
                          chunk_documents=333)
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    assert len(lines) == 2500 and tweets.tokens > 2500
    first = json.loads(lines[0])
    assert set(first) == {"id", "created_at", "text"} and first["created_at"].endswith("2015")
    times = read_corpus(tweets.path, min_count=1).times
    assert np.all(np.diff(times) >= 0)  # times rise through the file


def test_word_names_survive_the_recipe():
    names = word_names(5000)
    assert len(set(names)) == 5000 and all(len(w) >= 3 and w.isalpha() for w in names)


def test_bad_parameters(tmp_path):
    with pytest.raises(SpcaParameterError, match="docword.NAME.txt"):
        write_corpus(tmp_path / "t.txt", "uci", documents=10, words=100)
    with pytest.raises(SpcaParameterError, match="topics \\* topic_words must be < words"):
        write_corpus(tmp_path / "t.jsonl", documents=10, words=50, topics=5)
    with pytest.raises(SpcaParameterError, match="kind must be one of"):
        write_corpus(tmp_path / "t.jsonl", "csv", documents=10, words=100)


def test_spca_topics_finds_the_planted_topics(tmp_path):
    """20k tweets over 2k words with 3 planted topics: ``spca generate`` then ``spca topics``
    recovers each planted topic whole (the first component is the Zipf head)."""
    runner = CliRunner()
    path = tmp_path / "t.jsonl"
    result = runner.invoke(cli, ["generate", "--documents", "20000", "--words", "2000",
                                 "--topics", "3", "--seed", "0", "-o", str(path)],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "20,000 documents" in result.stderr
    result = runner.invoke(cli, ["topics", str(path), "--solver", "spannogram", "--rank", "2",
                                 "-k", "10", "-c", "4", "--format", "json", "--quiet"],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    found = [set(c["words"]) for c in json.loads(result.stdout)["components"]]
    planted = [{f"topic{t}_word{j}" for j in range(1, 11)} for t in (1, 2, 3)]
    for topic in planted:
        assert topic in found
    assert "generate" not in runner.invoke(cli, ["--help"]).output  # a hidden dev command


# ---------------------------------------------------------------------- parallel ingest
@pytest.fixture
def parallel(monkeypatch):
    """Read every raw file in parallel byte ranges, however small (the default starts at 32 MB)."""
    import spca_cli.corpus.read as read_module

    monkeypatch.setattr(read_module, "PARALLEL_MIN_BYTES", 0)
    if read_module.usable_cores() < 2:
        monkeypatch.setattr(read_module, "usable_cores", lambda: 2)
    return read_module


@pytest.mark.parametrize("options", [{}, {"since": "2015-02-18", "until": "2015-02-19",
                                          "weighting": "count"}])
def test_parallel_ingest_equals_serial(tmp_path, parallel, monkeypatch, options):
    out = write_corpus(tmp_path / "t.jsonl", documents=4000, words=900, topics=2, seed=3)
    fast = read_corpus(out.path, **options)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1 << 62)
    slow = read_corpus(out.path, **options)
    assert (fast.S != slow.S).nnz == 0 and fast.S.shape == slow.S.shape
    assert np.array_equal(fast.vocabulary, slow.vocabulary)
    assert np.array_equal(fast.times, slow.times)
    assert np.array_equal(fast.tz_offsets, slow.tz_offsets)
    assert fast.options == slow.options
    assert fast.texts == slow.texts and fast.ids == slow.ids  # each document's text and id
    assert len(fast.texts) == fast.S.shape[0] and fast.texts[17] == slow.texts[17]


@pytest.mark.parametrize("how", ["shared", "one range sent", "no memfd"])
def test_parallel_texts_through_shared_memory_or_the_pool(tmp_path, parallel, monkeypatch, how):
    """The workers write their texts into one shared memory file, moved together by the parent;
    a range whose texts would not fit (simulated) or a system without memfd_create sends them
    through the pool: the same texts and ids as a serial read every way."""
    out = write_corpus(tmp_path / "t.jsonl", documents=3000, words=700, topics=2, seed=5)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1 << 62)
    slow = read_corpus(out.path)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    if how == "one range sent":
        write = parallel._SharedTexts.write
        monkeypatch.setattr(parallel._SharedTexts, "write", staticmethod(
            lambda fd, byte_range, documents: documents if byte_range[0] == 0
            else write(fd, byte_range, documents)))
    elif how == "no memfd":
        monkeypatch.setattr(parallel._SharedTexts, "available", staticmethod(lambda: False))
    fast = read_corpus(out.path)
    assert fast.texts == slow.texts and fast.ids == slow.ids
    assert (fast.S != slow.S).nnz == 0
    assert [fast.texts[i] for i in (0, 1499, 2999)] == [slow.texts[i] for i in (0, 1499, 2999)]


def test_parallel_ingest_reports_bad_lines_like_serial(tmp_path, parallel):
    """A bad line in a later byte range is reported with its line number in the whole file."""
    out = write_corpus(tmp_path / "t.jsonl", documents=3000, words=500, seed=4)
    lines = (tmp_path / "t.jsonl").read_text().splitlines(keepends=True)
    lines[2500] = '{"text": "broken"\n'
    (tmp_path / "t.jsonl").write_text("".join(lines))
    from spca_cli.errors import SpcaInputError

    with pytest.raises(SpcaInputError, match="line 2501: malformed JSON"):
        read_corpus(out.path)


def test_parallel_plain_text(tmp_path, parallel, monkeypatch):
    text = "".join(f"alpha beta{i % 7} gamma{i % 13}\n" if i % 5 else "\n" for i in range(5000))
    (tmp_path / "docs.txt").write_text(text)
    fast = read_corpus(tmp_path / "docs.txt")
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1 << 62)
    slow = read_corpus(tmp_path / "docs.txt")
    assert fast.S.shape == slow.S.shape == (5000, slow.S.shape[1])
    assert (fast.S != slow.S).nnz == 0 and np.array_equal(fast.vocabulary, slow.vocabulary)
    assert fast.texts == slow.texts and fast.texts[1] == "alpha beta1 gamma1"


def test_reposts_and_unequal_topics_of_the_third_tweet_generator(tmp_path):
    """duplicates: a share of the tweets repeat an earlier tweet's words (with another @mention
    or URL); topic_skew: topic 1 far more often than topic 12; both off, the same bytes."""
    import collections
    import json
    import re

    from spca_cli.generate import write_corpus

    plain = write_corpus(tmp_path / "a.jsonl", documents=3000, words=3000, topics=12, seed=2)
    again = write_corpus(tmp_path / "b.jsonl", documents=3000, words=3000, topics=12, seed=2,
                         topic_skew=0.0, duplicates=0.0)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert plain.bytes == again.bytes
    out = write_corpus(tmp_path / "c.jsonl", documents=3000, words=3000, topics=12, seed=2,
                       topic_skew=1.0, duplicates=0.3, topic_rate=0.6)
    texts = [json.loads(line)["text"] for line in open(out.path, encoding="utf-8")]
    words = [tuple(w.lstrip("#") for w in re.sub(r"@\S+|http\S+|&amp;", "", t).split())
             for t in texts]
    repeated = sum(c - 1 for c in collections.Counter(words).values())
    assert 0.2 * len(texts) < repeated < 0.4 * len(texts)
    topics = collections.Counter(w.split("_")[0] for t in words for w in t if "_word" in w)
    assert topics["topic1"] > 5 * topics["topic12"]
