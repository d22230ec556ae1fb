"""The UCI bag-of-words format: ``docword.NAME.txt[.gz]`` plus ``vocab.NAME.txt``.

``docword`` starts with three header lines D (documents), W (words) and NNZ (entries), followed
by NNZ lines ``docID wordID count`` with 1-based ids; ``vocab`` has W lines, line i naming word i
(Newman 2008; gensim's ``UciCorpus`` reads the same format). The header is checked against the
data, so a truncated download or a vocabulary from another collection is reported, not analysed.

The body is parsed in blocks of a few MB by one compiled scan per block
(:func:`spca_cli.kernels.uci.parse_docword`); only when a block does not parse cleanly (or fails
a range check) is it read again with ``np.fromstring`` and then line by line, to say which line
is wrong.
"""

from __future__ import annotations

import logging
import os
import re
import warnings

import numpy as np
import scipy.sparse as sp

from spca_cli.corpus._io import check_file, decode_error, is_gzip, open_binary
from spca_cli.corpus.kinds import is_docword_name, vocab_path_for
from spca_cli.errors import Name, SpcaInputError
from spca_cli.limits import check_memory

__all__ = ["read_uci", "vocab_path_for", "is_docword_name"]

logger = logging.getLogger(__name__)

BLOCK_BYTES = 1 << 23
_INT64_MAX, _INT64_MIN = 2 ** 63 - 1, -(2 ** 63)


def read_vocabulary(path, n_words=None, *, header_path=None):
    """The words of a vocabulary file (one per line, surrounding spaces dropped).

    With ``n_words``, the number of lines must match (the docword header's W).
    """
    check_file(path)
    with open_binary(path) as (stream, _):
        data = stream.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise decode_error(path, exc) from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the trailing newline does not start another word
    words = np.array([w.strip() for w in lines], dtype=str)
    if n_words is not None and len(words) != n_words:
        raise SpcaInputError(path, f"vocabulary has {len(words)} words but the header of "
                                   f"{header_path} says {n_words}")
    return words


def _read_header(path, stream):
    header = []
    names = ("D (documents)", "W (words)", "NNZ (entries)")
    for lineno in range(1, 4):
        line = stream.readline()
        if not line:
            if lineno == 1:
                raise SpcaInputError(path, "file is empty")
            raise SpcaInputError(path, f"header ends early: expected {names[lineno - 1]}",
                                 line=lineno)
        text = line.decode("ascii", errors="replace").strip()
        if not re.fullmatch(r"\d+", text):
            raise SpcaInputError(path, f"header line must be one integer {names[lineno - 1]}, "
                                       f"found {text[:40]!r}", line=lineno)
        value = int(text)
        # ids are stored as 32-bit integers; NNZ counts entries of a 64-bit index
        limit = 2 ** 63 - 1 if lineno == 3 else 2 ** 31 - 1
        if value > limit:
            raise SpcaInputError(path, f"header {names[lineno - 1]} is {value}, more than the "
                                       f"{limit:,} spca can index", line=lineno)
        header.append(value)
    return header


def _parse_block_slow(path, block, first_line):
    """Line by line: the (k, 3) int64 entries of ``block``, or SpcaInputError at the bad line."""
    rows = []
    for offset, line in enumerate(block.split(b"\n")):
        fields = line.split()
        if not fields:
            continue  # blank lines carry nothing
        lineno = first_line + offset
        if len(fields) != 3:
            raise SpcaInputError(path, f"expected 3 integers 'docID wordID count', found "
                                       f"{len(fields)} fields", line=lineno)
        try:
            row = [int(f) for f in fields]
        except ValueError:
            text = line.decode("utf-8", errors="replace").strip()
            raise SpcaInputError(path, f"expected 3 integers 'docID wordID count', found "
                                       f"{text[:60]!r}", line=lineno) from None
        for name, value in zip(("doc id", "word id", "count"), row):
            if not _INT64_MIN <= value <= _INT64_MAX:
                raise SpcaInputError(path, f"{name} {str(value)[:30]} does not fit a 64-bit "
                                           "integer", line=lineno)
        rows.append(row)
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def _parse_block(path, block, first_line):
    """(k, 3) int64 entries and the 1-based line number of each (``block``: whole lines
    without the final newline, the first being line ``first_line``)."""
    n_lines = block.count(b"\n") + 1
    with warnings.catch_warnings():
        # np.fromstring stops quietly (with a DeprecationWarning) at the first field that is not
        # an integer; as an error, it sends the block to the line-by-line reader
        warnings.simplefilter("error")
        try:
            values = np.fromstring(block, dtype=np.int64, sep=" ")
        except (ValueError, DeprecationWarning):
            values = None
    if values is not None and ((values == _INT64_MAX) | (values == _INT64_MIN)).any():
        values = None  # np.fromstring saturates what does not fit: let the careful path say so
    if values is not None and len(values) == 3 * n_lines:
        lines = first_line + np.arange(n_lines, dtype=np.int64)
        return values.reshape(-1, 3), lines
    # something is off (a bad field, a short line, blank lines): read it again line by line
    entries = _parse_block_slow(path, block, first_line)
    offsets = [i for i, line in enumerate(block.split(b"\n")) if line.strip()]
    return entries, first_line + np.array(offsets, dtype=np.int64)


