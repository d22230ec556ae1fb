"""The real corpora of ../shared/data (skipped when absent): the airline tweets (CSV) and
UCI KOS, through the library and through ``spca info``."""

from __future__ import annotations

import csv
import gzip
import json
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner

from spca_cli.cli import cli
from spca_cli.corpus import format_time, load_input, read_corpus


@pytest.fixture(scope="module")
def airline(request):
    from conftest import shared_file

    return read_corpus(shared_file("twitter_us_airline_sentiment.csv"))


@pytest.fixture(scope="module")
def kos():
    from conftest import shared_file

    shared_file("vocab.kos.txt")
    return read_corpus(shared_file("docword.kos.txt.gz"))


def test_airline_records_dates_and_words(airline, airline_csv):
    # 364 of the 14,640 tweets repeat one read before them once lower-cased and without their
    # @handles and links (36 identical rows; "Thanks!" to another airline, ...): set aside
    assert airline.n_documents == 14_276
    assert airline.duplicates == {"exact": 364, "near": 0}
    with open(airline_csv, newline="", encoding="utf-8") as f:
        texts = [row["text"] for row in csv.DictReader(f)]
    assert len(set(texts)) < len(texts)
    assert read_corpus(airline_csv, keep_duplicates=True).n_documents == len(texts) == 14_640
    local_days = {format_time(t, o)[:10] for t, o in zip(airline.times, airline.tz_offsets)}
    assert min(local_days) == "2015-02-16" and max(local_days) == "2015-02-24"
    assert set(airline.tz_offsets.tolist()) == {-8 * 3600}
    df = np.asarray((airline.S > 0).sum(axis=0)).ravel()
    top = set(airline.vocabulary[np.argsort(-df)[:30]].tolist())
    assert {"flight", "cancelled", "service"} <= top
    assert "amp" not in airline.vocabulary  # &amp; was unescaped
    assert airline.options["time_column"] == "tweet_created"


def test_airline_matches_the_published_matrix(airline_csv, airline_mtx):
    """matrices/airline.mtx was built with the 2013 recipe (``--stopwords english-2013``) but
    without unescaping HTML entities, so it has one extra word, 'amp'; everything else must
    agree entry for entry."""
    airline = read_corpus(airline_csv, stopwords="english-2013", keep_duplicates=True)
    assert airline.n_words == 5373
    published = load_input(airline_mtx)
    keep = np.flatnonzero(published.vocabulary != "amp")
    assert published.vocabulary[keep].tolist() == airline.vocabulary.tolist()
    assert (published.S[:, keep] != airline.S).nnz == 0


def test_kos_sizes_and_top_words(kos, kos_docword):
    assert (kos.n_documents, kos.n_words, kos.nnz) == (3430, 6906, 353_160)
    assert kos.S.sum() == 467_714  # counts kept as they are
    # expected top words, from the raw file without the library
    with gzip.open(kos_docword, "rt") as f:
        lines = f.read().split("\n")[3:]
    df = Counter(int(line.split()[1]) for line in lines if line)
    vocab = (kos_docword.parent / "vocab.kos.txt").read_text().split("\n")
    expected = [vocab[w - 1] for w, _ in sorted(df.items(), key=lambda kv: (-kv[1], kv[0]))[:10]]
    ours = np.asarray((kos.S > 0).sum(axis=0)).ravel()
    assert kos.vocabulary[np.argsort(-ours, kind="stable")[:10]].tolist() == expected


def test_info_json_on_real_corpora(kos_docword, airline_csv):
    runner = CliRunner()
    result = runner.invoke(cli, ["info", str(kos_docword), "--format", "json"],
                           catch_exceptions=False)
    info = json.loads(result.stdout)
    assert (info["kind"], info["documents"], info["words"], info["nonzeros"]) == \
        ("uci", 3430, 6906, 353_160)
    assert info["first_time"] is None and info["last_time"] is None
    assert info["top_words"][0] == {"word": "bush", "documents": 2123}
    assert len(info["eigenvalues"]) == 5 and info["eigenvalues"] == sorted(info["eigenvalues"],
                                                                          reverse=True)

    result = runner.invoke(cli, ["info", str(airline_csv), "--format", "json", "--top", "20"],
                           catch_exceptions=False)
    info = json.loads(result.stdout)
    # 5,373 words under the 2013 recipe (below); fewer by default, where the contractions of
    # stop words are gone and possessives merge with their words
    assert (info["kind"], info["documents"]) == ("csv", 14_276)
    assert info["duplicates_set_aside"] == {"exact": 364, "near": 0}
    assert 5000 < info["words"] < 5373
    assert info["first_time"] == "2015-02-16T23:36:05-08:00"
    assert info["last_time"] == "2015-02-24T11:53:37-08:00"
    assert info["top_words"][0]["word"] == "flight"
    assert {"flight", "cancelled", "service"} <= {w["word"] for w in info["top_words"]}
    assert info["eigenvalues"][0] > info["eigenvalues"][1] > 0


def test_airline_day_window(airline_csv):
    window = dict(since="2015-02-17T00:00:00-08:00", until="2015-02-17T23:59:59-08:00")
    day = read_corpus(airline_csv, keep_duplicates=True, **window)
    assert day.n_documents == 1408  # tweets per local day, PROVENANCE.md
    once = read_corpus(airline_csv, **window)  # duplicates within the day set aside
    assert once.n_documents == 1408 - once.duplicates["exact"] == 1398


def test_bundled_sample():
    from conftest import REPO

    sample = read_corpus(REPO / "data_samples" / "docword.kos-sample.txt.gz")
    assert (sample.n_documents, sample.n_words) == (300, 6906)


def test_kos_mtx_is_the_same_matrix(kos, kos_mtx):
    published = load_input(kos_mtx)  # vocabulary from kos.vocab.txt beside it
    assert published.kind == "mtx"
    assert published.vocabulary.tolist() == kos.vocabulary.tolist()
    assert (published.S != kos.S).nnz == 0
