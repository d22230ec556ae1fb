"""From input files to a :class:`Corpus` (or :class:`MatrixInput`): format detection, the
streaming ingest of raw text, and the filters and weighting every corpus kind shares."""

from __future__ import annotations

import logging
import os
from itertools import compress, repeat

import numpy as np

from spca_cli.corpus._io import check_file, is_gzip, line_ranges
from spca_cli.corpus.core import Corpus
from spca_cli.corpus.duplicates import (TEXT_KINDS, DuplicatePolicy, duplicate_policy,
                                        exact_keys, set_aside)
from spca_cli.corpus.kinds import FORMATS, WEIGHTINGS, detect_format
from spca_cli.corpus.matrix_files import read_mtx, read_npy
from spca_cli.corpus.memory import Texts, iter_memory
from spca_cli.corpus.scripts import UNSEGMENTED_MAX
from spca_cli.corpus.sources import open_inputs
from spca_cli.corpus.stopwords import english_form, resolve_stopwords
from spca_cli.corpus.store import load_corpus
from spca_cli.corpus.text import iter_text
from spca_cli.corpus.texts import Strings, read_titles
from spca_cli.corpus.times import parse_bound
from spca_cli.corpus.tokenize import (VocabularyBuilder, apply_weighting, filter_words,
                                      keep_part_rows, make_analyzer, merge_parts,
                                      parse_ngram_range, read_stopwords)
from spca_cli.corpus.tweets import first_fields, iter_csv, iter_jsonl
from spca_cli.corpus.uci import read_uci
from spca_cli.errors import Name, SpcaInputError, SpcaNoDocumentsError, SpcaParameterError
from spca_cli.processes import usable_cores, worker_start

__all__ = ["read_corpus", "read_texts", "load_input", "detect_format", "FORMATS", "DEFAULTS"]

logger = logging.getLogger(__name__)

RAW_KINDS = ("csv", "jsonl", "text")
#: the kind of texts in memory (:func:`read_texts`): raw text, but no file kind of FORMATS
MEMORY = "texts"
#: the time window's parameters as message parts ("since/until"; the CLI: --since/--until)
_SINCE_UNTIL = (Name("since"), "/", Name("until"))
_READERS = {"csv": iter_csv, "jsonl": iter_jsonl, "text": iter_text, MEMORY: iter_memory}

# Raw text follows the 2013 paper; a UCI or MatrixMarket corpus is already tokenised and
# filtered by whoever published it, so it is kept as is (KOS: 3,430 x 6,906, 353,160 nonzeros).
DEFAULTS = {
    "raw": {"min_count": 2, "min_length": 3, "stopwords": "english", "weighting": "binary"},
    "tokenised": {"min_count": 1, "min_length": 1, "stopwords": "none", "weighting": "count"},
}

def _kinds(paths, format):
    if format not in FORMATS:
        raise SpcaParameterError([Name("format"), f" must be one of {', '.join(FORMATS)}, "
                                                  f"got {format!r}"])
    for p in paths:
        check_file(p)
    kinds = [detect_format(p) if format == "auto" else format for p in paths]
    if len(set(kinds)) > 1:
        raise SpcaParameterError("all inputs must be of one kind; got "
                                 + ", ".join(f"{k} ({p})" for k, p in zip(kinds, paths)))
    if len(paths) > 1 and kinds[0] not in RAW_KINDS:
        raise SpcaParameterError(f"{kinds[0]} input takes exactly one file, got {len(paths)}")
    return kinds[0]


def _resolve(options, group):
    """Fill None options with the defaults of ``group`` and check the values."""
    out = {k: (options.get(k) if options.get(k) is not None else v)
           for k, v in DEFAULTS[group].items()}
    if out["weighting"] not in WEIGHTINGS:
        raise SpcaParameterError([Name("weighting"), f" must be one of {', '.join(WEIGHTINGS)}"
                                                     f", got {out['weighting']!r}"])
    for name in ("min_count", "min_length"):
        if int(out[name]) < 1:
            raise SpcaParameterError([Name(name), f" must be at least 1, got {out[name]}"])
    return out


def _time_window(since, until):
    lo = parse_bound(since, name="since")
    hi = parse_bound(until, name="until", end_of_day=True)
    if lo is not None and hi is not None and lo > hi:
        raise SpcaParameterError([Name("since"), f" {since} is later than ", Name("until"),
                                  f" {until}"])
    return lo, hi


def _contains_ids(words, vocabulary, to_token):
    """Column ids of the ``contains`` words (-1 for a word that never occurs)."""
    index = {w: i for i, w in enumerate(vocabulary)} if words else {}
    ids = []
    for word in words:
        token = to_token(word)
        ids.append(index.get(token, -1))
    return np.array(ids, dtype=np.int64)


