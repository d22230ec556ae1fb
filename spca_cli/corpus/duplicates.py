"""Which documents of a raw corpus count once: exact and near duplicates set aside.

Sparse PCA on word co-occurrence weighs N copies of a text N times, so a text a bot repeated,
retweeted ("RT @user: ...") or posted to each airline under another @handle decides the topics.
Every reader of raw text (one process, the parallel ingest's workers, the Dask partitions) calls
:func:`exact_keys` on each chunk it reads, and :func:`set_aside` decides which documents stay
before the counts are merged, so ``--min-count`` and every figure see the corpus as kept.

* **The key** of a text (:func:`normalise`): HTML entities unescaped, lower-cased, leading
  ``RT @user:`` prefixes dropped, URLs and @handles dropped (as the tokenizer drops them),
  runs of whitespace made one space, the ends stripped. Two texts with one key are exact
  duplicates; the first one read stays, with its own row, id, time and text.
* **Exact duplicates** are found by a 64-bit hash of the key's UTF-8 bytes
  (:func:`~spca_cli.kernels.duplicates.hash_segments`), computed where the chunk is read, so
  the parallel ingest's workers hash their own ranges and the parent only compares numbers.
* **Near duplicates** (``near_duplicates``, a Jaccard threshold, default 0.8): the key's words
  are cut into shingles of :data:`SHINGLE_WORDS` consecutive words (a text of one word is its
  own shingle), a MinHash signature of :data:`N_PERMUTATIONS` values is made of each
  document's shingle hashes and cut into LSH bands (rows per band chosen so that a pair at the
  threshold shares a band with probability >= 0.99); each candidate pair is then checked
  exactly (the Jaccard index of the two shingle sets). In reading order, a document is set
  aside when its index with a document kept before it reaches the threshold, so a chain
  A ~ B ~ C keeps A and C when C is not near A.

Which inputs get it by default: tweets (CSV and JSON lines, and texts given from Python to
``read_texts`` or ``SparseTopics.fit``) set exact duplicates aside unless
``keep_duplicates``; a plain text file keeps them unless asked (``keep_duplicates=False``, the
CLI's ``--drop-duplicates``, or ``near_duplicates``): its lines are not known to be posts, and a
repeated line of a log or a list is its data. UCI, MatrixMarket and saved corpora have no texts
to compare (a saved corpus keeps what its ingest decided).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape

import numpy as np

from spca_cli.corpus.kinds import NEAR_THRESHOLD
from spca_cli.errors import Name, SpcaInputError, SpcaParameterError

__all__ = ["DuplicatePolicy", "duplicate_policy", "normalise", "exact_keys", "set_aside",
           "near_duplicates", "every_text", "DEDUPLICATED_KINDS", "NEAR_THRESHOLD", "REASONS"]

#: kinds whose exact duplicates are set aside unless ``keep_duplicates``: tweets, and texts in
#: memory (``read_texts``, the estimator's), which are read as a CSV text column is
DEDUPLICATED_KINDS = ("csv", "jsonl", "texts")
#: kinds that have texts to compare
TEXT_KINDS = ("csv", "jsonl", "text", "texts")
SHINGLE_WORDS = 2
N_PERMUTATIONS = 64
#: the reasons a document is set aside, in the order reports list them
REASONS = ("exact", "near")

_SEP = "\x00"
# a document's leading retweet prefixes (after lower-casing): "RT @user: RT @other: text"
_RETWEET = re.compile(r"\x00\s*(?:rt\s+@[A-Za-z0-9_]+:?\s*)+")
# URLs, and @handles as Twitter writes them (ASCII letters, digits, '_'), never across the
# document separator
_DROPPED = re.compile(r"(?:https?://|www\.)[^\s\x00]*|@[A-Za-z0-9_]+")
_SPACES = re.compile(r"\s+")  # (NUL is no whitespace)


@dataclass(frozen=True)
class DuplicatePolicy:
    """What a read sets aside: ``exact`` duplicates, and with ``near`` (a Jaccard threshold in
    (0, 1]) near duplicates too."""

    exact: bool = False
    near: float | None = None

    def options(self):
        """As a corpus records them among its ingest options."""
        return {"keep_duplicates": not self.exact, "near_duplicates": self.near}


def _threshold(near_duplicates):
    if near_duplicates is None or near_duplicates is False:
        return None
    if near_duplicates is True:
        return NEAR_THRESHOLD
    try:
        value = float(near_duplicates)
    except (TypeError, ValueError):
        value = float("nan")
    if not 0 < value <= 1:
        raise SpcaParameterError([Name("near_duplicates"), " must be a Jaccard index in (0, 1], "
                                  f"got {near_duplicates!r}"])
    return value


def duplicate_policy(kind, keep_duplicates=None, near_duplicates=None, *, name=""):
    """The :class:`DuplicatePolicy` of a read of ``kind`` (the one place the defaults live).

    Parameters
    ----------
    kind : str
        The input kind (``csv``, ``jsonl``, ``text``, ``uci``, ...).
    keep_duplicates : bool or None
        True: keep every document; False: set exact duplicates aside; None: the kind's default
        (set aside for tweets, :data:`DEDUPLICATED_KINDS`; kept for text lines).
    near_duplicates : float, True or None
        Also set aside near duplicates, at this Jaccard threshold (True: :data:`NEAR_THRESHOLD`).
    name : str
        The input, for messages.

    Raises
    ------
    SpcaParameterError
        ``keep_duplicates`` together with ``near_duplicates``, or a threshold outside (0, 1].
    SpcaInputError
        Duplicates asked to be set aside on an input without texts.
    """
    near = _threshold(near_duplicates)
    if keep_duplicates and near is not None:
        raise SpcaParameterError([Name("keep_duplicates"), " and ", Name("near_duplicates"),
                                  " exclude each other"])
    if kind not in TEXT_KINDS:
        if near is not None or keep_duplicates is False:
            raise SpcaInputError(name, [f"{kind} input has no texts, so duplicates cannot be "
                                        "set aside (", Name("near_duplicates"), ")"])
        return DuplicatePolicy()
    if keep_duplicates:
        return DuplicatePolicy()
    exact = near is not None or keep_duplicates is False or kind in DEDUPLICATED_KINDS
    return DuplicatePolicy(exact=exact, near=near)


def every_text(options):
    """Reading ``options`` that keep one row per text, duplicates included: what scoring
    texts needs (``SparseTopics.transform`` gives a row to every text it is given)."""
    return {**options, "keep_duplicates": True, "near_duplicates": None}


def _prepared_chunk(texts):
    """``texts`` joined by NUL (a NUL inside a text read as a space), HTML entities unescaped
    (text lines are not unescaped when read), lower-cased: what the keys are made of."""
    joined = _SEP.join(texts)
    if joined.count(_SEP) != len(texts) - 1:  # a text holds NUL itself
        joined = _SEP.join(t.replace(_SEP, " ") for t in texts)
    if "&" in joined:
        joined = unescape(joined)
    return joined.lower()


def _normalised_chunk(texts):
    """The keys of ``texts`` joined by NUL, as one str (:func:`normalise` of each, a space
    left at either end of a key)."""
    text = _RETWEET.sub(_SEP, _SEP + _prepared_chunk(texts))[1:]
    return _SPACES.sub(" ", _DROPPED.sub(" ", text))


def normalise(text):
    """The key two texts must share to be exact duplicates: HTML entities unescaped,
    lower-cased, leading ``RT @user:`` prefixes dropped, URLs and @handles (an @ and the ASCII
    letters, digits and '_' after it, as Twitter writes them) read as a space, whitespace runs
    one space, none at either end. :func:`exact_keys` hashes the same key in one pass.

    >>> normalise("RT @delta: Thanks &amp; see you  @united https://t.co/x")
    'thanks & see you'
    """
    return _normalised_chunk([text]).strip(" ")


def _segments(text):
    """(UTF-8 bytes as uint8, starts, stops) of the NUL-separated keys in ``text``, each
    without its surrounding spaces."""
    data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    cuts = np.flatnonzero(data == 0)
    starts = np.concatenate([[0], cuts + 1]).astype(np.int64)
    stops = np.concatenate([cuts, [len(data)]]).astype(np.int64)
    # the regexes leave at most one space at each end of a key
    if len(data):
        strip = starts < stops
        starts[strip] += data[starts[strip]] == 32
        strip = starts < stops
        stops[strip] -= data[stops[strip] - 1] == 32
    return data, starts, stops


def exact_keys(texts):
    """One uint64 per text of ``texts``: the hash of its key (:func:`normalise`), by a kernel
    over the chunk's bytes (:func:`~spca_cli.kernels.duplicates.hash_keys`): on 50,000
    generated tweets 0.03 s, where the regular expressions of :func:`normalise` took 0.45 s."""
    from spca_cli.kernels.duplicates import hash_keys

    if not texts:
        return np.zeros(0, dtype=np.uint64)
    data = _prepared_chunk(texts).encode("utf-8", "surrogatepass")
    return hash_keys(np.frombuffer(data, dtype=np.uint8))


def first_occurrences(keys):
    """Boolean mask: True at the first document of each key, in reading order."""
    keep = np.zeros(len(keys), dtype=bool)
    if len(keys):
        _, first = np.unique(keys, return_index=True)
        keep[first] = True
    return keep


def _shingles(texts):
    """(uint64 shingle hashes of all ``texts``, bounds: document d's are
    ``[bounds[d], bounds[d + 1])``)."""
    from spca_cli.kernels.duplicates import hash_segments

    text = _normalised_chunk(texts)
    data, starts, stops = _segments(text)
    n = len(starts)
    # words: the runs between spaces and NULs, by the bytes
    boundary = np.flatnonzero((data == 32) | (data == 0))
    w_starts = np.concatenate([[0], boundary + 1]).astype(np.int64)
    w_stops = np.concatenate([boundary, [len(data)]]).astype(np.int64)
    nonempty = w_stops > w_starts
    w_starts, w_stops = w_starts[nonempty], w_stops[nonempty]
    words = hash_segments(data, w_starts, w_stops)
    doc = np.searchsorted(starts, w_starts, side="right") - 1  # the document of each word
    per_doc = np.bincount(doc, minlength=n)
    if SHINGLE_WORDS == 1:
        return words, np.concatenate([[0], np.cumsum(per_doc)])
    # a shingle starts at each word followed by another of its document; a document of one
    # word is that word
    follows = np.zeros(len(words), dtype=bool)
    follows[:-1] = doc[1:] == doc[:-1]
    starts_shingle = follows | (per_doc[doc] == 1)
    pair = np.zeros(len(words), dtype=np.uint64)
    pair[:-1] = words[1:]
    mixed = words * np.uint64(0x9E3779B97F4A7C15) ^ pair
    shingle = np.where(per_doc[doc] == 1, words, mixed)[starts_shingle]
    counts = np.bincount(doc[starts_shingle], minlength=n)
    return shingle, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def _rows_per_band(threshold):
    """Rows per LSH band: the most (fewest candidates) that still make a pair at ``threshold``
    share a band with probability >= 0.99."""
    for rows in (8, 4, 2):
        bands = N_PERMUTATIONS // rows
        if 1 - (1 - threshold ** rows) ** bands >= 0.99:
            return rows
    return 1


#: A bucket (a band key many documents share) compares a new document with the first this many
#: documents kept in it: a crowded bucket is a common phrase, not a near copy, and a near copy
#: shares several bands with its original (6.5 of 16 on average at Jaccard 0.8).
BUCKET_CAP = 32


def near_duplicates(texts, threshold=NEAR_THRESHOLD, chunk=50_000):
    """Boolean mask over ``texts`` (a sequence of str): True where a document is a near
    duplicate (Jaccard index of shingle sets >= ``threshold``) of one kept before it."""
    from spca_cli.kernels.duplicates import minhash, near_in_order

    n = len(texts)
    rng = np.random.default_rng(20130611)
    a = rng.integers(1, 2 ** 63, N_PERMUTATIONS, dtype=np.uint64) | np.uint64(1)
    b = rng.integers(0, 2 ** 63, N_PERMUTATIONS, dtype=np.uint64)
    rows = _rows_per_band(threshold)
    bands = N_PERMUTATIONS // rows
    weights = rng.integers(1, 2 ** 63, rows, dtype=np.uint64) | np.uint64(1)
    keys = np.empty((n, bands), dtype=np.uint64)
    shingles, bounds = [], [np.zeros(1, dtype=np.int64)]
    offset = 0
    for lo in range(0, n, chunk):
        part = [texts[i] for i in range(lo, min(n, lo + chunk))]
        s, bd = _shingles(part)
        signature = minhash(s, bd, a, b).astype(np.uint64)
        for band in range(bands):
            block = signature[:, band * rows:(band + 1) * rows]
            key = (block * weights).sum(axis=1, dtype=np.uint64)
            keys[lo:lo + len(part), band] = key * np.uint64(bands) + np.uint64(band)
        # each document's shingles sorted and distinct, for the exact check
        doc = np.repeat(np.arange(len(part)), np.diff(bd))
        order = np.lexsort((s, doc))
        s, doc = s[order], doc[order]
        distinct = np.ones(len(s), dtype=bool)
        distinct[1:] = (s[1:] != s[:-1]) | (doc[1:] != doc[:-1])
        s, doc = s[distinct], doc[distinct]
        counts = np.bincount(doc, minlength=len(part))
        shingles.append(s)
        bounds.append(np.cumsum(counts) + offset)
        offset += len(s)
    shingles = np.concatenate(shingles) if shingles else np.zeros(0, np.uint64)
    bounds = np.concatenate(bounds).astype(np.int64)
    # a bucket per band key two documents or more share; -1 for a key of one document
    _, inverse, counts = np.unique(keys.ravel(), return_inverse=True, return_counts=True)
    shared = counts > 1
    bucket = np.where(shared, np.cumsum(shared) - 1, -1)
    groups = bucket[inverse].reshape(n, bands).astype(np.int64)
    return near_in_order(shingles, bounds, groups, int(shared.sum()), float(threshold),
                         BUCKET_CAP)


def set_aside(keys, texts, policy):
    """(keep mask, counts by reason) of the documents read, given their exact ``keys``
    (:func:`exact_keys`, in reading order) and their ``texts`` (a :class:`Strings`, read only
    for near duplicates)."""
    counts = {reason: 0 for reason in REASONS}
    keep = first_occurrences(keys)
    counts["exact"] = int(len(keys) - keep.sum())
    if policy.near is not None and keep.any():
        kept = np.flatnonzero(keep)
        near = near_duplicates(_Subset(texts, kept), policy.near)
        keep[kept[near]] = False
        counts["near"] = int(near.sum())
    return keep, counts


class _Subset:
    """The strings at ``rows`` of ``strings``, as a sequence."""

    def __init__(self, strings, rows):
        self.strings, self.rows = strings, rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.strings[self.rows[i]]
