"""The piece path of ``Tokenizer.tokenize_chunk`` (lower-case the chunk, split it at whitespace,
look each piece up in a cache) gives the tokens of the chunk pattern run over the whole chunk,
which is the definition (``Tokenizer._tokens_by_pattern``): on arbitrary Unicode text with the
characters that could tell them apart (every kind of whitespace ``str.split`` and ``re`` see,
the record separators, NUL, combining marks, apostrophes, '#', '@', URLs, digits, final sigma),
with and without stop words, the English rules and n-grams."""

from __future__ import annotations

import csv
import re
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spca_cli.corpus.scripts import mark_class
from spca_cli.corpus.tokenize import _MARK, SEPARATOR, Tokenizer

EXAMPLES = settings(max_examples=150, deadline=None, derandomize=True, database=None)

# pieces of text chosen to sit on the edges of the equivalence
FRAGMENTS = [
    " ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85",
    "\xa0", "\u1680", "\u2000", "\u2028", "\u2029", "\u202f", "\u3000", "\x00", "\u200b",
    "'", "\u2019", "#", "@", "@united", "http://", "https://t.co/x1", "www.", "www.example.com",
    "3", "320", "\u0663", "_", "a", "ab", "abc", "Flight", "DON'T", "don\u2019t", "flights'",
    "the", "and", "i'm", "you're", "can't", "won\u2019t", "ΟΔΟΣ", "Σ", "σ", "ς", "İ", "ß",
    "\u01c5", "e\u0301", "\u0301", "\ufe0f", "\u2764\ufe0f", "😀", "क\u093f", "مرحبا", "-", ".",
    ",", "!", "?", ":", "/", "&", "\u00e9t\u00e9", "caf\u00e9", "中文", "ไทย",
]
TEXT = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.characters()), max_size=30).map("".join)
CHUNKS = st.lists(TEXT, min_size=1, max_size=6)


def by_pattern(tokenizer, texts):
    """The definition: the chunk pattern over all texts, n-grams formed as tokenize_chunk does."""
    tokens = tokenizer._tokens_by_pattern(texts)
    return tokens if tokenizer.ngram_range == (1, 1) else tokenizer._ngrams(tokens)


def kept(out):
    """The streams of tokenize_chunk without '' (the dropped tokens the matrix never sees)."""
    streams = out if isinstance(out, tuple) else (out,)
    return [[t for t in stream if t] for stream in streams]


@pytest.mark.parametrize("stopwords", ["none", "english", "english-2013"])
@pytest.mark.parametrize("ngrams", [(1, 1), (1, 3), (2, 2)])
@pytest.mark.parametrize("min_length", [1, 3])
@EXAMPLES
@given(texts=CHUNKS)
def test_pieces_give_the_tokens_of_the_pattern(stopwords, ngrams, min_length, texts):
    tokenizer = Tokenizer(min_length, stopwords, ngrams)
    got = tokenizer.tokenize_chunk(texts)
    assert kept(got) == kept(by_pattern(tokenizer, texts))
    # one separator between each two documents in every stream
    for stream in kept(got):
        assert stream.count(SEPARATOR) == len(texts) - 1


@EXAMPLES
@given(chunks=st.lists(CHUNKS, min_size=2, max_size=5))
def test_a_small_cache_that_starts_again_gives_the_same_tokens(chunks):
    tokenizer = Tokenizer(3, "english")
    tokenizer._pieces.limit = 8
    for texts in chunks:
        assert kept(tokenizer.tokenize_chunk(texts)) == kept(by_pattern(tokenizer, texts))
        assert len(tokenizer._pieces) <= 8


def test_whitespace_is_the_same_to_split_and_to_the_pattern():
    """The equivalence rests on this: every character ``str.split`` cuts at is ``\\s`` to ``re``
    and can be part of no token (not a word character, mark or apostrophe), and the reverse."""
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    split_space = {c for c in every if c.isspace()}
    re_space = set(re.findall(r"(?u)\s", every))
    assert split_space == re_space
    assert "\x1e" in split_space and _MARK not in split_space
    in_a_token = re.compile(r"(?u)[\w'%s]" % mark_class())
    assert not [c for c in split_space if in_a_token.match(c)]


def test_documents_holding_the_marker_or_the_separator_keep_their_tokens():
    tokenizer = Tokenizer(3, "english", (1, 2))
    texts = ["delayed \x00 overnight", "lost\x1ebags today", "http://t.co/a\x00bcd flight"]
    assert kept(tokenizer.tokenize_chunk(texts)) == [
        ["delayed", "overnight", SEPARATOR, "lost", "bags", "today", SEPARATOR, "flight"],
        ["delayed overnight", SEPARATOR, "lost bags", "bags today", SEPARATOR]]
    # a piece that is only the marker inside a text is no document boundary
    assert Tokenizer(3)("gate \x00 closed") == ["gate", "closed"]


