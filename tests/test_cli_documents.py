"""The documents behind each topic, through the CLI: top documents, coverage, --assignments,
saved corpora and UCI titles."""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from spca_cli.cli import cli
from spca_cli.corpus.duplicates import normalise
from spca_cli.corpus.tokenize import make_analyzer

SAMPLE = Path(__file__).resolve().parent.parent / "data_samples"
KOS = str(SAMPLE / "docword.kos-sample.txt.gz")
TITLES = str(SAMPLE / "titles.kos-sample.txt")


def invoke(args):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def topics_json(args):
    result = invoke(["topics", *args, "--format", "json", "--quiet"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# these tests are about the documents behind the topics, not the solver: a few topics without
# branch and bound (--budget 0) have the default run's first words in seconds, not a minute
QUICK = ["--budget", "0"]


def airline_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_top_documents_of_the_airline_tweets_contain_their_topic(airline_csv):
    doc = topics_json([str(airline_csv), "-k", "8", "-c", "2", *QUICK, "--documents", "4"])
    rows = airline_rows(airline_csv)
    tokens = make_analyzer(3, "english")  # the CLI's default tokenising, apostrophe rules included
    for comp in doc["components"]:
        top = comp["top_documents"]
        assert len(top) == 4
        for item in top:
            # every listed tweet contains one of the topic's words, and it is that CSV row
            assert set(tokens(item["text"])) & set(comp["words"]), (comp["words"], item)
            source = rows[item["row"]]
            assert item["id"] == source["tweet_id"]
            assert item["text"] == source["text"].replace("&amp;", "&").replace(
                "&gt;", ">").replace("&lt;", "<")
            assert item["time"][:10] == source["tweet_created"][:10]
        # best first; equal scores by row
        keys = [(-item["score"], item["row"]) for item in top]
        assert keys == sorted(keys)
        assert 0 < comp["coverage"]["documents"] <= doc["input"]["documents"]
        assert comp["coverage"]["share"] == pytest.approx(
            comp["coverage"]["documents"] / doc["input"]["documents"])
    first = doc["components"][0]
    # coverage counted by hand: tweets whose tokens include one of the words, each text once
    # (the first tweet of each key: the duplicates set aside)
    seen, by_hand = set(), 0
    for row in rows:
        key = normalise(html.unescape(row["text"]))
        if key not in seen:
            seen.add(key)
            by_hand += bool(set(tokens(row["text"])) & set(first["words"]))
    assert len(seen) == doc["input"]["documents"] == 14_276
    assert first["coverage"]["documents"] == by_hand


def test_assignments_have_one_row_per_document(airline_csv, tmp_path):
    out = tmp_path / "assign.csv"
    result = invoke(["topics", str(airline_csv), "-k", "6", "-c", "2", *QUICK, "--format",
                     "json", "--assignments", str(out), "--keep-duplicates"])
    assert result.exit_code == 0, result.output
    assert "14,640 documents -> " in result.stderr
    doc = json.loads(result.stdout)
    with open(out, newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    assert table[0] == ["row", "id", "time", "best_topic", "score_1", "score_2"]
    body = table[1:]
    assert len(body) == 14640 == doc["input"]["documents"]
    source = airline_rows(airline_csv)
    assert [r[0] for r in body] == [str(i) for i in range(14640)]
    assert [r[1] for r in body] == [r["tweet_id"] for r in source]
    scores = np.array([[float(x) for x in r[4:]] for r in body])
    for r, s in zip(body, scores):
        if s.max() > 0:
            assert int(r[3]) == int(np.argmax(s)) + 1
        else:
            assert r[3] == ""
    # the top documents' scores are the assignment scores
    for j, comp in enumerate(doc["components"]):
        for item in comp["top_documents"]:
            assert scores[item["row"], j] == pytest.approx(item["score"], abs=1e-12)
        assert comp["coverage"]["documents"] == int((scores[:, j] > 0).sum())
    # by default one row per tweet kept, each naming its record of the file
    once = invoke(["topics", str(airline_csv), "-k", "6", "-c", "2", *QUICK, "--format",
                   "json", "--assignments", str(out)])
    assert "14,276 documents -> " in once.stderr
    with open(out, newline="", encoding="utf-8") as f:
        body = list(csv.reader(f))[1:]
    assert len(body) == 14_276
    assert all(source[int(r[0])]["tweet_id"] == r[1] for r in body)


def test_a_saved_corpus_keeps_texts_and_ids(airline_csv, tmp_path):
    saved = tmp_path / "airline.npz"
    assert invoke(["ingest", str(airline_csv), "-o", str(saved), "--quiet"]).exit_code == 0
    args = ["-k", "6", "-c", "2", *QUICK]
    from_csv = topics_json([str(airline_csv), *args])
    from_npz = topics_json([str(saved), *args])
    for a, b in zip(from_csv["components"], from_npz["components"]):
        assert a["top_documents"] == b["top_documents"] and a["coverage"] == b["coverage"]
    # filtering a saved corpus keeps each text with its row
    day = topics_json([str(saved), *args, "--since", "2015-02-23T08:00:00Z",
                       "--until", "2015-02-24T07:59:59Z", "--documents", "5"])
    source = {r["tweet_id"]: r for r in airline_rows(airline_csv)}
    for comp in day["components"]:
        for item in comp["top_documents"]:
            assert item["time"].startswith("2015-02-23")
            assert source[item["id"]]["text"].startswith(item["text"][:20])


def test_uci_titles_are_the_documents_text(tmp_path):
    doc = topics_json([KOS, "-k", "8", "-c", "2", *QUICK, "--titles", TITLES])
    titles = Path(TITLES).read_text(encoding="utf-8").splitlines()
    for comp in doc["components"]:
        for item in comp["top_documents"]:
            assert item["id"] == str(item["row"] + 1)
            assert item["text"] == titles[item["row"]]
            assert item["time"] is None
    assert doc["components"][0]["top_documents"][0]["text"].startswith("KOS post 201: bush")
    # ingest keeps the titles in the saved corpus
    saved = tmp_path / "kos.npz"
    assert invoke(["ingest", KOS, "--titles", TITLES, "-o", str(saved), "-q"]).exit_code == 0
    again = topics_json([str(saved), "-k", "8", "-c", "2", *QUICK])
    assert again["components"][0]["top_documents"] == doc["components"][0]["top_documents"]
    # without titles a UCI document is shown by its docID only
    plain = topics_json([KOS, "-k", "8", "-c", "1", *QUICK])
    assert plain["components"][0]["top_documents"][0]["text"] is None
    assert plain["components"][0]["top_documents"][0]["id"] == "201"
    table = invoke(["topics", KOS, "-k", "8", "-c", "1", *QUICK, "--titles", TITLES,
                    "-q"]).stdout
    assert "    19.13  id 201  KOS post 201: bush, base, voters, campaign, swing" in table


def test_bad_titles_and_misplaced_options_are_one_line_errors(tmp_path, airline_csv):
    short = tmp_path / "titles.txt"
    short.write_text("one\ntwo\n", encoding="utf-8")
    out = tmp_path / "out.json"
    result = invoke(["topics", KOS, "--titles", str(short), "-o", str(out)])
    assert result.exit_code == 1
    assert result.output == (f"Error: {short}: has 2 titles but {KOS} has 300 documents "
                             "(one title per line, in document order)\n")
    assert not out.exists()
    result = invoke(["topics", KOS, "--titles", str(tmp_path / "none.txt")])
    assert result.exit_code == 1 and "none.txt: file not found" in result.output
    result = invoke(["topics", str(airline_csv), "--titles", TITLES])
    assert result.exit_code == 1
    assert result.output.startswith("Error: --titles applies to UCI docword files only")
    np.save(tmp_path / "A.npy", np.eye(6))
    assign = tmp_path / "a.csv"
    result = invoke(["topics", str(tmp_path / "A.npy"), "--solver", "threshold", "-k", "2",
                     "--assignments", str(assign)])
    assert result.exit_code == 1
    assert "--assignments needs documents" in result.output and not assign.exists()
    result = invoke(["topics", KOS, "--assignments", str(tmp_path / "missing" / "a.csv")])
    assert result.exit_code == 1
    assert result.output.strip().endswith("the folder to write into does not exist")


def test_documents_zero_and_output_that_is_not_a_terminal(airline_csv):
    doc = topics_json([str(airline_csv), "-k", "6", "-c", "2", *QUICK, "--documents", "0"])
    assert all("top_documents" not in c and "coverage" in c for c in doc["components"])
    # to a pipe (CliRunner is not a terminal) nothing is wrapped at 100 columns or cut
    text = invoke(["topics", str(airline_csv), "-k", "6", "-c", "2", *QUICK, "-q"]).stdout
    longest = max(text.splitlines(), key=len)
    assert len(longest) > 100 and not longest.endswith("\u2026")
    assert "var ratio: explained / lambda_i, what the i-th eigenvector explains" in text
