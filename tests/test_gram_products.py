"""The products with A = S^T S behind ``Gram`` (``spca_cli.backend.LocalBackend``): the one-pass
numba block product on numba's threads, the CSC kernel, the diagonal, rows, columns and
submatrices (from the column cache too), against a dense S^T S and SciPy's products.

S comes in every form a caller may give it: counts, binary, mixed-sign weights, float32 and int,
repeated and unsorted entries, explicit zeros, empty rows, no entries, 64-bit and read-only
arrays; blocks X 1-D and 2-D of every layout; one thread to more threads than documents. The
kernel does not check its indices itself, so ``matmat`` refuses a block of the wrong number of
rows before the kernel sees it (fewer rows would be read and written out of bounds).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spca_cli.backend as backend_module
from spca_cli.backend import LocalBackend
from spca_cli.corpus.uci import read_uci
from spca_cli.matrix import Gram

REPO = Path(__file__).resolve().parent.parent
KOS_SAMPLE = REPO / "data_samples" / "docword.kos-sample.txt.gz"


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
        m = D.shape[0]
        for docs in (np.zeros(0, dtype=np.int64), np.arange(0, m, 2)):
            for threads in (1, 2, 3, m):
                cuts = b._document_cuts(threads, docs)
                last = docs.size if docs.size else m
                assert cuts[0] == 0 and cuts[-1] == last and len(cuts) == threads + 1
                assert np.all(np.diff(cuts) >= 0)


def _distinct_by_tuples(S):
    seen = {}
    for d in range(S.shape[0]):
        lo, hi = S.indptr[d], S.indptr[d + 1]
        key = (tuple(S.indices[lo:hi]), tuple(S.data[lo:hi]))
        seen.setdefault(key, []).append(d)
    firsts = sorted(rows[0] for rows in seen.values())
    copies = {rows[0]: len(rows) for rows in seen.values()}
    return np.array(firsts, dtype=np.int64), np.array([copies[d] for d in firsts], dtype=float)


@pytest.mark.parametrize("values", ["ones", "counts"])
def test_distinct_documents_equal_a_comparison_of_every_row(values):
    # documents with the same words and other counts hash alike and stay apart; empty rows
    # are one document
    from spca_cli.kernels.products import distinct_documents

    rng = np.random.default_rng(3)
    base = (rng.random((40, 12)) < 0.3) * (rng.integers(1, 3, (40, 12)) if values == "counts"
                                           else 1.0)
    D = base[rng.integers(0, 40, 400)]
    D[rng.random(400) < 0.05] = 0.0
    S = sp.csr_array(D)
    b = LocalBackend(S=S)
    got = distinct_documents(*backend_module._kernel_arrays(S), b._is_binary())
    want = _distinct_by_tuples(S)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("values", ["ones", "counts", "mixed"])
@pytest.mark.parametrize("threads", [2, 3])
def test_products_over_repeated_documents_read_each_once(monkeypatch, values, threads):
    # 90% of the documents repeat an earlier one: the threads' products read the distinct
    # ones, times their copies, and equal the dense S^T S X
    monkeypatch.setattr(backend_module, "_PARALLEL_PRODUCT_NNZ", 0)
    rng = np.random.default_rng(threads)
    base = (rng.random((30, 50)) < 0.2) * {"ones": np.ones((30, 50)),
                                           "counts": rng.integers(1, 4, (30, 50)),
                                           "mixed": rng.standard_normal((30, 50))}[values]
    D = base[rng.integers(0, 30, 300)]
    b = LocalBackend(S=sp.csr_array(D), threads=threads)
    X = rng.standard_normal((50, 4))
    _close(b.matmat(X), D.T @ (D @ X))
    docs, copies = b._distinct
    assert 0 < docs.size <= 30 and copies.sum() == 300


@pytest.mark.parametrize("threads", [1, 2])
def test_every_width_of_block_gives_the_dense_product(monkeypatch, threads):
    # widths the kernel takes padded with zero columns (6, 7, 10, 11, 14, 15) and as they are,
    # a vector and a block given in Fortran order: A X of the width asked for
    monkeypatch.setattr(backend_module, "_PARALLEL_PRODUCT_NNZ", 0)
    rng = np.random.default_rng(21)
    D = (rng.random((200, 40)) < 0.25) * rng.integers(1, 4, (200, 40))
    b = LocalBackend(S=sp.csr_array(D * 1.0), threads=threads)
    for width in range(1, 17):
        X = rng.standard_normal((40, width))
        _close(b.matmat(X), D.T @ (D @ X))
        _close(b.matmat(np.asfortranarray(X)), D.T @ (D @ X))
    x = rng.standard_normal(40)
    _close(b.matmat(x), D.T @ (D @ x))
    assert backend_module._padded_block(np.ones((40, 7))).shape == (40, 8)
    assert backend_module._padded_block(np.ones((40, 9))).shape == (40, 9)


@pytest.mark.parametrize("values", ["ones", "counts", "mixed"])
@pytest.mark.parametrize("count", [3, 10])
def test_columns_over_repeated_documents_read_each_once(monkeypatch, values, count):
    # the same corpus: the columns A[:, idx] of a large S (the products' threads) read the
    # distinct documents times their copies, on one thread (a few columns) and on several,
    # and equal the dense S^T S[:, idx]
    monkeypatch.setattr(backend_module, "_PARALLEL_PRODUCT_NNZ", 0)
    rng = np.random.default_rng(7 + count)
    base = (rng.random((30, 50)) < 0.2) * {"ones": np.ones((30, 50)),
                                           "counts": rng.integers(1, 4, (30, 50)),
                                           "mixed": rng.standard_normal((30, 50))}[values]
    D = base[rng.integers(0, 30, 300)]
    b = LocalBackend(S=sp.csr_array(D), threads=2)
    idx = np.array([3, 0, 49, 17, 3, 25, 8, 41, 12, 30][:count])
    _close(b.rows(idx), (D.T @ D[:, idx]).T)
    copies = b._row_copies()
    assert copies.size == 300 and copies.sum() == 300 and np.count_nonzero(copies) <= 30


def test_matmat_refuses_a_block_of_the_wrong_shape():
    """A block with another number of rows than A is a ValueError, as SciPy's products raise.
    Fewer rows, which the unchecked kernel would read and write out of bounds, are tried in a
    child process, so an abort would fail the test instead of the suite."""
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


def _noncanonical(S, rng):
    """S with every entry split in two halves, in shuffled order (repeated, unsorted entries)."""
    coo = S.tocoo()
    rows, cols = np.tile(coo.row, 2), np.tile(coo.col, 2)
    perm = rng.permutation(rows.size)
    return sp.csr_array((np.tile(coo.data * 0.5, 2)[perm], (rows[perm], cols[perm])),
                        shape=S.shape)


@pytest.mark.parametrize("documents", [0, 1, 2, 7, 50])
@pytest.mark.parametrize("threads", [1, 2, 3, 64])
def test_threaded_products_rows_and_cached_submatrices_equal_the_dense_gram(
        monkeypatch, documents, threads):
    """More threads than documents, one or zero documents, 1-D and 1-column X, room for one
    thread's sum only (``_PRODUCT_BYTES`` tiny), repeated entries; rows() from 8 words on the parallel
    kernel; submatrix() from the column cache with repeated, unsorted and empty idx."""
    rng = np.random.default_rng(documents * 100 + threads)
    n = 12
    S = sp.csr_array(sp.random(documents, n, density=0.4, random_state=documents)) * 3.0
    if S.nnz:
        S = _noncanonical(S, rng)
    D = (S.T @ S).toarray()
    backend = LocalBackend(S=S, threads=threads)
    for product_bytes in (backend_module._PRODUCT_BYTES, 8):
        monkeypatch.setattr(backend_module, "_PRODUCT_BYTES", product_bytes)
        for X in (rng.standard_normal(n), rng.standard_normal((n, 1)), rng.standard_normal((n, 5))):
            got = backend.matmat(X)
            assert got.shape == X.shape
            np.testing.assert_allclose(got, D @ X, atol=1e-12)
    for idx in (np.arange(n)[::-1], np.array([2, 2, 0, 11, 5, 5, 1, 9, 3]), np.array([4])):
        np.testing.assert_allclose(backend.rows(idx), D[idx], atol=1e-12)
    backend.columns(np.arange(n))  # every column cached: submatrix reads them
    for idx in (np.array([9, 2, 2, 11, 0]), np.arange(n)[::-1], np.array([], dtype=np.int64)):
        sub = backend.submatrix(idx)
        assert sub.shape == (idx.size, idx.size) and np.array_equal(sub, sub.T)
        np.testing.assert_allclose(sub, D[np.ix_(idx, idx)], atol=1e-12)


def test_cached_submatrix_of_masked_and_projected_views():
    """Gram.submatrix applies the mask and projection after the backend's cached read."""
    S = sp.csr_array(sp.random(40, 12, density=0.3, random_state=3)) * 1.7
    G = Gram.from_documents(S)
    G.base_columns(np.arange(12))
    x = np.zeros(12)
    x[[1, 4, 7]] = [0.5, -1.0, 2.0]
    for view in (G.remove(np.array([0, 5])), G.project_out(x), G.remove(np.array([3])).project_out(x)):
        D = view.to_dense()
        for idx in (np.array([9, 2, 2, 11, 0]), np.arange(12)[::-1]):
            np.testing.assert_allclose(view.submatrix(idx), D[np.ix_(idx, idx)], atol=1e-10)


