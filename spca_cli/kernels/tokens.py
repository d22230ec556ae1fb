"""Kernel of the ingest's tokenizer on ASCII text: the token pattern of
:func:`spca_cli.corpus.tokenize.token_pattern` emulated over UTF-8 bytes, each token given a
number by a hash table, in one pass over a chunk.

The chunk is the lower-cased text of many documents joined by a NUL byte between spaces. It is
cut into pieces at ASCII whitespace (what ``str.split`` cuts at, less the non-ASCII spaces); a
piece holding a byte >= 0x80 is left for Python's pattern (:class:`~spca_cli.corpus.tokenize.
_Pieces`), every other piece is tokenised here, as ``re.findall`` with the chunk pattern would:
at each position, in the pattern's order,

1. ``(?:https?://|www\\.)\\S*``: a URL runs to the end of the piece (no whitespace inside),
   dropped;
2. ``@\\w+``: a mention, dropped;
3. ``\\b[^\\W\\d_][\\w']{m-1,}(?<!')``: a letter not preceded by a word character starts a word
   that runs over word characters and apostrophes, less its trailing apostrophes (the
   look-behind's backtracking); kept when at least ``min_length`` long;

else the next position is tried. ASCII word characters are letters, digits and '_' (the
combining marks the pattern adds are not ASCII).

Tokens are numbered in order of first appearance by an open-addressing hash table (FNV-1a,
linear probing, at most half full) whose arrays the caller keeps between chunks; the kernel
returns them, grown when it had to. A slot holds what tells most tokens apart without reading
the arena: the token's number, its length and the hash's high 24 bits in one word, its first 8
bytes in the other, so a token of up to 8 bytes (most words) is found in one cache line and a
longer one compares the rest of its bytes there. Reading a token's bytes from the arena is a
second cache miss once the vocabulary outgrows the cache: on 1,000,000 generated tweets of
197,316 words it is a sixth of the kernel's time. Equal hashes never stand for equal tokens.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["scan_chunk", "new_table", "BOUNDARY"]

BOUNDARY = 0  # the byte between documents (with a space on each side)
_APOSTROPHE = 39
_AT = 64
_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)
_HEAD = 8  # bytes of a token its slot holds
_NUMBER = np.uint64(0xFFFFFFFF)  # a slot key's token number + 1 (tokens of one table < 2^32)
_NOT_NUMBER = np.uint64(0xFFFFFFFF00000000)
_HASH_HIGH = np.uint64(0xFFFFFF0000000000)


def new_table(slots=1 << 16, arena=1 << 20, tokens=1 << 15):
    """Empty hash table arrays: (slots, hashes, arena, offsets). A slot is two words side by
    side (:func:`_key`, :func:`_head`; 0: free), so a probe reads one cache line."""
    return (np.zeros((slots, 2), dtype=np.uint64), np.zeros(tokens, dtype=np.uint64),
            np.zeros(arena, dtype=np.uint8), np.zeros(tokens + 1, dtype=np.int64))


@njit(cache=True, inline="always")
def _is_space(c):
    # ASCII whitespace as str.split / str.isspace see it: \t \n \v \f \r, \x1c-\x1f, space
    return (9 <= c <= 13) or (28 <= c <= 32)


@njit(cache=True, inline="always")
def _is_letter(c):
    return (97 <= c <= 122) or (65 <= c <= 90)


@njit(cache=True, inline="always")
def _is_word(c):
    return _is_letter(c) or (48 <= c <= 57) or c == 95


@njit(cache=True)
def _starts_url(text, p, stop):
    # "http://", "https://" or "www." at p, within the piece
    if p + 4 <= stop and text[p] == 119 and text[p + 1] == 119 and text[p + 2] == 119 \
            and text[p + 3] == 46:
        return True
    if p + 7 > stop or text[p] != 104 or text[p + 1] != 116 or text[p + 2] != 116 \
            or text[p + 3] != 112:
        return False
    q = p + 4
    if text[q] == 115:  # https
        q += 1
    return q + 3 <= stop and text[q] == 58 and text[q + 1] == 47 and text[q + 2] == 47


@njit(cache=True, inline="always")
def _hash(text, lo, hi):
    h = _FNV_OFFSET
    for p in range(lo, hi):
        h = (h ^ np.uint64(text[p])) * _FNV_PRIME
    return h


@njit(cache=True, inline="always")
def _head(text, lo, hi):
    """The first ``_HEAD`` bytes of text[lo:hi] as one number (zeros past its end)."""
    v = np.uint64(0)
    for p in range(min(hi - lo, _HEAD)):
        v |= np.uint64(text[lo + p]) << np.uint64(8 * p)
    return v


@njit(cache=True, inline="always")
def _key(h, length, t):
    """A slot's first word: token number t + 1 (low 32 bits; 0 marks a free slot), the length
    (8 bits, 255 for any longer) and the high 24 bits of the hash h (the low ones chose the
    slot)."""
    return (np.uint64(t + 1) | (np.uint64(min(length, 255)) << np.uint64(32))
            | (h & _HASH_HIGH))


@njit(cache=True, inline="always")
def _find(text, lo, hi, h, slots, arena, offsets):
    """The number of token text[lo:hi] (hash h), or -1 - its free slot when unseen."""
    mask = slots.shape[0] - 1
    slot = np.int64(h & np.uint64(mask))
    length = hi - lo
    check = _key(h, length, -1)  # (number bits 0)
    head = _head(text, lo, hi)
    while True:
        entry = slots[slot, 0]
        if entry == 0:
            return -1 - slot
        if (entry & _NOT_NUMBER) == check and slots[slot, 1] == head:
            t = np.int64(entry & _NUMBER) - 1
            if length <= _HEAD:
                return t  # (its length and every byte matched)
            start = offsets[t]
            if offsets[t + 1] - start == length:
                q = _HEAD
                while q < length and arena[start + q] == text[lo + q]:
                    q += 1
                if q == length:
                    return t
        slot = (slot + 1) & mask


@njit(cache=True)
def _insert(text, lo, hi, h, slot, slots, hashes, arena, offsets, n_tokens):
    """Number the new token text[lo:hi] (hash h) in the free ``slot``, growing the arrays when
    needed; returns them and the new count (rare: once per distinct token)."""
    t = n_tokens
    length = hi - lo
    if t + 1 >= hashes.shape[0]:
        size = 2 * hashes.shape[0]
        grown = np.zeros(size, dtype=np.uint64)
        grown[:t] = hashes[:t]
        hashes = grown
        grown_offsets = np.zeros(size + 1, dtype=np.int64)
        grown_offsets[:t + 1] = offsets[:t + 1]
        offsets = grown_offsets
    start = offsets[t]
    if start + length > arena.shape[0]:
        grown_arena = np.zeros(2 * (start + length), dtype=np.uint8)
        grown_arena[:start] = arena[:start]
        arena = grown_arena
    arena[start:start + length] = text[lo:hi]
    offsets[t + 1] = start + length
    hashes[t] = h
    slots[slot, 0] = _key(h, length, t)
    slots[slot, 1] = _head(text, lo, hi)
    n_tokens += 1
    if 2 * n_tokens > slots.shape[0]:
        # at most half full: rehash into twice the slots
        slots = np.zeros((2 * slots.shape[0], 2), dtype=np.uint64)
        mask = slots.shape[0] - 1
        for u in range(n_tokens):
            s = np.int64(hashes[u] & np.uint64(mask))
            while slots[s, 0] != 0:
                s = (s + 1) & mask
            slots[s, 0] = _key(hashes[u], offsets[u + 1] - offsets[u], u)
            slots[s, 1] = _head(arena, offsets[u], offsets[u + 1])
    return slots, hashes, arena, offsets, n_tokens


@njit(cache=True)
def scan_chunk(text, min_length, slots, hashes, arena, offsets, n_tokens):
    """Tokenise the chunk ``text`` (uint8 array of UTF-8 bytes, documents separated by
    :data:`BOUNDARY`).

    Returns ``(codes, spans, slots, hashes, arena, offsets, n_tokens)``: one code per kept
    token (its number + 2), document boundary (0) and non-ASCII piece (-1 - i, whose byte span
    is ``spans[i]``), in text order; then the table's arrays and its token count.
    """
    n = text.shape[0]
    codes = np.empty(n + 1, dtype=np.int64)
    spans = np.empty((n // 2 + 1, 2), dtype=np.int64)
    n_codes = 0
    n_spans = 0
    i = 0
    while i < n:
        c = text[i]
        if _is_space(c):
            i += 1
            continue
        if c == BOUNDARY:
            codes[n_codes] = 0
            n_codes += 1
            i += 1
            continue
        stop = i
        ascii = True
        while stop < n and not _is_space(text[stop]) and text[stop] != BOUNDARY:
            if text[stop] >= 128:
                ascii = False
            stop += 1
        if not ascii:
            spans[n_spans, 0] = i
            spans[n_spans, 1] = stop
            codes[n_codes] = -1 - n_spans
            n_spans += 1
            n_codes += 1
            i = stop
            continue
        p = i
        while p < stop:
            c = text[p]
            if (c == 104 or c == 119) and _starts_url(text, p, stop):
                break  # \S* takes the rest of the piece
            if c == _AT and p + 1 < stop and _is_word(text[p + 1]):
                p += 2
                while p < stop and _is_word(text[p]):
                    p += 1
                continue
            if _is_letter(c) and (p == i or not _is_word(text[p - 1])):
                q = p + 1
                while q < stop and (_is_word(text[q]) or text[q] == _APOSTROPHE):
                    q += 1
                while text[q - 1] == _APOSTROPHE:
                    q -= 1
                if q - p >= min_length:
                    h = _hash(text, p, q)
                    t = _find(text, p, q, h, slots, arena, offsets)
                    if t < 0:
                        slots, hashes, arena, offsets, n_tokens = _insert(
                            text, p, q, h, -1 - t, slots, hashes, arena, offsets, n_tokens)
                        t = n_tokens - 1
                    codes[n_codes] = t + 2
                    n_codes += 1
                    p = q
                    continue
            p += 1
        i = stop
    return (codes[:n_codes], spans[:n_spans], slots, hashes, arena, offsets, n_tokens)