def _finish(S, vocabulary, times, offsets, *, path, contains_ids, contains, settings,
            min_length_applied, min_count_applied=False, documents=(None, None)):
    """Row filter (``contains``), word filters, weighting; shared by every corpus kind.
    ``min_length_applied`` / ``min_count_applied``: those word filters were applied while
    reading (the tokenizer's minimum length; min_count when the parts were merged).

    ``documents`` is the (texts, ids, rows) of the documents: two :class:`Strings` and an int64
    array (or Nones), filtered with the rows and returned as the fifth item of the result. ``described`` (the second item) lists
    the row filters applied, each as message parts."""
    described = []
    if len(contains):
        described.append([Name("contains"), " " + " ".join(contains)])
        present = contains_ids[contains_ids >= 0]
        if len(present):
            hit = np.asarray((S[:, present] != 0).sum(axis=1)).ravel() > 0
        else:
            hit = np.zeros(S.shape[0], dtype=bool)
        if not hit.all():
            S = S[np.flatnonzero(hit)]
            if times is not None:
                times, offsets = times[hit], offsets[hit]
            documents = tuple(_take(d, hit) for d in documents)
    if S.shape[0] == 0:
        return None, described
    stoplist = resolve_stopwords(settings["stopwords"])
    stopwords = stoplist.words
    if stoplist.english_rules and not min_length_applied:
        # a saved or published vocabulary: its contractions of stop words go with them
        stopwords = stopwords | {w for w in vocabulary.tolist()
                                 if "'" in w and english_form(w, stoplist.words) == ""}
    S, vocabulary = filter_words(
        S, vocabulary, stopwords=stopwords,
        min_count=1 if min_count_applied else int(settings["min_count"]),
        min_length=1 if min_length_applied else int(settings["min_length"]))
    if S.shape[1] == 0:
        raise no_words_error(path, settings)
    S = apply_weighting(S, settings["weighting"])
    return (S, vocabulary, times, offsets, documents), described


def _take(values, keep):
    """``values`` (Strings, an array of rows, or None) at the True places of ``keep``."""
    if values is None:
        return None
    return values[keep] if isinstance(values, np.ndarray) else values.take(keep)


def no_words_error(path, settings):
    """The error for a vocabulary the word filters left empty (one process or a cluster)."""
    return SpcaInputError(path, [
        "no words left after the word filters (", Name("min_count"),
        f" {settings['min_count']}, ", Name("min_length"), f" {settings['min_length']}, ",
        Name("stopwords"), f" {settings['stopwords']})"])


def check_raw_options(name, kind, text_column, time_column, lang):
    """Column and language options against the input kind (one process or a cluster)."""
    if kind not in ("csv", "jsonl") and (text_column or time_column):
        raise SpcaParameterError([Name("text_column"), " and ", Name("time_column"),
                                  " apply to CSV and JSON lines only"])
    if lang and kind not in ("csv", "jsonl"):
        raise SpcaInputError(name, [f"{kind} input has no language field, so ",
                                    Name("lang"), " cannot apply (it reads JSON 'lang' or "
                                    "a CSV 'lang'/'language' column)"])


def row_filters_described(lo, hi, lang):
    """The date and language row filters applied, as message parts for "no documents left"."""
    return ([list(_SINCE_UNTIL)] if lo is not None or hi is not None else []) + (
        [[Name("lang"), " " + " ".join(lang)]] if lang else [])


def not_one_word(word, settings):
    """The error for a ``contains`` word the tokenising rules do not keep as one word."""
    return SpcaParameterError([Name("contains"), f" {word!r} is not one word under the "
                               "tokenising rules (letters first, at least "
                               f"{settings['min_length']} characters, not a stop word)"])


def _no_documents(path, described):
    """The error for no documents left after the row filters ``described`` (message parts)."""
    return SpcaNoDocumentsError(path, ["no documents left after ",
                                       *(_joined(described) or ["reading"])])


def _joined(groups):
    """Groups of message parts as one list of parts, separated by commas."""
    return [part for i, group in enumerate(groups) for part in ([", "] if i else []) + group]


def read_corpus(paths, *, format="auto", vocab=None, text_column=None, time_column=None,
                since=None, until=None, contains=(), min_count=None, min_length=None,
                stopwords=None, weighting=None, lang=(), ngrams=None, titles=None,
                keep_duplicates=None, near_duplicates=None, groups=None, progress=None):
    """Read one or more input files into a :class:`Corpus`.

    Parameters
    ----------
    paths : str or list of str, or Inputs
        Input files, all of one kind. Several raw text files (CSV, JSON lines, text) are read
        as one corpus, in the order given. ``-`` is standard input (``format`` required), a
        folder its files of a known kind, a glob pattern its matches
        (:mod:`spca_cli.corpus.sources`).
    format : {'auto', 'uci', 'csv', 'jsonl', 'text'}, default='auto'
        'auto' tells the kind from each file name (SPEC, "Inputs").
    vocab : str, optional
        Vocabulary of a UCI corpus; default ``vocab.NAME.txt`` beside ``docword.NAME.txt``.
    text_column, time_column : str, optional
        CSV column or JSON field names; defaults ``text`` and the first of ``created_at``,
        ``tweet_created``, ``date`` present.
    since, until : str, date or datetime, optional
        Keep documents in this time window (inclusive; a date alone means a whole UTC day).
    contains : sequence of str
        Keep documents containing at least one of these words (after tokenising).
    min_count : int, optional
        Drop words found in fewer documents; default 2 for raw text, 1 for UCI.
    min_length : int, optional
        Drop words shorter than this; default 3 for raw text, 1 for UCI.
    stopwords : str, optional
        Comma-separated stop lists and files (:mod:`spca_cli.corpus.stopwords`), or 'none';
        default 'english' for raw text, 'none' for UCI.
    weighting : {'binary', 'count', 'tfidf'}, optional
        Default 'binary' for raw text, 'count' for UCI.
    lang : sequence of str
        Keep the documents whose language field (JSON ``lang``, CSV ``lang`` / ``language``)
        matches one of these codes.
    ngrams : str or (int, int), optional
        N-gram range of the terms, e.g. ``"1-2"``; default unigrams.
    titles : str, optional
        UCI only: a file with one title per document, kept as the documents' texts.
    keep_duplicates : bool, optional
        True keeps every document; False sets exact duplicates aside (texts equal once
        lower-cased, without URLs, @handles, a leading "RT @user:" and extra whitespace; the
        first one read stays); None (default) does so for tweets (CSV, JSON lines, texts in
        memory), not for text lines (:mod:`spca_cli.corpus.duplicates`).
    near_duplicates : float or True, optional
        Also set aside near duplicates: texts whose word-shingle sets have a Jaccard index of
        at least this (True: 0.8) with a text kept before them.
    groups : str, optional
        Keep each document's group in ``Corpus.groups`` (``spca topics --by``): for CSV and
        JSON lines the name of a column or field, for a UCI corpus a file of one group per
        document (in docID order). A missing field or an empty value is the group "".
    progress : callable, optional
        Called with the number of input bytes read since the last call.

    Returns
    -------
    Corpus

    Raises
    ------
    SpcaInputError
        A file is missing, empty or malformed (message names the file and line), or the
        filters leave no documents or no words.
    SpcaParameterError
        Inconsistent options (``since`` later than ``until``, several UCI files, ...).

    Notes
    -----
    Empty documents are kept as empty rows. When duplicates are set aside, ``Corpus.rows``
    gives each row's position among the documents read, and ``Corpus.duplicates`` how many
    were set aside by reason.
    """
    with open_inputs(paths, format) as inputs:
        corpus = _read_corpus(inputs.files, name=inputs.label, format=format, vocab=vocab,
                              text_column=text_column, time_column=time_column, since=since,
                              until=until, contains=contains, min_count=min_count,
                              min_length=min_length, stopwords=stopwords, weighting=weighting,
                              lang=lang, ngrams=ngrams, titles=titles,
                              keep_duplicates=keep_duplicates, near_duplicates=near_duplicates,
                              groups=groups, progress=progress)
        corpus.options["inputs"] = list(inputs.names)
        corpus.paths = list(inputs.names)
    return corpus


