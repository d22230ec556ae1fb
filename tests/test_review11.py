"""Review of the commits b9e0bdb..30cdce8 (session 10): the one-pass block product and the CSC
kernel behind LocalBackend, min_count/binary applied while the ingest's parts merge, the parallel
ingest's texts in shared memory, and the spannogram's early refusal counting the leading classes
first.

What broke (each named test fails on 30cdce8):

* ``LocalBackend.matmat`` (and so the public ``spca_cli.Gram.matmat``) handed a block X of the
  wrong number of rows to the numba kernel, which does not check its indices: a block with more
  rows than A came back with that shape, silently, and one with fewer rows was read and written
  out of bounds (``free(): corrupted unsorted chunks``, the interpreter aborted). SciPy's
  products, which the kernel replaced, raised ``ValueError: dimension mismatch``
  (``test_matmat_refuses_a_block_of_the_wrong_shape``).
* The parallel ingest created its shared texts file whenever ``os.memfd_create`` existed; a
  system refusing it (ENOSYS, EPERM) ended read_corpus with the OSError instead of sending the
  texts through the pool (``test_memfd_refused_sends_the_texts``).

Everything else here held and stays as evidence: products, diagonals, submatrices, columns and
the CSC arrays against a dense S^T S (counts, binary, mixed-sign weights, float32 and int S,
repeated and unsorted entries, explicit zeros, empty rows, no entries, 64-bit and read-only
arrays, more threads than documents); the merge with min_count 1/2/5 and binary against filtering
after it, on real tweets, serial and parallel, with ``contains``, stop lists and every weighting;
the shared texts with texts longer than their lines (``&nLt;`` is six UTF-8 bytes from five),
BOM, CRLF, lone CR, lone surrogates, a worker's failure and its exit; ``--documents`` after a
parallel read; ``_fewest_classes`` against a brute-force count with ties, zeros and tiny heads.
"""

from __future__ import annotations

import csv
import errno
import gc
import html
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spca_cli.backend as backend_module
import spca_cli.solvers.spannogram as spannogram
from spca_cli.backend import LocalBackend
from spca_cli.cli import cli
from spca_cli.corpus import read_corpus
from spca_cli.corpus.tokenize import (VocabularyBuilder, apply_weighting, filter_words,
                                      make_analyzer, merge_parts)
from spca_cli.corpus.uci import read_uci
from spca_cli.errors import SpcaInputError
from spca_cli.matrix import Gram

REPO = Path(__file__).resolve().parent.parent
KOS_SAMPLE = REPO / "data_samples" / "docword.kos-sample.txt.gz"
AIRLINE = REPO.parent / "shared" / "data" / "twitter_us_airline_sentiment.csv"


# ------------------------------------------------------------------ block products, CSC
def _dense(S):
    return np.asarray(sp.csr_array(S, dtype=np.float64).toarray()) if sp.issparse(S) else S


def _close(got, want):
    """Equal to 1e-12 relative to the largest entry of ``want`` (1 at least)."""
    assert got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    assert float(np.abs(got - want).max(initial=0.0)) <= 1e-12 * scale


def _blocks(rng, n):
    """X as callers may give it: 2-D, 1-D, Fortran order, a strided view, float32, int, width 0."""
    return [rng.standard_normal((n, 3)), rng.standard_normal(n),
            np.asfortranarray(rng.standard_normal((n, 4))), rng.standard_normal((n, 10))[:, ::3],
            rng.standard_normal((n, 2)).astype(np.float32), rng.integers(-3, 4, (n, 2)),
            np.zeros((n, 0))]


