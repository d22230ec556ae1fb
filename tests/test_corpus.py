"""The corpus layer on tiny inputs: one contract for every reader, the tokenising recipe,
times, filters, weighting, and saving/loading."""

from __future__ import annotations

import gzip
import json
import shutil

import numpy as np
import pytest
import scipy.sparse as sp

from spca_cli.corpus import (Corpus, MatrixInput, load_corpus, load_input, read_corpus,
                             save_corpus)
from spca_cli.corpus import tweets
from spca_cli.corpus.times import format_time, parse_timestamps
from spca_cli.corpus.tokenize import SEPARATOR, make_analyzer
from spca_cli.errors import SpcaInputError, SpcaNoDocumentsError, SpcaParameterError

from conftest import TEST_DATA

# The tiny corpus of tests/data in every format: 4 documents, the second one empty.
EXPECTED_VOCABULARY = ["apple", "banana", "cherry", "date"]
EXPECTED_S = np.array([[2, 1, 0, 0], [0, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]], dtype=float)
# keep every word and count it, so that raw text and the UCI file must give the same S
AS_IS = dict(min_count=1, min_length=1, stopwords="none", weighting="count")
TINY = {"uci": "docword.tiny.txt", "csv": "tiny.csv", "jsonl": "tiny.jsonl", "text": "tiny.txt"}


def _gzip(src, dst):
    with open(src, "rb") as fin, gzip.open(dst, "wb") as fout:
        fout.write(fin.read())
    return dst


@pytest.fixture(params=["uci", "csv", "jsonl", "text", "uci.gz", "csv.gz", "jsonl.gz", "text.gz"])
def tiny_input(request, tmp_path):
    kind, _, gz = request.param.partition(".")
    src = TEST_DATA / TINY[kind]
    if not gz:
        return kind, src
    shutil.copy(TEST_DATA / "vocab.tiny.txt", tmp_path / "vocab.tiny.txt")
    return kind, _gzip(src, tmp_path / (src.name + ".gz"))


def test_every_reader_gives_the_same_matrix(tiny_input):
    kind, path = tiny_input
    corpus = read_corpus(path, **AS_IS)
    assert corpus.kind == kind
    assert corpus.path == str(path)
    assert corpus.vocabulary.tolist() == EXPECTED_VOCABULARY
    assert isinstance(corpus.S, sp.csr_array)
    assert corpus.S.dtype == np.float64
    np.testing.assert_array_equal(corpus.S.toarray(), EXPECTED_S)
    assert (corpus.n_documents, corpus.n_words, corpus.nnz) == (4, 4, 5)
    if kind in ("csv", "jsonl"):
        assert corpus.times.dtype == np.int64 and corpus.tz_offsets.dtype == np.int32
        assert format_time(corpus.times[0], corpus.tz_offsets[0]).startswith("2015-02-1")
    else:
        assert corpus.times is None and corpus.tz_offsets is None


def test_times_keep_their_offsets():
    csv_corpus = read_corpus(TEST_DATA / "tiny.csv")
    jsonl_corpus = read_corpus(TEST_DATA / "tiny.jsonl")
    # record 1 is the same instant in both files, written in two time zones
    assert csv_corpus.times[0] == jsonl_corpus.times[0]
    assert format_time(csv_corpus.times[0], csv_corpus.tz_offsets[0]) == "2015-02-17T11:53:37-08:00"
    assert format_time(jsonl_corpus.times[0], jsonl_corpus.tz_offsets[0]) == \
        "2015-02-17T19:53:37+00:00"


def test_chunks_give_the_same_matrix_as_one_pass(monkeypatch, tmp_path):
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta"]
    lines = [" ".join(rng.choice(words, size=rng.integers(0, 6))) for _ in range(101)]
    path = tmp_path / "docs.txt"
    path.write_text("\n".join(lines) + "\n")
    whole = read_corpus(path, **AS_IS)
    monkeypatch.setattr(tweets, "CHUNK_DOCUMENTS", 7)
    chunked = read_corpus(path, **AS_IS)
    expected = sorted(set(" ".join(lines).split()))
    assert whole.vocabulary.tolist() == chunked.vocabulary.tolist() == expected
    np.testing.assert_array_equal(whole.S.toarray(), chunked.S.toarray())
    assert chunked.S.has_sorted_indices


