"""Certificates through the CLI: the auto default, --solver exact and the bipartite polish, on a
matrix solved by brute force and on the real matrices of ../shared/data (published figures in
PROVENANCE.md)."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest
from click.testing import CliRunner

from spca_cli.cli import cli

from conftest import shared_file

# best published figures, k = 10, A = S^T S (../shared/data/PROVENANCE.md)
PUBLISHED_FIRST = {"airline": 3821.31, "kos": 73173.24}
PUBLISHED_TOTAL = {"airline": 7359.19, "kos": 132666.68}


def run_json(args):
    result = CliRunner().invoke(cli, ["topics", *args, "--format", "json", "-q"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module", params=["airline", "kos"])
def real(request):
    """(name, matrix path, labels path, the default run's JSON) for one real matrix."""
    name = request.param
    matrix = str(shared_file(f"matrices/{name}.mtx"))
    labels = str(shared_file(f"matrices/{name}.vocab.txt"))
    return name, matrix, labels, run_json([matrix, "--labels", labels, "-k", "10", "-c", "5"])


def test_default_is_auto_and_certifies_every_real_topic(real):
    """The default is auto's joint set: its best single topic matches the best published one,
    every topic of the set is certified >= 0.99 on A without the other topics' words, and the
    set's total beats the best published total (airline 8,594 vs 7,359; KOS 173,198 vs
    132,667 when written)."""
    name, _, _, doc = real
    assert doc["solver"] == "auto" and doc["params"]["deflation"] == "joint"
    assert doc["set_search"]["best_topic_value"] >= PUBLISHED_FIRST[name] - 0.005
    assert all(c["certified_ratio"] >= 0.99 - 1e-9 for c in doc["components"]), [
        c["certified_ratio"] for c in doc["components"]]
    for c in doc["components"]:
        assert c["upper_bound"] >= c["explained_variance"] * (1 - 1e-12)
        assert c["solver_info"]["found_by"] in ("tpower", "spannogram", "greedy",
                                                "branch and bound", "set search")
    assert doc["total_explained_variance"] >= PUBLISHED_TOTAL[name]
    assert doc["total_upper_bound"] >= doc["total_explained_variance"]


def test_exact_proves_the_first_real_topic(real):
    name, matrix, labels, default = real
    doc = run_json([matrix, "--labels", labels, "-k", "10", "-c", "1", "--solver", "exact"])
    first = doc["components"][0]
    assert first["bound_source"] == "branch and bound: optimal"
    assert first["certified_ratio"] == pytest.approx(1.0, abs=1e-9)
    assert first["solver_info"]["exact"] is True
    # the best single topic the default's set search reports
    assert first["explained_variance"] == pytest.approx(
        default["set_search"]["best_topic_value"], rel=1e-9)
    assert first["words"] == default["set_search"]["best_topic_words"]


def test_the_default_set_beats_bipartite_and_the_published_total(real):
    name, matrix, labels, default = real
    doc = run_json([matrix, "--labels", labels, "-k", "10", "-c", "5", "--solver", "bipartite"])
    total = doc["total_explained_variance"]
    assert default["total_explained_variance"] >= total >= PUBLISHED_TOTAL[name]
    words = [w for c in doc["components"] for w in c["words"]]
    assert len(set(words)) == 50  # disjoint supports
    assert doc["total_certified_ratio"] <= 1.0


def test_exact_equals_brute_force_on_a_matrix_file(tmp_path):
    """A mixed-sign PSD .npy: --solver exact gives the optimum of every 4-word support."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((9, 12)) * rng.random(12)
    A = X.T @ X
    path = tmp_path / "mixed.npy"
    np.save(path, A)
    best = max(np.linalg.eigvalsh(A[np.ix_(I, I)])[-1] for I in combinations(range(12), 4))
    doc = run_json([str(path), "-k", "4", "-c", "1", "--solver", "exact"])
    first = doc["components"][0]
    assert first["explained_variance"] == pytest.approx(best, rel=1e-10)
    assert first["bound_source"] == "branch and bound: optimal"
    assert first["upper_bound"] >= best
    for solver in ("threshold", "greedy", "tpower", "spannogram"):
        other = run_json([str(path), "-k", "4", "-c", "1", "--solver", solver])
        assert other["components"][0]["upper_bound"] >= best * (1 - 1e-12), solver


def test_table_says_which_solver_found_each_topic():
    sample = "data_samples/docword.kos-sample.txt.gz"
    result = CliRunner().invoke(cli, ["topics", sample, "-k", "8", "-c", "2", "-q"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1].split()[-2:] == ["found", "by"]
    assert lines[3].startswith("1 ") and lines[3].split()[-1] in ("tpower", "spannogram",
                                                                  "greedy", "bound", "search")


def test_budget_applies_to_auto_only():
    sample = "data_samples/docword.kos-sample.txt.gz"
    result = CliRunner().invoke(cli, ["topics", sample, "--solver", "tpower", "--budget", "1"])
    assert result.exit_code == 2
    assert "--budget applies to --solver auto, not tpower" in result.output
