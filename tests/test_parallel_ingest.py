"""The parallel ingest against the serial one on real tweets: ``min_count`` and the binary
weighting applied while the workers' parts merge (``merge_parts``), and the texts sent back
through one shared memory file (``os.memfd_create``).

Checked: the merge with min_count 1/2/5 and binary against filtering after it, serial and
parallel, with ``contains``, stop lists and every weighting; the shared texts with texts longer
than their lines (``&nLt;`` is six UTF-8 bytes from five), a BOM, CRLF, lone CR, lone
surrogates; a worker's failure and its exit (the serial read takes over, no descriptor leaks);
a system refusing ``memfd_create`` (ENOSYS, EPERM: the texts go through the pool); and
``--documents`` after a parallel read.
"""

from __future__ import annotations

import csv
import errno
import gc
import html
import json
import os

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spca_cli.cli import cli
from spca_cli.corpus import read_corpus
from spca_cli.corpus.tokenize import (VocabularyBuilder, apply_weighting, filter_words,
                                      make_analyzer, merge_parts)
from spca_cli.errors import SpcaInputError



# ------------------------------------------------------------------ real tweets
@pytest.fixture(scope="module")
def airline_texts():
    from conftest import dataset_paths

    with open(dataset_paths("airline")[0], newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [(r["tweet_id"], r["text"]) for r in rows]


@pytest.fixture
def parallel(monkeypatch):
    """Every raw file read in parallel byte ranges (two workers), however small."""
    import spca_cli.corpus.read as read_module

    monkeypatch.setattr(read_module, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(read_module, "usable_cores", lambda: 2)
    return read_module


def _read(read_module, monkeypatch, path, parallel, **options):
    """The corpus of ``path``, read in parallel or not; every line a row (duplicates kept,
    unless ``options`` say otherwise), as the texts these tests compare are the file's."""
    monkeypatch.setattr(read_module, "PARALLEL_MIN_BYTES", 0 if parallel else 1 << 62)
    return read_corpus(str(path), **{"keep_duplicates": True, **options})


def _same(a, b):
    assert a.S.shape == b.S.shape and (a.S != b.S).nnz == 0
    assert np.array_equal(a.vocabulary, b.vocabulary)
    assert a.texts == b.texts and a.ids == b.ids


# ------------------------------------------------------------------ merge with min_count
def _reference(parts, min_count, binary):
    """The reference: merge, then filter_words's min_count, then the binary weighting."""
    S, vocabulary = merge_parts(parts)
    S, vocabulary = filter_words(S, vocabulary, min_count=min_count)
    return (apply_weighting(S, "binary") if binary else S), vocabulary


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1), n_parts=st.integers(1, 5),
       min_count=st.sampled_from([1, 2, 3, 5, 40]), binary=st.booleans(),
       stopwords=st.sampled_from(["english", "none"]), repeat=st.integers(1, 300))
def test_merge_with_min_count_is_filtering_after_it(airline_texts, seed, n_parts, min_count,
                                                    binary, stopwords, repeat):
    """Real tweets cut at random into parts (some empty, one word repeated 300 times to need
    16-bit counts), each counted by its own builder: merging with min_count and binary gives the
    matrix and vocabulary of filtering after the merge."""
    rng = np.random.default_rng(seed)
    start = int(rng.integers(0, len(airline_texts) - 400))
    texts = [t for _, t in airline_texts[start:start + int(rng.integers(0, 400))]]
    if texts:
        texts[0] = texts[0] + " delay" * repeat
    cuts = np.sort(rng.integers(0, len(texts) + 1, n_parts - 1))
    analyzer = make_analyzer(3, stopwords)

    def parts():
        out = []
        for chunk in np.split(np.arange(len(texts)), cuts):
            builder = VocabularyBuilder()
            if len(chunk):
                analyzer.count_chunk([texts[i] for i in chunk], builder)
            out.append(builder.part())
        return out

    S, vocabulary = merge_parts(parts(), min_count, binary)
    R, expected = _reference(parts(), min_count, binary)
    assert vocabulary.tolist() == expected.tolist()
    assert S.shape == R.shape == (len(texts), len(expected))
    assert S.indices.tolist() == R.indices.tolist() and S.indptr.tolist() == R.indptr.tolist()
    assert S.data.tolist() == R.data.tolist()
    assert S.has_canonical_format
    if not binary and len(texts) and "delay" in vocabulary.tolist():
        assert S[0, vocabulary.tolist().index("delay")] >= repeat  # real counts, not ones