#: the options of :func:`read_corpus` that texts in memory take (no times, columns or files)
TEXTS_OPTIONS = ("contains", "min_count", "min_length", "stopwords", "weighting", "ngrams",
                 "keep_duplicates", "near_duplicates")


def read_texts(texts, *, name="<texts>", groups=None, **options):
    """A :class:`Corpus` of texts in memory, one document per str, read exactly as
    :func:`read_corpus` reads a CSV file's text column: each text normalised as the CSV and
    JSON readers do (:func:`~spca_cli.corpus.tweets.normalize_text`), then the same tokenizer,
    word filters, weighting and raw-text defaults. No file is written; messages name the texts
    ``name``.

    Parameters
    ----------
    texts : sequence of str
    name : str, default="<texts>"
    groups : sequence, optional
        Each text's group (one value per text, made a str; None is the group ""), kept in
        ``Corpus.groups`` with the documents that stay.
    **options
        ``contains``, ``min_count``, ``min_length``, ``stopwords``, ``weighting``, ``ngrams``
        (:data:`TEXTS_OPTIONS`), as :func:`read_corpus` takes them.
    """
    other = [k for k in options if k not in TEXTS_OPTIONS]
    if other:
        raise SpcaParameterError([*_names(sorted(other)), " cannot apply to texts in memory "
                                  f"(they take {', '.join(TEXTS_OPTIONS)})"])
    given = {k: options.get(k) for k in TEXTS_OPTIONS}
    texts = Texts(texts, name)
    if groups is not None:
        groups = list(groups)
        if len(groups) != len(texts):
            raise SpcaParameterError(f"groups must hold one value per text ({len(texts)}), "
                                     f"got {len(groups)}")
        texts.groups = [g if isinstance(g, str) else "" if g is None else str(g)
                        for g in groups]
    corpus = _read_corpus([texts], name=name, format=MEMORY, vocab=None,
                          text_column=None, time_column=None, since=None, until=None,
                          lang=(), titles=None, progress=None,
                          groups=None if groups is None else MEMORY,
                          **{**given, "contains": given["contains"] or ()})
    corpus.paths = [name]
    return corpus


