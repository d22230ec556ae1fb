"""Errors name parameters as the Python API spells them (``min_length``); the CLI shows the option
its user typed (``--min-length``) instead, taken from the running command's click options."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from _cli import assert_error, spca
from spca_cli.corpus import load_input, read_corpus
from spca_cli.errors import Name, SpcaInputError, SpcaParameterError
from spca_cli.estimator import SparseTopics
from spca_cli.topics import run_topics

TEST_DATA = Path(__file__).parent / "data"
PACKAGE = Path(__file__).resolve().parent.parent / "spca_cli"
TEXTS = ["Flights delayed again at the airport", "The airport lost my bags again",
         "Great crew and a smooth flight", "Smooth landing, great crew",
         "Bags delayed, flights delayed", "The crew was great on my flight"]


def _matrix(folder):
    path = folder / "A.npy"
    np.save(path, np.eye(4))
    return path


def test_an_error_keeps_its_parameter_names_apart_from_its_text():
    exc = SpcaParameterError([Name("since"), " since is later than ", Name("until"), " x"])
    assert str(exc) == "since since is later than until x"
    assert exc.params == ("since", "until")
    assert exc.worded(lambda name: "--" + name) == "--since since is later than --until x"
    located = SpcaInputError("a.csv", ["no ", Name("lang"), " field"], line=3)
    assert str(located) == "a.csv: line 3: no lang field"
    assert located.worded(str.upper) == "a.csv: line 3: no LANG field"


def test_read_corpus_names_its_parameters(tmp_path):
    with pytest.raises(SpcaParameterError, match=r"^min_length must be at least 1, got 0$"):
        read_corpus(TEST_DATA / "tiny.csv", min_length=0)
    with pytest.raises(SpcaParameterError) as caught:
        read_corpus(TEST_DATA / "tiny.csv", weighting="bm25")
    assert str(caught.value) == "weighting must be one of binary, count, tfidf, got 'bm25'"
    assert caught.value.params == ("weighting",)
    with pytest.raises(SpcaParameterError, match=r"^text_column and time_column apply to CSV "
                                                 r"and JSON lines only$"):
        read_corpus(TEST_DATA / "tiny.txt", text_column="body")
    with pytest.raises(SpcaParameterError, match=r"^reading standard input \(-\) needs format "
                                                 r"csv\|jsonl\|text\|uci$"):
        load_input("-")
    with pytest.raises(SpcaParameterError, match=r"^min_count, titles cannot apply to a matrix "
                                                 r"input \(\.npy\)$"):
        load_input(_matrix(tmp_path), min_count=2, titles="t.txt")


def test_run_topics_names_its_parameters():
    corpus = read_corpus(TEST_DATA / "tiny.csv", min_count=1)
    with pytest.raises(SpcaParameterError) as caught:
        run_topics(corpus, solver="bipartite", k=2, n_components=1,
                   solver_options={"samples": 10 ** 12})
    assert str(caught.value).endswith("the limit without time_limit is 10,000,000: give fewer "
                                      "samples or a time_limit")
    assert caught.value.params == ("time_limit", "samples", "time_limit")


def test_sparse_topics_names_its_parameters():
    with pytest.raises(SpcaParameterError, match=r"^min_length must be at least 1, got 0$"):
        SparseTopics(ingest={"min_length": 0}).fit(TEXTS)
    with pytest.raises(SpcaParameterError, match=r"^nonneg: epsilon 1e-300 needs .*; give a "
                                                 r"larger epsilon or fewer samples$"):
        SparseTopics(k=2, n_components=1, solver="nonneg", solver_options={"epsilon": 1e-300},
                     ingest={"min_count": 1}).fit(TEXTS)


def test_the_cli_names_the_options_typed(tmp_path):
    csv = TEST_DATA / "tiny.csv"
    assert_error(spca("ingest", csv, "-o", tmp_path / "c.npz", "--stopwords", "english,"),
                 "--stopwords 'english,': an empty item between commas")
    # ingest takes the input kind as --format too; the message names the long form
    assert_error(spca("ingest", "-", "-o", tmp_path / "c.npz"),
                 "reading standard input (-) needs --input-format csv|jsonl|text|uci")
    # a value equal to a parameter's name stays as typed: only the names are rewritten
    assert_error(spca("topics", csv, "--contains", "since"),
                 "--contains 'since' is not one word under the tokenising rules (letters "
                 "first, at least 3 characters, not a stop word)")
    assert_error(spca("topics", _matrix(tmp_path), "--min-count", "2", "--titles", "t.txt"),
                 "--min-count, --titles cannot apply to a matrix input (.npy)")


def test_the_daily_log_names_the_options_typed(tmp_path):
    log = tmp_path / "run.log"
    result = spca("daily", TEST_DATA / "tiny.jsonl", "--out", tmp_path / "out", "--date",
                  "20/02/2015", "--log", log)
    assert_error(result, "--date must be YYYY-MM-DD, got '20/02/2015'")
    assert log.read_text().split(" ", 1)[1] == ("day=None status=error --date must be "
                                                "YYYY-MM-DD, got '20/02/2015'\n")


FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def _docstrings(tree):
    """The ids of the docstring constants of a module, its classes and functions."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def test_no_library_message_names_a_flag():
    """Outside cli.py, no string in spca_cli names a --flag, but docstrings and the solver
    registry's ``flag=`` declarations (the CLI's options are made from them)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name == "cli.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "flag":
                skip.add(id(node.value))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in skip and FLAG.search(node.value)):
                found.setdefault(name, []).append(node.value)
    counts = {name: len(strings) for name, strings in found.items()}
    assert counts == {}, found