@pytest.mark.parametrize("options", [
    {}, {"min_count": 1}, {"min_count": 5}, {"weighting": "tfidf"},
    {"weighting": "count", "min_count": 3}, {"weighting": "tfidf", "min_count": 5},
    {"contains": ["flight", "cancelled"]}, {"contains": ["bag"], "min_count": 5,
                                            "weighting": "count"},
    {"stopwords": "none", "min_count": 2}, {"ngrams": "1-2", "min_count": 3}])
def test_read_corpus_parallel_serial_and_filtering_afterwards(airline_texts, tmp_path,
                                                              parallel, monkeypatch, options):
    """6,000 airline tweets as JSON lines: the parallel read equals the serial one, and both
    equal counting with min_count 1 then filtering and weighting afterwards (tf-idf and count
    see the real counts)."""
    path = tmp_path / "air.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for tweet_id, text in airline_texts[:6000]:
            f.write(json.dumps({"id_str": tweet_id, "text": text}, ensure_ascii=False) + "\n")
    fast = _read(parallel, monkeypatch, path, True, **options)
    slow = _read(parallel, monkeypatch, path, False, **options)
    _same(fast, slow)
    min_count = options.get("min_count", 2)
    weighting = options.get("weighting", "binary")
    raw = _read(parallel, monkeypatch, path, False,
                **{**options, "min_count": 1, "weighting": "count"})
    S, vocabulary = filter_words(raw.S, raw.vocabulary, min_count=min_count)
    S = apply_weighting(S, weighting)
    assert vocabulary.tolist() == fast.vocabulary.tolist()
    assert abs(S - fast.S).max() <= 1e-15
    if weighting == "count":
        assert fast.S.data.max() > 1  # counts, not ones
    if options.get("contains"):
        assert fast.S.shape[0] < 6000


def test_plain_text_parallel_min_count(airline_texts, tmp_path, parallel, monkeypatch):
    """The tweets as a text file (one per line), min_count 2 and 5, binary and count."""
    path = tmp_path / "air.txt"
    path.write_text("".join(t.replace("\n", " ").replace("\r", " ") + "\n"
                            for _, t in airline_texts[:5000]), encoding="utf-8")
    for options in ({}, {"min_count": 5, "weighting": "count"}):
        fast = _read(parallel, monkeypatch, path, True, **options)
        slow = _read(parallel, monkeypatch, path, False, **options)
        _same(fast, slow)
        assert fast.texts[3] == airline_texts[3][1].replace("\n", " ").replace("\r", " ").rstrip()


# ------------------------------------------------------------------ shared texts
@pytest.fixture
def write_log(parallel, monkeypatch, tmp_path):
    """Which ranges wrote their texts into the shared file and which sent them (a marker file
    per range, written by the worker)."""
    log = tmp_path / "ranges"
    log.mkdir()
    write = parallel._SharedTexts.write

    def spy(fd, byte_range, documents):
        out = write(fd, byte_range, documents)
        (log / str(byte_range[0])).write_text("sent" if out is documents else "shared")
        return out

    monkeypatch.setattr(parallel._SharedTexts, "write", staticmethod(spy))
    return lambda: sorted(p.read_text() for p in log.iterdir())


def _fds():
    return sorted(os.listdir("/proc/self/fd"))