def _check_backend(S, threads, rng):
    D = _dense(S)
    A = D.T @ D
    n = A.shape[0]
    b = LocalBackend(S=S, threads=threads)
    for X in _blocks(rng, n):
        _close(b.matmat(X), A @ np.asarray(X, dtype=np.float64))
    _close(b.diagonal(), np.diag(A).copy())
    if n == 0:
        return
    idx = np.sort(rng.choice(n, size=min(n, 6), replace=False)).astype(np.int64)
    _close(b.submatrix(idx), A[np.ix_(idx, idx)])
    w = rng.standard_normal(len(idx))
    _close(b.sparse_matvec(idx, w), A[:, idx] @ w)
    _close(b.rows(np.arange(n)), A)  # 8 or more words: the parallel column kernel too
    _close(b.columns(idx), A[:, idx])
    # the CSC arrays themselves: each column's documents in increasing order, with S's values
    cindptr, cindices, cdata = b._documents_by_word()
    C = sp.csc_array(b.S)
    C.sum_duplicates()
    C.sort_indices()
    assert cindptr.tolist() == C.indptr.tolist()
    assert cindices.tolist() == C.indices.tolist()
    assert cdata.tolist() == C.data.tolist()


def _matrices(rng, m, n):
    """S of every kind the brief names, as a list of (label, S)."""
    counts = (rng.random((m, n)) < 0.3) * rng.integers(1, 5, (m, n))
    if m > 2:
        counts[1] = 0  # an empty row
    if n > 2:
        counts[:, 2] = 0  # a word in no document
    signs = rng.choice([-1.5, 2.0, 0.25, -0.5], (m, n))
    weighted = counts * signs
    out = [("counts", sp.csr_array(counts.astype(np.float64))),
           ("binary", sp.csr_array((counts > 0).astype(np.float64))),
           ("mixed sign", sp.csr_array(weighted)),
           ("float32", sp.csr_array(weighted.astype(np.float32))),
           ("int csr_matrix", sp.csr_matrix(counts.astype(np.int32))),
           ("no entries", sp.csr_array((m, n)))]
    zeros = sp.csr_array(counts.astype(np.float64))
    zeros.data[::2] = 0.0  # explicit zeros: stored, not binary
    out.append(("explicit zeros", zeros))
    wide = sp.csr_array(weighted)
    wide.indices, wide.indptr = wide.indices.astype(np.int64), wide.indptr.astype(np.int64)
    out.append(("64-bit", wide))
    # repeated (document, word) entries in no order, as a Python user may build S: they add up
    k = 3 * m
    rows, cols = rng.integers(0, m, k), rng.integers(0, n, k) if n else np.zeros(k, np.int64)
    vals = rng.choice([1.0, -2.0, 0.5, 1.0], k)
    if n:
        order = np.argsort(rows, kind="stable")
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=m))])
        out.append(("repeated, unsorted", sp.csr_array((vals[order], cols[order], indptr),
                                                      shape=(m, n))))
        out.append(("repeated ones", sp.csr_array((np.ones(k), cols[order], indptr),
                                                 shape=(m, n))))
        out.append(("coo", sp.coo_array((vals, (rows, cols)), shape=(m, n))))
    ro = sp.csr_array((counts > 0).astype(np.float64))
    for a in (ro.data, ro.indices, ro.indptr):
        a.flags.writeable = False
    out.append(("read-only binary", ro))
    return out


@pytest.mark.parametrize("threads", [None, 1, 2, 3, 50])
def test_products_against_dense_every_kind_of_S(threads):
    """Every kind of S, 1-D and 2-D blocks of every layout, one thread to more threads than
    documents: A X, diag(A), A[idx, idx], A[:, idx], A x and the CSC arrays equal the dense
    S^T S to 1e-12."""
    rng = np.random.default_rng(threads or 0)
    for m, n in ((25, 13), (3, 9), (1, 5), (0, 4), (6, 0)):
        for label, S in _matrices(rng, m, n):
            try:
                _check_backend(S, threads, rng)
            except AssertionError as exc:  # name the case
                raise AssertionError(f"{label}, {m}x{n}, threads {threads}") from exc


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2 ** 32 - 1), m=st.integers(0, 40), n=st.integers(1, 20),
       density=st.floats(0.0, 1.0), threads=st.integers(1, 60),
       values=st.sampled_from(["ones", "counts", "mixed"]),
       product_bytes=st.sampled_from([8, 64 << 20]))
