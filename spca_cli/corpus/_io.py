"""Opening input files: existence, emptiness, gzip, strict UTF-8 with the line of a bad byte,
a bound on the length of a line, and progress reported in bytes of the file on disk."""

from __future__ import annotations

import contextlib
import gzip
import io
from itertools import islice
import os
import zlib

from spca_cli import limits
from spca_cli.errors import SpcaInputError

__all__ = ["check_file", "open_binary", "open_text", "first_bad_line", "decode_error", "Tracker",
           "is_gzip", "line_ranges", "read_all"]

GZIP_MAGIC = b"\x1f\x8b"


def check_file(path):
    """Raise SpcaInputError unless ``path`` is an existing, non-empty regular file."""
    if not os.path.exists(path):
        raise SpcaInputError(path, "file not found")
    if os.path.isdir(path):
        raise SpcaInputError(path, "is a directory, not a file")
    if os.path.getsize(path) == 0:
        raise SpcaInputError(path, "file is empty")


def _is_gzip(path):
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


class Tracker:
    """Calls ``progress(n_bytes)`` with how far the file on disk has been read since last time.

    The position of the raw file (not of the decompressed stream) is used, so the total is the
    file size whether or not it is gzipped.
    """

    def __init__(self, raw, progress):
        self.raw = raw
        self.progress = progress
        self.done = 0

    def update(self):
        if self.progress is None:
            return
        try:
            pos = self.raw.tell()
        except (OSError, ValueError):
            return
        if pos > self.done:
            self.progress(pos - self.done)
            self.done = pos


class _Range(io.RawIOBase):
    """The bytes [start, stop) of an open binary file, as a stream that ends at ``stop``."""

    def __init__(self, raw, start, stop):
        raw.seek(start)
        self.raw = raw
        self.left = stop - start

    def readable(self):
        return True

    def readinto(self, buffer):
        if self.left <= 0:
            return 0
        view = memoryview(buffer)[:min(len(buffer), self.left)]
        n = self.raw.readinto(view)
        self.left -= n or 0
        return n


def _line_number(path, offset):
    """The 1-based line of the byte at ``offset`` of the file's (decompressed) bytes: one more
    than the line ends before it, counted by reading the file again (only for a message)."""
    opener = gzip.open if _is_gzip(path) else open
    ends = 0
    with opener(path, "rb") as f:
        while offset > 0:
            block = f.read(min(offset, 1 << 20))
            if not block:
                break
            ends += block.count(b"\n")
            offset -= len(block)
    return ends + 1


class _LineLimit(io.RawIOBase):
    """The bytes of a binary stream, refusing a line longer than ``limits.MAX_LINE_BYTES``.

    Every reader (lines of text, CSV rows, UCI blocks, vocabularies) grows a buffer until it
    meets a line end, so a stream without one would grow it until memory runs out; here the
    bytes since the last ``\n`` are counted as they pass, and the read stops with
    SpcaInputError ``line N too long (over M bytes)`` as soon as they exceed the limit. Only
    where lines start is tracked (a search from each end of a block): N is counted by reading
    the file again when a line is refused. ``base`` is where the stream starts in the file
    (a byte range), so N counts from the file's start.
    """

    def __init__(self, stream, path, base=0):
        self._stream = stream
        self._path = path
        self._base = base
        self._passed = 0  # bytes of the stream read so far
        self._line_start = 0  # where the current line started

    def readable(self):
        return True

    def _too_long(self, line_start, limit):
        line = _line_number(self._path, self._base + line_start)
        return SpcaInputError(self._path, f"line {line} too long (over {limit:,} bytes)")

    def readinto(self, buffer):
        with memoryview(buffer) as view:
            data = self._stream.read(len(view))
            n = len(data)
            view[:n] = data
        at, self._passed = self._passed, self._passed + n
        limit = limits.MAX_LINE_BYTES  # read here, so a test can lower it
        first = data.find(b"\n")
        if first < 0:
            if self._passed - self._line_start > limit:
                raise self._too_long(self._line_start, limit)
            return n
        if at + first - self._line_start > limit:
            raise self._too_long(self._line_start, limit)
        if n > limit:  # a whole line inside this block can be too long only then
            end = first
            while True:
                start, end = end + 1, data.find(b"\n", end + 1)
                if end < 0:
                    break
                if end - start > limit:
                    raise self._too_long(at + start, limit)
        self._line_start = at + data.rfind(b"\n") + 1
        if self._passed - self._line_start > limit:
            raise self._too_long(self._line_start, limit)
        return n