def test_raw_text_defaults_follow_the_2013_recipe(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("The flight was late\nflight LATE again and again\nno words here\n")
    corpus = read_corpus(path)
    # 'the', 'was', 'and', 'again', 'here', 'no' are stop words; min-count 2 drops singletons
    assert corpus.vocabulary.tolist() == ["flight", "late"]
    np.testing.assert_array_equal(corpus.S.toarray(), [[1, 1], [1, 1], [0, 0]])  # binary
    assert corpus.options["weighting"] == "binary" and corpus.options["min_count"] == 2


@pytest.mark.parametrize("text, tokens", [
    ("Thanks @united! http://t.co/abc #Travel", ["thanks", "travel"]),
    ("www.example.com/x and https://a.b?c=d stay out", ["and", "stay", "out"]),
    ("Don't lose my bag's tag", ["don't", "lose", "bag's", "tag"]),
    ("flights' A320 2015 abc123 x1y", ["flights", "a320", "abc123", "x1y"]),
    ("#hash#tags e-mail", ["hash", "tags", "mail"]),
    ("café São", ["café", "são"]),
])
def test_tokenizer(text, tokens):
    assert make_analyzer(3)(text) == tokens


def test_dropped_parts_never_fuse_words():
    assert make_analyzer(1)("a@b c") == ["a", "c"]
    assert make_analyzer(1)("see@you http://x.y/z,now") == ["see"]  # a URL runs to whitespace
    assert make_analyzer(3)("one http://t.co/x two") == ["one", "two"]


def test_documents_holding_the_separator_stay_apart(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(f'text\n"alpha{SEPARATOR}beta"\ngamma\n')
    corpus = read_corpus(path, **AS_IS)
    assert corpus.n_documents == 2
    np.testing.assert_array_equal(corpus.S.toarray(), [[1, 1, 0], [0, 0, 1]])


def test_html_entities_are_unescaped_in_tweets(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('text\n"Fish &amp; chips &lt;3"\n"fish &amp; chips"\n')
    corpus = read_corpus(path, min_count=1)
    assert corpus.vocabulary.tolist() == ["chips", "fish"]  # no 'amp', no 'lt'


def test_min_length_and_stopword_file(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("ox cat dog emu\nox cat dog emu\n")
    stop = tmp_path / "stop.txt"
    stop.write_text("DOG\n\n")
    corpus = read_corpus(path, min_length=2, stopwords=str(stop))
    assert corpus.vocabulary.tolist() == ["cat", "emu", "ox"]


def test_weightings(tmp_path):
    path = TEST_DATA / "tiny.txt"
    count = read_corpus(path, min_count=1, min_length=1, stopwords="none", weighting="count")
    binary = read_corpus(path, min_count=1, min_length=1, stopwords="none", weighting="binary")
    tfidf = read_corpus(path, min_count=1, min_length=1, stopwords="none", weighting="tfidf")
    np.testing.assert_array_equal(count.S.toarray(), EXPECTED_S)
    np.testing.assert_array_equal(binary.S.toarray(), EXPECTED_S > 0)
    norms = np.sqrt(tfidf.S.multiply(tfidf.S).sum(axis=1))
    np.testing.assert_allclose(norms, [1, 0, 1, 1])
    assert (tfidf.S.toarray() > 0).tolist() == (EXPECTED_S > 0).tolist()


def test_uci_keeps_vocabulary_unless_filters_are_given():
    corpus = read_corpus(TEST_DATA / "docword.tiny.txt")
    assert corpus.options["weighting"] == "count" and corpus.n_words == 4
    filtered = read_corpus(TEST_DATA / "docword.tiny.txt", min_count=2, weighting="binary")
    assert filtered.vocabulary.tolist() == ["banana"]
    np.testing.assert_array_equal(filtered.S.toarray().ravel(), [1, 0, 1, 0])


def test_since_until_and_contains():
    path = TEST_DATA / "tiny.csv"
    day = read_corpus(path, since="2015-02-18", until="2015-02-18", **AS_IS)
    assert day.n_documents == 1 and day.vocabulary.tolist() == ["banana", "cherry"]
    late = read_corpus(path, since="2015-02-18T09:00:00-08:00", **AS_IS)
    assert late.n_documents == 2
    early = read_corpus(path, until="2015-02-17T12:00:00-08:00", **AS_IS)  # inclusive
    assert early.n_documents == 2
    banana = read_corpus(path, contains=["Banana"], **AS_IS)
    assert banana.n_documents == 2
    either = read_corpus(path, contains=["date", "cherry"], **AS_IS)
    assert either.n_documents == 2
    np.testing.assert_array_equal(either.times, read_corpus(path, **AS_IS).times[[2, 3]])


def test_since_later_than_until_is_an_error():
    message = "^since 2015-02-20 is later than until 2015-02-18$"
    with pytest.raises(SpcaParameterError, match=message):
        read_corpus(TEST_DATA / "tiny.csv", since="2015-02-20", until="2015-02-18")


def test_filters_that_leave_nothing():
    with pytest.raises(SpcaNoDocumentsError, match="no documents left after contains zebra$"):
        read_corpus(TEST_DATA / "tiny.csv", contains=["zebra"], **AS_IS)
    with pytest.raises(SpcaNoDocumentsError, match="no documents left after since/until$"):
        read_corpus(TEST_DATA / "tiny.jsonl", since="2020-01-01")


def test_exact_duplicate_tweets_count_once_unless_kept(tmp_path):
    path = tmp_path / "dup.jsonl"
    row = {"text": "same words here", "created_at": "2015-02-17T10:00:00Z"}
    path.write_text("\n".join(json.dumps(row) for _ in range(3)) + "\n")
    once = read_corpus(path, min_count=1)
    assert once.n_documents == 1 and once.duplicates == {"exact": 2, "near": 0}
    kept = read_corpus(path, min_count=1, keep_duplicates=True)
    assert kept.n_documents == 3 and kept.duplicates is None and kept.rows is None


def test_several_files_are_one_corpus(tmp_path, caplog):
    copy = tmp_path / "copy.csv"  # another file holding the same tweets
    shutil.copy(TEST_DATA / "tiny.csv", copy)
    corpus = read_corpus([TEST_DATA / "tiny.csv", copy], **AS_IS, keep_duplicates=True)
    assert corpus.n_documents == 8 and len(corpus.times) == 8
    np.testing.assert_array_equal(corpus.S.toarray(), np.vstack([EXPECTED_S, EXPECTED_S]))
    # by default the second file's tweets are the first's again: they count once
    once = read_corpus([TEST_DATA / "tiny.csv", copy], **AS_IS)
    np.testing.assert_array_equal(once.S.toarray(), EXPECTED_S)
    assert once.duplicates == {"exact": 4, "near": 0} and once.rows.tolist() == [0, 1, 2, 3]
    with pytest.raises(SpcaParameterError, match="all inputs must be of one kind"):
        read_corpus([TEST_DATA / "tiny.csv", TEST_DATA / "tiny.txt"])
    # one file named twice (here by a link too) is read once, with a warning
    link = tmp_path / "link.csv"
    link.symlink_to(TEST_DATA / "tiny.csv")
    with caplog.at_level("WARNING"):
        twice = read_corpus([TEST_DATA / "tiny.csv", link, TEST_DATA / "tiny.csv"], **AS_IS,
                            keep_duplicates=True)
    assert twice.n_documents == 4
    assert f"{link}, {TEST_DATA / 'tiny.csv'} named more than once: read once" in caplog.text


def test_jsonl_skips_objects_without_text(tmp_path):
    path = tmp_path / "stream.jsonl"
    path.write_text('{"delete": {"id": 1}}\n\n'
                    '{"text": "hello world", "created_at": "2015-02-17T10:00:00Z"}\n'
                    '{"extended_tweet": {"full_text": "hello there world"}, '
                    '"text": "hello…", "created_at": "2015-02-17T11:00:00Z"}\n')
    corpus = read_corpus(path, min_count=1, stopwords="none")
    assert corpus.n_documents == 2
    assert corpus.vocabulary.tolist() == ["hello", "there", "world"]


def test_parse_timestamps_formats():
    strings = ["Wed Feb 18 09:41:04 +0000 2015", "2015-02-18 01:41:04 -0800",
               "2015-02-18T09:41:04Z", "2015-02-18T09:41:04.250+00:00", "2015-02-18T15:11:04+0530",
               "2015-02-18 09:41:04"]
    epoch, offset = parse_timestamps(strings)
    assert len(set(epoch.tolist())) == 1
    assert offset.tolist() == [0, -28800, 0, 0, 19800, 0]
    epoch, _ = parse_timestamps(["2016-02-29", "1970-01-01T00:00:00Z"])
    assert epoch.tolist() == [1456704000, 0]


def test_save_and_load_round_trip(tmp_path):
    corpus = read_corpus(TEST_DATA / "tiny.jsonl", **AS_IS)
    out = tmp_path / "c.npz"
    save_corpus(corpus, out)
    back = load_corpus(out)
    assert back.kind == "corpus" and back.path == str(out)
    np.testing.assert_array_equal(back.S.toarray(), corpus.S.toarray())
    assert back.vocabulary.tolist() == corpus.vocabulary.tolist()
    np.testing.assert_array_equal(back.times, corpus.times)
    np.testing.assert_array_equal(back.tz_offsets, corpus.tz_offsets)
    assert back.options["source_kind"] == "jsonl" and back.options["weighting"] == "count"
    assert [p.name for p in tmp_path.iterdir()] == ["c.npz"]  # no temporary file left
    no_times = read_corpus(TEST_DATA / "tiny.txt")
    save_corpus(no_times, out)
    assert load_corpus(out).times is None


def test_load_input_every_kind(tmp_path):
    A = np.array([[2.0, 1.0], [1.0, 2.0]])
    np.save(tmp_path / "a.npy", A)
    (tmp_path / "labels.txt").write_text("x\ny\n")
    m = load_input(tmp_path / "a.npy", labels=str(tmp_path / "labels.txt"))
    assert isinstance(m, MatrixInput) and m.labels.tolist() == ["x", "y"] and m.kind == "npy"
    assert load_input(str(tmp_path / "a.npy")).labels.tolist() == ["0", "1"]

    import scipy.io
    scipy.io.mmwrite(tmp_path / "s.mtx", sp.coo_array(EXPECTED_S))
    mtx = load_input(tmp_path / "s.mtx")
    assert isinstance(mtx, Corpus) and mtx.kind == "mtx"
    assert mtx.vocabulary.tolist() == ["0", "1", "2", "3"]
    np.testing.assert_array_equal(mtx.S.toarray(), EXPECTED_S)
    (tmp_path / "s.vocab.txt").write_text("\n".join(EXPECTED_VOCABULARY) + "\n")
    assert load_input(tmp_path / "s.mtx").vocabulary.tolist() == EXPECTED_VOCABULARY

    save_corpus(read_corpus(TEST_DATA / "tiny.csv", **AS_IS), tmp_path / "c.npz")
    saved = load_input(tmp_path / "c.npz")
    assert saved.kind == "corpus" and saved.n_documents == 4
    day = load_input(tmp_path / "c.npz", since="2015-02-18", contains=["cherry"])
    assert day.n_documents == 1
    with pytest.raises(SpcaParameterError, match="built with weighting count"):
        load_input(tmp_path / "c.npz", weighting="binary")
    with pytest.raises(SpcaParameterError, match="^labels applies to .npy and .mtx"):
        load_input(TEST_DATA / "tiny.txt", labels="x.txt")
    with pytest.raises(SpcaParameterError, match="cannot apply to a matrix input"):
        load_input(tmp_path / "a.npy", min_count=3)


def test_progress_reports_every_byte(tmp_path):
    for src in (TEST_DATA / "tiny.csv", TEST_DATA / "docword.tiny.txt"):
        seen = []
        read_corpus(src, progress=seen.append)
        assert sum(seen) == src.stat().st_size
    gz = _gzip(TEST_DATA / "tiny.jsonl", tmp_path / "tiny.jsonl.gz")
    seen = []
    read_corpus(gz, progress=seen.append)
    assert sum(seen) == gz.stat().st_size  # bytes on disk, compressed


def test_missing_stopword_file():
    from spca_cli.errors import SpcaInputError

    with pytest.raises(SpcaInputError, match="nope.txt: stop word file not found"):
        read_corpus(TEST_DATA / "tiny.txt", stopwords="nope.txt")


@pytest.mark.parametrize("name", ["counts.mtx", "saved.npz", "gram.npy"])
def test_read_corpus_names_load_input_for_a_matrix_file(tmp_path, name):
    """read_corpus reads text and UCI corpora; a matrix or saved corpus gets one clear message
    (it raised a KeyError) pointing to load_input, which reads every input kind."""
    path = tmp_path / name
    path.write_bytes(b"not read")
    kind = {"mtx": "mtx", "npz": "corpus", "npy": "npy"}[name.rsplit(".", 1)[1]]
    with pytest.raises(SpcaInputError) as info:
        read_corpus(path)
    assert str(info.value) == (f"{path}: is a {kind} file, not text or a UCI corpus to read: "
                               "load it with spca_cli.load_input")