def test_products_property(monkeypatch, seed, m, n, density, threads, values, product_bytes):
    """Random S and thread counts through the default route (numba's threads from 0 entries)
    and a thread sum budget so small one thread takes all: A X equals the dense product."""
    monkeypatch.setattr(backend_module, "_PARALLEL_PRODUCT_NNZ", 0)
    monkeypatch.setattr(backend_module, "_PRODUCT_BYTES", product_bytes)
    rng = np.random.default_rng(seed)
    mask = rng.random((m, n)) < density
    D = mask * {"ones": np.ones((m, n)), "counts": rng.integers(1, 6, (m, n)),
                "mixed": rng.standard_normal((m, n))}[values]
    S = sp.csr_array(D)
    A = D.T @ D
    for b in (LocalBackend(S=S), LocalBackend(S=S, threads=threads)):
        X = rng.standard_normal((n, int(rng.integers(1, 5))))
        _close(b.matmat(X), A @ X)
        _close(b.matmat(X[:, 0]), A @ X[:, 0])
        _close(b.diagonal(), np.diag(A).copy())
        # (drawn counts can all be 1: binary is what the stored values are, not how drawn)
        assert b._is_binary() == bool(S.nnz == 0 or np.all(S.data == 1.0))


def test_document_cuts_cover_the_documents_once():
    """The threads' runs of documents: increasing, from 0 to m, for any thread count (one
    heavy document, empty rows, no entries)."""
    rng = np.random.default_rng(5)
    for D in (np.eye(7), np.zeros((5, 3)), np.r_[np.ones((1, 40)), np.zeros((9, 40))],
              (rng.random((300, 30)) < 0.1) * 1.0):
        b = LocalBackend(S=sp.csr_array(D))
        for threads in (1, 2, 3, D.shape[0]):
            cuts = b._document_cuts(threads)
            assert cuts[0] == 0 and cuts[-1] == D.shape[0] and len(cuts) == threads + 1
            assert np.all(np.diff(cuts) >= 0)


