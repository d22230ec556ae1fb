"""Property tests: whatever bytes reach a reader, ``spca info`` ends with exit 0 or with one clean
``Error: FILE: ...`` line and exit 1, never a traceback (any exception other than SystemExit)
or a signal. Inputs are the tests' real tweets / UCI files and a saved real KOS sample, mutated
by Hypothesis: bytes replaced, inserted and cut, or (for .npz) whole arrays swapped for arrays of
other dtypes and shapes. Example counts stay modest so that ``make test`` stays fast."""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from spca_cli.cli import cli
from spca_cli.corpus import load_input, save_corpus

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
# SPCA_FUZZ_EXAMPLES=500 for a deeper, randomised run; by default 40 fixed examples each
_DEEP = int(os.environ.get("SPCA_FUZZ_EXAMPLES", "0"))
FUZZ = settings(max_examples=_DEEP or 40, deadline=None, derandomize=not _DEEP, database=None,
                suppress_health_check=[HealthCheck.too_slow])

# bytes that matter to the parsers: separators, quotes, brackets, digits, signs, NUL, UTF-8 tails
INTERESTING = st.sampled_from(list(b',"\n\r\t {}[]:0123456789-+.eE\\\x00\xff\xc3') + [0x80])


@st.composite
def mutated(draw, seed):
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["replace", "insert", "delete", "cut", "repeat"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "replace" and data:
            data[pos] = draw(INTERESTING)
        elif op == "insert":
            data[pos:pos] = bytes(draw(st.lists(INTERESTING, min_size=1, max_size=8)))
        elif op == "delete" and data:
            del data[pos:pos + draw(st.integers(1, 12))]
        elif op == "cut":
            del data[pos:]
        elif op == "repeat" and data:
            data[pos:pos] = data[pos:pos + draw(st.integers(1, 40))] * draw(st.integers(1, 5))
    return bytes(data)


def assert_clean(args):
    result = CliRunner().invoke(cli, ["info", *args, "--eigenvalues", "2", "--format", "json"])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"traceback: {result.exception!r}") from result.exception
    assert result.exit_code in (0, 1), result.output
    if result.exit_code == 1:
        lines = result.stderr.splitlines()
        assert lines and lines[-1].startswith("Error: ") and "Traceback" not in result.stderr
        assert len([line for line in lines if line.startswith("Error: ")]) == 1


def _write(folder, name, payload):
    path = Path(folder) / name
    path.write_bytes(payload)
    return str(path)


@FUZZ
@given(mutated((DATA / "tiny.csv").read_bytes()))
def test_fuzzed_csv_is_read_or_refused_cleanly(payload):
    with tempfile.TemporaryDirectory() as folder:
        assert_clean([_write(folder, "t.csv", payload), "--min-count", "1"])


@FUZZ
@given(mutated((DATA / "tiny.jsonl").read_bytes()))
def test_fuzzed_json_lines_are_read_or_refused_cleanly(payload):
    with tempfile.TemporaryDirectory() as folder:
        assert_clean([_write(folder, "t.jsonl", payload), "--min-count", "1"])


@FUZZ
@given(mutated((DATA / "docword.tiny.txt").read_bytes()),
       st.one_of(st.just((DATA / "vocab.tiny.txt").read_bytes()),
                 mutated((DATA / "vocab.tiny.txt").read_bytes())))
def test_fuzzed_uci_is_read_or_refused_cleanly(docword, vocab):
    with tempfile.TemporaryDirectory() as folder:
        _write(folder, "vocab.t.txt", vocab)
        assert_clean([_write(folder, "docword.t.txt", docword)])


def _saved_kos():
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kos.npz"
        corpus = load_input(str(REPO / "data_samples" / "docword.kos-sample.txt.gz"))
        corpus.S = corpus.S[:40]  # a slice keeps each example fast
        corpus.ids = corpus.ids.take(np.arange(40))  # the documents' ids follow their rows
        save_corpus(corpus, path)
        buffer.write(path.read_bytes())
    return buffer.getvalue()


KOS_NPZ = _saved_kos()
with np.load(io.BytesIO(KOS_NPZ)) as _z:
    KOS_ARRAYS = {k: _z[k] for k in _z.files}

ARRAYS = hnp.arrays(
    dtype=st.one_of(hnp.integer_dtypes(), hnp.floating_dtypes(), hnp.complex_number_dtypes(),
                    hnp.boolean_dtypes(), hnp.unicode_string_dtypes(max_len=4)),
    shape=hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=6))


@st.composite
def swapped_arrays(draw):
    arrays = dict(KOS_ARRAYS)
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(sorted(KOS_ARRAYS)))
        action = draw(st.sampled_from(["drop", "random", "perturb"]))
        if action == "drop":
            arrays.pop(key, None)
        elif action == "random":
            arrays[key] = draw(ARRAYS)
        elif KOS_ARRAYS[key].dtype.kind in "iuf" and KOS_ARRAYS[key].size:
            values = KOS_ARRAYS[key].astype(np.float64 if key == "data" else np.int64)
            i = draw(st.integers(0, values.size - 1))
            values.flat[i] = draw(st.sampled_from([-1, 0, 7, 10 ** 9, -(10 ** 9)]
                                                  + ([np.nan, np.inf] if key == "data" else [])))
            arrays[key] = values
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


@FUZZ
@given(st.one_of(swapped_arrays(), mutated(KOS_NPZ)))
def test_fuzzed_saved_corpora_are_read_or_refused_cleanly(payload):
    with tempfile.TemporaryDirectory() as folder:
        assert_clean([_write(folder, "c.npz", payload)])


def test_the_fuzz_seeds_themselves_load():
    """The unmutated seeds are valid inputs, so the fuzzing starts from real, accepted data."""
    with tempfile.TemporaryDirectory() as folder:
        for name, extra in (("t.csv", ["--min-count", "1"]), ("t.jsonl", ["--min-count", "1"])):
            seed = (DATA / ("tiny" + Path(name).suffix)).read_bytes()
            result = CliRunner().invoke(cli, ["info", _write(folder, name, seed), *extra])
            assert result.exit_code == 0, result.output
        result = CliRunner().invoke(cli, ["info", _write(folder, "c.npz", KOS_NPZ)])
        assert result.exit_code == 0, result.output
        assert zipfile.is_zipfile(Path(folder) / "c.npz")