def test_texts_longer_than_their_lines(airline_texts, tmp_path, parallel, monkeypatch,
                                       write_log):
    """``&nLt;`` decodes to six UTF-8 bytes (U+226A U+20D2) from five: the first 400 tweets,
    with 60 of them each, are longer than their lines, more than the first range's other lines
    make up for; that range is sent, the others shared. The texts and ids equal the serial
    read's and the decoded source (a mix of both ways, read in file order)."""
    path = tmp_path / "entities.jsonl"
    source = []
    with open(path, "w", encoding="utf-8") as f:
        for i, (tweet_id, text) in enumerate(airline_texts[:3000]):
            if i < 400:
                text = text + " " + "&nLt;" * 60
            source.append((tweet_id, html.unescape(text)))
            f.write(json.dumps({"id_str": tweet_id, "text": text}, ensure_ascii=False) + "\n")
    fast = _read(parallel, monkeypatch, path, True)
    assert write_log() == ["sent", "shared", "shared", "shared"]
    slow = _read(parallel, monkeypatch, path, False)
    _same(fast, slow)
    assert list(fast.texts) == [t.rstrip("\r\n") for _, t in source]
    assert list(fast.ids) == [i for i, _ in source]
    assert fast.texts[0].endswith("\u226a\u20d2" * 60)
    assert len(fast.texts[0].encode()) > len(json.dumps({"id_str": airline_texts[0][0],
                                                         "text": airline_texts[0][1] + " "
                                                         + "&nLt;" * 60}))


def test_every_range_too_long_and_none(airline_texts, tmp_path, parallel, monkeypatch,
                                       write_log):
    """Every range sent (every tweet entity-heavy), then a file where every range is shared."""
    path = tmp_path / "all.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for tweet_id, text in airline_texts[:1200]:
            f.write(json.dumps({"id": int(tweet_id), "text": text + " " + "&nGt;" * 60})
                        + "\n")
    fast = _read(parallel, monkeypatch, path, True)
    assert write_log() == ["sent"] * 4
    _same(fast, _read(parallel, monkeypatch, path, False))
    assert fast.texts[5].endswith("\u226b\u20d2" * 60)
    assert fast.ids[5] == str(int(airline_texts[5][0]))


def test_odd_bytes_in_json_lines_and_text(airline_texts, tmp_path, parallel, monkeypatch,
                                          write_log):
    """A BOM, CRLF and LF endings, JSON lone surrogates (stored as '?'), U+2028, escaped line
    ends and NUL in JSON; a text file with a BOM, CRLF, lone CR (a line end to Python's reader)
    and empty lines. Shared every range; the same texts, ids and rows as the serial read."""
    path = tmp_path / "odd.jsonl"
    with open(path, "wb") as f:
        f.write("\ufeff".encode())
        for i, (tweet_id, text) in enumerate(airline_texts[:3000]):
            line = json.dumps({"id_str": tweet_id, "text": text + " TAILMARK\u2028x\n\u0000"},
                              ensure_ascii=i % 3 == 0)
            if i % 7 == 0:
                line = line.replace("TAILMARK", "\\ud83d")
            f.write(line.encode() + (b"\r\n" if i % 2 else b"\n"))
    fast = _read(parallel, monkeypatch, path, True)
    assert write_log() == ["shared"] * 4
    slow = _read(parallel, monkeypatch, path, False)
    _same(fast, slow)
    assert fast.texts[0] == airline_texts[0][1] + " ?\u2028x\n\u0000"
    assert fast.texts[1] == airline_texts[1][1] + " TAILMARK\u2028x\n\u0000"
    assert list(fast.ids) == [i for i, _ in airline_texts[:3000]]

    text_path = tmp_path / "odd.txt"
    expected = []
    with open(text_path, "wb") as f:
        f.write("\ufeff".encode())
        for i, (_, text) in enumerate(airline_texts[:3000]):
            text = text.replace("\n", " ").replace("\r", " ")
            f.write(text.encode() + (b"\r\n" if i % 3 == 0 else b"\r" if i % 11 == 0 else b"\n"))
            expected.append(text.rstrip("\r\n"))
            if i % 13 == 0 and i % 11:  # (after a lone CR, LF would end that line)
                f.write(b"\n")
                expected.append("")
    fast = _read(parallel, monkeypatch, text_path, True)
    slow = _read(parallel, monkeypatch, text_path, False)
    _same(fast, slow)
    assert list(fast.texts) == expected and fast.S.shape[0] == len(expected)


_FAILURE = {}


def _failing_read_range(*args):
    """A worker of the parallel ingest (module level: the pool pickles it by name) that fails
    on the last byte range once its texts are written, as ``_FAILURE["how"]`` says."""
    failure, read_range, size, path = _FAILURE["how"]
    out = read_range(*args)
    if args[7][1] == size:  # the last byte range
        if failure == "input error":
            raise SpcaInputError(path, "a worker's bad line")
        os._exit(3)
    return out