def test_final_sigma_and_apostrophes_as_in_the_whole_chunk():
    tokenizer = Tokenizer(3, "english")
    assert tokenizer.tokenize_chunk(["ΟΔΟΣ ΟΔΟΣ.", "Don\u2019t CANCEL", "ΣΑΣ"]) == [
        "οδος", "οδος", SEPARATOR, "cancel", SEPARATOR, "σας"]


def test_airline_tweets_give_the_same_tokens(airline_csv):
    with open(airline_csv, newline="", encoding="utf-8") as f:
        texts = [row["text"] for row in csv.DictReader(f)]
    for stopwords in ("english", "english-2013", "none"):
        tokenizer = Tokenizer(3, stopwords, (1, 2))
        assert kept(tokenizer.tokenize_chunk(texts)) == kept(by_pattern(tokenizer, texts))


def _same_parts(a, b):
    """The same matrix and words once merged (sorted by word): ids may be given in another
    order (the byte kernel names a chunk's ASCII tokens before its other pieces' tokens)."""
    from spca_cli.corpus.tokenize import merge_parts

    assert a.n_documents == b.n_documents
    (Sa, words_a), (Sb, words_b) = merge_parts([a.part()]), merge_parts([b.part()])
    assert words_a.tolist() == words_b.tolist()
    assert Sa.shape == Sb.shape
    for x, y in ((Sa.indptr, Sb.indptr), (Sa.indices, Sb.indices), (Sa.data, Sb.data)):
        assert x.tolist() == y.tolist()


@pytest.mark.parametrize("stopwords", ["none", "english"])
@EXAMPLES
@given(chunks=st.lists(CHUNKS, min_size=2, max_size=4))
def test_counting_by_piece_ids_gives_the_counts_of_the_tokens(stopwords, chunks):
    """``count_chunk`` (ASCII pieces by the byte kernel, the others by ids cached per piece, with
    a cache small enough to start again) builds the same words and counts as ``add`` of
    ``tokenize_chunk``."""
    from spca_cli.corpus.tokenize import VocabularyBuilder

    tokenizer = Tokenizer(3, stopwords)
    by_ids, by_tokens = VocabularyBuilder(), VocabularyBuilder()
    for texts in chunks:
        tokenizer.count_chunk(texts, by_ids)
        if by_ids._piece_ids is not None:
            by_ids._piece_ids.limit = 5
        by_tokens.add(tokenizer.tokenize_chunk(texts), len(texts))
    _same_parts(by_ids, by_tokens)


def test_airline_counts_by_piece_ids(airline_csv):
    from spca_cli.corpus.tokenize import VocabularyBuilder

    with open(airline_csv, newline="", encoding="utf-8") as f:
        texts = [row["text"] for row in csv.DictReader(f)]
    for stopwords, ngrams in (("english", (1, 1)), ("none", (1, 1)), ("english", (1, 2))):
        tokenizer = Tokenizer(3, stopwords, ngrams)
        by_ids, by_tokens = VocabularyBuilder(), VocabularyBuilder()
        for lo in range(0, len(texts), 4000):  # chunks as the reader makes them
            tokenizer.count_chunk(texts[lo:lo + 4000], by_ids)
            by_tokens.add(tokenizer.tokenize_chunk(texts[lo:lo + 4000]), len(texts[lo:lo + 4000]))
        assert (by_ids._piece_ids is None) == (ngrams != (1, 1))  # n-grams take the tokens
        _same_parts(by_ids, by_tokens)
    words, *_ = by_tokens.part()
    assert "flight" in words.tolist() and "cancelled flightled" in words.tolist()


def test_piece_ids_do_not_keep_long_pieces():
    """As the token cache: a piece over PIECE_CACHE_LENGTH characters is counted, not kept
    (non-ASCII pieces: the ASCII ones never reach the cache)."""
    from spca_cli.corpus.tokenize import PIECE_CACHE_LENGTH, VocabularyBuilder

    blob = "-".join(["alphé", "beta"] * PIECE_CACHE_LENGTH)  # one piece, tokens alphé and beta
    texts = ["first chunk words", f"gammé {blob} gammé", f"{blob} delta"]
    tokenizer = Tokenizer(3)
    by_ids, by_tokens = VocabularyBuilder(), VocabularyBuilder()
    for chunk in (texts[:1], texts[1:]):
        tokenizer.count_chunk(chunk, by_ids)
        by_tokens.add(tokenizer.tokenize_chunk(chunk), len(chunk))
    assert by_ids._piece_ids is not None and blob.lower() not in by_ids._piece_ids
    assert "gammé" in by_ids._piece_ids and "delta" not in by_ids._piece_ids
    _same_parts(by_ids, by_tokens)
    words, *_ = by_ids.part()
    assert {"alphé", "beta", "gammé", "delta"} <= set(words.tolist())


