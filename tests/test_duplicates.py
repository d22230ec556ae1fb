"""Topics of what people said, not of what one account repeated: exact duplicates (after the
key of :func:`spca_cli.corpus.duplicates.normalise`), retweets and the same text to another
@handle count once by default for tweets; ``--keep-duplicates`` keeps them, ``--near-duplicates``
also sets aside near copies. Checked on the multilingual fixtures and on a copy of the airline
tweets in which every tweet is repeated 1-5 times, built in tmp_path."""

from __future__ import annotations

import csv
import html
import json
import random
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spca_cli.corpus import load_corpus, read_corpus
from spca_cli.corpus.duplicates import exact_keys, near_duplicates, normalise
from spca_cli.corpus.read import read_texts

from _cli import assert_error, spca
from conftest import TEST_DATA

ML = TEST_DATA / "multilingual"
SMALL = ("-k", "3", "-c", "3", "--min-count", "1")


def topics_json(*args):
    result = spca("topics", *args, "--format", "json", "-q")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def words_of(doc):
    return [c["words"] for c in doc["components"]]


def _copy(text, rng, handles):
    """``text`` as a retweet, to another @handle, or with a link of its own."""
    how = rng.randrange(3)
    if how == 0:
        return f"RT @{rng.choice(handles)}: {text}"
    if how == 1 and re.match(r"@\w", text):
        return re.sub(r"^@\w+", "@" + rng.choice(handles), text)
    return f"{text} https://t.co/{rng.randrange(10 ** 9):x}"


def repeated_csv(source, path, text_column, seed=0):
    """``source`` (a CSV) written to ``path`` with every record followed by 1-5 copies of it
    (:func:`_copy` of its text, a new id); returns the number of copies."""
    rng = random.Random(seed)
    handles = ["bot_one", "AirFan22", "delta", "united", "news_desk"]
    with open(source, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, list(reader)
    copies = 0
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for n, row in enumerate(rows):
            writer.writerow(row)
            for i in range(rng.randint(1, 5)):
                copy = dict(row, **{text_column: _copy(row[text_column], rng, handles)})
                id_column = next((c for c in ("tweet_id", "id") if c in fields), None)
                if id_column:
                    copy[id_column] = f"9{n:06d}{i}"
                writer.writerow(copy)
                copies += 1
    return copies


# ---------------------------------------------------------------------- the key
def test_retweets_handles_links_case_and_entities_give_one_key():
    texts = ["Lost my bag again", "RT @someone: lost my bag   again",
             "@united Lost my bag again https://t.co/x1", "LOST MY BAG AGAIN @delta",
             "RT @a: RT @b: lost my bag again", "lost  my\nbag again"]
    assert {normalise(t) for t in texts} == {"lost my bag again"}
    assert len(set(exact_keys(texts).tolist())) == 1
    assert normalise("Tom &amp; Jerry") == normalise("tom & jerry") == "tom & jerry"
    # a different word, or the retweet's words inside the text, is another text
    others = ["lost my bags again", "lost my bag again rt @x: yes", "lost my bag"]
    assert len(set(exact_keys(texts[:1] + others).tolist())) == 4


def _key_hashes(texts):
    """The hash of each text's :func:`normalise` key, one text at a time."""
    from spca_cli.kernels.duplicates import hash_segments

    out = []
    for text in texts:
        data = np.frombuffer(normalise(text).encode("utf-8", "surrogatepass"), dtype=np.uint8)
        out.append(hash_segments(data, np.array([0]), np.array([len(data)]))[0])
    return np.array(out, dtype=np.uint64)


_PIECES = ["a", "b", "r", "t", " ", "@", ":", "/", ".", "w", "h", "http://", "https://", "www.",
           "RT @x:", "rt ", "\u00a0", "\u3000", "\u2028", "\x1c", "\t", "\n", "é", "İ", "&amp;",
           "&lt;", "\x00", "\u2019", "_", "9", "\ud83d"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join), min_size=1,
                max_size=5))
def test_the_hashing_kernel_hashes_the_key_normalise_gives(texts):
    assert np.array_equal(exact_keys(texts), _key_hashes(texts))


def test_the_hashing_kernel_on_the_airline_tweets(airline_texts):
    assert np.array_equal(exact_keys(airline_texts), _key_hashes(airline_texts))


def test_near_duplicates_are_judged_against_the_texts_kept_before_them():
    base = "the flight from boston was delayed four hours and nobody at the gate said why"
    near = base.replace("four", "five")  # 2 of 14 two-word shingles differ: Jaccard 12/16
    far = "my bag arrived on time and the crew was friendly all the way to denver today"
    out = near_duplicates([base, near, far, base + " again"], threshold=0.7)
    assert out.tolist() == [False, True, False, True]
    assert near_duplicates([base, near], threshold=0.8).tolist() == [False, False]