def test_matmat_refuses_a_block_of_the_wrong_shape():
    """A block with another number of rows than A: SciPy's product said so (ValueError); the
    kernel returned a (n + 1)-row answer. Fewer rows (out of bounds: the interpreter aborted on
    30cdce8) are tried in a child process."""
    rng = np.random.default_rng(2)
    D = (rng.random((200, 50)) < 0.3) * 1.0
    G = Gram.from_documents(sp.csr_array(D))
    for shape in ((51, 2), (51,), (50, 2, 1)):
        with pytest.raises(ValueError):
            G.backend.matmat(np.ones(shape))
    with pytest.raises(ValueError):
        G.matmat(np.ones((51, 3)))
    code = (
        "import numpy as np, scipy.sparse as sp\n"
        "from spca_cli.matrix import Gram\n"
        "D = (np.random.default_rng(2).random((200, 50)) < 0.3) * 1.0\n"
        "G = Gram.from_documents(sp.csr_array(D))\n"
        "refused = 0\n"
        "for shape in [(49, 2), (49,), (3, 50), (1, 1)]:\n"
        "    try:\n"
        "        G.matmat(np.ones(shape))\n"
        "    except ValueError:\n"
        "        refused += 1\n"
        "print(refused)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == "4"


def test_kos_products_match_scipy():
    """The real KOS sample (counts, count weighting) and its binary and tf-idf-like forms, on
    two threads: the kernel's A X and diagonal against SciPy's S^T (S X)."""
    S, _ = read_uci(str(KOS_SAMPLE), vocab=str(REPO / "data_samples" / "vocab.kos-sample.txt"))
    S = sp.csr_array(S, dtype=np.float64)
    rng = np.random.default_rng(11)
    for M in (S, sp.csr_array((S != 0).astype(np.float64)), S * (1.0 / 3.0)):
        X = rng.standard_normal((M.shape[1], 7))
        want = np.asarray(M.T @ (M @ X))
        for threads in (1, 2):
            b = LocalBackend(S=M, threads=threads)
            _close(b.matmat(X), want)
            _close(b.matmat(X[:, 3]), want[:, 3])
            _close(b.diagonal(), np.asarray((M.multiply(M)).sum(axis=0)).ravel())
            idx = np.array([0, 5, 17, 100, 2000], dtype=np.int64)
            _close(b.columns(idx), np.asarray((M.T @ M[:, idx]).toarray()))


def test_gram_of_a_non_canonical_weighted_S_is_that_of_its_sum():
    """A Python user's S with repeated, unsorted, mixed-sign entries (float32): Gram's products
    and diagonal are those of the summed matrix."""
    rng = np.random.default_rng(9)
    rows, cols = rng.integers(0, 30, 200), rng.integers(0, 12, 200)
    vals = rng.choice([1.0, -1.0, 2.5, -0.75], 200).astype(np.float32)
    S = sp.coo_array((vals, (rows, cols)), shape=(30, 12)).tocsr()
    S.has_canonical_format = False  # as scipy leaves a COO conversion with repeats
    D = np.zeros((30, 12))
    np.add.at(D, (rows, cols), vals.astype(np.float64))
    G = Gram.from_documents(S)
    X = rng.standard_normal((12, 4))
    _close(G.matmat(X), D.T @ (D @ X))
    _close(G.base_diagonal(), (D * D).sum(axis=0))


# ------------------------------------------------------------------ real tweets
@pytest.fixture(scope="module")
def airline_texts():
    if not AIRLINE.exists():
        pytest.skip(f"{AIRLINE} not present")
    with open(AIRLINE, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [(r["tweet_id"], r["text"]) for r in rows]


@pytest.fixture
def parallel(monkeypatch):
    """Every raw file read in parallel byte ranges (two workers), however small."""
    import spca_cli.corpus.read as read_module

    monkeypatch.setattr(read_module, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(read_module, "_n_workers", lambda: 2)
    return read_module


def _read(read_module, monkeypatch, path, parallel, **options):
    monkeypatch.setattr(read_module, "PARALLEL_MIN_BYTES", 0 if parallel else 1 << 62)
    return read_corpus(str(path), **options)


def _same(a, b):
    assert a.S.shape == b.S.shape and (a.S != b.S).nnz == 0
    assert np.array_equal(a.vocabulary, b.vocabulary)
    assert a.texts == b.texts and a.ids == b.ids


# ------------------------------------------------------------------ merge with min_count
def _reference(parts, min_count, binary):
    """The old route: merge, then filter_words's min_count, then the binary weighting."""
    S, vocabulary = merge_parts(parts)
    S, vocabulary = filter_words(S, vocabulary, min_count=min_count)
    return (apply_weighting(S, "binary") if binary else S), vocabulary


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1), n_parts=st.integers(1, 5),
       min_count=st.sampled_from([1, 2, 3, 5, 40]), binary=st.booleans(),
       stopwords=st.sampled_from(["english", "none"]), repeat=st.integers(1, 300))
def test_merge_with_min_count_is_filtering_after_it(airline_texts, seed, n_parts, min_count,
                                                    binary, stopwords, repeat):
    """Real tweets cut at random into parts (some empty, one word repeated 300 times to need
    16-bit counts), each counted by its own builder: merging with min_count and binary gives the
    matrix and vocabulary of filtering after the merge."""
    rng = np.random.default_rng(seed)
    start = int(rng.integers(0, len(airline_texts) - 400))
    texts = [t for _, t in airline_texts[start:start + int(rng.integers(0, 400))]]
    if texts:
        texts[0] = texts[0] + " delay" * repeat
    cuts = np.sort(rng.integers(0, len(texts) + 1, n_parts - 1))
    analyzer = make_analyzer(3, stopwords)

    def parts():
        out = []
        for chunk in np.split(np.arange(len(texts)), cuts):
            builder = VocabularyBuilder()
            if len(chunk):
                analyzer.count_chunk([texts[i] for i in chunk], builder)
            out.append(builder.part())
        return out

    S, vocabulary = merge_parts(parts(), min_count, binary)
    R, expected = _reference(parts(), min_count, binary)
    assert vocabulary.tolist() == expected.tolist()
    assert S.shape == R.shape == (len(texts), len(expected))
    assert S.indices.tolist() == R.indices.tolist() and S.indptr.tolist() == R.indptr.tolist()
    assert S.data.tolist() == R.data.tolist()
    assert S.has_canonical_format
    if not binary and len(texts) and "delay" in vocabulary.tolist():
        assert S[0, vocabulary.tolist().index("delay")] >= repeat  # real counts, not ones


@pytest.mark.parametrize("options", [
    {}, {"min_count": 1}, {"min_count": 5}, {"weighting": "tfidf"},
    {"weighting": "count", "min_count": 3}, {"weighting": "tfidf", "min_count": 5},
    {"contains": ["flight", "cancelled"]}, {"contains": ["bag"], "min_count": 5,
                                            "weighting": "count"},
    {"stopwords": "none", "min_count": 2}, {"ngrams": "1-2", "min_count": 3}])
def test_read_corpus_parallel_serial_and_the_old_route(airline_texts, tmp_path, parallel,
                                                       monkeypatch, options):
    """6,000 airline tweets as JSON lines: the parallel read equals the serial one, and both
    equal counting with min_count 1 then filtering and weighting afterwards (the route before
    the merge took min_count; tf-idf and count see the real counts)."""
    path = tmp_path / "air.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for tweet_id, text in airline_texts[:6000]:
            f.write(json.dumps({"id_str": tweet_id, "text": text}, ensure_ascii=False) + "\n")
    fast = _read(parallel, monkeypatch, path, True, **options)
    slow = _read(parallel, monkeypatch, path, False, **options)
    _same(fast, slow)
    min_count = options.get("min_count", 2)
    weighting = options.get("weighting", "binary")
    raw = _read(parallel, monkeypatch, path, False,
                **{**options, "min_count": 1, "weighting": "count"})
    S, vocabulary = filter_words(raw.S, raw.vocabulary, min_count=min_count)
    S = apply_weighting(S, weighting)
    assert vocabulary.tolist() == fast.vocabulary.tolist()
    assert abs(S - fast.S).max() <= 1e-15
    if weighting == "count":
        assert fast.S.data.max() > 1  # counts, not ones
    if options.get("contains"):
        assert fast.S.shape[0] < 6000


def test_plain_text_parallel_min_count(airline_texts, tmp_path, parallel, monkeypatch):
    """The tweets as a text file (one per line), min_count 2 and 5, binary and count."""
    path = tmp_path / "air.txt"
    path.write_text("".join(t.replace("\n", " ").replace("\r", " ") + "\n"
                            for _, t in airline_texts[:5000]), encoding="utf-8")
    for options in ({}, {"min_count": 5, "weighting": "count"}):
        fast = _read(parallel, monkeypatch, path, True, **options)
        slow = _read(parallel, monkeypatch, path, False, **options)
        _same(fast, slow)
        assert fast.texts[3] == airline_texts[3][1].replace("\n", " ").replace("\r", " ").rstrip()


# ------------------------------------------------------------------ shared texts
@pytest.fixture
def write_log(parallel, monkeypatch, tmp_path):
    """Which ranges wrote their texts into the shared file and which sent them (a marker file
    per range, written by the worker)."""
    log = tmp_path / "ranges"
    log.mkdir()
    write = parallel._SharedTexts.write

    def spy(fd, byte_range, documents):
        out = write(fd, byte_range, documents)
        (log / str(byte_range[0])).write_text("sent" if out is documents else "shared")
        return out

    monkeypatch.setattr(parallel._SharedTexts, "write", staticmethod(spy))
    return lambda: sorted(p.read_text() for p in log.iterdir())


def _fds():
    return sorted(os.listdir("/proc/self/fd"))


def test_texts_longer_than_their_lines(airline_texts, tmp_path, parallel, monkeypatch,
                                       write_log):
    """``&nLt;`` decodes to six UTF-8 bytes (U+226A U+20D2) from five: the first 400 tweets,
    with 60 of them each, are longer than their lines, more than the first range's other lines
    make up for; that range is sent, the others shared. The texts and ids equal the serial
    read's and the decoded source (a mix of both ways, read in file order)."""
    path = tmp_path / "entities.jsonl"
    source = []
    with open(path, "w", encoding="utf-8") as f:
        for i, (tweet_id, text) in enumerate(airline_texts[:3000]):
            if i < 400:
                text = text + " " + "&nLt;" * 60
            source.append((tweet_id, html.unescape(text)))
            f.write(json.dumps({"id_str": tweet_id, "text": text}, ensure_ascii=False) + "\n")
    fast = _read(parallel, monkeypatch, path, True)
    assert write_log() == ["sent", "shared", "shared", "shared"]
    slow = _read(parallel, monkeypatch, path, False)
    _same(fast, slow)
    assert list(fast.texts) == [t.rstrip("\r\n") for _, t in source]
    assert list(fast.ids) == [i for i, _ in source]
    assert fast.texts[0].endswith("\u226a\u20d2" * 60)
    assert len(fast.texts[0].encode()) > len(json.dumps({"id_str": airline_texts[0][0],
                                                         "text": airline_texts[0][1] + " "
                                                         + "&nLt;" * 60}))


def test_every_range_too_long_and_none(airline_texts, tmp_path, parallel, monkeypatch,
                                       write_log):
    """Every range sent (every tweet entity-heavy), then a file where every range is shared."""
    path = tmp_path / "all.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for tweet_id, text in airline_texts[:1200]:
            f.write(json.dumps({"id": int(tweet_id), "text": text + " " + "&nGt;" * 60})
                        + "\n")
    fast = _read(parallel, monkeypatch, path, True)
    assert write_log() == ["sent"] * 4
    _same(fast, _read(parallel, monkeypatch, path, False))
    assert fast.texts[5].endswith("\u226b\u20d2" * 60)
    assert fast.ids[5] == str(int(airline_texts[5][0]))


def test_odd_bytes_in_json_lines_and_text(airline_texts, tmp_path, parallel, monkeypatch,
                                          write_log):
    """A BOM, CRLF and LF endings, JSON lone surrogates (stored as '?'), U+2028, escaped line
    ends and NUL in JSON; a text file with a BOM, CRLF, lone CR (a line end to Python's reader)
    and empty lines. Shared every range; the same texts, ids and rows as the serial read."""
    path = tmp_path / "odd.jsonl"
    with open(path, "wb") as f:
        f.write("\ufeff".encode())
        for i, (tweet_id, text) in enumerate(airline_texts[:3000]):
            line = json.dumps({"id_str": tweet_id, "text": text + " TAILMARK\u2028x\n\u0000"},
                              ensure_ascii=i % 3 == 0)
            if i % 7 == 0:
                line = line.replace("TAILMARK", "\\ud83d")
            f.write(line.encode() + (b"\r\n" if i % 2 else b"\n"))
    fast = _read(parallel, monkeypatch, path, True)
    assert write_log() == ["shared"] * 4
    slow = _read(parallel, monkeypatch, path, False)
    _same(fast, slow)
    assert fast.texts[0] == airline_texts[0][1] + " ?\u2028x\n\u0000"
    assert fast.texts[1] == airline_texts[1][1] + " TAILMARK\u2028x\n\u0000"
    assert list(fast.ids) == [i for i, _ in airline_texts[:3000]]

    text_path = tmp_path / "odd.txt"
    expected = []
    with open(text_path, "wb") as f:
        f.write("\ufeff".encode())
        for i, (_, text) in enumerate(airline_texts[:3000]):
            text = text.replace("\n", " ").replace("\r", " ")
            f.write(text.encode() + (b"\r\n" if i % 3 == 0 else b"\r" if i % 11 == 0 else b"\n"))
            expected.append(text.rstrip("\r\n"))
            if i % 13 == 0 and i % 11:  # (after a lone CR, LF would end that line)
                f.write(b"\n")
                expected.append("")
    fast = _read(parallel, monkeypatch, text_path, True)
    slow = _read(parallel, monkeypatch, text_path, False)
    _same(fast, slow)
    assert list(fast.texts) == expected and fast.S.shape[0] == len(expected)


_FAILURE = {}


def _failing_read_range(*args):
    """A worker of the parallel ingest (module level: the pool pickles it by name) that fails
    on the last byte range once its texts are written, as ``_FAILURE["how"]`` says."""
    failure, read_range, size, path = _FAILURE["how"]
    out = read_range(*args)
    if args[7][1] == size:  # the last byte range
        if failure == "input error":
            raise SpcaInputError(path, "a worker's bad line")
        os._exit(3)
    return out


@pytest.mark.parametrize("failure", ["input error", "worker exits"])
def test_a_failed_worker_falls_back_without_a_leak(airline_texts, tmp_path, parallel,
                                                   monkeypatch, failure):
    """The last range's worker raises SpcaInputError or exits after writing its texts: the
    serial read takes over, the same texts and rows, no file descriptor left open."""
    path = tmp_path / "air.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for tweet_id, text in airline_texts[:3000]:
            f.write(json.dumps({"id_str": tweet_id, "text": text}) + "\n")
    slow = _read(parallel, monkeypatch, path, False)
    size = os.path.getsize(path)
    monkeypatch.setitem(_FAILURE, "how", (failure, parallel._read_range, size, str(path)))
    monkeypatch.setattr(parallel, "_read_range", _failing_read_range)
    outcomes = []
    read_parallel = parallel._read_parallel
    monkeypatch.setattr(parallel, "_read_parallel",
                        lambda *a, **k: outcomes.append(read_parallel(*a, **k)) or outcomes[-1])
    before = _fds()
    fast = _read(parallel, monkeypatch, path, True)
    assert outcomes == [None]  # the parallel read gave up
    assert _fds() == before
    _same(fast, slow)


@pytest.mark.parametrize("refusal", [errno.ENOSYS, errno.EPERM])
def test_memfd_refused_sends_the_texts(airline_texts, tmp_path, parallel, monkeypatch, refusal):
    """``os.memfd_create`` present but refused (a kernel before 3.17, a seccomp sandbox): on
    30cdce8 the OSError ended read_corpus; the texts go through the pool instead, the same as
    the serial read's."""
    path = tmp_path / "air.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for tweet_id, text in airline_texts[:2000]:
            f.write(json.dumps({"id_str": tweet_id, "text": text}) + "\n")
    slow = _read(parallel, monkeypatch, path, False)

    def refuse(*args, **kwargs):
        raise OSError(refusal, os.strerror(refusal))

    monkeypatch.setattr(os, "memfd_create", refuse)
    before = _fds()
    fast = _read(parallel, monkeypatch, path, True)
    _same(fast, slow)
    assert fast.texts[1234] == html.unescape(airline_texts[1234][1])
    assert _fds() == before


def test_shared_texts_keep_one_descriptor_while_alive(airline_texts, tmp_path, parallel,
                                                      monkeypatch):
    """A parallel read's texts live in the memfd's mapping, which holds one duplicated
    descriptor as long as the texts do; freed with them."""
    path = tmp_path / "air.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for tweet_id, text in airline_texts[:2000]:
            f.write(json.dumps({"id_str": tweet_id, "text": text}) + "\n")
    gc.collect()
    before = _fds()
    corpus = _read(parallel, monkeypatch, path, True)
    held = set(_fds()) - set(before)
    assert len(held) <= 1
    assert all("spca-texts" in os.readlink(f"/proc/self/fd/{fd}") for fd in held)
    assert corpus.texts[1999] == airline_texts[1999][1]
    del corpus
    gc.collect()
    assert _fds() == before


def test_documents_shown_after_a_parallel_read(airline_texts, tmp_path, parallel, monkeypatch):
    """``spca topics --documents 4`` on a parallel read: the same topics and top documents as
    the serial read, and each listed row's id and text are that line's."""
    path = tmp_path / "air.jsonl"
    lines = []
    with open(path, "w", encoding="utf-8", newline="") as f:
        for i, (tweet_id, text) in enumerate(airline_texts[:4000]):
            line = json.dumps({"id_str": tweet_id, "text": text}, ensure_ascii=i % 2 == 0)
            lines.append((tweet_id, text))
            f.write(line + ("\r\n" if i % 5 == 0 else "\n"))

    def topics(parallel_read):
        monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0 if parallel_read else 1 << 62)
        result = CliRunner().invoke(cli, ["topics", str(path), "-k", "6", "-c", "2", "--budget",
                                          "0", "--documents", "4", "--format", "json",
                                          "--quiet"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["components"]

    fast, slow = topics(True), topics(False)
    assert fast == slow
    for component in fast:
        assert len(component["top_documents"]) == 4
        for item in component["top_documents"]:
            assert (item["id"], item["text"]) == (lines[item["row"]][0],
                                                  html.unescape(lines[item["row"]][1]))


# ------------------------------------------------------------------ spannogram's refusal
def _fewest_by_brute_force(Vc, norms, mult, k, tol, rng, tries=64):
    d = Vc.shape[1]
    directions = np.vstack([np.eye(d), rng.standard_normal((tries, d))])
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    if int(mult.sum()) < k:
        return 0
    amp = np.abs(directions @ Vc.T)
    kth = [np.sort(np.repeat(a, mult))[::-1][k - 1] for a in amp]
    return int(np.sum(norms >= min(kth) - 4.0 * tol))


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(1, 300), d=st.integers(2, 4),
       k=st.integers(1, 12), kind=st.sampled_from(["ties", "zeros", "lattice", "heavy",
                                                   "one axis", "parallel"]),
       head=st.integers(1, 6), tol=st.sampled_from([0.0, 1e-9, 1e-3]))
def test_fewest_classes_is_the_count_of_every_class(monkeypatch, seed, n, d, k, kind, head,
                                                    tol):
    """Classes by decreasing norm with tied rows, zero rows, lattice rows (many equal norms and
    amplitudes), heavy tails, rows on one axis (amplitudes equal to norms) and rows parallel to
    one of the random directions; heads of 1-6 (at least 4 k are looked at), k above the number
    of classes: the same count as the k-th largest over every word."""
    monkeypatch.setattr(spannogram, "_FEWEST_HEAD", head)
    rng = np.random.default_rng(seed)
    if kind == "ties":
        Vc = rng.integers(-2, 3, (3, d)).astype(float)[rng.integers(0, 3, n)]
    elif kind == "zeros":
        Vc = rng.standard_normal((n, d)) * (rng.random((n, 1)) < 0.5)
    elif kind == "lattice":
        Vc = rng.integers(-1, 2, (n, d)).astype(float)
    elif kind == "heavy":
        Vc = rng.standard_normal((n, d)) * rng.exponential(1.0, (n, 1)) ** 4
    elif kind == "one axis":
        Vc = np.zeros((n, d))
        Vc[:, 0] = rng.choice([1.0, 0.5, 0.25, -1.0], n)
    else:
        directions = np.random.default_rng(seed + 1).standard_normal((64, d))
        c = directions[0] / np.linalg.norm(directions[0])
        Vc = rng.integers(1, 4, (n, 1)) * c[None, :] + rng.integers(-1, 2, (n, d)) * 1e-17
    norms = np.linalg.norm(Vc, axis=1)
    order = np.argsort(-norms, kind="stable")
    Vc, norms = np.ascontiguousarray(Vc[order]), norms[order]
    mult = rng.integers(1, 4, n).astype(np.int64)
    got = spannogram._fewest_classes(Vc, norms, mult, k, tol, np.random.default_rng(seed + 1))
    want = _fewest_by_brute_force(Vc, norms, mult, k, tol, np.random.default_rng(seed + 1))
    assert got == want
