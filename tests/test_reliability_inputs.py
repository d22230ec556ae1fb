"""Reliability, mechanism 2: every input is validated before any kernel sees it.

The saved corpus (.npz) has one validating loader; .npy matrices are refused when complex or not
PSD at any size; UCI values must fit; JSON lines and YAML that Python's parsers choke on are
one-line errors. The corpora are the real KOS sample bundled in data_samples/ and the tests'
tiny tweets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from spca_cli.cli import cli

from _cli import assert_error, spca
from spca_cli.corpus import load_input, save_corpus

REPO = Path(__file__).resolve().parent.parent
KOS_SAMPLE = REPO / "data_samples" / "docword.kos-sample.txt.gz"




@pytest.fixture(scope="module")
def kos_arrays(tmp_path_factory):
    """The arrays of a real saved corpus (the first 300 KOS blog posts)."""
    path = tmp_path_factory.mktemp("kos") / "kos.npz"
    save_corpus(load_input(str(KOS_SAMPLE)), path)
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def damaged(tmp_path, arrays, name="bad.npz", **changes):
    out = dict(arrays)
    for key, value in changes.items():
        if value is None:
            out.pop(key)
        else:
            out[key] = value
    path = tmp_path / name
    np.savez(path, **out)
    return path


def _with(array, index, value):
    array = array.copy()
    array[index] = value
    return array


def test_a_valid_saved_corpus_loads(kos_arrays, tmp_path):
    path = damaged(tmp_path, kos_arrays, "kos.npz")
    result = spca("info", path, "--format", "json", "--eigenvalues", "0")
    assert result.exit_code == 0
    assert json.loads(result.output)["documents"] == 300


@pytest.mark.parametrize("change, message", [
    (lambda a: {"indices": _with(a["indices"], 7, 10 ** 6)},
     "damaged corpus: 'indices' holds a word index outside [0, 6906)"),
    (lambda a: {"indices": _with(a["indices"], 7, -3)},
     "damaged corpus: 'indices' holds a word index outside [0, 6906)"),
    (lambda a: {"data": _with(a["data"], 3, np.nan)}, "damaged corpus: 'data' holds NaN or infinity"),
    (lambda a: {"data": _with(a["data"], 3, np.inf)}, "damaged corpus: 'data' holds NaN or infinity"),
    (lambda a: {"data": _with(a["data"], 3, -1.0)}, "damaged corpus: 'data' holds negative entries"),
    (lambda a: {"indptr": _with(a["indptr"], 10, -5)},
     "damaged corpus: 'indptr' must rise from 0 to 28,906 without going down"),
    (lambda a: {"indptr": a["indptr"][::-1].copy()},
     "damaged corpus: 'indptr' must rise from 0 to 28,906 without going down"),
    (lambda a: {"indptr": a["indptr"][:-1]},
     "damaged corpus: 'indptr' has 300 entries, expected 301"),
    (lambda a: {"vocabulary": a["vocabulary"][:-1]},
     "S has 6906 columns but the vocabulary 6905 words"),
    (lambda a: {"vocabulary": np.arange(6906)},
     "damaged corpus: 'vocabulary' must be a 1-d array of strings"),
    (lambda a: {"options": np.array("[1, 2]")}, "damaged corpus: 'options' must be a JSON object"),
    (lambda a: {"options": np.array('{"weighting": 5}')},
     "damaged corpus: option 'weighting' has the wrong type (int)"),
    (lambda a: {"options": np.array('{"contains": "japan"}')},
     "damaged corpus: option 'contains' has the wrong type (str)"),
    (lambda a: {"options": np.array("{not json")}, "damaged corpus: 'options' is not JSON"),
    (lambda a: {"data": a["data"].astype(complex)},
     "damaged corpus: 'data' must be a 1-d array of real numbers, got complex128 of shape "
     "(28906,)"),
    (lambda a: {"format_version": np.array(2)},
     "corpus format version 2; this spca reads version 1 (re-run spca ingest)"),
    (lambda a: {"format_version": None},
     "not a corpus written by spca ingest (missing format_version)"),
    (lambda a: {"shape": np.array([300, -1])}, "damaged corpus: shape [300, -1] is impossible"),
    (lambda a: {"indices": _with(a["indices"], 1, a["indices"][0])},
     "damaged corpus: a word appears twice in one document"),
])
def test_a_damaged_saved_corpus_is_one_line(kos_arrays, tmp_path, change, message):
    path = damaged(tmp_path, kos_arrays, **change(kos_arrays))
    for command in (["info", path, "--eigenvalues", "0"], ["topics", path, "-k", "3", "-c", "1"],
                    ["spectrum", path], ["ingest", path, "-o", tmp_path / "copy.npz"]):
        assert_error(spca(*command), f"{path}: {message}")
    assert not (tmp_path / "copy.npz").exists()


def test_times_of_the_wrong_length_are_refused(tmp_path):
    corpus = load_input(str(REPO / "tests" / "data" / "tiny.csv"), min_count=1)
    save_corpus(corpus, tmp_path / "t.npz")
    with np.load(tmp_path / "t.npz") as z:
        arrays = {k: z[k] for k in z.files}
    path = damaged(tmp_path, arrays, times=arrays["times"][:-1])
    assert_error(spca("info", path), f"{path}: damaged corpus: 'times' has 3 entries, expected 4")
    path = damaged(tmp_path, arrays, times=np.full(4, 10 ** 15))
    assert_error(spca("info", path),
                 f"{path}: damaged corpus: 'times' holds a time outside the years 1-9999")


def test_a_truncated_or_bit_flipped_file_is_one_line(kos_arrays, tmp_path):
    good = damaged(tmp_path, kos_arrays, "kos.npz").read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(good[: len(good) // 2])
    assert_error(spca("info", cut), f"{cut}: not a corpus written by spca ingest (not a "
                                    "readable .npz zip file: File is not a zip file)")
    flipped = bytearray(good)
    flipped[len(good) // 3] ^= 0xFF  # inside the data array: the zip's CRC catches it
    bad = tmp_path / "flip.npz"
    bad.write_bytes(bytes(flipped))
    result = spca("info", bad)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {bad}: array '") and "Bad CRC-32" in result.output


def test_out_of_range_indices_never_reach_a_kernel(kos_arrays, tmp_path):
    """Once a segmentation fault: run as a real process, so a crash shows as a signal."""
    path = damaged(tmp_path, kos_arrays, indices=_with(kos_arrays["indices"], 7, 10 ** 6))
    for command in (["topics", str(path), "-k", "3", "-c", "1"], ["info", str(path)]):
        proc = subprocess.run([sys.executable, "-m", "spca_cli", *command], capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 1
        assert proc.stderr == (f"Error: {path}: damaged corpus: 'indices' holds a word index "
                               "outside [0, 6906)\n")


# ---------------------------------------------------------------------- .npy matrices
def test_a_complex_matrix_is_refused(tmp_path):
    path = tmp_path / "hermitian.npy"
    np.save(path, np.array([[2.0, 1j], [-1j, 2.0]]))
    assert_error(spca("topics", path, "-k", "1", "-c", "1", "-d", "1"),
                 f"{path}: matrix holds complex numbers (complex128); spca needs a real "
                 "symmetric matrix")


def test_a_large_matrix_that_is_not_psd_is_refused(tmp_path):
    rng = np.random.RandomState(0)
    n = 2100  # beyond the LAPACK check: the Lanczos extremes decide
    X = rng.standard_normal((n, 40))
    A = X @ X.T
    A[0, 0] -= 500.0  # one negative direction
    path = tmp_path / "big.npy"
    np.save(path, A)
    smallest = np.linalg.eigvalsh(A)[0]
    result = spca("topics", path, "-k", "3", "-c", "1")
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path}: matrix is not positive semidefinite "
                                    f"(smallest eigenvalue {smallest:.6g}, largest ")
    np.save(path, X @ X.T)  # PSD of rank 40: the check passes
    assert spca("info", path, "--eigenvalues", "2").exit_code == 0


def test_an_npy_header_that_lies_about_its_size_is_refused(tmp_path):
    path = tmp_path / "short.npy"
    np.save(path, np.eye(50))
    path.write_bytes(path.read_bytes()[:-800])
    result = spca("topics", path)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path}: not a NumPy .npy array (")


# ---------------------------------------------------------------------- .mtx matrices
def mtx(path, field, entries):
    """A 2 x 2 MatrixMarket coordinate file of ``field`` with ``entries`` (one per line)."""
    path.write_text(f"%%MatrixMarket matrix coordinate {field} general\n2 2 {len(entries)}\n"
                    + "".join(f"{e}\n" for e in entries))
    return path


def test_mtx_values_whose_gram_matrix_overflows_are_refused(tmp_path):
    path = mtx(tmp_path / "huge.mtx", "real", ["1 1 1e200", "2 2 1"])
    message = (f"{path}: values too large: S^T S overflows float64 (its trace, the sum of the "
               "squared entries, is about 1e400; products of its entries stay finite up to "
               "1e100)")
    for command in (["topics", path, "-k", "1", "-c", "1"], ["spectrum", path],
                    ["info", path], ["ingest", path, "-o", tmp_path / "out.npz"]):
        assert_error(spca(*command), message)
    assert not (tmp_path / "out.npz").exists()
    mtx(path, "real", ["1 1 1e49", "2 2 1"])  # a trace of 1e98: computed as any other
    assert spca("spectrum", path, "--format", "json").exit_code == 0


def test_a_saved_corpus_with_values_too_large_is_refused(tmp_path, kos_arrays):
    path = damaged(tmp_path, kos_arrays, data=np.full_like(kos_arrays["data"], 1e160))
    result = spca("info", path)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path}: values too large: S^T S overflows float64")


def test_a_complex_mtx_is_refused_as_a_complex_npy_is(tmp_path):
    path = mtx(tmp_path / "complex.mtx", "complex", ["1 1 1 2", "2 2 1 0"])
    assert_error(spca("topics", path, "-k", "1", "-c", "1"),
                 f"{path}: matrix holds complex numbers (complex128); spca needs a real matrix")


# ---------------------------------------------------------------------- UCI
@pytest.fixture
def uci(tmp_path):
    (tmp_path / "vocab.x.txt").write_text("apple\nbanana\ncherry\n")

    def write(body):
        path = tmp_path / "docword.x.txt"
        path.write_text(body)
        return path
    return write


def test_uci_values_beyond_int64_are_refused(uci):
    path = uci("2\n3\n2\n1 1 99999999999999999999\n2 2 1\n")
    assert_error(spca("info", path),
                 f"{path}: line 4: count 99999999999999999999 does not fit a 64-bit integer")
    path = uci("2\n3\n2\n1 1 9223372036854775807\n2 2 1\n")  # the largest that fits
    assert spca("info", path, "--format", "json").exit_code == 0
    path = uci("99999999999999999999\n3\n2\n1 1 1\n2 2 1\n")
    assert_error(spca("info", path), f"{path}: line 1: header D (documents) is "
                                     "99999999999999999999, more than the 2,147,483,647 spca "
                                     "can index")


def test_uci_documents_without_entries_are_kept_with_a_warning(uci):
    path = uci("5\n3\n2\n1 1 1\n2 2 1\n")
    result = CliRunner().invoke(cli, ["info", str(path), "--format", "json"])
    assert result.exit_code == 0
    assert result.stderr == (f"Warning: {path}: header says 5 documents (D) but 3 have no "
                             "entries; they are kept as empty documents\n")
    assert json.loads(result.stdout)["documents"] == 5
    quiet = CliRunner().invoke(cli, ["info", str(path), "--format", "json", "--quiet"])
    assert quiet.exit_code == 0 and quiet.stderr == ""


# ---------------------------------------------------------------------- times
@pytest.mark.parametrize("stamp", ["0000-06-01 10:00:00 +0000", "0001-01-01T00:30:00+01:00",
                                   "9999-12-31T23:30:00-01:00", "Mon Jan 01 00:00:00 +0100 0001"])
def test_ingest_refuses_a_time_outside_the_years_a_corpus_stores(tmp_path, stamp):
    csv_path = tmp_path / "old.csv"
    csv_path.write_text(f'text,created_at\nfares went up,2015-02-17\nfares late,"{stamp}"\n')
    jsonl = tmp_path / "old.jsonl"
    jsonl.write_text(json.dumps({"text": "fares late", "created_at": stamp}) + "\n")
    out = tmp_path / "out.npz"
    for path, line in ((csv_path, 3), (jsonl, 1)):
        assert_error(spca("ingest", path, "-o", out),
                     f"{path}: line {line}: time {stamp!r} in 'created_at' is outside the years "
                     "1-9999 (in UTC or as written), which spca cannot store")
        assert not out.exists()


def test_whatever_ingest_writes_spca_reads_back_at_the_ends_of_the_time_range(tmp_path):
    path = tmp_path / "ends.jsonl"
    path.write_text("".join(json.dumps({"text": text, "created_at": stamp}) + "\n" for text, stamp
                            in (("fares went up", "0001-01-01T00:00:00Z"),
                                ("fares went down", "9999-12-31T23:59:59+00:00"))))
    out = tmp_path / "ends.npz"
    assert spca("ingest", path, "-o", out, "--min-count", "1").exit_code == 0
    result = spca("info", out, "--format", "json", "--eigenvalues", "0")
    assert result.exit_code == 0
    summary = json.loads(result.output)
    assert (summary["first_time"], summary["last_time"]) == ("0001-01-01T00:00:00+00:00",
                                                             "9999-12-31T23:59:59+00:00")


def test_a_saved_corpus_whose_written_time_falls_in_year_0_is_refused(tmp_path, kos_arrays):
    n = len(kos_arrays["indptr"]) - 1
    times = np.full(n, -62135596800, dtype=np.int64)  # 0001-01-01T00:00:00Z ...
    offsets = np.full(n, -3600, dtype=np.int32)  # ... written an hour earlier: year 0
    path = damaged(tmp_path, kos_arrays, times=times, tz_offsets=offsets)
    assert_error(spca("info", path),
                 f"{path}: damaged corpus: 'times' holds a time outside the years 1-9999")


# ---------------------------------------------------------------------- JSON lines, YAML
def test_json_lines_that_python_cannot_parse_are_one_line(tmp_path):
    huge = tmp_path / "huge.jsonl"
    huge.write_text('{"text": "fares went up", "n": ' + "9" * 5000 + "}\n")
    assert_error(spca("info", huge),
                 f"{huge}: line 1: malformed JSON (an integer of more than 4,300 digits)")
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"text": "late again"}\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    assert_error(spca("info", deep), f"{deep}: line 2: malformed JSON (nested too deeply)")


def test_a_yaml_config_with_a_nul_byte_is_one_line(tmp_path):
    config = tmp_path / "nul.yaml"
    config.write_bytes(b"title: a\x00b\n")
    assert_error(spca("reproduce", config),
                 f'{config}: invalid YAML: unacceptable character #x0000: special characters '
                 f'are not allowed in "<unicode string>", position 8')
