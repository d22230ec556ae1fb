"""Tweets as CSV or JSON lines, read in chunks of documents.

Each reader yields ``(texts, epoch, offset, ids)`` per chunk: the texts (HTML entities such as
``&amp;`` unescaped, as Twitter escapes them in both its API and its exports), the times as
int64 UTC seconds and int32 offsets, or ``None`` twice when the file has no time column, and
the documents' ids as strings (CSV column ``tweet_id``, ``id_str`` or ``id``; JSON ``id_str`` or
``id``; "" where a JSON object has none), or ``None`` when a CSV has no id column.
Only one chunk of text is held at a time. Given a ``group_column``, the CSV and JSON readers
yield a fifth item, each document's value of that column or field as a str
(:func:`group_value`).

Every tweet read is yielded, copies included: which of them count once (retweets, the same text
to another @handle, identical rows) is decided for every reader by
:mod:`spca_cli.corpus.duplicates`.
"""

from __future__ import annotations

import csv
import json
import logging
from html import unescape
from itertools import compress, islice, repeat

from spca_cli.corpus._io import line_chunks, open_text
from spca_cli.corpus.texts import ID_COLUMNS, JSON_ID_KEYS
from spca_cli.corpus.times import TimeFormatError, TimeRangeError, parse_timestamps
from spca_cli.errors import Name, SpcaInputError

__all__ = ["iter_csv", "iter_jsonl", "first_fields", "language_matcher", "normalize_text",
           "group_value", "no_column", "TIME_COLUMNS", "LANGUAGE_COLUMNS", "CHUNK_DOCUMENTS"]

logger = logging.getLogger(__name__)

TIME_COLUMNS = ("created_at", "tweet_created", "date")
TEXT_KEYS = ("full_text", "text")  # JSON: the untruncated text first
CHUNK_DOCUMENTS = 50_000
# --lang reads the first of these columns a CSV file has; in JSON, Twitter's field "lang"
LANGUAGE_COLUMNS = ("lang", "language")


def normalize_text(text):
    """A text as the CSV and JSON readers pass it to the tokenizer: HTML entities unescaped
    (``&amp;`` -> ``&``). The one per-text step of raw text before tokenising, shared with the
    texts given from Python (:func:`spca_cli.corpus.read.read_texts`)."""
    return unescape(text)


