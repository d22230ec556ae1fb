"""``spca topics`` (and ``spectrum``) from the command line, as a user runs them."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner

from spca_cli.cli import cli
from spca_cli.report import LEGEND, render_table


def invoke(args, **kwargs):
    return CliRunner().invoke(cli, args, **kwargs)


def topics_json(args):
    result = invoke(["topics", *args, "--format", "json", "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # stdout holds the JSON and nothing else


def brute_force(A, k):
    return max(np.linalg.eigvalsh(A[np.ix_(s, s)])[-1]
               for s in itertools.combinations(range(A.shape[0]), k))


@pytest.fixture
def low_rank_npy(tmp_path):
    """Random PSD matrices of exact rank d, saved as .npy, with their brute-force optimum."""
    def make(n, d, k, seed, nonnegative=False):
        rng = np.random.default_rng(seed)
        V = rng.random((n, d)) if nonnegative else rng.standard_normal((n, d))
        A = V @ V.T
        path = tmp_path / f"A-{n}-{d}-{seed}.npy"
        np.save(path, A)
        return path, brute_force(A, k)
    return make


CASES = [(1, 12, 3, False), (2, 14, 3, False), (2, 16, 4, True), (3, 12, 2, False),
         (3, 13, 5, True), (3, 16, 4, False)]
VARIANTS = [[], ["--no-elimination"], ["--sign-reduction"]]


@pytest.mark.parametrize("d,n,k,nonnegative,elimination", [
    (*case, variant) for case in CASES for variant in VARIANTS
    if case[3] or variant != ["--sign-reduction"]])  # the reduction needs a nonnegative A
def test_spannogram_is_exact_on_rank_d_matrices_through_the_cli(
        low_rank_npy, d, n, k, nonnegative, elimination):
    for seed in range(3):
        path, best = low_rank_npy(n, d, k, seed + 10 * d, nonnegative)
        doc = topics_json([str(path), "--solver", "spannogram", "--rank", str(d), "-k", str(k),
                           "-c", "1", *elimination])
        comp = doc["components"][0]
        assert comp["explained_variance"] == pytest.approx(best, rel=1e-9)
        assert comp["upper_bound"] >= best * (1 - 1e-9)
        assert len(comp["indices"]) == k


def test_matrix_input_with_labels_and_every_format(tmp_path):
    rng = np.random.default_rng(0)
    V = rng.random((10, 2))
    np.save(tmp_path / "A.npy", V @ V.T)
    (tmp_path / "labels.txt").write_text("\n".join(f"gene{i}" for i in range(10)) + "\n")
    base = [str(tmp_path / "A.npy"), "--labels", str(tmp_path / "labels.txt"),
            "--solver", "threshold", "-k", "3", "-c", "2"]
    doc = topics_json(base)
    words = doc["components"][0]["words"]
    assert all(w.startswith("gene") for w in words)
    assert doc["input"]["documents"] is None and doc["input"]["words"] == 10
    csv_out = invoke(["topics", *base, "--format", "csv"]).stdout.splitlines()
    assert csv_out[1].split(",")[2] == words[0]
    md = invoke(["topics", *base, "--format", "markdown"]).stdout
    assert f"| 1 | {words[0]} |" in md
    table = invoke(["topics", *base]).stdout
    weights = doc["components"][0]["weights"]
    assert "    " + "  ".join(f"{w} {x:.2f}" for w, x in zip(words, weights)) in table
    assert "coverage" not in doc["components"][0]  # a matrix has no documents
    page = invoke(["topics", *base, "--format", "html"]).stdout
    assert page.startswith("<!DOCTYPE html>") and f'<td class="word">{words[0]}</td>' in page
    assert 'class="certified-ratio"' in page and 'class="coverage' not in page


def test_output_file_is_written_whole_and_stdout_stays_empty(tmp_path):
    rng = np.random.default_rng(1)
    V = rng.random((8, 2))
    np.save(tmp_path / "A.npy", V @ V.T)
    out = tmp_path / "topics.json"
    result = invoke(["topics", str(tmp_path / "A.npy"), "--solver", "threshold", "-k", "2",
                     "-c", "2", "--format", "json", "-o", str(out), "--quiet"])
    assert result.exit_code == 0 and result.stdout == ""
    assert json.loads(out.read_text())["solver"] == "threshold"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_bad_matrix_and_bad_combinations_give_one_line_and_no_file(tmp_path):
    np.save(tmp_path / "rect.npy", np.ones((3, 4)))
    out = tmp_path / "out.json"
    result = invoke(["topics", str(tmp_path / "rect.npy"), "--solver", "threshold", "-k", "2",
                     "-o", str(out)])
    assert result.exit_code == 1
    assert result.output.strip().startswith(f"Error: {tmp_path / 'rect.npy'}: ")
    assert "square" in result.output and len(result.output.strip().splitlines()) == 1
    assert not out.exists()
    np.save(tmp_path / "A.npy", np.eye(6))
    too_many = invoke(["topics", str(tmp_path / "A.npy"), "--solver", "threshold", "-k", "4",
                       "-c", "2"])
    assert too_many.exit_code == 1
    assert "components * k must be <= the number of words for disjoint topics; got 2 * 4 = 8 > 6" \
        in too_many.output
    wrong_option = invoke(["topics", str(tmp_path / "A.npy"), "--solver", "threshold",
                           "--samples", "10"])
    assert wrong_option.exit_code == 2
    assert "--samples applies to --solver nonneg or bipartite, not threshold" in wrong_option.output


def test_table_prints_in_a_fixed_width_terminal():
    doc = {"solver": "spannogram", "params": {"k": 3, "rank": 2},
           "input": {"path": "tweets.csv", "documents": 100, "words": 50},
           "total_explained_variance": 12.5,
           "components": [{"index": 1, "words": ["skype", "microsoft", "[billion]"],
                           "weights": [0.8, 0.5, 0.33166],
                           "explained_variance": 10.0, "variance_ratio": 0.98,
                           "cumulative_ratio": 0.98, "upper_bound": 10.5,
                           "bound_source": "lambda_1", "certified_ratio": 0.952381,
                           "coverage": {"documents": 40, "share": 0.4},
                           "top_documents": [
                               {"row": 7, "score": 1.3, "time": "2015-02-17T00:53:37-08:00",
                                "id": "567", "text": "Microsoft  buys\nSkype for 8.5 [billion] "
                                                     "dollars, the biggest deal in its history"
                                                     " so far"}]}]}
    lines = [line.rstrip() for line in render_table(doc, width=80).splitlines()]
    assert lines[:8] == [
        "spannogram on tweets.csv (100 documents, 50 words): k=3, rank=2",
        "#     explained   var ratio   cum ratio   upper bound   certified",
        "\u2500" * 65,
        "1            10      0.9800      0.9800          10.5      0.9524",
        "    skype 0.80  microsoft 0.50  [billion] 0.33",  # '[' is text, never markup
        "    in 40 documents (40.0%); top documents:",
        # one line, cut between words, whitespace of the tweet collapsed
        "    1.30  2015-02-17 00:53  Microsoft buys Skype for 8.5 [billion] dollars, the\u2026",
        "",
    ]
    assert lines[8] == "total explained variance 12.5; bounds from: lambda_1"
    legend = "\n".join(lines[10:])
    for name in ("explained:", "var ratio:", "cum ratio:", "upper bound:", "certified:"):
        assert name in legend
    assert max(len(line) for line in lines) <= 80
    # every word of the legend is whole: wrapping happened between words only
    words = {w for _, meaning in LEGEND for w in meaning.split()}
    assert set(legend.split()) - {"explained:", "var", "ratio:", "cum", "upper", "bound:",
                                  "certified:"} <= words
    # not a terminal (width None): nothing wrapped or cut
    wide = render_table(doc, width=None).splitlines()
    assert wide[6].endswith("biggest deal in its history so far")
    assert any(line.startswith("var ratio: ") and line.endswith("it can exceed 1") for line in wide)


@pytest.mark.parametrize("command", ["ingest", "info", "topics", "daily", "reproduce",
                                     "spectrum"])
def test_every_command_has_help(command):
    result = invoke([command, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output


def test_iteration_and_time_limits_warn_on_stderr(tmp_path):
    rng = np.random.default_rng(3)
    V = rng.standard_normal((40, 6))
    np.save(tmp_path / "A.npy", V @ V.T)
    result = invoke(["topics", str(tmp_path / "A.npy"), "--solver", "tpower", "--max-iter", "1",
                     "-k", "5", "-c", "1", "--format", "json"])
    assert result.exit_code == 0
    assert "Warning: TPower stopped at the iteration limit 1 before converging; a higher limit " \
           "may find more (start" in result.stderr
    assert json.loads(result.stdout)["notes"][0].startswith("TPower stopped at the iteration")
    result = invoke(["topics", str(tmp_path / "A.npy"), "--solver", "bipartite", "-k", "4",
                     "-c", "3", "--samples", "100000000", "--time-limit", "0.2", "--format",
                     "json"])
    assert result.exit_code == 0
    assert "time limit of 0.2 s reached" in result.stderr
    doc = json.loads(result.stdout)
    assert doc["components"][0]["solver_info"]["time_limited"] is True


def test_readme_shows_what_make_run_prints():
    """The README's `make run` output is the tool's, not typed (widths and numbers included)."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    makefile = (root / "Makefile").read_text(encoding="utf-8")
    command = next(line.strip() for line in makefile.splitlines() if "spca topics" in line)
    args = command.split()[2:]  # after "$(BIN)/spca topics"
    result = CliRunner().invoke(cli, ["topics", *args], catch_exceptions=False)
    printed = [line.rstrip() for line in result.stdout.splitlines()[1:]]  # after the title
    readme = (root / "README.md").read_text(encoding="utf-8").splitlines()
    start = readme.index(printed[0])
    assert readme[start:start + len(printed)] == printed


