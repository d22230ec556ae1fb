"""Every solver from the command line on the real corpora of ../shared/data, as users run it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from spca_cli.cli import cli

PUBLISHED_FIRST = {"airline": 3821.31, "kos": 73173.24}
PUBLISHED_TOTAL_5 = {"airline": 7359.19, "kos": 132666.68}


def topics(args):
    result = CliRunner().invoke(cli, ["topics", *args, "--format", "json", "--quiet"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def airline_by_rank(request):
    from conftest import shared_file

    csv = shared_file("twitter_us_airline_sentiment.csv")
    # the 2013 recipe exactly, every tweet kept as the published matrix keeps them, so the first
    # component is comparable with the published matrix's; two components (the certificates of
    # components 3-5 cost a minute and are tested in test_cli_certificates.py)
    return {rank: topics([str(csv), "--solver", "spannogram", "--rank", str(rank), "-k", "10",
                          "-c", "2", "--stopwords", "english-2013", "--keep-duplicates"])
            for rank in (1, 2, 3)}


def test_spannogram_on_the_airline_tweets(airline_by_rank):
    """The 2013 paper's experiment on real tweets: sensible words, rank 2-3 >= rank 1, every
    certificate in (0, 1], and the best published first component reached."""
    first = {rank: doc["components"][0] for rank, doc in airline_by_rank.items()}
    for rank in (2, 3):
        assert first[rank]["explained_variance"] >= first[1]["explained_variance"]
        total = airline_by_rank[rank]["total_explained_variance"]
        assert total >= airline_by_rank[1]["total_explained_variance"] * 0.99
    assert {"flight", "cancelled", "delayed"} <= set(first[2]["words"])
    all_words = {w for doc in airline_by_rank.values() for c in doc["components"] for w in c["words"]}
    assert {"service", "customer"} <= all_words
    # the CSV vocabulary differs from the published matrix by one word ('amp'), not on PC1
    assert first[2]["explained_variance"] == pytest.approx(PUBLISHED_FIRST["airline"], abs=0.01)
    for doc in airline_by_rank.values():
        for comp in doc["components"]:
            assert 0 < comp["certified_ratio"] <= 1
            assert 0 < comp["cumulative_ratio"] <= 1
            assert len(set(comp["words"])) == 10
        assert doc["seconds"]["solve"] >= 0 and "eigen" in doc["seconds"]
    solver_info = airline_by_rank[3]["components"][0]["solver_info"]
    assert solver_info["exact"] and solver_info["surviving_words"] < 500


@pytest.mark.parametrize("solver", [["tpower"], ["greedy"], ["tpower", "--init", "spannogram"]])
def test_first_component_matches_the_published_best(solver, kos_mtx, airline_mtx):
    """The spannogram is exact on A_d, not on A: on KOS its rank-3 answer (73144.96) is a hair
    below the best known, and TPower started from it reaches the best."""
    for name, path in (("kos", kos_mtx), ("airline", airline_mtx)):
        doc = topics([str(path), "--solver", *solver, "--rank", "3", "-k", "10", "-c", "1"])
        assert doc["components"][0]["explained_variance"] >= PUBLISHED_FIRST[name] - 0.01


def test_bipartite_beats_the_published_disjoint_total(kos_mtx):
    doc = topics([str(kos_mtx), "--solver", "bipartite", "-k", "10", "-c", "5", "--rank", "4",
                  "--samples", "500", "--jobs", "2"])
    words = [set(c["words"]) for c in doc["components"]]
    assert all(len(w) == 10 for w in words)
    assert len(set().union(*words)) == 50  # disjoint
    assert doc["total_explained_variance"] >= PUBLISHED_TOTAL_5["kos"]
    assert doc["total_explained_variance"] <= doc["total_upper_bound"]
    assert 0 < doc["total_certified_ratio"] <= 1
    assert doc["params"]["deflation"] is None


def test_nonneg_on_tweets_bag_of_words_and_a_mixed_sign_matrix(kos_docword, tmp_path):
    doc = topics([str(kos_docword), "--solver", "nonneg", "--rank", "3", "-k", "10", "-c", "2",
                  "--epsilon", "0.1", "--seed", "7"])
    first = doc["components"][0]
    assert all(w >= 0 for w in first["weights"])
    assert first["explained_variance"] >= PUBLISHED_FIRST["kos"] - 0.01
    # the weighted row bound certifies every solver, nonneg included, and is the tightest here
    assert first["bound_source"] == "weighted row sums"
    assert first["certified_ratio"] >= 0.98
    # a centred (mixed-sign) matrix: the nonnegative answer has no negative weight
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 12)) @ rng.standard_normal((12, 12))
    X -= X.mean(axis=0)
    np.save(tmp_path / "cov.npy", X.T @ X)
    doc = topics([str(tmp_path / "cov.npy"), "--solver", "nonneg", "--rank", "2", "-k", "3",
                  "-c", "1", "--exact"])
    comp = doc["components"][0]
    assert min(comp["weights"]) >= 0 and comp["certified_ratio"] <= 1
    assert comp["solver_info"]["mode"] == "exact"


def test_same_seed_same_json_byte_for_byte(airline_mtx):
    args = [str(airline_mtx), "--solver", "tpower", "-k", "10", "-c", "2", "--seed", "4"]
    first, second = topics(args), topics(args)
    first.pop("seconds"), second.pop("seconds")
    assert json.dumps(first) == json.dumps(second)
