"""``spca topics --include/--exclude`` on the real airline tweets: the best 10-word topic
containing "refund" proved optimal, a topic without the first topic's top word, and the usage
errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from _cli import spca
from spca_cli.corpus import load_input
from spca_cli.corpus.core import input_gram


@pytest.fixture(scope="module")
def airline(tmp_path_factory):
    from conftest import shared_file

    csv = shared_file("twitter_us_airline_sentiment.csv")
    path = tmp_path_factory.mktemp("airline") / "airline.npz"
    result = spca("ingest", csv, "-o", path, "--quiet")
    assert result.exit_code == 0, result.output
    return path


def topics(*args):
    result = spca("topics", *args, "--format", "json", "--quiet")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def local_search(A, labels, word, k=10, pool=300):
    """The best k-word topic containing ``word`` that one-word swaps reach, over the ``pool``
    words of largest A_ii and the word's strongest partners: a simple, independent check."""
    D = A.diagonal()
    w = list(labels).index(word)
    partners = np.argsort(-A.columns([w])[:, 0], kind="stable")[:pool]
    words = np.union1d(np.union1d(np.argsort(-D, kind="stable")[:pool], partners), [w])
    sub = A.submatrix(words)
    at = int(np.searchsorted(words, w))

    def value(support):
        return float(np.linalg.eigvalsh(sub[np.ix_(support, support)])[-1])

    order = [int(i) for i in np.argsort(-sub[at], kind="stable") if i != at]
    support = [at] + order[:k - 1]
    best = value(support)
    improved = True
    while improved:
        improved = False
        for out in range(1, k):
            for cand in range(words.size):
                if cand in support:
                    continue
                trial = support[:out] + [cand] + support[out + 1:]
                v = value(trial)
                if v > best * (1 + 1e-12):
                    support, best, improved = trial, v, True
    return best


def test_exact_proves_the_best_topic_containing_refund(airline):
    doc = topics(airline, "--include", "refund", "-c", "1", "--solver", "exact")
    topic = doc["components"][0]
    assert "refund" in topic["words"] and len(topic["words"]) == 10
    assert topic["bound_source"] == "branch and bound: optimal"
    assert topic["solver_info"]["exact"] is True
    assert topic["certified_ratio"] == pytest.approx(1.0, abs=1e-9)
    assert doc["constraints"] == {"include": ["refund"], "exclude": []}
    assert any("containing it" in note for note in doc["notes"])
    A, labels, _ = input_gram(load_input(airline))
    assert topic["explained_variance"] >= local_search(A, labels, "refund") * (1 - 1e-12)


def test_every_topic_contains_the_included_words(airline):
    doc = topics(airline, "--include", "refund,bag", "-c", "3", "-k", "6")
    seen = []
    for topic in doc["components"]:
        assert {"refund", "bag"} <= set(topic["words"])
        assert 0 < topic["certified_ratio"] <= 1
        others = set(topic["words"]) - {"refund", "bag"}
        assert not others & set(seen)  # remove deflation: otherwise disjoint
        seen += others
    assert "total_upper_bound" not in doc


def test_exclude_leaves_the_first_topics_top_word_out(airline):
    first = topics(airline, "-c", "1")["components"][0]
    top = first["words"][0]
    doc = topics(airline, "-c", "2", "--exclude", top)
    assert doc["constraints"] == {"include": [], "exclude": [top]}
    for topic in doc["components"]:
        assert top not in topic["words"]
        assert 0 < topic["certified_ratio"] <= 1
    assert doc["components"][0]["explained_variance"] < first["explained_variance"]


@pytest.mark.parametrize("args, message", [
    (["--include", "refnd"], '--include: "refnd" is not in the vocabulary (did you mean '
                             '"refund"?)'),
    (["--exclude", "refnd"], '--exclude: "refnd" is not in the vocabulary (did you mean '
                             '"refund"?)'),
    (["--include", "refund,bag,seat", "-k", "2"], "--include names 3 words, more than -k 2"),
    (["--include", "refund", "--exclude", "refund"],
     '--include and --exclude both name "refund"'),
    (["--include", "refund", "--solver", "bipartite"],
     "--include needs a solver that finds one topic at a time, not bipartite, which finds its "
     "topics together"),
    (["--include", "refund,bag", "-k", "2", "-c", "2"],
     "--include names k = 2 words, so every topic would be the same; ask for one topic, a "
     "larger -k or --deflation projection"),
])
def test_usage_errors(airline, args, message):
    result = spca("topics", airline, *args)
    assert result.exit_code == 2
    assert result.output == f"Error: {message}\n"