def test_eigensolver_report_and_choice():
    """The bundled KOS sample (6,906 words) takes the warm-started block path: about 20 sparse
    products with S for the first eigen step, fewer after; ARPACK gives the same topics and
    bounds within the residuals, with about three times the products."""
    from pathlib import Path

    from spca_cli.spectrum import CANDIDATE_TOL

    sample = str(Path(__file__).resolve().parent.parent / "data_samples" /
                 "docword.kos-sample.txt.gz")
    # no branch and bound (--budget 0): this test is about the eigen steps, not the solver
    # (one topic at a time: a view, and an eigen step, per topic)
    krylov = topics_json([sample, "-k", "8", "-c", "3", "--budget", "0", "--deflation", "remove"])
    arpack = topics_json([sample, "-k", "8", "-c", "3", "--budget", "0", "--deflation", "remove",
                          "--eigensolver", "arpack"])
    info = krylov["eigensolver"]
    assert info["method"] == "krylov" and info["calls"] == 3
    assert info["sparse_products"][0] <= 24
    # what a topics run asks of the later calls (the first one asks TOPICS_TOL)
    assert info["max_relative_residual"] <= CANDIDATE_TOL
    assert "eigensolver" not in krylov["params"]
    assert arpack["eigensolver"]["method"] == "arpack"
    assert arpack["params"]["eigensolver"] == "arpack"
    assert sum(arpack["eigensolver"]["sparse_products"]) > 2 * sum(info["sparse_products"])
    lam1 = krylov["eigenvalues"][0]
    for a, b in zip(krylov["components"], arpack["components"]):
        assert a["words"] == b["words"]
        assert a["upper_bound"] == pytest.approx(b["upper_bound"], abs=1e-7 * lam1)
    assert krylov["components"][0]["words"][:3] == ["bush", "november", "kerry"]
    bad = invoke(["topics", sample, "--eigensolver", "lanczos"])
    assert bad.exit_code == 2 and "'lanczos' is not one of" in bad.output


