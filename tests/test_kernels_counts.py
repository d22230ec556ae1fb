"""The ingest's counting kernels against SciPy's COO -> CSR path (spca_cli/kernels/counts.py)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from spca_cli.kernels.counts import count_rows, sort_rows

STREAMS = st.lists(st.integers(min_value=0, max_value=9), max_size=200)


def _by_scipy(ids, n_words):
    ids = np.asarray(ids, dtype=np.int64)
    word = ids > 1
    rows = np.cumsum(ids == 0)[word]
    n_documents = int(np.sum(ids == 0)) + 1
    M = sp.csr_array((np.ones(int(word.sum()), dtype=np.int32), (rows, ids[word])),
                     shape=(n_documents, n_words))
    M.sum_duplicates()
    return M


@settings(max_examples=200, deadline=None)
@given(ids=STREAMS)
def test_count_rows_is_the_matrix_scipy_builds(ids):
    """Separators (0), dropped tokens (1) and repeated words in any order: the same rows,
    columns sorted, each counted once."""
    indptr, indices, counts = count_rows(np.asarray(ids, dtype=np.int64), 10)
    expected = _by_scipy(ids, 10)
    assert indptr.tolist() == expected.indptr.tolist()
    assert indices.tolist() == expected.indices.tolist()
    assert counts.tolist() == expected.data.tolist()
    assert indices.dtype == np.int32 and counts.dtype == np.int32


def test_count_rows_of_a_tweet_chunk():
    # "delayed again, delayed" | "" | "gate again": ids 2 delayed, 3 again, 4 gate; 1 = a URL
    indptr, indices, counts = count_rows(np.array([2, 3, 1, 2, 0, 0, 4, 3]), 5)
    assert indptr.tolist() == [0, 2, 2, 4]
    assert indices.tolist() == [2, 3, 3, 4]
    assert counts.tolist() == [2, 1, 1, 1]


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.lists(st.integers(0, 40), unique=True, max_size=30), min_size=1,
                     max_size=20))
def test_sort_rows_orders_each_row_and_keeps_its_values(rows):
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int32)
    indices = np.array([j for r in rows for j in r], dtype=np.int32)
    data = indices * 10.0 + 0.5
    sort_rows(indptr, indices, data)
    for r, lo, hi in zip(rows, indptr[:-1], indptr[1:]):
        assert indices[lo:hi].tolist() == sorted(r)
    assert np.array_equal(data, indices * 10.0 + 0.5)
