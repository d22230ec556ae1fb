"""The byte tokenizer (``spca_cli.kernels.tokens.scan_chunk`` through
``Tokenizer.count_chunk``) gives the tokens of the chunk pattern on the edges the other tests
leave out:

- the kernel alone against the chunk pattern, token by token and in order, on documents of
  every ASCII byte but NUL and the URL / mention / apostrophe fragments, with a table so small
  that every one of its arrays grows (slots rehashed, hashes and offsets, arena) many times;
- the table and ``_ByteTokens.id_of`` grown past their first sizes (more than 32,768
  distinct tokens) across chunks fed to one builder, and tokens longer than the first arena;
- lone surrogates, NUL inside a document, empty documents and chunks, characters whose
  ``lower()`` is ASCII (KELVIN SIGN) or longer (U+0130), U+2019 under the English rules.
"""

from __future__ import annotations

import random
import string

import numpy as np
import pytest

from spca_cli.corpus.tokenize import SEPARATOR, Tokenizer, VocabularyBuilder, merge_parts
from spca_cli.kernels.tokens import new_table, scan_chunk

FRAGMENTS = [chr(c) for c in range(1, 128)] + [
    "http://", "https://", "www.", "http:/", "https:/", "www", "@_", "@", "'", "''", "n't",
    "'s", "abc", "h", "w", "t", "p", "s", ":", "/", ".", "a", "z", "0", "_"]


def _same_counts(chunks, min_length, stopwords):
    """count_chunk (the byte kernel) and add(tokenize_chunk) and add(_tokens_by_pattern) give
    the same merged matrix and words over ``chunks`` fed to one builder each."""
    tokenizer = Tokenizer(min_length, stopwords)
    by_bytes, by_pieces, by_re = VocabularyBuilder(), VocabularyBuilder(), VocabularyBuilder()
    for texts in chunks:
        tokenizer.count_chunk(texts, by_bytes)
        by_pieces.add(tokenizer.tokenize_chunk(texts), len(texts))
        by_re.add(tokenizer._tokens_by_pattern(texts), len(texts))
    (S, words) = merge_parts([by_re.part()])
    for builder in (by_bytes, by_pieces):
        assert builder.n_documents == by_re.n_documents
        got, got_words = merge_parts([builder.part()])
        assert got_words.tolist() == words.tolist()
        assert got.shape == S.shape and (got != S).nnz == 0


@pytest.mark.parametrize("min_length", [1, 2, 3, 7])
def test_kernel_gives_the_tokens_of_the_pattern_in_order_with_a_tiny_table(min_length):
    rng = random.Random(min_length)
    tokenizer = Tokenizer(min_length, "none")
    table = new_table(slots=4, arena=1, tokens=1)
    n_tokens = 0
    names = []
    for _ in range(4):  # one table over several chunks
        docs = ["".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 40)))
                for _ in range(1500)]
        text = tokenizer._lowered(docs)
        assert text is not None and text.isascii()
        codes, spans, *table, n_tokens = scan_chunk(
            np.frombuffer(text.encode(), dtype=np.uint8), min_length, *table, n_tokens)
        assert len(spans) == 0
        _, _, arena, offsets = table
        names += [arena[offsets[t]:offsets[t + 1]].tobytes().decode()
                  for t in range(len(names), n_tokens)]
        got = [SEPARATOR if c == 0 else names[c - 2] for c in codes.tolist()]
        assert got == [t for t in tokenizer._tokens_by_pattern(docs) if t]
    assert len(set(names)) == len(names) == n_tokens > 100


def test_tables_grown_past_their_first_size_across_chunks():
    rng = random.Random(0)
    words = sorted({"".join(rng.choice(string.ascii_lowercase) for _ in range(6))
                    for _ in range(40_000)})
    assert len(words) > 32_768 + 2
    half = len(words) // 2
    chunks = [[" ".join(words[:half]), "first"],
              [" ".join(words[half:]), "x " + " ".join(words[::7]), "it's words'"]]
    _same_counts(chunks, 3, "english")


