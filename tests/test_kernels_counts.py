"""The ingest's counting kernels against SciPy's COO -> CSR path, and the merge of parts with
``min_count`` against filtering after it (spca_cli/kernels/counts.py)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from spca_cli.corpus.tokenize import (SEPARATOR, VocabularyBuilder, apply_weighting,
                                      filter_words, merge_parts)
from spca_cli.kernels.counts import count_rows

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


def _builder_parts(documents):
    """VocabularyBuilder parts of ``documents`` (lists of words), two documents per part."""
    parts = []
    for first in range(0, len(documents), 2):
        builder = VocabularyBuilder()
        chunk = documents[first:first + 2]
        tokens = [t for d in chunk for t in d + [SEPARATOR]][:-1]
        builder.add(tokens, len(chunk))
        parts.append(builder.part())
    return parts


WORDS = st.sampled_from(["delay", "gate", "crew", "bags", "late", "seat", "food"])


@settings(max_examples=150, deadline=None)
@given(documents=st.lists(st.lists(WORDS, max_size=8), min_size=1, max_size=9),
       min_count=st.integers(1, 4))
def test_merging_with_min_count_equals_filtering_after_the_merge(documents, min_count):
    """Parts of differing vocabularies and id orders, repeated words, empty documents: the
    columns of words in fewer than min_count documents are left out as filter_words would."""
    merged, vocabulary = merge_parts(_builder_parts(documents), min_count)
    whole, whole_vocabulary = merge_parts(_builder_parts(documents))
    expected, expected_vocabulary = filter_words(whole, whole_vocabulary, min_count=min_count)
    assert vocabulary.tolist() == expected_vocabulary.tolist()
    assert merged.shape == (len(documents), len(vocabulary))
    assert merged.has_sorted_indices and merged.has_canonical_format
    assert np.array_equal(merged.indptr, expected.indptr)
    assert np.array_equal(merged.indices, expected.indices)
    assert np.array_equal(merged.data, expected.data)
    counts = [{w: d.count(w) for w in d} for d in documents]
    for row, words in enumerate(counts):
        got = {str(vocabulary[j]): merged.data[p]
               for p, j in zip(range(merged.indptr[row], merged.indptr[row + 1]),
                               merged.indices[merged.indptr[row]:merged.indptr[row + 1]])}
        frequent = {w: c for w, c in words.items()
                    if sum(w in d for d in documents) >= min_count}
        assert got == frequent
    binary, binary_vocabulary = merge_parts(_builder_parts(documents), min_count, binary=True)
    weighted = apply_weighting(expected, "binary")
    assert binary_vocabulary.tolist() == vocabulary.tolist()
    assert np.array_equal(binary.indices, weighted.indices)
    assert np.array_equal(binary.data, weighted.data) and np.all(binary.data == 1.0)
    assert apply_weighting(binary, "binary") is binary  # binary already: not copied


def test_merge_of_airline_style_parts_drops_rare_words():
    documents = [["delay", "gate", "delay"], ["gate", "crew"], ["late"], ["gate", "late"]]
    S, vocabulary = merge_parts(_builder_parts(documents), 2)
    assert vocabulary.tolist() == ["gate", "late"]
    assert S.toarray().tolist() == [[1, 0], [1, 0], [0, 1], [1, 1]]


def test_parts_narrow_their_counts_and_merge_them_exactly():
    """Counts below 256 travel as uint8, below 65,536 as uint16; the merge gives them back."""
    for repeats, dtype in ((3, np.uint8), (300, np.uint16), (70_000, np.int32)):
        builder = VocabularyBuilder()
        builder.add(["gate"] * repeats + ["crew", SEPARATOR, "gate"], 2)
        part = builder.part()
        assert part[3].dtype == dtype
        S, vocabulary = merge_parts([part])
        assert vocabulary.tolist() == ["crew", "gate"]
        assert S.dtype == np.float64 and S.toarray().tolist() == [[1, repeats], [0, 1]]


def test_words_over_the_longest_are_dropped_by_every_path():
    """A 257-letter run is a blob, not a word: dropped through the byte kernel, Python's pattern
    (a non-ASCII piece) and the token lists of n-grams alike; 256 letters is still a word. The
    vocabulary's array is then never padded to a blob's length (a 3 MB token beside 40,000 words
    asked for 469 GiB)."""
    from spca_cli.corpus.tokenize import MAX_WORD_LENGTH, Tokenizer

    longest, blob = "a" * MAX_WORD_LENGTH, "b" * (MAX_WORD_LENGTH + 1)
    texts = [f"gate {longest} {blob}", f"{blob}é crew {blob}", f"late {blob}-gate"]
    for ngrams in ((1, 1), (1, 2)):
        builder = VocabularyBuilder()
        Tokenizer(3, "none", ngrams).count_chunk(texts, builder)
        _, vocabulary = merge_parts([builder.part()])
        words = vocabulary.tolist()
        assert longest in words and not any(w.startswith("b") for w in words)
        assert {"gate", "crew", "late"} <= set(words)
        assert max(map(len, words)) == (MAX_WORD_LENGTH if ngrams == (1, 1)
                                        else len(f"gate {longest}"))
        if ngrams == (1, 2):  # the blob goes before the bigrams are formed, as a stop word
            assert "late gate" in words and "crew" in words
    builder = VocabularyBuilder()
    Tokenizer(3).count_chunk([" ".join(f"w{i}x" for i in range(40_000)), "z" * 3_000_000],
                             builder)
    words = builder.part()[0]
    assert len(words) == 40_000 and words.itemsize <= 4 * 8