@contextlib.contextmanager
def open_binary(path, progress=None, *, byte_range=None):
    """Yield (binary stream, Tracker); gzip is recognised by its magic bytes, not the name.

    ``byte_range=(start, stop)`` reads only those bytes of an uncompressed file (the parallel
    ingest gives each worker a range that starts and ends at a line boundary). A line longer
    than ``limits.MAX_LINE_BYTES`` is SpcaInputError (:class:`_LineLimit`), whatever reads it.
    """
    check_file(path)
    raw = open(path, "rb")
    try:
        if byte_range is not None:
            source, base = _Range(raw, *byte_range), byte_range[0]
        else:
            source = gzip.GzipFile(fileobj=raw, mode="rb") if _is_gzip(path) else raw
            base = 0
        stream = io.BufferedReader(_LineLimit(source, path, base), buffer_size=1 << 20)
        try:
            yield stream, Tracker(raw, progress)
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise SpcaInputError(path, f"damaged gzip data ({exc})") from None
    finally:
        raw.close()


@contextlib.contextmanager
def open_text(path, progress=None, *, newline=None, byte_range=None):
    """Yield (text stream, Tracker) decoding strict UTF-8 (a leading BOM is skipped).

    A UnicodeDecodeError inside the block becomes SpcaInputError naming the line of the first
    undecodable byte (found by a second pass, only when it happens). ``byte_range`` as for
    :func:`open_binary`; a range that does not start the file has no BOM to skip.
    """
    encoding = "utf-8" if byte_range is not None and byte_range[0] > 0 else "utf-8-sig"
    with open_binary(path, progress, byte_range=byte_range) as (stream, tracker):
        text = io.TextIOWrapper(stream, encoding=encoding, errors="strict", newline=newline)
        try:
            yield text, tracker
        except UnicodeDecodeError as exc:
            raise decode_error(path, exc) from None
        finally:
            text.detach()


def read_all(path):
    """Every byte of the file ``path`` as it is on disk (an empty file gives b""), refusing a
    line longer than ``limits.MAX_LINE_BYTES`` as :func:`open_binary` does."""
    with open(path, "rb") as raw:
        return io.BufferedReader(_LineLimit(raw, path), buffer_size=1 << 20).read()


def line_chunks(path, chunk_size, progress=None, *, byte_range=None):
    """Lists of at most ``chunk_size`` lines of a UTF-8 text file (line ends kept), read lazily:
    memory holds one chunk. Undecodable bytes raise SpcaInputError naming their line."""
    with open_text(path, progress, byte_range=byte_range) as (f, tracker):
        while True:
            lines = list(islice(f, chunk_size))
            tracker.update()
            if not lines:
                return
            yield lines


def is_gzip(path):
    """True when ``path`` starts with the gzip magic bytes."""
    return _is_gzip(path)


def _next_line_start(f, pos):
    """The position after the first ``\n`` at or after ``pos`` (the file's end when there is
    none), or None when none comes within ``limits.MAX_LINE_BYTES`` (a line that long is
    refused by whichever reader meets it; readline would hold all of it)."""
    f.seek(pos)
    scanned = 0
    while scanned <= limits.MAX_LINE_BYTES:
        block = f.read(1 << 20)
        if not block:
            return f.tell()
        end = block.find(b"\n")
        if end >= 0:
            return pos + scanned + end + 1
        scanned += len(block)
    return None


def line_ranges(path, parts):
    """Split an uncompressed file into up to ``parts`` byte ranges [start, stop) that begin
    and end at line boundaries (each range holds whole lines)."""
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as f:
        for i in range(1, parts):
            pos = _next_line_start(f, max(size * i // parts, cuts[-1]))
            if pos is None:
                break  # the rest is one range; its reader refuses the long line
            pos = min(pos, size)
            if pos > cuts[-1]:
                cuts.append(pos)
    if cuts[-1] < size:
        cuts.append(size)
    return list(zip(cuts[:-1], cuts[1:]))


def first_bad_line(path):
    """(1-based line, UnicodeDecodeError) of the first line that is not UTF-8, or (None, None)."""
    with open_binary(path) as (f, _):
        for lineno, line in enumerate(f, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                return lineno, exc
    return None, None


def decode_error(path, exc):
    """SpcaInputError for undecodable bytes, with the line they are on."""
    lineno, line_exc = first_bad_line(path)
    exc = line_exc or exc
    bad = exc.object[exc.start:exc.start + 4]
    return SpcaInputError(path, f"bytes that are not UTF-8 text ({bad!r}, {exc.reason}); "
                                "re-encode the file as UTF-8", line=lineno)
