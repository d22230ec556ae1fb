"""How the certificate and the block products store their numbers (the memory target of
bench_targets): the same values in less memory.

* the certificate's exact rows are float32 exactly when float32 holds them (counts), and the
  bound is then bit for bit the one of float64 rows;
* restricting a model row by row gives the rows fancy indexing gives;
* more exact rows come in two steps, and the bound stays above the brute-force optimum;
* block products over slices of the documents equal the whole product; the CSC copy has 32-bit
  positions and its k-sparse products equal dense algebra.

Real data: the KOS blog corpus (UCI bag of words, ../shared/data) when present.
"""

from itertools import combinations

import numpy as np
import pytest
import scipy.sparse as sp

import spca_cli.backend as backend_module
import spca_cli.bounds as bounds_module
from spca_cli.bounds import RowModel, row_certificate, weighted_row_bound
from spca_cli.corpus import read_corpus
from spca_cli.matrix import Gram


@pytest.fixture
def kos_S(kos_docword):
    return read_corpus(str(kos_docword)).S


def _float64_copy(model):
    return RowModel(model.words, model.diag, np.ascontiguousarray(model.CT, dtype=np.float64),
                    model.hpos, model.hrow)


def test_count_rows_are_float32_and_give_the_float64_bound(kos_S):
    A = Gram.from_documents(kos_S).remove(np.arange(10))
    model = RowModel.of(A, exact_rows=300)
    assert model.CT.dtype == np.float32
    wide = _float64_copy(model)
    assert np.array_equal(wide.CT, np.abs(A.columns(model.words[model.hrow])[model.words]).T)
    for k in (2, 10):
        narrow_bound = weighted_row_bound(model, k, totals=(5,))
        wide_bound = weighted_row_bound(wide, k, totals=(5,))
        assert narrow_bound.value == wide_bound.value
        assert narrow_bound.totals == wide_bound.totals
        assert np.array_equal(narrow_bound.weights, wide_bound.weights)


def test_rows_float32_would_round_stay_float64(kos_S):
    # tf-idf-like weights: products of non-dyadic numbers, which float32 cannot hold
    S = kos_S[:, :400].astype(np.float64) * (1.0 / 3.0)
    model = RowModel.of(Gram.from_documents(S), exact_rows=50)
    assert model.CT.dtype == np.float64
    A = Gram.from_documents(S)
    assert np.array_equal(model.CT, np.abs(A.columns(model.words[model.hrow])[model.words]).T)


@pytest.mark.parametrize("where", [0, 1, 4095, 123_457, 999_999])
def test_float32_check_finds_one_entry_it_would_round_anywhere(where):
    """The check samples the array first, then reads all of it: one entry float32 would round,
    on the sample or off it, in a contiguous array or a strided view, makes it False."""
    values = np.arange(1_000_000, dtype=np.float64) % 1000
    assert bounds_module.fits_float32(values)
    assert bounds_module.fits_float32(values.reshape(1000, 1000)[:, ::7])
    values[where] = 0.1
    assert not bounds_module.fits_float32(values)
    assert not bounds_module.fits_float32(values.reshape(1000, 1000).T)
    assert not bounds_module.fits_float32(np.array([2.0 ** 200]))  # beyond its range


def test_restrict_row_by_row_equals_fancy_indexing(kos_S):
    model = RowModel.of(Gram.from_documents(kos_S), exact_rows=200)
    keep = np.random.default_rng(0).random(model.size) < 0.7
    small = model.restrict(keep)
    kept_h = keep[model.hrow]
    assert small.CT.dtype == model.CT.dtype
    assert np.array_equal(small.CT, model.CT[kept_h][:, keep])
    assert np.array_equal(small.words, model.words[keep])
    assert np.array_equal(small.words[small.hrow], model.words[model.hrow[kept_h]])


def _brute(A, k):
    D = A.to_dense()
    words = np.flatnonzero(A.active())
    return max(np.linalg.eigvalsh(D[np.ix_(I, I)])[-1] for I in combinations(words.tolist(), k))