@pytest.mark.parametrize("threads", [1, 2])
def test_products_written_into_a_given_buffer_equal_the_returned_ones(threads):
    """``Gram.matmat(V, out=...)`` writes into a column slice of a Fortran-ordered buffer (the
    eigen step's images) exactly what it returns without one, on A and on its views."""
    rng = np.random.default_rng(7)
    counts = (rng.random((40, 25)) < 0.3) * rng.integers(1, 4, (40, 25))
    A = Gram(_backend=LocalBackend(S=sp.csr_array(counts.astype(float)), threads=threads))
    x = rng.standard_normal(25)
    views = {"A": A, "removed": A.remove([2, 5]),
             "projected": A.project_out(x / np.linalg.norm(x))}
    for name, view in views.items():
        for V in (rng.standard_normal((25, 3)), rng.standard_normal(25)):
            buffer = np.full((25, 6), np.nan, order="F")
            part = buffer[:, 2:2 + (V.shape[1] if V.ndim == 2 else 1)]
            out = part if V.ndim == 2 else part[:, 0]
            got = view.matmat(V, out=out)
            assert got is out, name
            _close(np.asarray(got), view.matmat(V))
            assert np.isnan(buffer[:, :2]).all() and np.isnan(buffer[:, 2 + part.shape[1]:]).all()


