"""Checks from the adversarial review of session 7 (threaded products, the cached submatrix,
the tokenizer's piece cache)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spca_cli.backend as backend_module
from spca_cli.backend import LocalBackend
from spca_cli.corpus.tokenize import Tokenizer
from spca_cli.matrix import Gram


def test_long_pieces_are_not_kept_by_the_piece_cache():
    """Documents made of long unique pieces (base64 blobs, minified text) would otherwise be
    held whole by the cache, up to PIECE_CACHE_MAX of them: 4,000 documents of one 5,000-character
    piece kept 20 MB of text (about 80 MB of memory) after they were tokenised."""
    rng = np.random.default_rng(0)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+"))
    blobs = ["".join(rng.choice(letters, 5000)) for _ in range(40)]
    texts = [f"Delayed flight {blob} again" for blob in blobs]
    tokenizer = Tokenizer(3, "english")
    got = tokenizer.tokenize_chunk(texts)
    assert [t for t in got if t] == [t for t in tokenizer._tokens_by_pattern(texts) if t]
    assert sum(map(len, tokenizer._pieces)) < 1000  # 'delayed', 'flight', 'again', the mark


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