# ---------------------------------------------------------------------- multilingual fixtures
@pytest.mark.parametrize("name, column", [("tweets.jsonl", "text"), ("tweets.csv", "text")])
def test_repeated_multilingual_tweets_give_the_topics_of_the_originals(tmp_path, name, column):
    source = ML / name
    if name.endswith(".jsonl"):
        rng = random.Random(1)
        lines, copies = [], 0
        for line in source.read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            lines.append(line)
            for i in range(rng.randint(1, 5)):
                lines.append(json.dumps(dict(obj, id=obj["id"] * 10 + i,
                                             text=_copy(obj["text"], rng, ["bot", "fan"]))))
                copies += 1
        repeated = tmp_path / "repeated.jsonl"
        repeated.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        repeated = tmp_path / "repeated.csv"
        copies = repeated_csv(source, repeated, column, seed=1)
    original = topics_json(source, *SMALL)
    once = topics_json(repeated, *SMALL)
    assert words_of(once) == words_of(original)
    assert once["input"]["documents"] == original["input"]["documents"]
    assert once["input"]["duplicates_set_aside"] == {"exact": copies, "near": 0}
    kept = topics_json(repeated, *SMALL, "--keep-duplicates")
    assert kept["input"]["documents"] == original["input"]["documents"] + copies
    assert kept["input"]["duplicates_set_aside"] is None