def _read_corpus(paths, *, name, format, vocab, text_column, time_column, since, until,
                 contains, min_count, min_length, stopwords, weighting, lang, ngrams, titles,
                 progress, keep_duplicates=None, near_duplicates=None, groups=None):
    """:func:`read_corpus` on resolved files, or on one :class:`Texts` (:func:`read_texts`,
    whose groups ride on it: ``groups`` is then ``MEMORY``); ``name`` (the inputs as given)
    names the corpus in its messages."""
    kind = MEMORY if isinstance(paths[0], Texts) else _kinds(paths, format)
    # a saved corpus (.npz), a matrix (.mtx) or a dense matrix (.npy)
    if kind not in (*FORMATS, MEMORY):
        raise SpcaInputError(paths[0], f"is a {kind} file, not text or a UCI corpus to read: "
                                       "load it with spca_cli.load_input")
    contains = tuple(contains or ())
    lang = tuple(lang or ())
    lo, hi = _time_window(since, until)
    policy = duplicate_policy(kind, keep_duplicates, near_duplicates, name=name)
    raw = kind in (*RAW_KINDS, MEMORY)
    settings = _resolve(dict(min_count=min_count, min_length=min_length, stopwords=stopwords,
                             weighting=weighting), "raw" if raw else "tokenised")
    read_stopwords(settings["stopwords"])  # a missing stop word file is reported before reading
    ngram_range = parse_ngram_range(ngrams or (1, 1))
    options = {"format": kind, "inputs": list(map(str, paths)), "vocab": vocab,
               "since": _iso(since), "until": _iso(until), "contains": list(contains), **settings}
    check_raw_options(name, kind, text_column, time_column, lang)
    if lang:
        options["lang"] = list(lang)
    if kind in TEXT_KINDS:
        options.update(policy.options())
    if ngrams is not None:
        if not raw:
            raise SpcaParameterError([Name("ngrams"), " applies to raw text (CSV, JSON lines, "
                                      f"text), not to {kind} input, which is tokenised "
                                      "already"])
        options["ngrams"] = list(ngram_range)
    if titles is not None:
        if kind != "uci":
            raise SpcaParameterError([Name("titles"), " applies to UCI docword files only "
                                      "(tweets and text lines are their own text)"])
        options["titles"] = titles
    if groups is not None:
        if kind == "text":
            raise SpcaInputError(name, ["text input has no columns, so ", Name("groups"),
                                        " cannot apply (give a CSV or JSON lines file)"])
        if kind != MEMORY:
            options["groups"] = groups

    if kind == "uci":
        if lo is not None or hi is not None:
            raise SpcaInputError(paths[0], ["has no document times, so ", *_SINCE_UNTIL,
                                            " cannot apply"])
        S, vocabulary = read_uci(paths[0], vocab=vocab, progress=progress)
        times = offsets = None
        texts = None if titles is None else read_titles(titles, S.shape[0], source=paths[0])
        group_values = None if groups is None else read_groups(groups, S.shape[0],
                                                               source=paths[0])
        ids = Strings(map(str, range(1, S.shape[0] + 1)))  # UCI docIDs are 1-based
        rows = None
        min_length_applied = counted = False
        known = set(vocabulary.tolist()) if contains else set()

        def to_token(word):
            return word if word in known else word.lower()
    else:
        if vocab:
            raise SpcaParameterError([Name("vocab"), " applies to UCI docword files only"])
        analyzer = make_analyzer(int(settings["min_length"]), settings["stopwords"], ngram_range)
        # min_count is applied while the parts are merged, unless ``contains`` drops documents
        # first (the counts are then of the documents it keeps: _finish applies it)
        counted = not contains
        S, vocabulary, times, offsets, meta, (texts, ids, rows, group_values), \
            set_aside_counts = _stream(
                paths, kind, analyzer, lo, hi, text_column, time_column, progress, lang,
                min_count=int(settings["min_count"]) if counted else 1,
                binary=settings["weighting"] == "binary", policy=policy,
                group_column=None if groups is None or kind == MEMORY else groups)
        if groups is not None and kind == MEMORY:
            group_values = np.array(paths[0].groups, dtype=object)
            if rows is not None:
                group_values = group_values[rows]
        options.update(meta)
        if set_aside_counts is not None:
            options["duplicates_set_aside"] = set_aside_counts
        min_length_applied = True

        def to_token(word):
            tokens = analyzer(word)
            if len(tokens) != 1:
                raise not_one_word(word, settings)
            return tokens[0]

    row_filters = row_filters_described(lo, hi, lang)
    if S.shape[0] == 0:
        if not row_filters:
            raise SpcaNoDocumentsError(name, "has no documents")
        raise _no_documents(name, row_filters)
    contains_ids = _contains_ids(contains, vocabulary, to_token)
    result, described = _finish(S, vocabulary, times, offsets, path=name,
                                contains_ids=contains_ids,
                                contains=contains, settings=settings,
                                min_length_applied=min_length_applied,
                                min_count_applied=counted,
                                documents=(texts, ids, rows, group_values))
    if result is None:
        raise _no_documents(name, row_filters + described)
    S, vocabulary, times, offsets, (texts, ids, rows, group_values) = result
    corpus = Corpus(S=S, vocabulary=vocabulary, times=times, tz_offsets=offsets, kind=kind,
                    path=name, options=options, texts=texts, ids=ids, rows=rows,
                    groups=group_values)
    logger.info("%s: %d documents, %d words, %d nonzeros", name, corpus.n_documents,
                corpus.n_words, corpus.nnz)
    return corpus


def read_groups(path, n_documents, *, source):
    """One group per line of ``path`` for the ``n_documents`` documents of ``source`` (a UCI
    corpus), as an object array of str."""
    from spca_cli.corpus.texts import lines_per_document

    return np.array(lines_per_document(path, n_documents, source=source, what="group"),
                    dtype=object)


def _iso(value):
    if value is None:
        return None
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


# A raw file at least this big (uncompressed JSON lines or plain text) is read by several
# processes, each taking a byte range of whole lines; below it, starting them costs more than
# it saves. At a million tweets (180 MB) two processes take ingest from ~10 s to ~6 s.
PARALLEL_MIN_BYTES = 32 << 20


