"""Reading and tokenising raw corpora on the workers of a Dask cluster.

The steps, and where they run:

1. client: resolve the inputs (files, folders, globs) and cut them into partitions: a gzip file
   or a CSV file (quoted fields may hold newlines) is one partition, an uncompressed JSON-lines
   or text file is cut into byte ranges of whole lines (:data:`SPLIT_BYTES` each), as the
   single-process parallel ingest does;
2. workers: each partition is read and tokenised by the very functions of the single-process
   ingest (:mod:`spca_cli.corpus.read`), ``--since/--until`` and ``--lang`` on the way, each
   normalised text hashed when duplicates are set aside; the client gathers the hashes (8 bytes
   a document; with ``--near-duplicates`` the kept texts too), decides which documents stay
   (:func:`~spca_cli.corpus.duplicates.set_aside`, as one process does) and the workers drop
   the others, then apply ``--contains``; the counts stay there;
3. client: the words of every partition with their document frequencies come back and are
   summed: the union sorted, then the stop list and ``--min-count``, exactly the vocabulary one
   process builds;
4. workers: each partition becomes a row block of S over that vocabulary (weighted), kept in
   worker memory in input order, with its times and texts.

The result is a :class:`~spca_cli.distributed.corpus.DistributedCorpus`.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from spca_cli.corpus._io import check_file, is_gzip, line_ranges
from spca_cli.corpus.core import Corpus
from spca_cli.corpus.duplicates import duplicate_policy, set_aside
from spca_cli.corpus.read import (_READERS, RAW_KINDS, _iso, _kinds, _merge_documents,
                                  _no_documents, _read_chunks, _resolve, _time_window,
                                  check_raw_options, no_words_error, not_one_word,
                                  row_filters_described)
from spca_cli.corpus.scripts import UNSEGMENTED_MAX
from spca_cli.corpus.sources import STDIN, open_inputs
from spca_cli.corpus.stopwords import resolve_stopwords
from spca_cli.corpus.tokenize import (VocabularyBuilder, make_analyzer, parse_ngram_range,
                                      read_stopwords)
from spca_cli.corpus.tweets import first_fields
from spca_cli.distributed import gather
from spca_cli.errors import Name, SpcaNoDocumentsError, SpcaParameterError

__all__ = ["read_distributed", "SPLIT_BYTES", "plan_partitions"]

logger = logging.getLogger(__name__)

#: An uncompressed JSON-lines or text file is cut into byte ranges of at most about this size,
#: one partition (task) each: big enough that a task's fixed cost is small beside its reading;
#: smaller when that gives fewer than two partitions per worker (:func:`split_size`).
SPLIT_BYTES = 64 << 20
#: ... but never below this: a 1 MB range is read in tens of milliseconds.
MIN_SPLIT_BYTES = 1 << 20


@dataclass
class Partition:
    """What one partition of the input is to be read from (sent to a worker)."""

    path: str
    kind: str
    byte_range: tuple | None = None
    decided: tuple | None = None  # JSON lines split in ranges: fields found by first_fields


@dataclass
class Counts:
    """A partition read and tokenised, on its worker: counts over its own words."""

    words: np.ndarray
    S: sp.csr_array  # int32 counts, columns = words (unsorted)
    times: np.ndarray | None
    tz_offsets: np.ndarray | None
    timed: bool
    texts: object
    ids: object
    skipped: int
    dropped: int
    meta: dict
    keys: np.ndarray | None = None  # hashes of the normalised texts, when setting duplicates aside
    rows: np.ndarray | None = None  # positions among the documents read, when some were set aside


def split_size(paths, kind, workers):
    """Bytes per range: :data:`SPLIT_BYTES`, or less so that the plain files give at least two
    ranges per worker (a worker slowed by a busy machine then takes fewer of them)."""
    if kind not in ("jsonl", "text"):
        return SPLIT_BYTES
    plain = sum(os.path.getsize(p) for p in paths if not is_gzip(p))
    wanted = -(-plain // max(2 * workers, 1))
    return max(MIN_SPLIT_BYTES, min(SPLIT_BYTES, wanted))


def plan_partitions(paths, kind, *, text_column=None, time_column=None, languages=(),
                    split_bytes=None):
    """The partitions of ``paths`` in input order (see the module's step 1)."""
    split_bytes = split_bytes or SPLIT_BYTES
    out = []
    for path in paths:
        size = os.path.getsize(path)
        if kind not in ("jsonl", "text") or size <= split_bytes or is_gzip(path):
            out.append(Partition(path, kind))
            continue
        decided = None
        if kind == "jsonl":
            # the fields are decided by the file's first object with text, which the readers
            # of later ranges do not see (as in the single-process parallel ingest)
            decided = first_fields(path, text_column=text_column, time_column=time_column,
                                   need_lang=bool(languages))
            if decided is None:
                out.append(Partition(path, kind))
                continue
        parts = max(1, -(-size // split_bytes))
        out.extend(Partition(path, kind, r, decided) for r in line_ranges(path, parts))
    return out


def _read_partition(part, analyzer_settings, lo, hi, text_column, time_column, languages,
                    hashing=False):
    """Worker: read and tokenise one partition with the single-process ingest's functions."""
    meta = {}
    keys = [] if hashing else None
    kwargs = {"meta": meta}
    if part.byte_range is not None:
        kwargs["byte_range"] = part.byte_range
        if part.kind == "jsonl":
            kwargs.update(text_column=text_column, decided=part.decided, languages=languages)
    elif part.kind != "text":
        kwargs.update(text_column=text_column, time_column=time_column, languages=languages)
    analyzer = make_analyzer(*analyzer_settings)
    builder = VocabularyBuilder()
    documents = []
    epochs, offsets, timed = _read_chunks(_READERS[part.kind](part.path, **kwargs), builder,
                                          analyzer, lo, hi, part.path, documents, keys)
    words, indptr, indices, data, n_documents = builder.part()
    # builder ids 0 and 1 are the separator and the empty token: columns start at id 2
    # (int32 counts, as the blocks have always held them: part() narrows them for transfer)
    S = sp.csr_array((data.astype(np.int32), indices - 2, indptr), shape=(n_documents, len(words)))
    texts, ids = _merge_documents(documents) if documents else (None, None)
    times = tz = None
    if timed and epochs:
        times = np.concatenate(epochs).astype(np.int64)
        tz = np.concatenate(offsets).astype(np.int32)
    elif timed:
        times, tz = np.zeros(0, np.int64), np.zeros(0, np.int32)
    if part.byte_range is not None and part.kind == "jsonl":
        # the fields every range used, as the single-process parallel ingest records them
        meta.update(text_column=text_column or "text", time_column=part.decided[1])
    return Counts(words=words, S=S, times=times, tz_offsets=tz, timed=timed, texts=texts,
                  ids=ids, skipped=meta.get("skipped", 0), dropped=analyzer.segmenter.dropped,
                  meta={k: v for k, v in meta.items() if k != "skipped"},
                  keys=None if keys is None else (np.concatenate(keys) if keys
                                                  else np.zeros(0, np.uint64)))


def _keys_of(counts, with_texts):
    """Worker -> client: a partition's text hashes (and its texts, for near duplicates)."""
    return counts.keys, (counts.texts if with_texts else None)


def _keep_rows(counts, keep, first):
    """Worker: the partition without the documents set aside (``keep``, its mask), each kept
    one's position among all documents read in ``rows`` (``first``: the partition's first)."""
    if keep.all():
        return Counts(**{**counts.__dict__, "keys": None,
                         "rows": first + np.arange(len(keep), dtype=np.int64)})
    rows = np.flatnonzero(keep)

    def take(d):
        return None if d is None else d.take(keep)

    return Counts(words=counts.words, S=counts.S[rows], times=None if counts.times is None
                  else counts.times[keep], tz_offsets=None if counts.tz_offsets is None
                  else counts.tz_offsets[keep], timed=counts.timed, texts=take(counts.texts),
                  ids=take(counts.ids), skipped=counts.skipped, dropped=counts.dropped,
                  meta=counts.meta, rows=first + rows.astype(np.int64))


def _keep_containing(counts, tokens):
    """Worker: ``--contains``: only the documents holding one of ``tokens``."""
    if not tokens:
        return counts
    present = np.flatnonzero(np.isin(counts.words, np.array(tokens, dtype=str)))
    S = counts.S
    hit = (np.asarray((S[:, present] != 0).sum(axis=1)).ravel() > 0 if len(present)
           else np.zeros(S.shape[0], dtype=bool))
    if hit.all():
        return counts
    rows = np.flatnonzero(hit)

    def take(d):
        return None if d is None else d.take(hit)

    return Counts(words=counts.words, S=S[rows], times=None if counts.times is None
                  else counts.times[hit], tz_offsets=None if counts.tz_offsets is None
                  else counts.tz_offsets[hit], timed=counts.timed, texts=take(counts.texts),
                  ids=take(counts.ids), skipped=counts.skipped, dropped=counts.dropped,
                  meta=counts.meta, rows=None if counts.rows is None else counts.rows[hit])


def _summary(counts):
    """Worker -> client: the small facts of a partition, and its words' document frequencies."""
    df = np.bincount(counts.S.indices[counts.S.data != 0], minlength=len(counts.words))
    return {"documents": int(counts.S.shape[0]), "words": counts.words,
            "df": df.astype(np.int64), "timed": counts.timed, "skipped": counts.skipped,
            "dropped": counts.dropped, "meta": counts.meta, "has_ids": counts.ids is not None
            and len(counts.ids.blob) > 0, "has_texts": counts.texts is not None}


def _row_block(counts, vocabulary, weighting, idf):
    """Worker: the partition's rows of S over the final ``vocabulary`` (a block-sized
    :class:`Corpus`, so a saved block is an ordinary corpus file)."""
    position = np.searchsorted(vocabulary, counts.words)
    position = np.minimum(position, max(len(vocabulary) - 1, 0))
    found = (vocabulary[position] == counts.words) if len(vocabulary) else np.zeros(
        len(counts.words), dtype=bool)
    new_id = np.where(found, position, -1)
    S = counts.S
    cols = new_id[S.indices] if S.nnz else np.zeros(0, dtype=np.int64)
    keep = cols >= 0
    row_of = np.repeat(np.arange(S.shape[0]), np.diff(S.indptr))
    block = sp.csr_array((S.data[keep].astype(np.float64), (row_of[keep], cols[keep])),
                         shape=(S.shape[0], len(vocabulary)))
    block.sum_duplicates()  # canonical: sorted column indices, as the single-process merge
    block = _weight(block, weighting, idf)
    return Corpus(S=block, vocabulary=vocabulary, times=counts.times,
                  tz_offsets=counts.tz_offsets, texts=counts.texts, ids=counts.ids,
                  rows=counts.rows)


def _weight(S, weighting, idf):
    from spca_cli.corpus.tokenize import apply_weighting

    if S.shape[0] == 0:  # a block the filters emptied
        return S
    if weighting != "tfidf":
        return apply_weighting(S, weighting)
    # scikit-learn's TfidfTransformer with the idf of the whole corpus (a block alone would
    # give its own): S diag(idf), rows scaled to unit l2 norm
    from sklearn.preprocessing import normalize

    out = sp.csr_array(S @ sp.diags_array(idf), dtype=np.float64)
    out = sp.csr_array(normalize(out, norm="l2", copy=False), dtype=np.float64)
    out.sort_indices()  # a sparse product leaves each row's columns in any order
    return out


def _idf(df, n_documents):
    """TfidfTransformer's smooth idf: ln((1 + n) / (1 + df)) + 1."""
    return np.log((1.0 + n_documents) / (1.0 + df.astype(np.float64))) + 1.0


def read_distributed(client, paths, *, format="auto", text_column=None, time_column=None,
                     since=None, until=None, contains=(), min_count=None, min_length=None,
                     stopwords=None, weighting=None, lang=(), ngrams=None, vocab=None,
                     titles=None, keep_duplicates=None, near_duplicates=None,
                     split_bytes=None):
    """Read raw corpora (CSV, JSON lines, text) on the workers of ``client``.

    The options are those of :func:`~spca_cli.corpus.read.read_corpus`; the result holds the
    same S (as row blocks on the workers), vocabulary, times and texts as that function gives.

    Returns
    -------
    DistributedCorpus
    """
    from distributed import wait

    from spca_cli.distributed.corpus import DistributedCorpus

    if STDIN in ([paths] if isinstance(paths, str) else list(paths)):
        raise SpcaParameterError("standard input (-) cannot be read by a cluster's workers; "
                                 "save it to a file they can read")
    with open_inputs(paths, format) as inputs:
        files, name = list(inputs.files), inputs.label
        names = list(inputs.names)
    for path in files:
        check_file(path)
    kind = _kinds(files, format)
    if kind not in RAW_KINDS:
        raise SpcaParameterError([Name("scheduler"), " reads raw text (CSV, JSON lines, text) "
                                  f"or a saved corpus folder, not {kind} input; give it without ",
                                  Name("scheduler")])
    if vocab or titles:
        raise SpcaParameterError([Name("vocab"), " and ", Name("titles"),
                                  " apply to UCI docword files only"])
    contains, lang = tuple(contains or ()), tuple(lang or ())
    check_raw_options(name, kind, text_column, time_column, lang)
    policy = duplicate_policy(kind, keep_duplicates, near_duplicates, name=name)
    lo, hi = _time_window(since, until)
    settings = _resolve(dict(min_count=min_count, min_length=min_length, stopwords=stopwords,
                             weighting=weighting), "raw")
    read_stopwords(settings["stopwords"])
    ngram_range = parse_ngram_range(ngrams or (1, 1))
    analyzer = make_analyzer(int(settings["min_length"]), settings["stopwords"], ngram_range)
    tokens = [_contains_token(word, analyzer, settings) for word in contains]

    workers = len(client.scheduler_info(n_workers=-1)["workers"]) or 1
    plan = plan_partitions(files, kind, text_column=text_column, time_column=time_column,
                           languages=lang,
                           split_bytes=split_bytes or split_size(files, kind, workers))
    read = [client.submit(_read_partition, part, analyzer.settings, lo, hi, text_column,
                          time_column, lang, policy.exact, pure=False) for part in plan]
    _raise_first_error(client, read, plan, analyzer.settings, lo, hi, text_column,
                       time_column, lang)
    set_aside_counts = None
    if policy.exact:
        read, set_aside_counts = _drop_duplicates(client, read, policy)
    counts = [client.submit(_keep_containing, c, tokens, pure=False) for c in read]
    summaries = gather(client, [client.submit(_summary, c, pure=False) for c in counts])
    del read

    described = row_filters_described(lo, hi, lang) + (
        [[Name("contains"), " " + " ".join(contains)]] if contains else [])
    n_documents = sum(s["documents"] for s in summaries)
    if n_documents == 0:
        if not described:
            raise SpcaNoDocumentsError(name, "has no documents")
        raise _no_documents(name, described)
    vocabulary, df = _vocabulary(summaries, settings)
    if len(vocabulary) == 0:
        raise no_words_error(name, settings)
    skipped = sum(s["skipped"] for s in summaries)
    if skipped:
        logger.warning("%s: skipped %d objects without text", name, skipped)
    dropped = sum(s["dropped"] for s in summaries)
    if dropped:
        logger.warning("%s: dropped %d runs of Lao, Khmer or Myanmar text longer than %d "
                       "characters (no word segmenter for these scripts)", files[0], dropped,
                       UNSEGMENTED_MAX)
    idf = _idf(df, n_documents) if settings["weighting"] == "tfidf" else None
    shared_vocabulary = client.scatter(vocabulary, broadcast=True, hash=False)
    blocks = [client.submit(_row_block, c, shared_vocabulary, settings["weighting"], idf,
                            pure=False) for c in counts]
    del counts
    wait(blocks)

    options = {"format": kind, "inputs": names, "vocab": None, "since": _iso(since),
               "until": _iso(until), "contains": list(contains), **settings,
               **policy.options()}
    if set_aside_counts is not None:
        options["duplicates_set_aside"] = set_aside_counts
    meta = next((s["meta"] for s in summaries if s["meta"]), {})
    options.update(meta)
    if lang:
        options["lang"] = list(lang)
    if ngrams is not None:
        options["ngrams"] = list(ngram_range)
    timed = all(s["timed"] for s in summaries)
    return DistributedCorpus.from_blocks(
        client, blocks, vocabulary, rows=[s["documents"] for s in summaries], kind=kind,
        path=name, options=options, paths=names, timed=timed,
        has_texts=all(s["has_texts"] for s in summaries if s["documents"]),
        has_ids=any(s["has_ids"] for s in summaries))


def _drop_duplicates(client, read, policy):
    """(the partitions without the documents ``policy`` sets aside, the counts by reason):
    the hashes gathered in input order, decided here as one process decides them."""
    from spca_cli.corpus.texts import Strings

    near = policy.near is not None
    answers = gather(client, [client.submit(_keys_of, c, near, pure=False) for c in read])
    sizes = [len(k) for k, _ in answers]
    texts = None
    if near:
        texts = Strings.concat([t if t is not None else Strings([""] * n)
                                for (_, t), n in zip(answers, sizes)])
    keep, counts = set_aside(np.concatenate([k for k, _ in answers]) if answers
                             else np.zeros(0, np.uint64), texts, policy)
    if keep.all():
        return read, counts
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    kept = [client.submit(_keep_rows, c, keep[a:b], int(a), pure=False)
            for c, a, b in zip(read, starts[:-1], starts[1:])]
    return kept, counts


def _contains_token(word, analyzer, settings):
    found = analyzer(word)
    if len(found) != 1:
        raise not_one_word(word, settings)
    return found[0]


def _vocabulary(summaries, settings):
    """The words of all partitions, sorted, with the stop list and ``--min-count`` applied:
    (vocabulary, document frequencies), as one process builds them."""
    words = [s["words"] for s in summaries if len(s["words"])]
    if not words:
        return np.zeros(0, dtype=str), np.zeros(0, dtype=np.int64)
    union, inverse = np.unique(np.concatenate(words), return_inverse=True)
    df = np.bincount(inverse, weights=np.concatenate([s["df"] for s in summaries
                                                      if len(s["words"])]),
                     minlength=len(union)).astype(np.int64)
    keep = df >= int(settings["min_count"])
    stop = resolve_stopwords(settings["stopwords"]).words
    if stop:
        keep &= ~np.isin(union, np.array(sorted(stop), dtype=str))
    return union[keep], df[keep]


def _raise_first_error(client, futures, plan, *settings):
    """Wait for the reads; a bad line in a byte range is reported by reading its whole file
    (so the line number counts from the file's start, as one process reports it)."""
    from distributed import wait

    wait(futures)
    for part, future in zip(plan, futures):
        if future.status != "error":
            continue
        if part.byte_range is None:
            gather(client, future)  # raises the worker's error as is
        whole = Partition(part.path, part.kind)
        gather(client, client.submit(_read_partition, whole, *settings, pure=False))
        gather(client, future)  # the whole file read cleanly: the range's own error stands
