"""``spca ingest`` and ``spca info`` through click's CliRunner: happy paths, every bad input
of the issue (message, exit status 1, no output file, no traceback), and help."""

from __future__ import annotations

import gzip
import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from spca_cli.cli import cli
from spca_cli.corpus import load_corpus

from conftest import TEST_DATA


@pytest.fixture
def runner():
    return CliRunner()


def invoke(runner, args, **kwargs):
    return runner.invoke(cli, [str(a) for a in args], **kwargs)


@pytest.mark.parametrize("command", [[], ["ingest"], ["info"]])
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help(runner, command, flag):
    result = invoke(runner, [*command, flag], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout.startswith("Usage: ")


def test_version(runner):
    result = invoke(runner, ["--version"], catch_exceptions=False)
    assert result.exit_code == 0 and "0.1.0" in result.stdout


def test_ingest_writes_corpus_and_one_summary_line(runner, tmp_path):
    out = tmp_path / "tiny.npz"
    result = invoke(runner, ["ingest", TEST_DATA / "tiny.csv", "-o", out, "--min-count", "1"],
                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("4 documents x 4 words, 5 nonzeros, 2015-02-17 .. 2015-02-19")
    assert result.stderr.count("\n") == 1
    corpus = load_corpus(out)
    assert corpus.n_documents == 4 and corpus.options["min_count"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["tiny.npz"]


def test_ingest_quiet_and_options(runner, tmp_path):
    out = tmp_path / "c.npz"
    copy = tmp_path / "copy.jsonl"  # another file of the same tweets: --keep-duplicates keeps both
    shutil.copy(TEST_DATA / "tiny.jsonl", copy)
    result = invoke(runner, ["ingest", TEST_DATA / "tiny.jsonl", copy,
                             "-o", out, "-q", "--format", "jsonl", "--min-count", "1",
                             "--min-length", "1", "--stopwords", "none", "--weighting", "count",
                             "--since", "2015-02-18", "--contains", "banana", "--keep-duplicates"],
                    catch_exceptions=False)
    assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""
    corpus = load_corpus(out)
    assert corpus.n_documents == 2 and corpus.options["keep_duplicates"] is True
    assert corpus.options["since"] == "2015-02-18" and corpus.options["contains"] == ["banana"]


def test_info_json_on_saved_corpus_and_raw_input(runner, tmp_path):
    out = tmp_path / "c.npz"
    invoke(runner, ["ingest", TEST_DATA / "tiny.csv", "-o", out, "-q", "--min-count", "1"],
           catch_exceptions=False)
    for source, kind in ((out, "corpus"), (TEST_DATA / "tiny.csv", "csv")):
        result = invoke(runner, ["info", source, "--format", "json", "--min-count", "1"]
                        if kind == "csv" else ["info", source, "--format", "json"],
                        catch_exceptions=False)
        assert result.exit_code == 0, result.output
        info = json.loads(result.stdout)
        # SPEC's keys in SPEC's order, then our extensions: every file read, the duplicates
        assert list(info) == ["path", "kind", "documents", "words", "nonzeros", "first_time",
                              "last_time", "top_words", "eigenvalues", "paths",
                              "duplicates_set_aside"]
        assert info["duplicates_set_aside"] == {"exact": 0, "near": 0}
        assert info["kind"] == kind and info["path"] == str(source)
        assert (info["documents"], info["words"], info["nonzeros"]) == (4, 4, 5)
        assert info["first_time"] == "2015-02-17T11:53:37-08:00"
        assert info["last_time"] == "2015-02-19T10:00:00-08:00"
        assert info["top_words"][0] == {"word": "banana", "documents": 2}
        # binary S: A = S^T S for the tiny corpus, computed densely here
        S = np.array([[1, 1, 0, 0], [0, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]], dtype=float)
        expected = np.sort(np.linalg.eigvalsh(S.T @ S))[::-1]
        np.testing.assert_allclose(info["eigenvalues"], expected, atol=1e-9)


def test_info_table_and_matrix_input(runner, tmp_path):
    result = invoke(runner, ["info", TEST_DATA / "docword.tiny.txt", "--top", "2"],
                    catch_exceptions=False)
    assert result.exit_code == 0
    assert "documents" in result.stdout and "banana" in result.stdout
    np.save(tmp_path / "a.npy", np.diag([3.0, 1.0, 2.0]))
    result = invoke(runner, ["info", tmp_path / "a.npy", "--format", "json"],
                    catch_exceptions=False)
    info = json.loads(result.stdout)
    assert info["kind"] == "npy" and info["documents"] is None and info["words"] == 3
    assert info["top_words"] == [] and info["first_time"] is None
    np.testing.assert_allclose(info["eigenvalues"], [3, 2, 1])


# ---------------------------------------------------------------------- bad input
def _bad_files(tmp_path):
    """name -> (args after INPUT, expected message); each file is written into tmp_path."""
    cases = {}

    def case(name, content, message, *extra, binary=False):
        path = tmp_path / name
        if binary:
            path.write_bytes(content)
        elif content is not None:
            path.write_text(content)
        cases[name] = (path, list(extra), message)

    case("missing.csv", None, "missing.csv: file not found")
    case("empty.csv", "", "empty.csv: file is empty")
    case("docword.short.txt", "2\n3\n3\n1 1 1\n2 2 1\n",
         "docword.short.txt: header says 3 entries (NNZ), found 2")
    case("docword.big.txt", "2\n3\n2\n1 1 1\n3 2 1\n",
         "docword.big.txt: line 5: header says 2 documents, found doc id 3")
    case("docword.word.txt", "2\n3\n2\n1 1 1\n2 4 1\n",
         "docword.word.txt: line 5: header says 3 words, found word id 4")
    case("docword.many.txt", "2\n3\n1\n1 1 1\n2 2 1\n",
         "docword.many.txt: line 5: header says 1 entries (NNZ), found more")
    case("docword.float.txt", "2\n3\n2\n1 1 1\n2 2 1.5\n",
         "docword.float.txt: line 5: expected 3 integers 'docID wordID count', found '2 2 1.5'")
    case("docword.header.txt", "2\nthree\n2\n",
         "docword.header.txt: line 2: header line must be one integer W (words), found 'three'")
    case("docword.vocab.txt", "2\n3\n2\n1 1 1\n2 2 1\n",
         "vocab.vocab.txt: vocabulary has 2 words but the header of")
    (tmp_path / "vocab.vocab.txt").write_text("a\nb\n")
    for name in ("short", "big", "word", "many", "float", "header"):
        (tmp_path / f"vocab.{name}.txt").write_text("a\nb\nc\n")
    case("notext.csv", "id,body,created_at\n1,hello,2015-02-17\n",
         "notext.csv: line 1: no text column 'text' (use --text-column); "
         "the columns are: id, body, created_at")
    case("latin1.csv", b"text\nfine\ncaf\xe9 ol\xe9\n",
         "latin1.csv: line 3: bytes that are not UTF-8 text", binary=True)
    case("latin1.txt", b"ok\nok\n\xff\n", "latin1.txt: line 3: bytes that are not UTF-8 text",
         binary=True)
    case("bad.jsonl", '{"text": "a"}\n{"text": "b"\n',
         "bad.jsonl: line 2: malformed JSON (Expecting ',' delimiter at column 13)")
    case("cut.jsonl", '{"text": "a"}\n{"text": "b\n',
         "cut.jsonl: line 2: malformed JSON (Unterminated string starting at column 10)")
    case("badtime.csv", "text,created_at\nhello,2015-02-17\nworld,yesterday\n",
         "badtime.csv: line 3: cannot read time 'yesterday' in 'created_at'")
    case("dates.csv", "text,created_at\nhello,2015-02-17\n",
         "--since 2015-02-20 is later than --until 2015-02-18", "--since", "2015-02-20",
         "--until", "2015-02-18")
    case("nothing.csv", "text,created_at\nhello world,2015-02-17\nhello,2015-02-17\n",
         "nothing.csv: no documents left after --contains zebra", "--contains", "zebra")
    case("nodates.txt", "hello world\nhello\n",
         "nodates.txt: has no time column, so --since/--until cannot apply",
         "--since", "2015-01-01")
    case("nowords.txt", "hello world\nbye\n", "nowords.txt: no words left after the word filters")
    case("weird.xyz", "hello\n", "weird.xyz: cannot tell the input format from the file name")
    return cases


BAD = ["missing.csv", "empty.csv", "docword.short.txt", "docword.big.txt", "docword.word.txt",
       "docword.many.txt", "docword.float.txt", "docword.header.txt", "docword.vocab.txt",
       "notext.csv", "latin1.csv", "latin1.txt", "bad.jsonl", "badtime.csv", "dates.csv",
       "nothing.csv", "nodates.txt", "nowords.txt", "weird.xyz"]


@pytest.mark.parametrize("name", BAD)
def test_bad_input_is_one_line_exit_1_no_output(runner, tmp_path, name):
    path, extra, message = _bad_files(tmp_path)[name]
    out = tmp_path / "out" / "corpus.npz"
    out.parent.mkdir()
    result = invoke(runner, ["ingest", path, "-o", out, *extra])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.startswith("Error: ")
    assert message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert list(out.parent.iterdir()) == []


def test_bad_gzip_names_line_too(runner, tmp_path):
    path = tmp_path / "t.txt.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"fine\n\xe9t\xe9\n")
    result = invoke(runner, ["info", path])
    assert result.exit_code == 1
    assert "t.txt.gz: line 2: bytes that are not UTF-8 text" in result.stderr


@pytest.mark.parametrize("matrix, message", [
    (np.ones((2, 3)), "matrix must be 2-dimensional and square, got shape (2, 3)"),
    (np.array([[1.0, 2.0], [0.0, 1.0]]), "matrix is not symmetric"),
    (np.array([[1.0, np.nan], [np.nan, 1.0]]), "matrix holds NaN or infinity"),
    (np.array([[1.0, 2.0], [2.0, 1.0]]), "matrix is not positive semidefinite"),
])
def test_bad_npy(runner, tmp_path, matrix, message):
    path = tmp_path / "a.npy"
    np.save(path, matrix)
    result = invoke(runner, ["info", path])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {path}: {message}")


def test_npy_labels_must_match(runner, tmp_path):
    np.save(tmp_path / "a.npy", np.eye(3))
    (tmp_path / "l.txt").write_text("a\nb\n")
    result = invoke(runner, ["info", tmp_path / "a.npy", "--labels", tmp_path / "l.txt"])
    assert result.exit_code == 1 and "has 2 labels but" in result.stderr


def test_ingest_refuses_a_matrix_and_a_missing_folder(runner, tmp_path):
    np.save(tmp_path / "a.npy", np.eye(2))
    result = invoke(runner, ["ingest", tmp_path / "a.npy", "-o", tmp_path / "a.npz"])
    assert result.exit_code == 1 and "is a matrix, not a corpus" in result.stderr
    result = invoke(runner, ["ingest", TEST_DATA / "tiny.txt", "-o", tmp_path / "no" / "c.npz"])
    assert result.exit_code == 1 and "the folder to write into does not exist" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy"]


def test_usage_errors_exit_2(runner):
    result = invoke(runner, ["ingest", TEST_DATA / "tiny.txt"])
    assert result.exit_code == 2 and "Missing option '-o'" in result.stderr
    result = invoke(runner, ["info", TEST_DATA / "tiny.txt", "--weighting", "sqrt"])
    assert result.exit_code == 2


def test_uci_vocabulary_from_option(runner, tmp_path):
    shutil.copy(TEST_DATA / "docword.tiny.txt", tmp_path / "docword.other.txt")
    result = invoke(runner, ["info", tmp_path / "docword.other.txt", "--format", "json"])
    assert result.exit_code == 1 and "vocab.other.txt: vocabulary file not found" in result.stderr
    result = invoke(runner, ["info", tmp_path / "docword.other.txt", "--format", "json",
                             "--vocab", TEST_DATA / "vocab.tiny.txt"], catch_exceptions=False)
    assert json.loads(result.stdout)["words"] == 4