def test_pieces_of_several_tokens_survive_restarts_of_the_cache():
    """Non-ASCII pieces of two tokens each ("wörd1,öther1"), all new, with a cache of 4 entries: the cache
    starts again several times within one chunk's map, and every code handed out before a
    restart must still name its own two ids (the list of several-token ids is only cut between
    chunks)."""
    from spca_cli.corpus.tokenize import VocabularyBuilder

    tokenizer = Tokenizer(3)
    by_ids, by_tokens = VocabularyBuilder(), VocabularyBuilder()
    chunks = [["a first chunk fills the caches"],
              [" ".join(f"wörd{i},öther{i}" for i in range(j, j + 12)) for j in (0, 12, 24)],
              ["wörd3,öther3 again, wörd30,öther30 and last,oné"]]
    for texts in chunks:
        tokenizer.count_chunk(texts, by_ids)
        by_ids._piece_ids is not None and setattr(by_ids._piece_ids, "limit", 4)
        by_tokens.add(tokenizer.tokenize_chunk(texts), len(texts))
    _same_parts(by_ids, by_tokens)
    words = by_ids.part()[0].tolist()
    assert words[:4] == ["first", "chunk", "fills", "the"]
    assert "wörd35" in words and "öther35" in words and "last" in words and "oné" in words


# the characters on which the byte kernel's emulation of the pattern turns (URL prefixes, '@',
# apostrophes, word characters that are not letters, every ASCII space str.split cuts at)
ASCII_FRAGMENTS = ["h", "t", "p", "s", ":", "/", "w", ".", "@", "'", "_", "0", "7", "a", "b",
                   "E", "Z", " ", "\t", "\x0b", "\x1c", "\x1f", "-", "#", "http://", "https://",
                   "www.", "HTTP://", "abc", "it's", "''", "x'y", "é"]
ASCII_TEXT = st.lists(st.sampled_from(ASCII_FRAGMENTS), max_size=40).map("".join)


@pytest.mark.parametrize("stopwords", ["none", "english"])
@pytest.mark.parametrize("min_length", [1, 2, 3, 5])
@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(chunks=st.lists(st.lists(ASCII_TEXT, min_size=1, max_size=5), min_size=1, max_size=3))
def test_the_byte_kernel_counts_the_tokens_of_the_pattern(stopwords, min_length, chunks):
    from spca_cli.corpus.tokenize import VocabularyBuilder

    tokenizer = Tokenizer(min_length, stopwords)
    by_bytes, by_pattern_tokens = VocabularyBuilder(), VocabularyBuilder()
    for texts in chunks:
        tokenizer.count_chunk(texts, by_bytes)
        by_pattern_tokens.add(by_pattern(tokenizer, texts), len(texts))
    _same_parts(by_bytes, by_pattern_tokens)


def test_byte_kernel_tokens_of_a_tweet():
    from spca_cli.corpus.tokenize import VocabularyBuilder, merge_parts

    builder = VocabularyBuilder()
    Tokenizer(3).count_chunk(["RT @united: flights' DELAYED'' again... http://t.co/x "
                              "a320's #BagsLost ab'c x'yz__ 3abc _abc www.x.com", "ok"], builder)
    S, words = merge_parts([builder.part()])
    assert words.tolist() == ["a320's", "ab'c", "again", "bagslost", "delayed", "flights", "x'yz__"]
    assert S.toarray().tolist() == [[1, 1, 1, 1, 1, 1, 1], [0] * 7]


def test_long_pieces_are_not_kept_by_the_piece_cache():
    """Documents made of long unique pieces (base64 blobs, minified text) are not held by the
    cache (up to PIECE_CACHE_MAX of them would be: 4,000 documents of one 5,000-character piece
    would keep 20 MB of text, about 80 MB of memory, after they were tokenised)."""
    rng = np.random.default_rng(0)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+"))
    blobs = ["".join(rng.choice(letters, 5000)) for _ in range(40)]
    texts = [f"Delayed flight {blob} again" for blob in blobs]
    tokenizer = Tokenizer(3, "english")
    got = tokenizer.tokenize_chunk(texts)
    assert [t for t in got if t] == [t for t in tokenizer._tokens_by_pattern(texts) if t]
    assert sum(map(len, tokenizer._pieces)) < 1000  # 'delayed', 'flight', 'again', the mark


def test_scripts_without_spaces_are_scanned_only_for_text_that_has_them():
    from spca_cli.corpus import scripts

    scripts._script_class.cache_clear()
    scripts.no_space_runs.cache_clear()
    tokenizer = Tokenizer(3)
    assert tokenizer("Delayed again, lost bags") == ["delayed", "again", "lost", "bags"]
    assert scripts._script_class.cache_info().currsize == 0  # Latin text: no class scanned
    assert tokenizer("航班延误了三个小时 delayed") == ["航班", "延误", "小时", "delayed"]
    assert scripts._script_class.cache_info().currsize == 3