def test_rows_and_ids_point_at_the_records_of_the_file(tmp_path):
    repeated = tmp_path / "repeated.csv"
    repeated_csv(ML / "tweets.csv", repeated, "text", seed=2)
    with open(repeated, newline="", encoding="utf-8") as fh:
        records = list(csv.DictReader(fh))
    assignments = tmp_path / "rows.csv"
    doc = topics_json(repeated, *SMALL, "--documents", "3", "--assignments", assignments)
    listed = [d for c in doc["components"] for d in c["top_documents"]]
    assert listed
    for item in listed:
        assert records[item["row"]]["tweet_id"] == item["id"]
        assert html.unescape(records[item["row"]]["text"]) == item["text"]
    with open(assignments, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 13  # one per tweet kept: the originals, which come first
    for row in rows:
        assert records[int(row["row"])]["tweet_id"] == row["id"]
        assert not row["id"].startswith("9")


def test_top_documents_never_show_one_text_twice(tmp_path):
    repeated = tmp_path / "repeated.csv"
    repeated_csv(ML / "tweets.csv", repeated, "text", seed=3)
    doc = topics_json(repeated, *SMALL, "--documents", "4", "--keep-duplicates")
    for component in doc["components"]:
        # every copy scores as its original: 2-6 documents of each score
        keys = [normalise(d["text"]) for d in component["top_documents"]]
        assert len(keys) == len(set(keys)) >= 2, keys


# ---------------------------------------------------------------------- the airline tweets
@pytest.fixture(scope="module")
def airline_texts():
    from conftest import shared_file

    with open(shared_file("twitter_us_airline_sentiment.csv"), newline="",
              encoding="utf-8") as fh:
        return [row["text"] for row in csv.DictReader(fh)]


@pytest.fixture(scope="module")
def airline_repeated(tmp_path_factory):
    from conftest import shared_file

    source = shared_file("twitter_us_airline_sentiment.csv")
    path = tmp_path_factory.mktemp("airline") / "repeated.csv"
    return source, path, repeated_csv(source, path, "text")


def test_repeated_airline_tweets_give_the_topics_of_the_originals(airline_repeated):
    source, repeated, copies = airline_repeated
    args = ("-c", "3", "--documents", "5")
    original = topics_json(source, *args)
    once = topics_json(repeated, *args)
    assert words_of(once) == words_of(original)
    # the file's own 364 repeats and every copy made here
    assert original["input"]["duplicates_set_aside"] == {"exact": 364, "near": 0}
    assert once["input"]["duplicates_set_aside"] == {"exact": 364 + copies, "near": 0}
    assert once["input"]["documents"] == original["input"]["documents"] == 14_640 - 364
    for component in once["components"]:
        keys = [normalise(d["text"]) for d in component["top_documents"]]
        assert len(keys) == len(set(keys)) == 5
    kept = topics_json(repeated, *args, "--keep-duplicates")
    assert kept["input"]["documents"] == 14_640 + copies
    assert kept["input"]["duplicates_set_aside"] is None
    assert kept["components"][0]["explained_variance"] > once["components"][0][
        "explained_variance"]
    for component in kept["components"]:  # the copies tie with their originals: listed once
        keys = [normalise(d["text"]) for d in component["top_documents"]]
        assert len(keys) == len(set(keys)) == 5


def test_the_table_header_says_what_was_set_aside(airline_repeated):
    source, _, _ = airline_repeated
    result = spca("topics", source, "-c", "1", "--documents", "0", "-q", "--near-duplicates")
    assert result.exit_code == 0, result.output
    assert ("(14262 documents, 364 exact and 14 near duplicates set aside, 5166 words)"
            in result.stdout.splitlines()[0])


# ---------------------------------------------------------------------- inputs and options
def test_text_lines_keep_duplicates_unless_asked(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("late flight again\nlate flight again\nlost bag again\n", encoding="utf-8")
    kept = read_corpus(path, min_count=1)
    assert kept.n_documents == 3 and kept.duplicates is None
    once = read_corpus(path, min_count=1, keep_duplicates=False)
    assert once.n_documents == 2 and once.duplicates == {"exact": 1, "near": 0}
    assert once.rows.tolist() == [0, 2] and list(once.texts) == ["late flight again",
                                                                  "lost bag again"]


def test_a_saved_corpus_keeps_its_rows_and_counts(tmp_path):
    repeated = tmp_path / "repeated.csv"
    copies = repeated_csv(ML / "tweets.csv", repeated, "text", seed=4)
    saved = tmp_path / "c.npz"
    result = spca("ingest", repeated, "-o", saved, "-q", "--min-count", "1")
    assert result.exit_code == 0, result.output
    corpus, direct = load_corpus(saved), read_corpus(repeated)
    assert corpus.duplicates == direct.duplicates == {"exact": copies, "near": 0}
    assert np.array_equal(corpus.rows, direct.rows)
    assert words_of(topics_json(saved, *SMALL)) == words_of(topics_json(repeated, *SMALL))


def test_texts_in_memory_fit_once_and_transform_every_text():
    from spca_cli.estimator import SparseTopics

    texts = [json.loads(line)["text"] for line in
             (ML / "tweets.jsonl").read_text(encoding="utf-8").splitlines()][:13]
    assert read_texts(texts + texts, min_count=1).duplicates == {"exact": 13, "near": 0}
    model = SparseTopics(k=3, n_components=2, ingest={"min_count": 1}).fit(texts + texts)
    assert model.result_.input["documents"] == 13
    assert model.transform(texts + texts).shape == (26, 2)


def test_duplicate_options_errors(tmp_path):
    csv_file = ML / "tweets.csv"
    assert_error(spca("topics", csv_file, "--keep-duplicates", "--near-duplicates", "-q"),
                 "--keep-duplicates and --near-duplicates exclude each other")
    bad = spca("topics", csv_file, "--near-duplicates", "1.5", "-q")
    assert bad.exit_code == 2 and "1.5 is not in the range 0<x<=1" in bad.output
    docword = TEST_DATA / "docword.tiny.txt"
    assert_error(spca("info", docword, "--near-duplicates", "-q"),
                 f"{docword}: uci input has no texts, so duplicates cannot be set aside "
                 "(--near-duplicates)")
    saved = tmp_path / "c.npz"
    assert spca("ingest", csv_file, "-o", saved, "-q").exit_code == 0
    assert_error(spca("topics", saved, "--keep-duplicates", "-q"),
                 "--keep-duplicates cannot apply to a corpus input")


def test_the_parallel_read_sets_aside_what_one_process_does(tmp_path, monkeypatch):
    """Duplicates across the byte ranges of the parallel ingest: hashed in the workers, decided
    when their parts merge, the same corpus as one process reads."""
    import spca_cli.corpus.read as read_module

    rng = random.Random(5)
    objs = [json.loads(line) for line in
            (ML / "tweets.jsonl").read_text(encoding="utf-8").splitlines()]
    lines = []
    for n in range(400):  # copies far from their originals, in other ranges
        obj = objs[n % len(objs)]
        text = obj["text"] if n < len(objs) else _copy(obj["text"], rng, ["bot", "fan"])
        lines.append(json.dumps(dict(obj, id=n, text=text)))
    path = tmp_path / "tweets.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(read_module, "usable_cores", lambda: 2)
    monkeypatch.setattr(read_module, "PARALLEL_MIN_BYTES", 1 << 62)
    serial = read_corpus(path, min_count=1)
    monkeypatch.setattr(read_module, "PARALLEL_MIN_BYTES", 0)
    pieces = []
    read_parallel = read_module._read_parallel
    monkeypatch.setattr(read_module, "_read_parallel",
                        lambda *a, **k: pieces.append(read_parallel(*a, **k)) or pieces[-1])
    parallel = read_corpus(path, min_count=1)
    assert len(pieces[0]) == 4  # two workers, two byte ranges each, each with its hashes
    assert sum(len(piece[5]) for piece in pieces[0]) == 400
    assert serial.duplicates == parallel.duplicates == {"exact": 400 - len(objs), "near": 0}
    assert serial.rows.tolist() == parallel.rows.tolist() == list(range(len(objs)))
    assert (serial.S != parallel.S).nnz == 0 and list(serial.texts) == list(parallel.texts)
    assert list(parallel.ids) == [str(n) for n in range(len(objs))]