def _read_chunks(chunks, builder, analyzer, lo, hi, path, documents, keys=None, groups=None):
    """Feed ``(texts, epoch, offset, ids)`` chunks through the time window into ``builder``;
    append each chunk's kept ``(texts, ids)`` as :class:`Strings` to ``documents`` and, when
    ``keys`` is a list, the hashes of their normalised texts to it
    (:func:`~spca_cli.corpus.duplicates.exact_keys`); return (epochs, offsets, all_timed).
    Chunks with a fifth item (the documents' groups) append the kept ones to ``groups``."""
    epochs, offsets = [], []
    all_timed = True
    for chunk in chunks:
        texts, epoch, offset, ids = chunk[:4]
        chunk_groups = chunk[4] if len(chunk) > 4 else None
        if epoch is None:
            all_timed = False
            if lo is not None or hi is not None:
                raise SpcaInputError(path, ["has no time column, so ", *_SINCE_UNTIL,
                                            " cannot apply (give ", Name("time_column"), ")"])
        elif lo is not None or hi is not None:
            keep = np.ones(len(texts), dtype=bool)
            if lo is not None:
                keep &= epoch >= lo
            if hi is not None:
                keep &= epoch <= hi
            if not keep.all():
                texts = list(compress(texts, keep))
                ids = None if ids is None else list(compress(ids, keep))
                if chunk_groups is not None:
                    chunk_groups = list(compress(chunk_groups, keep))
                epoch, offset = epoch[keep], offset[keep]
        analyzer.count_chunk(texts, builder)
        if keys is not None:
            keys.append(exact_keys(texts))
        if groups is not None and chunk_groups is not None:
            groups.extend(chunk_groups)
        # a text line's end is not part of its text (the tokenizer saw it as whitespace)
        documents.append((Strings(list(map(str.rstrip, texts, repeat("\r\n")))),
                          None if ids is None else Strings(ids)))
        if epoch is not None:
            epochs.append(epoch)
            offsets.append(offset)
    return epochs, offsets, all_timed


def _read_range(path, kind, analyzer_settings, lo, hi, text_column, decided, byte_range,
                languages, shared_fd=None, hashing=False):
    """One worker of the parallel ingest: the counts of the lines in ``byte_range``, and with
    ``hashing`` the hashes of their normalised texts (else None).

    With ``shared_fd`` (:class:`_SharedTexts`) the range's texts are written there, at the
    range's own start, and only their offsets come back."""
    builder = VocabularyBuilder()
    meta = {}
    documents = []
    keys = [] if hashing else None
    kwargs = dict(meta=meta, byte_range=byte_range)
    if kind == "jsonl":
        kwargs.update(text_column=text_column, decided=decided, languages=languages)
    analyzer = make_analyzer(*analyzer_settings)
    epochs, offsets, all_timed = _read_chunks(_READERS[kind](path, **kwargs), builder,
                                              analyzer, lo, hi, path, documents, keys)
    if shared_fd is not None:
        documents = _SharedTexts.write(shared_fd, byte_range, documents)
    return (builder.part(), epochs, offsets, all_timed, meta.get("skipped", 0),
            analyzer.segmenter.dropped, documents, _joined_keys(keys))


def _joined_keys(keys):
    """The chunks' key arrays as one (None when not hashing)."""
    if keys is None:
        return None
    return np.concatenate(keys) if keys else np.zeros(0, dtype=np.uint64)


class _SharedTexts:
    """The texts of a parallel read, in one shared memory file (``os.memfd_create``) that the
    forked workers inherit, instead of pickled back through the pool.

    Each worker writes its range's texts at the range's own start, when they fit in the range's
    bytes (they nearly always do: JSON escapes shrink, and so do HTML entities but ``&nLt;`` and
    ``&nGt;``, six UTF-8 bytes from five; a text line is its own text), so the ranges' texts
    never overlap; the parent then moves each range's texts down behind the last
    (``mmap.move``, no copy out) and cuts the file to their length.
    On 1,000,000 clustered tweets the texts are 170 MB: sent through the pool they were pickled
    in the workers, read and unpickled in the parent and concatenated once more (read_corpus
    0.4-0.8 s shorter without them). A range whose texts would not fit, or a system without
    ``memfd_create`` or refusing it, sends them as before (:meth:`texts` then copies all of
    them once).
    """

    def __init__(self, size):
        self.fd = os.memfd_create("spca-texts")
        try:
            os.ftruncate(self.fd, max(size, 1))
        except OSError:
            os.close(self.fd)
            raise
        self.size = max(size, 1)

    @staticmethod
    def available():
        return hasattr(os, "memfd_create")

    @classmethod
    def create(cls, size):
        """A shared file of ``size`` bytes, or None when the system has no ``memfd_create`` or
        refuses it (ENOSYS on a kernel before 3.17, EPERM under a sandbox's seccomp filter):
        the texts then go through the pool."""
        if not cls.available():
            return None
        try:
            return cls(size)
        except OSError as exc:
            logger.info("no shared memory for the texts (%s); sending them back", exc)
            return None

    @staticmethod
    def write(fd, byte_range, documents):
        """In a worker: the range's chunks' texts written at ``byte_range[0]``; returns
        ``[(("shared", start, offsets), ids)]`` (offsets from that start), or ``documents``
        unchanged when the texts would not fit in the range's bytes."""
        import mmap

        start, stop = byte_range
        total = sum(len(texts.blob) for texts, _ in documents)
        if total > stop - start:
            return documents
        offsets = [np.zeros(1, dtype=np.int64)]
        with mmap.mmap(fd, 0) as shared:
            at = start
            for texts, _ in documents:
                shared[at:at + len(texts.blob)] = memoryview(texts.blob)
                offsets.append(texts.offsets[1:] + (at - start))
                at += len(texts.blob)
        ids = [i for _, i in documents]
        ids = None if any(i is None for i in ids) else Strings.concat(ids)
        return [(("shared", start, np.concatenate(offsets)), ids)]

    def texts(self, documents_by_range):
        """In the parent: [(texts, ids)] of the whole file, from each range's documents in
        file order; closes the file (the texts' array keeps its memory mapped)."""
        import mmap

        shared = mmap.mmap(self.fd, self.size)
        try:
            whole = all(len(d) == 1 and isinstance(d[0][0], tuple) for d in documents_by_range)
            pieces, ids, cursor = [], [], 0
            for documents in documents_by_range:
                for texts, range_ids in documents:
                    if isinstance(texts, tuple):
                        _, start, offsets = texts
                        length = int(offsets[-1])
                        if whole:
                            shared.move(cursor, start, length)  # down: never over a later range
                            pieces.append(offsets[1:] + cursor)
                            cursor += length
                        else:
                            blob = np.frombuffer(shared, np.uint8, length, start).copy()
                            texts = Strings(blob=blob, offsets=offsets)
                    if not whole:
                        pieces.append(texts)
                    ids.append(range_ids)
            ids = None if any(i is None for i in ids) else Strings.concat(ids)
            if not whole:
                shared.close()
                return [(Strings.concat(pieces), ids)]
            offsets = np.concatenate([np.zeros(1, dtype=np.int64)] + pieces)
            os.ftruncate(self.fd, max(cursor, 1))  # the tail's pages are freed
            blob = np.frombuffer(shared, np.uint8, cursor)
            return [(Strings(blob=blob, offsets=offsets), ids)]
        finally:
            os.close(self.fd)