def test_exact_rows_come_in_two_steps_and_stay_upper_bounds(monkeypatch):
    # short binary documents over a flat vocabulary: Cauchy-Schwarz pairs are far too high, so
    # the certificate asks for more exact rows (budgets scaled down to a 14-word matrix)
    rng = np.random.default_rng(3)
    S = sp.csr_array((rng.random((300, 14)) < 0.3).astype(np.float64))
    A = Gram.from_documents(S)
    sizes = []
    original = bounds_module.weighted_row_bound

    def recorded(model, k, **kwargs):
        sizes.append(model.hrow.size)
        return original(model, k, **kwargs)

    monkeypatch.setattr(bounds_module, "EXACT_ROWS", 2)
    # a budget just short of every row (14 x 14): the rows come in two steps
    monkeypatch.setattr(bounds_module, "_EXACT_ENTRIES", 14 * 13)
    monkeypatch.setattr(bounds_module, "_ESCALATION_ENTRIES", (14 * 7, 14 * 13))
    monkeypatch.setattr(bounds_module, "weighted_row_bound", recorded)
    k = 3
    certificate = row_certificate(A, k)
    assert sizes[0] == 2
    assert sizes[1:] in ([7], [7, 13])  # half the entries first, all of them only if still asked
    assert certificate.bound.value >= _brute(A, k) * (1 - 1e-12)
    # a budget that holds every row: they come at once
    sizes.clear()
    monkeypatch.setattr(bounds_module, "_EXACT_ENTRIES", 14 * 14)
    certificate = row_certificate(A, k)
    assert sizes == [2, 14]
    assert certificate.bound.value >= _brute(A, k) * (1 - 1e-12)


@pytest.mark.parametrize("binary", [False, True])
def test_block_products_equal_scipys_two_products(kos_S, binary):
    """The one-pass kernel against S^T (S X) on the KOS counts and their binary weighting
    (whose values the kernel does not read), for a block and one vector."""
    S = kos_S.copy()
    if binary:
        S.data[:] = 1.0
    X = np.random.default_rng(1).standard_normal((S.shape[1], 6))
    expected = S.T @ (S @ X)
    scale = np.abs(expected).max()
    backend = backend_module.LocalBackend(S=S)
    assert backend._is_binary() == binary
    np.testing.assert_allclose(backend.matmat(X), expected, rtol=1e-12, atol=1e-12 * scale)
    vector = backend.matmat(X[:, 0])
    assert vector.shape == (S.shape[1],)
    np.testing.assert_allclose(vector, expected[:, 0], rtol=1e-12, atol=1e-12 * scale)


@pytest.mark.parametrize("threads", [2, 3])
def test_threaded_block_products_equal_one_thread(kos_S, monkeypatch, threads):
    """Runs of documents on several threads, each adding into its own sum: the product of one
    thread up to the order of the additions, for a block and one vector; with room for one
    thread's sum only, the product runs on one thread."""
    X = np.random.default_rng(2).standard_normal((kos_S.shape[1], 6))
    whole = backend_module.LocalBackend(S=kos_S, threads=1).matmat(X)
    scale = np.abs(whole).max()
    threaded = backend_module.LocalBackend(S=kos_S, threads=threads).matmat(X)
    assert not np.array_equal(threaded, whole)  # the sums were formed in another order...
    np.testing.assert_allclose(threaded, whole, rtol=1e-12, atol=1e-12 * scale)
    vector = backend_module.LocalBackend(S=kos_S, threads=threads).matmat(X[:, 0])
    np.testing.assert_allclose(vector, whole[:, 0], rtol=1e-12, atol=1e-12 * scale)
    monkeypatch.setattr(backend_module, "_PRODUCT_BYTES", 8 * X.size)
    assert np.array_equal(backend_module.LocalBackend(S=kos_S, threads=threads).matmat(X), whole)