def test_tokens_longer_than_the_arena():
    """Tokens past the first arena (1 MB), in a builder of few words: a part's words are a
    numpy str array padded to its longest word (4 bytes a character for every word), so a long
    token among many words costs words x length x 4 bytes in any path (hence MAX_WORD_LENGTH)."""
    long = "k" * ((1 << 20) + 5)
    chunks = [["a " + long, "gate " + long[:-1] + "'s"], ["b" * (1 << 20) + "'s delay", long]]
    _same_counts(chunks, 3, "english")


@pytest.mark.parametrize("stopwords", ["none", "english", "english-2013"])
@pytest.mark.parametrize("min_length", [1, 3])
def test_unusual_text(stopwords, min_length):
    chunks = [
        [],
        [""],
        ["", "", ""],
        ["half an emoji \ud83d in json", "\ud83d\ude00pair", "abc\udcff def"],
        ["nul\x00inside a document", "other words"],  # the pattern path
        ["\u212aelvin sign lowers to ascii", "\u0130stanbul lower() grows", "DON\u2019T it\u2019s"],
        ["end http://", "https:/ half", "www without dot", "at end @", "@_under x@y"],
        ["\x1e\x1c\x1f\x0b\x0c\r\n\t sep", "\x7f\x01ctl\x1b words\x08", "\x85nel\xa0nbsp"],
    ]
    _same_counts(chunks, min_length, stopwords)


def test_tokens_that_share_their_first_bytes_stay_apart():
    """Tokens of 7-9 and 255-257 bytes with the same first 8 bytes, in a table that grows from
    4 slots: each keeps its own number (a slot holds only a token's first 8 bytes, its length
    up to 255 and part of its hash)."""
    heads = ["abcdefgh", "abcdefgi", "zzzzzzzz"]
    words = [h[:7] for h in heads] + heads
    words += [h + tail for h in heads for tail in "xyz"]
    words += [h + "q" * extra for h in heads for extra in (246, 247, 248, 249)]
    docs = [" ".join(words[i::5]) + " " + " ".join(words) for i in range(5)]
    text = " \x00 ".join(docs)
    codes, _, *table, n_tokens = scan_chunk(np.frombuffer(text.encode(), dtype=np.uint8), 1,
                                            *new_table(slots=4, arena=1, tokens=1), 0)
    _, _, arena, offsets = table
    names = [arena[offsets[t]:offsets[t + 1]].tobytes().decode() for t in range(n_tokens)]
    assert sorted(names) == sorted(set(words)) and n_tokens == len(set(words)) == 26
    got = [SEPARATOR if c == 0 else names[c - 2] for c in codes.tolist()]
    assert got == [t for i, doc in enumerate(docs) for t in [SEPARATOR] * (i > 0) + doc.split()]


@pytest.mark.parametrize("stored, asked", [
    ("abcd", "abce"), ("abcdefghx", "abcdefghy"), ("a" * 300, "a" * 299 + "b"),
    ("a" * 300, "a" * 301), ("a" * 301, "a" * 300)])
def test_a_token_is_found_only_by_its_own_bytes(stored, asked):
    """Two tokens whose hashes agree (forced here: the table is asked with the stored token's
    hash) are still told apart by their bytes and length, in and past a slot's first 8."""
    from spca_cli.kernels.tokens import _find, _hash, _insert

    def as_bytes(token):
        return np.frombuffer(token.encode(), dtype=np.uint8)

    table = new_table(slots=8, arena=1, tokens=1)
    one = as_bytes(stored)
    h = _hash(one, 0, one.size)
    free = _find(one, 0, one.size, h, table[0], table[2], table[3])
    assert free < 0
    *table, n_tokens = _insert(one, 0, one.size, h, -1 - free, *table, 0)
    slots, _, arena, offsets = table
    assert n_tokens == 1 and _find(one, 0, one.size, h, slots, arena, offsets) == 0
    other = as_bytes(asked)
    assert _find(other, 0, other.size, h, slots, arena, offsets) < 0