def _parallel_plan(path, kind, text_column, time_column, languages=()):
    """(byte ranges, decided fields) when ``path`` is worth reading in parallel, else None."""
    if kind not in ("jsonl", "text"):
        return None
    import multiprocessing as mp  # (here: a CSV or UCI input is never read in parallel)

    workers = usable_cores()
    if workers < 2 or "fork" not in mp.get_all_start_methods():
        return None
    if os.path.getsize(path) < PARALLEL_MIN_BYTES or is_gzip(path):
        return None  # (a gzip stream cannot be entered in the middle)
    decided = None
    if kind == "jsonl":
        # which fields hold the text and time is decided by the file's first object with text,
        # which the workers of later ranges do not see
        decided = first_fields(path, text_column=text_column, time_column=time_column,
                               need_lang=bool(languages))
        if decided is None:
            return None
    # two ranges per worker, so a worker slowed by a busy core takes fewer of them
    return line_ranges(path, 2 * workers), decided


def _read_parallel(path, kind, analyzer, lo, hi, text_column, plan, progress, languages=(),
                   hashing=False):
    """[(part, epochs, offsets, all_timed, documents, keys)] of the ranges of ``path``, read by
    worker processes (``keys``: the hashes of the normalised texts with ``hashing``, else None),
    or None when a worker met bad input (the serial reader then reports it with its line)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    ranges, decided = plan
    # fork: the workers start at once with everything imported (spawn would import scikit-learn
    # again in each); they only tokenise, never touching threads the parent may hold
    context = mp.get_context("fork")
    # numba's first call in a process costs ~0.3 s (its typing registries, then each kernel
    # from the cache): paid here once, before the fork, the workers start with the counting
    # kernels loaded (the parent needs numba for the merge anyway)
    analyzer.count_chunk(["warm up"], VocabularyBuilder())
    if hashing:
        exact_keys(["warm up"])  # (the duplicates' kernel, likewise)
    results = []
    skipped = 0
    # (as long as the ranges planned: every range writes within its own bytes)
    shared = _SharedTexts.create(ranges[-1][1]) if ranges else None
    try:
        with ProcessPoolExecutor(max_workers=min(usable_cores(), len(ranges)),
                                 mp_context=context, initializer=worker_start) as pool:
            futures = [pool.submit(_read_range, path, kind, analyzer.settings, lo, hi,
                                   text_column, decided, r, languages,
                                   None if shared is None else shared.fd, hashing)
                       for r in ranges]
            try:
                for (start, stop), future in zip(ranges, futures):
                    (part, epochs, offsets, all_timed, n_skipped, n_dropped, documents,
                     keys) = future.result()
                    results.append((part, epochs, offsets, all_timed, documents, keys))
                    skipped += n_skipped
                    analyzer.segmenter.dropped += n_dropped
                    if progress is not None:
                        progress(stop - start)
            except (SpcaInputError, BrokenProcessPool) as exc:
                for future in futures:
                    future.cancel()
                logger.info("%s: parallel read stopped (%s); reading it again in one process",
                            path, exc)
                return None
        if shared is not None:
            owner, shared = shared, None  # texts() closes its file, whatever happens
            documents = owner.texts([r[4] for r in results])
            results = [r[:4] + (documents if i == 0 else [], r[5])
                       for i, r in enumerate(results)]
    finally:
        if shared is not None:
            os.close(shared.fd)
    if skipped:
        logger.warning("%s: skipped %d objects without text", path, skipped)
    return results


def _stream(paths, kind, analyzer, lo, hi, text_column, time_column, progress, languages=(),
            min_count=1, binary=False, policy=DuplicatePolicy(), group_column=None):
    """Tokenise the documents of ``paths`` chunk by chunk into counts (S, vocabulary, times),
    without the words of fewer than ``min_count`` documents; with ``binary`` each count is 1
    (what the binary weighting makes of them: ``contains`` and the word filters see only
    which entries are nonzero).

    The duplicates ``policy`` sets aside are dropped before the counts are merged, so
    ``min_count`` counts the documents kept; the result's documents are (texts, ids, rows,
    groups), rows the kept documents' positions among those read (None when all are kept),
    groups each one's value of ``group_column`` (an object array of str; None without it), and
    its last item the counts set aside by reason (None when the policy sets nothing aside).

    Big uncompressed JSON-lines and text files are split into byte ranges of whole lines read
    by worker processes (:data:`PARALLEL_MIN_BYTES`); every other file, and any file whose
    parallel read meets bad input, is read here. The counts of all pieces are merged in input
    order, which gives the same matrix as one serial pass. A read with ``group_column`` is
    serial: the workers return no groups.
    """
    parts = []
    epochs, offsets = [], []
    documents = []
    groups = [] if group_column is not None else None
    keys = [] if policy.exact else None
    all_timed = True
    meta = {}
    for path in paths:
        file_meta = {}
        plan = (None if group_column is not None
                else _parallel_plan(path, kind, text_column, time_column, languages))
        pieces = None
        if plan is not None:
            pieces = _read_parallel(path, kind, analyzer, lo, hi, text_column, plan, progress,
                                    languages, hashing=keys is not None)
            if pieces is not None and kind == "jsonl":
                file_meta = {"text_column": text_column or "text", "time_column": plan[1][1]}
        if pieces is None:
            kwargs = dict(progress=progress, meta=file_meta)
            if kind in ("csv", "jsonl"):
                kwargs.update(text_column=text_column, time_column=time_column,
                              languages=languages, group_column=group_column)
            builder = VocabularyBuilder()
            file_documents = []
            file_keys = [] if keys is not None else None
            file_epochs, file_offsets, timed = _read_chunks(_READERS[kind](path, **kwargs),
                                                            builder, analyzer, lo, hi, path,
                                                            file_documents, file_keys, groups)
            pieces = [(builder.part(), file_epochs, file_offsets, timed, file_documents,
                       _joined_keys(file_keys))]
        for part, file_epochs, file_offsets, timed, file_documents, part_keys in pieces:
            parts.append(part)
            if keys is not None:
                keys.append(part_keys)
            documents.extend(file_documents)
            epochs.extend(file_epochs)
            offsets.extend(file_offsets)
            all_timed &= timed
        meta = meta or dict(file_meta)  # the columns used, as found in the first file
    if analyzer.segmenter.dropped:
        logger.warning("%s: dropped %d runs of Lao, Khmer or Myanmar text longer than %d "
                       "characters (no word segmenter for these scripts)", paths[0],
                       analyzer.segmenter.dropped, UNSEGMENTED_MAX)
    texts, ids = _merge_documents(documents)
    if groups is not None:
        groups = np.array(groups, dtype=object)
    rows = counts = keep = None
    if keys is not None:
        keep, counts = set_aside(np.concatenate(keys), texts, policy)
        if keep.all():
            keep = None
        else:
            parts = keep_part_rows(parts, keep)
            texts, ids = texts.take(keep), _take(ids, keep)
            groups = _take(groups, keep)
            rows = np.flatnonzero(keep).astype(np.int64)
    S, vocabulary = merge_parts(parts, min_count, binary)
    if all_timed and epochs:
        times = np.concatenate(epochs).astype(np.int64)
        tz = np.concatenate(offsets).astype(np.int32)
        if keep is not None:
            times, tz = times[keep], tz[keep]
    elif all_timed and S.shape[0] == 0:
        times, tz = np.zeros(0, np.int64), np.zeros(0, np.int32)
    else:
        times = tz = None
    return S, vocabulary, times, tz, meta, (texts, ids, rows, groups), counts


def _merge_documents(documents):
    """(texts, ids) of all chunks as two :class:`Strings`; ids None when no input has any."""
    texts = Strings.concat([t for t, _ in documents])
    if all(ids is None for _, ids in documents):
        return texts, None
    ids = Strings.concat([Strings([""] * len(t)) if i is None else i for t, i in documents])
    return texts, (ids if len(ids.blob) else None)

_INGEST_KEYS = ("vocab", "text_column", "time_column", "since", "until", "contains",
                "min_count", "min_length", "stopwords", "weighting", "lang", "ngrams",
                "titles", "keep_duplicates", "near_duplicates", "groups")


def _given(options):
    return {k: v for k, v in options.items()
            if k in _INGEST_KEYS and v is not None and v != () and v != []}


def load_input(path_or_paths, *, labels=None, progress=None, **ingest_options):
    """Any input of SPEC's table: raw corpora, a saved ``.npz``, ``.mtx`` or ``.npy``.

    Parameters
    ----------
    path_or_paths : str or list of str, or Inputs
        Files, ``-`` (stdin, with ``format``), folders or glob patterns
        (:func:`~spca_cli.corpus.sources.open_inputs`).
    labels : str, optional
        Names of the rows/columns of a ``.npy`` or ``.mtx`` matrix (one per line).
    progress : callable, optional
        Called with input bytes read.
    **ingest_options
        The keyword arguments of :func:`read_corpus`. On a saved corpus or ``.mtx`` file the
        document and word filters apply; the weighting of a saved corpus cannot change.

    Returns
    -------
    Corpus or MatrixInput
    """
    format = ingest_options.pop("format", None) or "auto"
    unknown = set(ingest_options) - set(_INGEST_KEYS)
    if unknown:
        raise TypeError(f"load_input() got unexpected options {sorted(unknown)}")
    blocks = _corpus_folder(path_or_paths)
    if blocks is not None:
        return _load_corpus_folder(blocks, _given(ingest_options), labels)
    with open_inputs(path_or_paths, format) as inputs:
        data = _load_files(inputs, format, labels, progress, ingest_options)
        data.paths = list(inputs.names)
    return data


def _corpus_folder(path_or_paths):
    """The folder when the input is one folder of row blocks saved by ``spca ingest
    --scheduler``, else None."""
    from spca_cli.distributed.corpus import is_corpus_folder

    if isinstance(path_or_paths, (str, os.PathLike)):
        items = [path_or_paths]
    else:
        items = getattr(path_or_paths, "files", path_or_paths)  # Inputs, or a list
        items = items if isinstance(items, (list, tuple)) else None
    if items is not None and len(items) == 1 and is_corpus_folder(os.fspath(items[0])):
        return os.fspath(items[0])
    return None


def _load_corpus_folder(folder, given, labels):
    """A saved folder of row blocks, read in this process as one corpus."""
    from spca_cli.distributed.corpus import gather_corpus_folder

    if labels:
        raise SpcaParameterError([Name("labels"), " applies to .npy and .mtx inputs only"])
    if given:
        raise SpcaParameterError([*_names(given), " cannot apply to a saved corpus folder; "
                                  "give them to spca ingest"])
    return gather_corpus_folder(folder)


def _load_files(inputs, format, labels, progress, ingest_options):
    paths = inputs.files
    kind = _kinds(paths, format) if format == "auto" else format
    if kind in ("uci", *RAW_KINDS):
        if labels:
            raise SpcaParameterError([Name("labels"), " applies to .npy and .mtx inputs only"])
        return read_corpus(inputs, format=format, progress=progress, **ingest_options)
    given = _given(ingest_options)
    if "lang" in given:
        raise SpcaInputError(paths[0], [f"{kind} input has no language field, so ",
                                        Name("lang"), " cannot apply (give the raw CSV or JSON "
                                        "lines file)"])
    if "ngrams" in given:
        raise SpcaParameterError([Name("ngrams"), f" cannot apply to a {kind} input, which is "
                                  "tokenised already (give it to spca ingest with the raw "
                                  "text)"])
    if kind == "npy":
        if given:
            raise SpcaParameterError([*_names(given), " cannot apply to a matrix input (.npy)"])
        return read_npy(paths[0], labels=labels)
    if labels and kind == "corpus":
        raise SpcaParameterError([Name("labels"), " applies to .npy and .mtx inputs only"])
    return _refilter(paths[0], kind, labels, given)


def _names(given):
    """The parameters ``given``, as message parts separated by commas."""
    return _joined([[Name(k)] for k in given])


def _refilter(path, kind, labels, given):
    """A saved corpus or an .mtx matrix, with the row and word filters that were asked for."""
    bad = [k for k in ("vocab", "text_column", "time_column", "titles", "keep_duplicates",
                       "near_duplicates", "groups") if k in given]
    if bad:
        raise SpcaParameterError([*_names(bad), f" cannot apply to a {kind} input"])
    if kind == "mtx":
        S, vocabulary, source = read_mtx(path, labels=labels)
        times = offsets = None
        documents = (None, None, None)
        base = dict(DEFAULTS["tokenised"])
        options = {"format": "mtx", "inputs": [path], "labels": source, **base}
    else:
        corpus = load_corpus(path)
        if not given:
            return corpus
        S, vocabulary, times, offsets = (corpus.S, corpus.vocabulary, corpus.times,
                                         corpus.tz_offsets)
        documents = (corpus.texts, corpus.ids, corpus.rows)
        options = dict(corpus.options)
        built = options.get("weighting", "count")
        if given.get("weighting", built) != built:
            raise SpcaParameterError([f"{path} was built with ", Name("weighting"),
                                      f" {built}; re-run spca ingest to change it"])
        # the word filters only remove; weighting stays as built
        base = {"min_count": 1, "min_length": 1, "stopwords": "none", "weighting": "count"}
    settings = {**base, **{k: given[k] for k in ("min_count", "min_length", "stopwords")
                           if k in given}}
    if kind == "mtx" and "weighting" in given:
        settings["weighting"] = given["weighting"]
    settings = _resolve(settings, "tokenised")
    lo, hi = _time_window(given.get("since"), given.get("until"))
    described = []
    if lo is not None or hi is not None:
        if times is None:
            raise SpcaInputError(path, ["has no document times, so ", *_SINCE_UNTIL,
                                        " cannot apply"])
        keep = np.ones(len(times), dtype=bool)
        if lo is not None:
            keep &= times >= lo
        if hi is not None:
            keep &= times <= hi
        S, times, offsets = S[np.flatnonzero(keep)], times[keep], offsets[keep]
        documents = tuple(_take(d, keep) for d in documents)
        described.append(list(_SINCE_UNTIL))
    contains = tuple(given.get("contains", ()))
    index = {w: i for i, w in enumerate(vocabulary)}
    ids = np.array([index.get(w, index.get(w.lower(), -1)) for w in contains], dtype=np.int64)
    result, more = (None, []) if S.shape[0] == 0 else _finish(
        S, vocabulary, times, offsets, path=path, contains_ids=ids, contains=contains,
        settings=settings, min_length_applied=False, documents=documents)
    if result is None:
        raise _no_documents(path, described + more)
    S, vocabulary, times, offsets, (texts, ids, rows) = result
    for k in ("since", "until", "contains", "min_count", "min_length", "stopwords"):
        if k in given:
            options[k] = _iso(given[k]) if k in ("since", "until") else (
                list(given[k]) if k == "contains" else given[k])
    if kind == "mtx":
        options.update(settings)
    return Corpus(S=S, vocabulary=vocabulary, times=times, tz_offsets=offsets,
                  kind="mtx" if kind == "mtx" else "corpus", path=str(path), options=options,
                  texts=texts, ids=ids, rows=rows)