def test_document_cuts_balance_entries(kos_S):
    backend = backend_module.LocalBackend(S=kos_S)
    cuts = backend._document_cuts(3, np.zeros(0, dtype=np.int64))
    assert cuts[0] == 0 and cuts[-1] == kos_S.shape[0] and np.all(np.diff(cuts) > 0)
    entries = np.diff(kos_S.indptr[cuts])
    assert entries.max() - entries.min() <= 2 * np.diff(kos_S.indptr).max()
    # over every other document: positions in that list, balanced by their entries
    docs = np.arange(0, kos_S.shape[0], 2)
    cuts = backend._document_cuts(3, docs)
    assert cuts[0] == 0 and cuts[-1] == docs.size and np.all(np.diff(cuts) > 0)
    lengths = np.diff(kos_S.indptr)[docs]
    entries = [lengths[a:b].sum() for a, b in zip(cuts[:-1], cuts[1:])]
    assert max(entries) - min(entries) <= 2 * lengths.max()


def test_large_matrices_multiply_on_numba_threads(kos_S, monkeypatch):
    import numba

    backend = backend_module.LocalBackend(S=kos_S)
    assert backend._product_threads() == 1  # 467,714 entries: below the parallel threshold
    monkeypatch.setattr(backend_module, "_PARALLEL_PRODUCT_NNZ", kos_S.nnz)
    assert backend._product_threads() == numba.get_num_threads()


def test_parallel_columns_equal_serial_ones_exactly(kos_S):
    """Each column is summed by one thread in the serial order: bit for bit the same."""
    idx = np.argsort(-np.asarray(kos_S.sum(axis=0)).ravel())[:40]  # long columns first
    serial = backend_module.LocalBackend(S=kos_S, threads=1).rows(idx)
    parallel = backend_module.LocalBackend(S=kos_S, threads=2).rows(idx)
    assert np.array_equal(serial, parallel)
    assert np.array_equal(serial, (kos_S.T @ kos_S[:, idx]).toarray().T)


@pytest.mark.parametrize("binary", [False, True])
def test_csc_copy_has_32_bit_positions_and_exact_products(kos_S, binary):
    """The counting-sort CSC equals SciPy's (rows sorted in each column), with 32-bit positions;
    a binary S lends its own value array (all 1) instead of a copy."""
    S = kos_S.copy()
    if binary:
        S.data[:] = 1.0
    backend = backend_module.LocalBackend(S=S)
    idx = np.array([5, 17, 300], dtype=np.int64)
    w = np.array([1.0, -2.0, 0.5])
    cols = backend.columns(idx)
    cindptr, cindices, cdata = backend._documents_by_word()
    expected = sp.csc_array(S)
    expected.sort_indices()
    assert cindices.dtype == np.uint32
    assert np.array_equal(cindptr, expected.indptr) and np.array_equal(cindices, expected.indices)
    assert np.array_equal(cdata, expected.data)
    assert (cdata is backend.S.data) == binary
    dense = (S.T @ S[:, idx]).toarray()
    assert np.array_equal(cols, dense)
    np.testing.assert_allclose(backend.sparse_matvec(idx, w), dense @ w, rtol=1e-12)
    np.testing.assert_array_equal(backend.submatrix(idx), dense[idx])


@pytest.mark.parametrize("weighted", [False, True])
def test_both_submatrix_kernels_give_the_principal_submatrix(kos_S, weighted):
    """Few words: column pairs; many (beyond twice the mean document length): documents one by
    one; words whose columns are cached: read from them. All equal S_I^T S_I on the KOS counts
    (exactly) and on real weights, symmetric."""
    S = kos_S.astype(np.float64)
    if weighted:  # tf-idf-like weights: sums in another order differ in the last bits only
        S = S.copy()
        S.data = np.log1p(S.data) * np.random.default_rng(3).uniform(0.5, 2.0, S.nnz)
    backend = backend_module.LocalBackend(S=S)
    mean_length = S.nnz / S.shape[0]
    diag = backend.diagonal()
    for size in (5, int(2 * mean_length) + 20):
        idx = np.sort(np.argsort(-diag)[:size]).astype(np.int64)
        expected = (S[:, idx].T @ S[:, idx]).toarray()
        got = backend.submatrix(idx)
        backend.columns(idx)  # now cached: the submatrix is read from the columns
        cached = backend.submatrix(idx)
        for sub in (got, cached):
            assert np.array_equal(sub, sub.T)
            if weighted:
                np.testing.assert_allclose(sub, expected, rtol=1e-12)
            else:
                assert np.array_equal(sub, expected)
        fresh = backend_module.LocalBackend(S=S)
        fresh.columns(idx[1:])  # one word not cached: the kernels, not the cache
        assert np.array_equal(fresh.submatrix(idx), got)