@pytest.mark.parametrize("failure", ["input error", "worker exits"])
def test_a_failed_worker_falls_back_without_a_leak(airline_texts, tmp_path, parallel,
                                                   monkeypatch, failure):
    """The last range's worker raises SpcaInputError or exits after writing its texts: the
    serial read takes over, the same texts and rows, no file descriptor left open."""
    path = tmp_path / "air.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for tweet_id, text in airline_texts[:3000]:
            f.write(json.dumps({"id_str": tweet_id, "text": text}) + "\n")
    slow = _read(parallel, monkeypatch, path, False)
    size = os.path.getsize(path)
    monkeypatch.setitem(_FAILURE, "how", (failure, parallel._read_range, size, str(path)))
    monkeypatch.setattr(parallel, "_read_range", _failing_read_range)
    outcomes = []
    read_parallel = parallel._read_parallel
    monkeypatch.setattr(parallel, "_read_parallel",
                        lambda *a, **k: outcomes.append(read_parallel(*a, **k)) or outcomes[-1])
    before = _fds()
    fast = _read(parallel, monkeypatch, path, True)
    assert outcomes == [None]  # the parallel read gave up
    assert _fds() == before
    _same(fast, slow)


@pytest.mark.parametrize("refusal", [errno.ENOSYS, errno.EPERM])
def test_memfd_refused_sends_the_texts(airline_texts, tmp_path, parallel, monkeypatch, refusal):
    """``os.memfd_create`` present but refused (a kernel before 3.17, a seccomp sandbox): the
    texts go through the pool instead of ending read_corpus, the same as the serial read's."""
    path = tmp_path / "air.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for tweet_id, text in airline_texts[:2000]:
            f.write(json.dumps({"id_str": tweet_id, "text": text}) + "\n")
    slow = _read(parallel, monkeypatch, path, False)

    def refuse(*args, **kwargs):
        raise OSError(refusal, os.strerror(refusal))

    monkeypatch.setattr(os, "memfd_create", refuse)
    before = _fds()
    fast = _read(parallel, monkeypatch, path, True)
    _same(fast, slow)
    assert fast.texts[1234] == html.unescape(airline_texts[1234][1])
    assert _fds() == before


def test_shared_texts_keep_one_descriptor_while_alive(airline_texts, tmp_path, parallel,
                                                      monkeypatch):
    """A parallel read's texts live in the memfd's mapping, which holds one duplicated
    descriptor as long as the texts do; freed with them."""
    path = tmp_path / "air.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for tweet_id, text in airline_texts[:2000]:
            f.write(json.dumps({"id_str": tweet_id, "text": text}) + "\n")
    gc.collect()
    before = _fds()
    corpus = _read(parallel, monkeypatch, path, True)
    held = set(_fds()) - set(before)
    assert len(held) <= 1
    assert all("spca-texts" in os.readlink(f"/proc/self/fd/{fd}") for fd in held)
    assert corpus.texts[1999] == airline_texts[1999][1]
    del corpus
    gc.collect()
    assert _fds() == before


def test_documents_shown_after_a_parallel_read(airline_texts, tmp_path, parallel, monkeypatch):
    """``spca topics --documents 4`` on a parallel read: the same topics and top documents as
    the serial read, and each listed row's id and text are that line's."""
    path = tmp_path / "air.jsonl"
    lines = []
    with open(path, "w", encoding="utf-8", newline="") as f:
        for i, (tweet_id, text) in enumerate(airline_texts[:4000]):
            line = json.dumps({"id_str": tweet_id, "text": text}, ensure_ascii=i % 2 == 0)
            lines.append((tweet_id, text))
            f.write(line + ("\r\n" if i % 5 == 0 else "\n"))

    def topics(parallel_read):
        monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0 if parallel_read else 1 << 62)
        result = CliRunner().invoke(cli, ["topics", str(path), "-k", "6", "-c", "2", "--budget",
                                          "0", "--documents", "4", "--format", "json",
                                          "--quiet"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["components"]

    fast, slow = topics(True), topics(False)
    assert fast == slow
    for component in fast:
        assert len(component["top_documents"]) == 4
        for item in component["top_documents"]:
            assert (item["id"], item["text"]) == (lines[item["row"]][0],
                                                  html.unescape(lines[item["row"]][1]))