def test_the_csc_made_on_several_threads_is_the_one_made_on_one():
    """The counting sort by column on 1, 2, 3 and more threads than rows gives the serial
    kernel's arrays (each column's rows increasing), with and without values, on S with empty
    rows, empty columns and one row; the backend uses it for S of a million entries or more."""
    from spca_cli.kernels.products import documents_by_word, documents_by_word_parallel

    rng = np.random.default_rng(3)
    shapes = [(40, 25, 0.3), (7, 30, 0.5), (1, 12, 0.6), (30, 5, 0.0), (200, 60, 0.05)]
    for m, n, density in shapes:
        counts = (rng.random((m, n)) < density) * rng.integers(1, 5, (m, n))
        if m > 2:
            counts[1] = 0
        indptr, indices, data = backend_module._kernel_arrays(
            sp.csr_array(counts.astype(np.float64)))
        for with_data in (True, False):
            serial = documents_by_word(indptr, indices, data, n, with_data)
            for threads in (1, 2, 3, m + 2):
                parallel = documents_by_word_parallel(indptr, indices, data, n, with_data,
                                                      threads)
                for got, want in zip(parallel, serial):
                    assert np.array_equal(got, want), (m, n, with_data, threads)


def test_columns_asked_from_two_threads_at_once_are_formed_once_and_equal_the_dense_gram(
        monkeypatch):
    """A step beside the run (threads.beside) may ask for the columns the run asks for: each
    missing column is formed by one thread while the other waits, then read from the cache."""
    import threading

    rng = np.random.default_rng(7)
    S = sp.csr_array(rng.poisson(0.3, (400, 120)).astype(float))
    dense = (S.T @ S).toarray()
    backend = LocalBackend(S=S)
    formed = []
    rows = LocalBackend.rows

    def counted(self, idx, dtype=np.float64):
        formed.extend(np.asarray(idx).tolist())
        return rows(self, idx, dtype)

    monkeypatch.setattr(LocalBackend, "rows", counted)
    idx = np.arange(0, 120, 2)
    start = threading.Barrier(2)
    got = {}

    def ask(name):
        start.wait()
        got[name] = backend.column_list(idx)

    workers = [threading.Thread(target=ask, args=(name,)) for name in ("a", "b")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sorted(formed) == idx.tolist()  # each column formed once
    for name in ("a", "b"):
        np.testing.assert_array_equal(np.stack(got[name], axis=1), dense[:, idx])


@pytest.mark.parametrize("S, exact", [
    (sp.csr_array(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])), True),  # binary
    (sp.csr_array(np.array([[3.0, 1.0, 0.0], [0.0, 2.0, 5.0]])), True),  # counts
    (sp.csr_array(np.array([[0.5, 1.0, 0.0], [0.0, 1.5, 1.0]])), False),  # weighted
    (sp.csr_array(np.array([[5000.0, 1.0], [0.0, 1.0]])), False),  # A_11 = 2.5e7 > 2^24
])
def test_columns_are_exact_for_integer_counts_whose_products_float32_holds(S, exact):
    """Gram.exact_columns: the columns are the same numbers whichever kernel or thread forms
    them (a step beside the run may then form them): integer S below 2^24 on A's diagonal,
    or a dense A read as given."""
    assert Gram.from_documents(S).exact_columns() is exact
    assert Gram.from_dense((S.T @ S).toarray()).exact_columns() is True


def test_a_backend_pickles_without_its_lock_and_forms_columns_after():
    """A Dask worker may send its shard's backend to another worker or spill it to disk: the
    pickle holds S and the columns formed (not the lock), and the copy answers the same and
    forms new columns under a lock of its own."""
    import pickle

    S = sp.random(60, 30, density=0.2, random_state=1, format="csr",
                  data_rvs=lambda size: np.ones(size))
    local = backend_module.LocalBackend(S=S, threads=1)
    first = local.rows(np.array([0, 3, 7]))
    copy = pickle.loads(pickle.dumps(local))
    assert copy._forming is not local._forming
    assert np.array_equal(copy.rows(np.array([0, 3, 7])), first)
    dense = (S.T @ S).toarray()
    assert np.array_equal(copy.rows(np.array([5, 29])), dense[[5, 29]])