def test_float64_rows_after_float32_ones_leave_no_warning(recwarn):
    # the first exact rows fit float32, a later one does not: the switch copies only the rows
    # written so far (a cast of the uninitialised rest warned "invalid value", a run's note)
    S = sp.csr_array(np.array([[1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0],
                               [1.0, 1.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.1]]))
    A = Gram.from_documents(S)
    columns = np.abs(A.to_dense())
    # words 0 and 1 co-occur in counts only; word 2 meets word 3's weight 0.1
    assert [np.array_equal(c.astype(np.float32), c) for c in columns] == [True, True, False, False]
    model = RowModel.of(A, exact_rows=4)
    assert model.CT.dtype == np.float64
    assert np.array_equal(model.CT, columns)
    assert not [w for w in recwarn.list if issubclass(w.category, RuntimeWarning)]


def test_a_topics_run_on_one_or_two_threads_finds_the_same_certified_topics(airline_csv,
                                                                            monkeypatch):
    """The airline tweets with every product threaded (its 100,000 entries are below the usual
    threshold): the same words, values and certified ratios on one thread as on two."""
    import numba

    from spca_cli.topics import run_topics

    corpus = read_corpus(str(airline_csv))
    monkeypatch.setattr(backend_module, "_PARALLEL_PRODUCT_NNZ", 0)
    monkeypatch.setattr(backend_module, "_PARALLEL_COLUMNS", 1)
    before = numba.get_num_threads()
    runs = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            runs.append(run_topics(corpus, solver="spannogram", k=10, n_components=3, rank=2,
                                   random_state=0))
    finally:
        numba.set_num_threads(before)
    one, two = runs
    assert [c.words for c in one.components] == [c.words for c in two.components]
    for a, b in zip(one.components, two.components):
        assert a.explained_variance == pytest.approx(b.explained_variance, rel=1e-12)
        assert a.certified_ratio == pytest.approx(b.certified_ratio, rel=1e-9)
        assert a.upper_bound == pytest.approx(b.upper_bound, rel=1e-9)
    assert [c.words[:2] for c in one.components] == [["flight", "cancelled"],
                                                     ["service", "customer"], ["plane", "gate"]]
    assert min(c.certified_ratio for c in one.components) > 0.99


@pytest.mark.parametrize("threads", [1, 2])
def test_columns_of_binary_and_count_matrices_are_exact(threads):
    """The bundled KOS sample as counts and as 0/1 (the default weighting of text): the column
    kernel leaves a binary S's values unread and both give S^T S[:, idx] bit for bit."""
    from pathlib import Path

    sample = Path(__file__).resolve().parent.parent / "data_samples" / "docword.kos-sample.txt.gz"
    counts = read_corpus(str(sample)).S
    assert counts.data.max() > 1
    binary = counts.copy()
    binary.data[:] = 1.0
    idx = np.argsort(-np.asarray(counts.sum(axis=0)).ravel())[:24]
    for S, is_binary in ((counts, False), (binary, True)):
        backend = backend_module.LocalBackend(S=S, threads=threads)
        rows = backend.rows(idx)
        assert backend._is_binary() is is_binary
        assert np.array_equal(rows, (S.T @ S[:, idx]).toarray().T)


@pytest.mark.parametrize("scale", [1.0, 0.37])
def test_cached_columns_are_float32_only_when_it_holds_them_exactly(kos_S, scale):
    """KOS counts: the column cache keeps float32 (integers below 2^24), and every column read
    back, and every submatrix from the cache, equals the one formed in float64; a weighted S
    (non-integer values) keeps float64."""
    S = sp.csr_array(kos_S * scale)
    backend = backend_module.LocalBackend(S)
    words = np.array([3, 17, 250, 1024, 4000])
    fresh = backend.rows(words).T
    first = backend.columns(words)
    again = backend.columns(words)  # (from the cache)
    stored = {backend._columns[j].dtype for j in words.tolist()}
    assert stored == {np.dtype(np.float32) if scale == 1.0 else np.dtype(np.float64)}
    assert first.dtype == again.dtype == np.float64
    np.testing.assert_array_equal(again, fresh)
    np.testing.assert_array_equal(first, fresh)
    sub = backend.submatrix(words)
    assert sub.dtype == np.float64
    np.testing.assert_allclose(sub, fresh[words], rtol=1e-12)