def read_uci(path, vocab=None, progress=None):
    """Read a UCI bag-of-words corpus.

    Parameters
    ----------
    path : str
        ``docword.NAME.txt`` or ``docword.NAME.txt.gz``.
    vocab : str, optional
        Vocabulary file; default ``vocab.NAME.txt`` beside ``path``.
    progress : callable, optional
        Called with the number of bytes of ``path`` read since the last call.

    Returns
    -------
    S : csr_array of shape (D, W), float64
        Counts.
    vocabulary : ndarray of shape (W,), str

    Raises
    ------
    SpcaInputError
        When the header disagrees with the data or the vocabulary, naming file and line.

    Notes
    -----
    Memory: the entries go straight into preallocated arrays (int32 document and word ids,
    float64 counts: 16 bytes per entry), and when the file is sorted by document, as the
    published corpora are, the CSR matrix is made from them without a COO copy. NYTimes
    (300,000 x 102,660, 70 million entries) takes ~1.1 GB beyond the finished matrix.
    """
    from spca_cli.kernels.uci import FULL, OK, parse_docword

    check_file(path)
    vocab_file = vocab or vocab_path_for(path)
    if vocab_file is None:
        raise SpcaInputError(path, ["no vocabulary: name the file docword.NAME.txt with "
                                    "vocab.NAME.txt beside it, or give ", Name("vocab")])
    if not os.path.exists(vocab_file):
        raise SpcaInputError(vocab_file, ["vocabulary file not found (give ", Name("vocab"),
                                          " FILE)"])

    with open_binary(path, progress) as (stream, tracker):
        D, W, NNZ = _read_header(path, stream)
        # a line holds at least 6 bytes ("1 1 1\n"), which bounds the entries of a plain file;
        # a lying header must not make us allocate terabytes (gzip: grow as needed)
        size = os.path.getsize(path)
        room = min(NNZ, size // 6 + 1) if not is_gzip(path) else min(NNZ, 1 << 20)
        doc = np.empty(room, dtype=np.int32)
        word = np.empty(room, dtype=np.int32)
        count = np.empty(room, dtype=np.float64)
        first_line = 4
        carry = b""
        found = 0
        dense_lines = True  # no blank line so far: entry i is on line 4 + i
        while True:
            chunk = stream.read(BLOCK_BYTES)
            tracker.update()
            data = carry + chunk
            if chunk:
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry = data
                    continue
                block, carry = data[:cut], data[cut + 1:]  # whole lines, last newline dropped
            else:
                block, carry = data, b""
            if block:
                buf = np.frombuffer(block, dtype=np.uint8)
                while True:
                    got, n_lines, status = parse_docword(buf, doc, word, count, found)
                    if status == FULL and len(doc) < NNZ:  # room runs short (gzip): grow, redo
                        doc, word, count = _grow(doc, word, count, NNZ, found + len(block) // 6)
                        continue
                    break
                if status != OK:
                    # the careful path names the bad line (or, for FULL, the entry beyond NNZ)
                    entries, entry_lines = _parse_block(path, block, first_line)
                    _check_entries(path, entries, entry_lines, D, W, NNZ, found)
                    got, n_lines = len(entries), block.count(b"\n") + 1
                    if found + got > len(doc):
                        doc, word, count = _grow(doc, word, count, NNZ, found + got)
                    _store(entries, doc, word, count, found)
                else:
                    _check_block(path, block, first_line, doc, word, count, found, got, D, W,
                                 NNZ)
                dense_lines &= got == n_lines
                found += got
                first_line += n_lines
            if not chunk:
                break
    if found != NNZ:
        raise SpcaInputError(path, f"header says {NNZ} entries (NNZ), found {found}")
    vocabulary = read_vocabulary(vocab_file, W, header_path=path)
    check_memory(8 * (D + 1) + 8 * W, f"{path}: the header's {D:,} documents and {W:,} words")
    S = _to_csr(path, doc[:found], word[:found], count[:found], D, W, dense_lines)
    present = int(np.count_nonzero(np.diff(S.indptr)))
    if present < D:
        # legal (a document may lose every word to the publisher's filters), but it is also
        # how a header of another collection or a cut file looks: say so, keep row i = doc i
        logger.warning("%s: header says %d documents (D) but %d have no entries; they are kept "
                       "as empty documents", path, D, D - present)
    logger.info("read %s: %d documents, %d words, %d entries", path, D, W, S.nnz)
    return S, vocabulary


def _grow(doc, word, count, NNZ, need):
    size = min(NNZ, max(need, 2 * len(doc)))
    return tuple(np.resize(a, size) for a in (doc, word, count))


def _store(entries, doc, word, count, at):
    n = len(entries)
    doc[at:at + n] = entries[:, 0] - 1
    word[at:at + n] = entries[:, 1] - 1
    count[at:at + n] = entries[:, 2]


def _check_block(path, block, first_line, doc, word, count, at, got, D, W, NNZ):
    """Vectorised range checks of the entries just parsed; the careful path names a bad line."""
    d, w, c = doc[at:at + got], word[at:at + got], count[at:at + got]
    if at + got > NNZ or (d < 0).any() or (d >= D).any() or (w < 0).any() or (w >= W).any() \
            or (c < 1).any():
        entries, entry_lines = _parse_block(path, block, first_line)
        _check_entries(path, entries, entry_lines, D, W, NNZ, at)


def _to_csr(path, doc, word, count, D, W, dense_lines):
    """CSR counts from 0-based entries; duplicates (doc, word) are an error naming both lines.

    A file sorted by document (every published one) needs no sort and no COO copy: the row
    pointers come from a bincount, and only rows whose words are out of order get sorted.
    """
    if len(doc) == 0 or np.all(doc[1:] >= doc[:-1]):
        indptr = np.zeros(D + 1, dtype=np.int64 if len(doc) >= 2 ** 31 else np.int32)
        np.cumsum(np.bincount(doc, minlength=D), out=indptr[1:])
        new_row = doc[1:] != doc[:-1]
        in_order = np.all((word[1:] > word[:-1]) | new_row)
        # sorting permutes the indices in place: keep ``word`` as read for a duplicate's message
        S = sp.csr_array((count, word if in_order else word.copy(), indptr), shape=(D, W),
                         copy=False)
        if not in_order:
            S.has_sorted_indices = False
            S.sort_indices()  # in place, row by row
            if np.any((S.indices[1:] == S.indices[:-1]) & ~new_row):
                _report_duplicate(path, doc, word, _lines(path, len(doc), dense_lines), W)
        S.has_sorted_indices = True
        S.has_canonical_format = True  # sorted, and no word twice in a row
        return S
    S = sp.csr_array(sp.coo_array((count, (doc, word)), shape=(D, W)))
    S.sum_duplicates()
    if S.nnz != len(doc):
        _report_duplicate(path, doc, word, _lines(path, len(doc), dense_lines), W)
    return S


def _lines(path, n, dense_lines):
    """Line number of every entry (only needed to report a duplicate)."""
    if dense_lines:
        return 4 + np.arange(n, dtype=np.int64)
    lines = []
    with open_binary(path) as (stream, _):
        _read_header(path, stream)
        first_line, carry = 4, b""
        while True:
            chunk = stream.read(BLOCK_BYTES)
            data = carry + chunk
            cut = data.rfind(b"\n") if chunk else len(data)
            if cut < 0:
                carry = data
                continue
            block, carry = data[:cut], data[cut + 1:]
            if block.strip():
                lines.append(_parse_block(path, block, first_line)[1])
            first_line += block.count(b"\n") + 1
            if not chunk:
                break
    return np.concatenate(lines) if lines else np.zeros(0, np.int64)


def _check_entries(path, entries, entry_lines, D, W, NNZ, found):
    doc, word, count = entries[:, 0], entries[:, 1], entries[:, 2]
    if found + len(entries) > NNZ:
        i = NNZ - found
        raise SpcaInputError(path, f"header says {NNZ} entries (NNZ), found more",
                             line=int(entry_lines[i]))
    checks = (
        ((doc < 1) | (doc > D), lambda i: f"header says {D} documents, found doc id {doc[i]}"),
        ((word < 1) | (word > W), lambda i: f"header says {W} words, found word id {word[i]}"),
        (count < 1, lambda i: f"counts must be positive integers, found {count[i]}"),
    )
    for bad, message in checks:
        if bad.any():
            i = int(np.argmax(bad))
            raise SpcaInputError(path, message(i), line=int(entry_lines[i]))


def _report_duplicate(path, doc, word, lines, W):
    key = doc.astype(np.int64) * W + word
    order = np.argsort(key, kind="stable")
    same = np.flatnonzero(key[order][1:] == key[order][:-1])
    first, second = order[same[0]], order[same[0] + 1]
    raise SpcaInputError(path, f"doc id {doc[second] + 1} word id {word[second] + 1} appears "
                               f"twice (also at line {lines[first]})", line=int(lines[second]))