@pytest.mark.parametrize("name, explicit, looks_like", [
    ("topics.json", None, "json"),
    ("TOPICS.JSON", None, "json"),
    ("topics.csv", None, "csv"),
    ("topics.md", None, "markdown"),
    ("topics.HTML", None, "html"),
    ("topics.txt", None, "table"),
    ("topics.json", "table", "table"),
    ("topics.csv", "json", "json"),
])
def test_the_output_file_extension_picks_the_format_unless_format_is_given(
        tmp_path, name, explicit, looks_like):
    # the bundled real sample (KOS blog posts)
    sample = "data_samples/docword.kos-sample.txt.gz"
    out = tmp_path / name
    args = ["topics", sample, "-k", "4", "-c", "1", "--quiet", "-o", str(out)]
    result = invoke(args + (["--format", explicit] if explicit else []))
    assert result.exit_code == 0, result.output
    text = out.read_text()
    if looks_like == "json":
        assert json.loads(text)["components"][0]["words"][:2] == ["bush", "november"]
    elif looks_like == "csv":
        lines = text.splitlines()
        assert lines[0].startswith("component,position,word,")
        assert lines[1].startswith("1,1,bush,")
    elif looks_like == "html":
        assert text.startswith("<!DOCTYPE html>") and '<td class="word">bush</td>' in text
    elif looks_like == "markdown":
        assert text.splitlines()[:4] == ["**auto**, k=4, rank=2", "", "| | PC 1 |", "|---|---|"]
    else:
        assert text.startswith(f"auto on {sample} (300 documents, 6906 words): k=4, rank=2\n")