@pytest.mark.parametrize("case", ["counts", "remove view", "weights", "dense", "mixed signs"])
def test_rows_copied_from_the_cached_columns_are_those_of_the_stacked_block(case, monkeypatch):
    """The exact rows a model copies column by column from the backend's cache (float32
    columns straight into float32 rows) are, dtype and value, those of the stacked float64
    block with its absolute value and float32 check: counts, a view with words removed,
    weights float32 cannot hold, a dense matrix and a mixed-sign one."""
    rng = np.random.default_rng(7)
    S = sp.random(60, 25, density=0.2, random_state=rng, format="csr")
    if case in ("counts", "remove view", "dense"):
        S.data = np.ceil(S.data * 3)
    if case == "dense":
        A = Gram.from_dense(np.asarray((S.T @ S).todense()))
    elif case == "mixed signs":
        M = rng.standard_normal((25, 25))
        A = Gram.from_dense(M @ M.T)
    else:
        A = Gram.from_documents(S)
    if case == "remove view":
        A = A.remove(np.array([2, 11, 17]))
    listed = RowModel.of(A, exact_rows=20)
    # the stacked float64 block, row by row
    monkeypatch.setattr(Gram, "base_column_list", lambda self, idx: list(self.base_columns(idx).T))
    stacked = RowModel.of(A, exact_rows=20)
    assert listed.CT.dtype == stacked.CT.dtype
    assert listed.CT.dtype == (np.float32 if case in ("counts", "remove view", "dense")
                               else np.float64)
    assert np.array_equal(listed.CT, stacked.CT)
    assert np.array_equal(listed.hpos, stacked.hpos)


def test_the_first_certificate_reads_the_kept_columns_in_place():
    """A nonnegative A whose words all occur: the first certificate's model of EXACT_ROWS rows
    is the block of columns the first eigen step keeps (no copy), in that block's order, and
    bounds as a model with its own rows; a restriction in place (auto and exact's remove
    views) leaves that block as it was and bounds as the copy's."""
    from spca_cli import bounds

    rng = np.random.default_rng(12)
    S = sp.csr_array((rng.random((900, 400)) < 0.05) * 1.0)
    S = sp.csr_array(sp.vstack([S, sp.eye(400, format="csr")]))  # (every word occurs)
    A = Gram.from_documents(S)
    words = bounds.first_exact_words(A)
    assert bounds.reads_kept_rows(A) and words.size == bounds.EXACT_ROWS
    A.keep_columns(words)
    block = A.kept_block(words)
    kept = block.copy()
    model = RowModel.of(A, exact_rows=bounds.EXACT_ROWS)
    own = RowModel.of(Gram.from_documents(S), exact_rows=bounds.EXACT_ROWS)
    assert np.shares_memory(model.CT, block) and not np.shares_memory(own.CT, block)
    np.testing.assert_array_equal(model.words[model.hrow], words)
    np.testing.assert_array_equal(model.CT[model.hpos[own.hrow]], own.CT)
    one = weighted_row_bound(model, 5, rtol=0.0, max_iter=40)
    two = weighted_row_bound(own, 5, rtol=0.0, max_iter=40)
    assert one.value == pytest.approx(two.value, rel=1e-12)
    keep = np.ones(400, dtype=bool)
    keep[words[:3]] = False
    restricted = model.restrict(keep, in_place=True)
    np.testing.assert_array_equal(A.kept_block(words), kept)
    copied = own.restrict(keep)
    three = weighted_row_bound(restricted, 5, rtol=0.0, max_iter=40)
    four = weighted_row_bound(copied, 5, rtol=0.0, max_iter=40)
    assert three.value == pytest.approx(four.value, rel=1e-12)