def group_value(value):
    """A document's group as a str: a CSV field as it is, a JSON string as it is, a missing
    field or null as "" (the groups' report names it ``(none)``), any other JSON value in JSON
    (``3``, ``true``, ``["a"]``), so that equal values make one group."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def no_column(path, name, columns):
    """The error for a group column the file does not have."""
    return SpcaInputError(path, f'no column "{name}" (columns: {", ".join(columns)})')


def language_matcher(languages):
    """A function value -> bool for ``--lang`` codes, or None when no codes are given.

    A value matches a code when they are equal ignoring case, or the value's primary subtag
    is the code ("en-GB" and "en_US" match ``en``). A missing value matches nothing.
    """
    wanted = {str(code).strip().lower() for code in languages or ()}
    if not wanted:
        return None

    def matches(value):
        if not isinstance(value, str):
            return False
        value = value.strip().lower()
        return value in wanted or value.replace("_", "-").split("-")[0] in wanted
    return matches


def _times(path, strings, lines, column):
    try:
        return parse_timestamps(strings)
    except TimeRangeError as exc:
        raise SpcaInputError(path, f"time {exc.value!r} in '{column}' is outside the years "
                                   "1-9999 (in UTC or as written), which spca cannot store",
                             line=lines[exc.index]) from None
    except TimeFormatError as exc:
        raise SpcaInputError(path, f"cannot read time {exc.value!r} in '{column}' (expected e.g. "
                                   "2015-02-17 11:53:37 -0800, ISO 8601 or "
                                   "'Wed Feb 18 09:41:04 +0000 2015')",
                             line=lines[exc.index]) from None


def iter_csv(path, *, text_column=None, time_column=None, progress=None, meta=None,
             chunk_size=None, languages=None, group_column=None):
    """Chunks of a CSV file with a header row (RFC 4180: quoted fields may hold newlines).

    Parameters
    ----------
    path : str
    text_column : str, optional
        Default ``text``.
    time_column : str, optional
        Default: the first of ``created_at``, ``tweet_created``, ``date`` present, else no times.
    progress : callable, optional
        Called with bytes of ``path`` read.
    meta : dict, optional
        Filled with the columns actually used (``text_column``, ``time_column``).
    chunk_size : int, optional
        Documents per chunk; default ``CHUNK_DOCUMENTS``.
    languages : sequence of str, optional
        ``--lang`` codes: keep the records whose ``lang`` (or ``language``) column matches
        (:func:`language_matcher`); the file must have such a column.
    group_column : str, optional
        A column whose value is yielded per document as a fifth item (``spca topics --by``).
    """
    meta = {} if meta is None else meta
    matches = language_matcher(languages)
    chunk_size = chunk_size or CHUNK_DOCUMENTS
    csv.field_size_limit(1 << 24)  # a tweet is short, but other exports have long fields
    with open_text(path, progress, newline="") as (f, tracker):
        reader = csv.reader(f)
        try:
            header = next(reader)
        except StopIteration:
            raise SpcaInputError(path, "file is empty") from None
        except csv.Error as exc:
            raise SpcaInputError(path, f"not valid CSV ({exc})", line=reader.line_num) from None
        header = [h.strip() for h in header]
        text_name = text_column or "text"
        if text_name not in header:
            hint = [] if text_column else [" (use ", Name("text_column"), ")"]
            raise SpcaInputError(path, [f"no text column '{text_name}'", *hint,
                                        f"; the columns are: {', '.join(header)}"], line=1)
        ti = header.index(text_name)
        if time_column is not None:
            if time_column not in header:
                raise SpcaInputError(path, f"no time column '{time_column}'; the columns are: "
                                           f"{', '.join(header)}", line=1)
            time_name = time_column
        else:
            time_name = next((c for c in TIME_COLUMNS if c in header), None)
        di = header.index(time_name) if time_name is not None else None
        ii = next((header.index(c) for c in ID_COLUMNS if c in header), None)
        meta.update(text_column=text_name, time_column=time_name)
        need = max(ti, di if di is not None else 0, ii if ii is not None else 0)
        gi = None
        if group_column is not None:
            if group_column not in header:
                raise no_column(path, group_column, header)
            gi = header.index(group_column)
            need = max(need, gi)
        li = None
        if matches is not None:
            lang_name = next((c for c in LANGUAGE_COLUMNS if c in header), None)
            if lang_name is None:
                raise SpcaInputError(path, [f"no language column ({' or '.join(LANGUAGE_COLUMNS)})"
                                            " for ", Name("lang"),
                                            f"; the columns are: {', '.join(header)}"], line=1)
            li = header.index(lang_name)
            need = max(need, li)

        while True:
            texts, stamps, lines, ids, groups = [], [], [], [], []
            last = reader.line_num
            try:
                for row in reader:
                    if not row:
                        last = reader.line_num
                        continue  # a blank line is not a record
                    if len(row) <= need:
                        raise SpcaInputError(path, f"record has {len(row)} fields, the header "
                                                   f"has {len(header)}", line=last + 1)
                    if li is not None and not matches(row[li]):
                        last = reader.line_num
                        continue
                    texts.append(normalize_text(row[ti]))
                    if ii is not None:
                        ids.append(row[ii])
                    if gi is not None:
                        groups.append(row[gi])
                    if di is not None:
                        stamps.append(row[di])
                        lines.append(last + 1)
                    last = reader.line_num
                    if len(texts) >= chunk_size:
                        break
            except csv.Error as exc:
                raise SpcaInputError(path, f"not valid CSV ({exc})", line=reader.line_num) from None
            tracker.update()
            if not texts:
                return
            ids = ids if ii is not None else None
            if di is None:
                epoch = offset = None
            else:
                epoch, offset = _times(path, stamps, lines, time_name)
            yield (texts, epoch, offset, ids) + ((groups,) if gi is not None else ())


def _text_of(obj, key):
    if key is not None:
        return obj.get(key)
    # extended tweets keep the untruncated text one level down
    ext = obj.get("extended_tweet")
    if isinstance(ext, dict) and isinstance(ext.get("full_text"), str):
        return ext["full_text"]
    for k in TEXT_KEYS:
        value = obj.get(k)
        if value is not None:
            return value
    return None


def _id_of(obj):
    value = next((obj[k] for k in JSON_ID_KEYS if obj.get(k) is not None), "")
    return str(value)


def _ids_of(objs):
    """``[_id_of(o) for o in objs]``, by one comprehension when every object has a non-null
    ``id_str`` (Twitter's), or none has ``id_str`` and every one a non-null ``id`` (as generated
    files have); else object by object. On 100,000 generated tweets: 0.04 s instead of 0.18 s
    (0.57 s under cProfile)."""
    first, second = JSON_ID_KEYS
    try:
        values = [o[first] for o in objs]
    except KeyError:  # a missing id_str: the fast path only when none has it
        values = (None if any(map(dict.__contains__, objs, repeat(first)))
                  else [o.get(second) for o in objs])
    if values is None or None in values:
        return [_id_of(o) for o in objs]
    return list(map(str, values))


def _decode_lines(path, lines, first_line):
    """(objects, their line numbers): one json.loads for the whole chunk when it is clean,
    else line by line to name the bad line."""
    try:
        objs = json.loads("[" + ",".join(lines) + "]")
        if len(objs) == len(lines):
            return objs, range(first_line, first_line + len(lines))
    except (ValueError, RecursionError):
        pass  # (JSONDecodeError is a ValueError; so is an integer of more than 4,300 digits)
    objs, numbers = [], []
    for offset, line in enumerate(lines):
        if not line.strip():
            continue  # blank lines are skipped
        try:
            objs.append(json.loads(line.rstrip("\r\n")))
        except json.JSONDecodeError as exc:
            # (json's own "Unterminated string starting at" ends in "at" already)
            what = exc.msg.removesuffix(" at")
            raise SpcaInputError(path, f"malformed JSON ({what} at column {exc.colno})",
                                 line=first_line + offset) from None
        except ValueError as exc:  # Python's limit on the digits of an integer
            what = ("an integer of more than 4,300 digits" if "digits" in str(exc)
                    else str(exc))
            raise SpcaInputError(path, f"malformed JSON ({what})",
                                 line=first_line + offset) from None
        except RecursionError:
            raise SpcaInputError(path, "malformed JSON (nested too deeply)",
                                 line=first_line + offset) from None
        numbers.append(first_line + offset)
    return objs, numbers


def _fields_fast(objs, text_column, time_name):
    """(texts, stamps, None, 0, ids, kept) when every object has a string text (and time), else
    None; ``kept`` is None: every object has text.

    List comprehensions over the chunk: about a third of the cost of the careful loop below.
    """
    try:
        if text_column is not None:
            texts = [o[text_column] for o in objs]
        else:
            texts = [o["extended_tweet"]["full_text"] if "extended_tweet" in o
                     else o["full_text"] if "full_text" in o else o["text"] for o in objs]
        stamps = [o[time_name] for o in objs] if time_name is not None else None
    except (KeyError, TypeError, AttributeError):
        return None
    if set(map(type, texts)) - {str} or (stamps is not None and set(map(type, stamps)) - {str}):
        return None
    return texts, stamps, None, 0, _ids_of(objs), None


def _fields_slow(path, objs, numbers, text_column, time_name):
    """Object by object: skip those without text, report the first malformed one; the last
    item is the positions in ``objs`` of the objects kept."""
    texts, stamps, stamp_lines, skipped, ids, kept = [], [], [], 0, [], []
    for position, (obj, lineno) in enumerate(zip(objs, numbers)):
        if not isinstance(obj, dict):
            raise SpcaInputError(path, f"expected a JSON object, found {type(obj).__name__}",
                                 line=lineno)
        text = _text_of(obj, text_column)
        if text is None:
            skipped += 1
            continue
        if not isinstance(text, str):
            raise SpcaInputError(path, f"text is a {type(text).__name__}, not a string",
                                 line=lineno)
        if time_name is not None:
            stamp = obj.get(time_name)
            if not isinstance(stamp, str):
                raise SpcaInputError(path, f"no time in field '{time_name}'", line=lineno)
            stamps.append(stamp)
            stamp_lines.append(lineno)
        texts.append(text)
        ids.append(_id_of(obj))
        kept.append(position)
    return texts, (stamps if time_name is not None else None), stamp_lines, skipped, ids, kept


def iter_jsonl(path, *, text_column=None, time_column=None, progress=None, meta=None,
               chunk_size=None, byte_range=None, decided=None, languages=None,
               group_column=None):
    """Chunks of a JSON-lines file: one object per line.

    The text is ``--text-column`` if given, else ``extended_tweet.full_text``, ``full_text`` or
    ``text``; objects without text (Twitter's delete notices, for instance) are skipped and
    counted in the log. The time is ``--time-column`` or ``created_at`` when the first object
    with text has it; from then on every object with text must have one.

    ``byte_range=(start, stop)`` reads only those bytes (whole lines) of an uncompressed file,
    for one worker of the parallel ingest. The first object with text may then lie in another
    range, so the caller passes ``decided=(use_times, time_name)`` as :func:`first_fields`
    found it; line numbers in messages count from the range start, and the number of skipped
    objects goes to ``meta["skipped"]`` instead of the log.

    ``languages`` (``--lang`` codes) keeps the objects whose ``lang`` field matches
    (:func:`language_matcher`); the first object with text must have that field.

    ``group_column``: a field whose value (:func:`group_value`; a missing field is "") is
    yielded per document as a fifth item.
    """
    meta = {} if meta is None else meta
    matches = language_matcher(languages)
    chunk_size = chunk_size or CHUNK_DOCUMENTS
    time_name = time_column
    use_times = None  # decided by the first object with text
    if decided is not None:
        use_times, time_name = decided
    skipped = 0
    seen_any = False
    first_line = 1
    for lines in line_chunks(path, chunk_size, progress, byte_range=byte_range):
        seen_any = True
        objs, numbers = _decode_lines(path, lines, first_line)
        first_line += len(lines)
        if use_times is None and objs:
            first = next((o for o in objs if isinstance(o, dict)
                          and _text_of(o, text_column) is not None), None)
            if first is not None:
                if matches is not None and "lang" not in first:
                    raise SpcaInputError(path, ["no 'lang' field for ", Name("lang"),
                                                " (the first object with text has none)"],
                                         line=list(numbers)[objs.index(first)])
                use_times = time_name is not None or "created_at" in first
                time_name = (time_name or "created_at") if use_times else None
                meta.update(text_column=text_column or "text", time_column=time_name)
        if matches is not None:
            # objects that are not dicts stay, for the careful loop to report
            keep = [not isinstance(o, dict) or matches(o.get("lang")) for o in objs]
            objs, numbers = list(compress(objs, keep)), list(compress(numbers, keep))
        fields = _fields_fast(objs, text_column, time_name if use_times else None)
        if fields is None:  # something is missing or odd: the careful loop says what
            fields = _fields_slow(path, objs, numbers, text_column,
                                  time_name if use_times else None)
        texts, stamps, stamp_lines, n_skipped, ids, kept = fields
        skipped += n_skipped
        extra = ()
        if group_column is not None:
            chosen = objs if kept is None else [objs[i] for i in kept]
            extra = ([group_value(o.get(group_column)) for o in chosen],)
        texts = list(map(normalize_text, texts))
        if stamp_lines is None:
            stamp_lines = numbers
        if not texts:
            continue
        if use_times:
            epoch, offset = _times(path, stamps, stamp_lines, time_name)
            yield (texts, epoch, offset, ids) + extra
        else:
            yield (texts, None, None, ids) + extra
    if byte_range is not None:
        meta["skipped"] = skipped
        return
    if not seen_any:
        raise SpcaInputError(path, "file is empty")
    if use_times is None:
        field = f"'{text_column}'" if text_column else "'text' or 'full_text'"
        raise SpcaInputError(path, f"no object has a {field} field")
    if skipped:
        logger.warning("%s: skipped %d objects without text", path, skipped)


def first_fields(path, *, text_column=None, time_column=None, max_lines=1000, need_lang=False):
    """``(use_times, time_name)`` as :func:`iter_jsonl` decides them from the first object with
    text among the first ``max_lines`` lines, or None when that cannot be told cheaply (no such
    object there, or a line that is not a JSON object) or, with ``need_lang``, when that object
    has no ``lang`` field (the serial reader then reports it)."""
    with open_text(path) as (f, _):
        for line in islice(f, max_lines):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                return None
            if not isinstance(obj, dict):
                return None
            if _text_of(obj, text_column) is not None:
                if need_lang and "lang" not in obj:
                    return None
                use_times = time_column is not None or "created_at" in obj
                return use_times, ((time_column or "created_at") if use_times else None)
    return None
