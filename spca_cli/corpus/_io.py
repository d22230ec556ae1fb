"""Opening input files: existence, emptiness, gzip, strict UTF-8 with the line of a bad byte,
and progress reported in bytes of the file on disk."""

from __future__ import annotations

import contextlib
import gzip
import io
from itertools import islice
import os
import zlib

from spca_cli.errors import SpcaInputError

__all__ = ["check_file", "open_binary", "open_text", "first_bad_line", "decode_error", "Tracker",
           "is_gzip", "line_ranges"]

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


@contextlib.contextmanager
def open_binary(path, progress=None, *, byte_range=None):
    """Yield (binary stream, Tracker); gzip is recognised by its magic bytes, not the name.

    ``byte_range=(start, stop)`` reads only those bytes of an uncompressed file (the parallel
    ingest gives each worker a range that starts and ends at a line boundary).
    """
    check_file(path)
    raw = open(path, "rb")
    try:
        if byte_range is not None:
            stream = io.BufferedReader(_Range(raw, *byte_range), buffer_size=1 << 20)
        else:
            stream = gzip.GzipFile(fileobj=raw, mode="rb") if _is_gzip(path) else raw
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


def line_ranges(path, parts):
    """Split an uncompressed file into up to ``parts`` byte ranges [start, stop) that begin
    and end at line boundaries (each range holds whole lines)."""
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as f:
        for i in range(1, parts):
            pos = max(size * i // parts, cuts[-1])
            f.seek(pos)
            f.readline()  # finish the line this position falls in
            pos = min(f.tell(), size)
            if pos > cuts[-1]:
                cuts.append(pos)
    if cuts[-1] < size:
        cuts.append(size)
    return list(zip(cuts[:-1], cuts[1:]))


def first_bad_line(path):
    """(1-based line, UnicodeDecodeError) of the first line that is not UTF-8, or (None, None)."""
    opener = gzip.open if _is_gzip(path) else open
    with opener(path, "rb") as f:
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
