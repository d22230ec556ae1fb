"""Named public corpora: where each comes from, where it is kept, and how a fresh machine gets it.

A data set is one or more files under the *data folder*:

1. ``$SPCA_DATA`` when set (a folder that already holds the files, such as a shared copy: its
   files are used as they are, nothing is downloaded);
2. else ``$XDG_CACHE_HOME/spca`` (``XDG_CACHE_HOME`` must be an absolute path);
3. else ``~/.cache/spca``.

Files keep their usual names (``docword.kos.txt.gz``, ``vocab.kos.txt``,
``twitter_us_airline_sentiment.csv``); the published matrices live in ``matrices/``.

:func:`fetch` downloads what is missing: streamed into a temp file in the data folder, checked
(sha256, and the file's format), then renamed into place, so a cut download or a checksum
mismatch leaves no file behind. A file this code's authors had in hand has its sha256 pinned
below; for the others (NIPS, Enron, NYTimes) the format is checked while the bytes arrive (gzip
stream, the UCI header ``D W NNZ`` against the registered shape, ``NNZ`` lines, one vocabulary
word per column) and the sha256 the first download saw is recorded beside the file in
``NAME.download.json``. A file that is present and checks out is never downloaded again.

The two matrices of ``matrices/`` are *derived*: they are built from their source data set and
must come out byte for byte as published (their sha256 is pinned).

Every failure is a :class:`DatasetError`, one line, e.g. ``cannot download nips from URL:
Connection refused; put the file at PATH``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import logging
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from spca_cli.errors import SpcaError

__all__ = ["DataFile", "Dataset", "DatasetError", "REGISTRY", "TIMEOUT", "data_folder",
           "folder_origin", "get", "names", "file_path", "main_path", "file_states", "local",
           "fetch", "require", "task_bar"]

logger = logging.getLogger(__name__)

#: seconds to wait for a connection, and for each read once connected
TIMEOUT = 30.0
_CHUNK = 1 << 20
RECORD_SUFFIX = ".download.json"

UCI_BAG_OF_WORDS = "https://archive.ics.uci.edu/ml/machine-learning-databases/bag-of-words/"
#: the Kaggle ``Tweets.csv`` as committed to a public GitHub repository (the commit named in
#: the shared data's PROVENANCE.md); Kaggle itself needs a login
AIRLINE_URL = ("https://raw.githubusercontent.com/eidehua/Real-Time-SciVi/"
               "cd0faf96aa3e0378310408039298362c87c1d3b2/twitter-airline-sentiment/Tweets.csv")

_UCI_SOURCE = ("UCI Machine Learning Repository, \"Bag of Words\" (D. Newman, 2008), "
               + UCI_BAG_OF_WORDS)
_UCI_LICENCE = "CC BY 4.0 (UCI); cite Newman, D. (2008), Bag of Words, UCI ML Repository"


class DatasetError(SpcaError):
    """A data set that is unknown, absent, damaged, or cannot be downloaded or built (one line).

    ``reason`` is the message without its advice on where to put the file (for messages that
    quote it and give their own); ``where`` the file a failed download was for.
    """

    def __init__(self, message, reason=None, where=None):
        super().__init__(message)
        self.reason = message if reason is None else reason
        self.where = where


class _Refused(Exception):
    """A download or a file that fails a check; ``reason`` says why (caught inside this module)."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class DataFile:
    """One file of a data set.

    ``name`` is its path under the data folder. ``sha256`` pinned means ``size`` is exact;
    without it ``size`` is an estimate for ``datasets list`` and the file's format is checked
    instead (``kind``: ``docword`` a gzip UCI docword file, ``vocab`` one word per line).
    """

    name: str
    url: str | None = None
    sha256: str | None = None
    size: int | None = None
    kind: str = "raw"


@dataclass(frozen=True)
class Dataset:
    """A named corpus: its files (the first is the one a command reads), origin and licence.

    ``documents`` and ``words`` are its shape (checked against a UCI header). A derived data
    set (``derived_from``) is built from another one by ``builder``, a function of this module
    taking that data set's file paths and returning {file name: bytes}.
    """

    name: str
    title: str
    files: tuple
    source: str
    licence: str
    documents: int | None = None
    words: int | None = None
    derived_from: str | None = None
    builder: str | None = None
    notes: tuple = field(default=())

    @property
    def main(self):
        return self.files[0]


def _uci(name, title, documents, words, docword_size, vocab_size, *, docword_sha=None,
         vocab_sha=None, notes=()):
    return Dataset(
        name=name, title=title, source=_UCI_SOURCE, licence=_UCI_LICENCE,
        documents=documents, words=words, notes=notes,
        files=(DataFile(f"docword.{name}.txt.gz", UCI_BAG_OF_WORDS + f"docword.{name}.txt.gz",
                        docword_sha, docword_size, "docword"),
               DataFile(f"vocab.{name}.txt", UCI_BAG_OF_WORDS + f"vocab.{name}.txt",
                        vocab_sha, vocab_size, "vocab")))


REGISTRY = {ds.name: ds for ds in (
    Dataset(
        name="airline", title="Twitter US Airline Sentiment (14,640 tweets, Feb 2015)",
        files=(DataFile("twitter_us_airline_sentiment.csv", AIRLINE_URL,
                        "ea94b23f41892b290dec3330bb8cf9cb6b8bc669eaae5f3a84c40f7b0de8f15e",
                        3_421_431),),
        source=("Figure Eight (CrowdFlower) \"Data for Everyone\", republished on Kaggle as "
                "twitter-airline-sentiment/Tweets.csv (needs a login); downloaded from a "
                "public GitHub copy pinned to one commit"),
        licence="CC BY-NC-SA 4.0 (as Kaggle lists it; not checked): non-commercial use",
        documents=14_640),
    _uci("kos", "KOS blog entries (dailykos.com)", 3_430, 6_906, 1_053_803, 55_467,
         docword_sha="6439c39f2fccb4876563e4b4c9628974d8ccbeada43d661292a5024911389e30",
         vocab_sha="623b7b969793b32c4ea7d1ae8cd2e9ed99038bf51628f33f52349f9485aeab8e"),
    _uci("nips", "NIPS full papers", 1_500, 12_419, 2_200_000, 110_000),
    _uci("enron", "Enron e-mails", 39_861, 28_102, 12_300_000, 270_000),
    _uci("nytimes", "New York Times news articles", 300_000, 102_660, 223_000_000, 1_000_000),
    Dataset(
        name="airline-matrix", title="the published airline matrix (14,640 x 5,374, binary)",
        files=(DataFile("matrices/airline.mtx", None,
                        "b24211bff64289d72efa4a95ed566914b614f60904447147b3837c48917669a6",
                        1_272_395),
               DataFile("matrices/airline.vocab.txt", None,
                        "c64ae197c4434f9f142296e0a23f4705be0838e794cbc570afa1b92d0f39f5e1",
                        41_288)),
        source=("built from airline: the 2013 paper's recipe (the english-2013 stop list), HTML "
                "entities left as they were (so the word 'amp' marks '&amp;')"),
        licence="as airline", documents=14_640, words=5_374,
        derived_from="airline", builder="_build_airline_matrix"),
    Dataset(
        name="kos-matrix", title="the published KOS matrix (3,430 x 6,906, counts)",
        files=(DataFile("matrices/kos.mtx", None,
                        "19e5214c84f4faeade8daaee82ae1586619c85fd5b8b1c36f6faccec4590e5af",
                        4_075_263),
               DataFile("matrices/kos.vocab.txt", None,
                        "623b7b969793b32c4ea7d1ae8cd2e9ed99038bf51628f33f52349f9485aeab8e",
                        55_467)),
        source="built from kos: the UCI counts as they are, in MatrixMarket format",
        licence="as kos", documents=3_430, words=6_906,
        derived_from="kos", builder="_build_kos_matrix"),
)}


# ====================================================================== where


def data_folder():
    """The folder data sets are read from and downloaded to (see the module docstring)."""
    given = os.environ.get("SPCA_DATA", "").strip()
    if given:
        return Path(os.path.abspath(os.path.expanduser(given)))
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "spca"
    return Path.home() / ".cache" / "spca"


def folder_origin():
    """Which rule chose :func:`data_folder` (for ``datasets list``)."""
    if os.environ.get("SPCA_DATA", "").strip():
        return "SPCA_DATA"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return "XDG_CACHE_HOME" if xdg and os.path.isabs(xdg) else "default cache"


def names():
    return sorted(REGISTRY)


def get(name):
    """The registered :class:`Dataset` called ``name``."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise DatasetError(f"unknown data set {name!r}; expected one of "
                           f"{', '.join(names())}") from None


def _dataset(name_or_ds):
    return name_or_ds if isinstance(name_or_ds, Dataset) else get(name_or_ds)


def file_path(datafile, folder=None):
    return (data_folder() if folder is None else folder) / datafile.name


def main_path(name):
    """Where the file a command reads of data set ``name`` is (or will be once fetched)."""
    return file_path(_dataset(name).main)


def _names_text(paths):
    paths = [str(p) for p in paths]
    return paths[0] if len(paths) == 1 else ", ".join(paths[:-1]) + " and " + paths[-1]


# ====================================================================== checks


def _reason(exc):
    return exc.strerror or str(exc) or type(exc).__name__


class _Sha:
    """sha256 and byte count of a stream."""

    def __init__(self):
        self.digest, self.bytes = hashlib.sha256(), 0

    def feed(self, chunk):
        self.digest.update(chunk)
        self.bytes += len(chunk)

    def hexdigest(self):
        return self.digest.hexdigest()


class _NoCheck:
    def feed(self, chunk):
        pass

    def finish(self):
        pass


class _LineCount:
    """Counts lines (a last line without its newline counts too)."""

    def __init__(self):
        self.newlines, self.last = 0, b"\n"

    def count(self, data):
        if data:
            self.newlines += data.count(b"\n")
            self.last = data[-1:]

    @property
    def lines(self):
        return self.newlines + (self.last != b"\n")


class _VocabCheck(_LineCount):
    """A UCI vocabulary: one word per line, as many lines as the data set has words."""

    def __init__(self, ds):
        super().__init__()
        self.words = ds.words

    def seen_enough(self):
        return False  # a quick look counts the lines too (a vocabulary is small)

    def feed(self, chunk):
        self.count(chunk)

    def finish(self):
        if self.words is not None and self.lines != self.words:
            raise _Refused(f"{self.lines:,} lines, expected one word per line for "
                           f"{self.words:,} words")


class _DocwordCheck(_LineCount):
    """A gzip UCI docword file: gzip magic and an intact stream, the header ``D W NNZ`` (D and
    W those of the data set) and NNZ lines after it."""

    def __init__(self, ds):
        super().__init__()
        self.expect = (ds.documents, ds.words)
        self.start, self.head, self.header = b"", b"", None
        self.stream = zlib.decompressobj(zlib.MAX_WBITS | 16)

    def feed(self, chunk):
        if len(self.start) < 2:
            self.start += chunk[:2 - len(self.start)]
            if len(self.start) == 2 and self.start != b"\x1f\x8b":
                raise _Refused("not a gzip file (a UCI docword file is gzip-compressed)")
        try:
            data = self.stream.decompress(chunk)
            while self.stream.eof and self.stream.unused_data:  # a further gzip member
                rest = self.stream.unused_data
                self.stream = zlib.decompressobj(zlib.MAX_WBITS | 16)
                data += self.stream.decompress(rest)
        except zlib.error as exc:
            raise _Refused(f"damaged gzip data ({exc})") from None
        if self.header is None:
            self.head += data
            if self.head.count(b"\n") < 3:
                if len(self.head) > 100:
                    raise _Refused("no UCI header (three lines D, W, NNZ)")
                return
            self._read_header(self.head)
            data, self.head = self.head, b""
        self.count(data)

    def seen_enough(self):
        return self.header is not None  # a quick look stops after the header

    def _read_header(self, head):
        lines = head.split(b"\n", 3)[:3]
        try:
            values = [int(line.strip()) for line in lines]
        except ValueError:
            raise _Refused("no UCI header (three lines D, W, NNZ): "
                           f"{b' / '.join(lines)[:60]!r}") from None
        documents, words, nnz = values
        if min(values) < 0:
            raise _Refused(f"negative numbers in the UCI header: {documents} {words} {nnz}")
        want_docs, want_words = self.expect
        if (want_docs, want_words) != (None, None) and (documents, words) != self.expect:
            raise _Refused(f"its header says {documents:,} documents x {words:,} words, "
                           f"expected {want_docs:,} x {want_words:,}")
        self.header = (documents, words, nnz)

    def finish(self):
        if len(self.start) < 2:
            raise _Refused("empty file")
        if not self.stream.eof:
            raise _Refused("the gzip stream ends early (the file is cut)")
        if self.header is None:
            raise _Refused("no UCI header (three lines D, W, NNZ)")
        nnz = self.header[2]
        if self.lines - 3 != nnz:
            raise _Refused(f"{self.lines - 3:,} entries after the header, which says NNZ = "
                           f"{nnz:,}")


def _format_check(ds, datafile):
    if datafile.sha256 is not None:
        return _NoCheck()  # the pinned sha256 says everything
    if datafile.kind == "docword":
        return _DocwordCheck(ds)
    if datafile.kind == "vocab":
        return _VocabCheck(ds)
    return _NoCheck()


def _record_path(path):
    return path.with_name(path.name + RECORD_SUFFIX)


def _read_record(path):
    """The JSON a download wrote beside ``path`` ({sha256, bytes, url, downloaded}), or None."""
    try:
        record = json.loads(_record_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (not isinstance(record, dict) or not isinstance(record.get("sha256"), str)
            or not isinstance(record.get("bytes"), int)):
        return None
    return record


def _scan(path, consumers, stop=None):
    """Feed the file at ``path`` to ``consumers`` in chunks (until ``stop()`` is true)."""
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            for consumer in consumers:
                consumer.feed(chunk)
            if stop is not None and stop():
                return False
    return True


def _problem(ds, datafile, path, *, full):
    """None when the file at ``path`` checks out, else what is wrong (a missing file: None is
    not returned, 'missing' is). ``full`` reads unpinned files whole (fetch); otherwise a file
    with a download record is compared by size and one without by its header."""
    try:
        size = path.stat().st_size
    except OSError:
        return "missing"
    if not path.is_file():
        return "not a file"
    try:
        if datafile.sha256 is not None:
            if size != datafile.size:
                return f"{size:,} bytes, expected {datafile.size:,}"
            sha = _Sha()
            _scan(path, [sha])
            if sha.hexdigest() != datafile.sha256:
                return f"sha256 {sha.hexdigest()} does not match the registered {datafile.sha256}"
            return None
        record = _read_record(path)
        if record is not None:
            if size != record["bytes"]:
                return f"{size:,} bytes, but the first download had {record['bytes']:,}"
            if full:
                sha = _Sha()
                _scan(path, [sha])
                if sha.hexdigest() != record["sha256"]:
                    return (f"sha256 {sha.hexdigest()} does not match the one its first "
                            f"download recorded, {record['sha256']}")
            return None
        check = _format_check(ds, datafile)
        if isinstance(check, _NoCheck):
            return None
        if _scan(path, [check], stop=None if full else check.seen_enough):
            check.finish()
        return None
    except _Refused as exc:
        return exc.reason
    except OSError as exc:
        return f"cannot read: {_reason(exc)}"


@dataclass(frozen=True)
class FileState:
    """One file of a data set as found in the data folder (for ``datasets list``)."""

    file: DataFile
    path: Path
    present: bool
    problem: str | None
    size: int | None
    sha256: str | None
    checksum: str

    @property
    def ok(self):
        return self.present and self.problem is None


def file_states(name, *, full=False):
    """The :class:`FileState` of every file of data set ``name``."""
    ds = _dataset(name)
    folder = data_folder()
    states = []
    for datafile in ds.files:
        path = file_path(datafile, folder)
        problem = _problem(ds, datafile, path, full=full)
        present = problem != "missing"
        size = path.stat().st_size if present and path.is_file() else None
        record = _read_record(path) if present and datafile.sha256 is None else None
        if datafile.sha256 is not None:
            sha, checksum = datafile.sha256, "pinned"
        elif record is not None:
            sha, checksum = record["sha256"], "recorded at its first download"
        elif present:
            sha, checksum = None, "not recorded (not downloaded by spca): format checked"
        else:
            sha, checksum = None, "to be recorded at the first download"
        states.append(FileState(datafile, path, present, None if problem == "missing"
                                else problem, size, sha, checksum))
    return states


# ====================================================================== local files


def _absent_error(ds, states, folder):
    missing = [s.file.name for s in states if not s.present]
    return DatasetError(f"data set {ds.name} is not in {folder} (missing "
                        f"{_names_text(missing)}); run `spca datasets fetch {ds.name}` or set "
                        f"SPCA_DATA to a folder that holds {'it' if len(missing) == 1 else 'them'}",
                        reason=f"{_names_text(missing)} not in {folder}")


def local(name):
    """The paths of data set ``name`` when every file is present and checks out; otherwise
    :class:`DatasetError` saying what is missing or wrong and how to get it. Never downloads."""
    ds = _dataset(name)
    states = file_states(ds)
    if all(s.ok for s in states):
        return [s.path for s in states]
    bad = [s for s in states if s.present and s.problem is not None]
    if bad:
        verb = "build" if ds.derived_from else "download"
        raise DatasetError(f"{bad[0].path}: {bad[0].problem}; run `spca datasets fetch "
                           f"{ds.name}` to {verb} it again",
                           reason=f"{bad[0].path}: {bad[0].problem}")
    raise _absent_error(ds, states, data_folder())


# ====================================================================== download


def _net_reason(exc, timeout):
    """A network failure in a few words: ``Connection refused``, ``HTTP 404 Not Found``."""
    import http.client
    import socket
    import urllib.error

    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        if not isinstance(exc.reason, BaseException):
            return str(exc.reason)
        exc = exc.reason
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return f"no answer within {timeout:g} s"
    if isinstance(exc, http.client.IncompleteRead):
        return f"the connection closed after {len(exc.partial):,} bytes of the body"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the server closed the connection without an answer"
    if isinstance(exc, OSError):
        return _reason(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _content_length(response):
    value = response.headers.get("Content-Length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _bar(progress, description, total):
    return progress(description, total) if progress is not None else contextlib.nullcontext()


def _user_agent():
    from spca_cli import __version__

    return f"spca-cli/{__version__} (python urllib)"


def _download(ds, datafile, dest, *, progress, timeout):
    """Stream ``datafile.url`` into ``dest`` through a temp file beside it; check the size the
    server announced, the format and the sha256, then rename. Returns (sha256, bytes)."""
    import http.client
    import urllib.request

    from spca_cli.errors import SpcaOutputError
    from spca_cli.files import atomic_output

    def failure(reason):
        what = f"cannot download {ds.name} from {datafile.url}: {reason}"
        return DatasetError(f"{what}; put the file at {dest}", reason=what, where=dest)

    made = [folder for folder in (dest.parent, *dest.parent.parents) if not folder.exists()]
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise failure(f"cannot create {dest.parent}: {_reason(exc)}") from None
    request = urllib.request.Request(datafile.url, headers={"User-Agent": _user_agent()})
    sha, check = _Sha(), _format_check(ds, datafile)
    try:
        with atomic_output(dest) as out:
            try:
                response = urllib.request.urlopen(request, timeout=timeout)
            except (OSError, http.client.HTTPException, ValueError) as exc:
                raise _Refused(_net_reason(exc, timeout)) from None
            with response:
                total = _content_length(response)
                with _bar(progress, f"{ds.name}: {datafile.name}",
                          total or datafile.size or 0) as advance:
                    while True:
                        try:
                            chunk = response.read(_CHUNK)
                        except (OSError, http.client.HTTPException) as exc:
                            raise _Refused(_net_reason(exc, timeout)) from None
                        if not chunk:
                            break
                        out.write(chunk)
                        sha.feed(chunk)
                        check.feed(chunk)
                        if advance is not None:
                            advance(len(chunk))
            if total is not None and sha.bytes != total:
                raise _Refused(f"the connection closed after {sha.bytes:,} of {total:,} bytes")
            check.finish()
            if datafile.sha256 is not None and sha.hexdigest() != datafile.sha256:
                raise _Refused(f"sha256 {sha.hexdigest()} does not match the registered "
                               f"{datafile.sha256}")
    except _Refused as exc:
        _remove_empty(made)
        raise failure(exc.reason) from None
    except SpcaOutputError as exc:
        _remove_empty(made)
        raise failure(f"cannot write {exc.path}: {exc.message}") from None
    if datafile.sha256 is None:
        _write_record(dest, datafile.url, sha.hexdigest(), sha.bytes)
    return sha.hexdigest(), sha.bytes


def _remove_empty(folders):
    """Remove the folders a failed download created, if they are still empty (deepest first)."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def _write_record(path, url, sha256, size):
    from spca_cli.files import atomic_write

    record = {"file": path.name, "url": url, "sha256": sha256, "bytes": size,
              "downloaded": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    try:
        atomic_write(_record_path(path), json.dumps(record, indent=2) + "\n")
    except SpcaError as exc:
        logger.warning("%s: the download record was not written (%s); the file's format was "
                       "checked", _record_path(path), exc)


# ====================================================================== derived data sets


def _mtx_bytes(S):
    """A sparse matrix as MatrixMarket ``coordinate integer general`` text, entries in column
    order (as scipy writes a CSC matrix), 1-based, with an empty comment line."""
    import numpy as np
    import scipy.sparse as sp

    csc = sp.csc_array(S)
    csc.sort_indices()
    values = csc.data
    if not np.array_equal(values, np.round(values)):
        raise _Refused("the matrix holds non-integer values")
    cols = np.repeat(np.arange(1, csc.shape[1] + 1), np.diff(csc.indptr))
    rows = csc.indices + 1
    lines = [f"{r} {c} {v}\n" for r, c, v in zip(rows.tolist(), cols.tolist(),
                                                   values.astype(np.int64).tolist())]
    head = (f"%%MatrixMarket matrix coordinate integer general\n%\n"
            f"{csc.shape[0]} {csc.shape[1]} {csc.nnz}\n")
    return (head + "".join(lines)).encode("ascii")


def _lines(words):
    return "".join(f"{w}\n" for w in words).encode("utf-8")


def _build_kos_matrix(paths):
    from spca_cli.corpus import load_input

    corpus = load_input(str(paths[0]))
    return {"matrices/kos.mtx": _mtx_bytes(corpus.S),
            "matrices/kos.vocab.txt": _lines(corpus.vocabulary.tolist())}


def _build_airline_matrix(paths):
    import bisect
    import csv

    import numpy as np
    import scipy.sparse as sp

    from spca_cli.corpus import read_corpus

    # the published matrix has a row for every tweet, repeats included
    corpus = read_corpus(str(paths[0]), stopwords="english-2013", keep_duplicates=True)
    with open(paths[0], newline="", encoding="utf-8") as fh:
        texts = [row["text"] for row in csv.DictReader(fh)]
    if len(texts) != corpus.n_documents:
        raise _Refused(f"{len(texts):,} tweets in the CSV, {corpus.n_documents:,} read")
    words = corpus.vocabulary.tolist()
    at = bisect.bisect_left(words, "amp")
    amp = sp.csc_array(np.array([[1.0 if "&amp;" in t else 0.0] for t in texts]))
    S = sp.csc_array(corpus.S)
    S = sp.hstack([S[:, :at], amp, S[:, at:]], format="csc")
    return {"matrices/airline.mtx": _mtx_bytes(S),
            "matrices/airline.vocab.txt": _lines(words[:at] + ["amp"] + words[at:])}


def _build(ds, states, *, progress, timeout):
    from spca_cli.files import atomic_write

    wanted = _names_text([s.path for s in states])
    source = get(ds.derived_from)
    try:
        paths = fetch(source, progress=progress, timeout=timeout)
    except DatasetError as exc:
        instead = "" if exc.where is None else f", or {source.name}'s file at {exc.where}"
        raise DatasetError(f"cannot build {ds.name}: {exc.reason}; put the published files at "
                           f"{wanted}{instead}", reason=exc.reason) from None

    def failure(reason):
        what = f"cannot build {ds.name} from {source.name}: {reason}"
        return DatasetError(f"{what}; put the published files at {wanted}", reason=what)

    try:
        built = globals()[ds.builder](paths)
    except _Refused as exc:
        raise failure(exc.reason) from None
    except SpcaError as exc:
        raise failure(str(exc)) from None
    for datafile in ds.files:
        got = hashlib.sha256(built[datafile.name]).hexdigest()
        if got != datafile.sha256:
            raise failure(f"the built {datafile.name} differs from the published one (sha256 "
                          f"{got}, expected {datafile.sha256})")
    for state in states:
        if not state.ok:
            try:
                state.path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(state.path, built[state.file.name])
            except OSError as exc:
                raise failure(f"cannot create {state.path.parent}: {_reason(exc)}") from None
            except SpcaError as exc:
                raise failure(f"cannot write {exc}") from None


# ====================================================================== fetch


def fetch(name, *, progress=None, timeout=TIMEOUT, done=None):
    """Make every file of data set ``name`` present and checked; return their paths.

    A present file that checks out (pinned sha256, or the sha256 its first download recorded,
    or its format) is kept as it is; a missing or damaged one is downloaded (or, for a derived
    data set, built) again. ``progress(description, total_bytes)`` may give a context manager
    yielding ``advance(n_bytes)`` or None (the CLI's bar); ``done(path, how)`` is told what
    happened to each file ('present', 'downloaded', 'built').
    """
    ds = _dataset(name)
    states = file_states(ds, full=True)
    for state in states:
        if state.present and state.problem is not None:
            logger.warning("%s: %s; %s it again", state.path, state.problem,
                           "building" if ds.derived_from else "downloading")
    if not all(s.ok for s in states):
        if ds.derived_from:
            _build(ds, states, progress=progress, timeout=timeout)
        else:
            for state in states:
                if state.ok:
                    continue
                if state.file.url is None:
                    raise DatasetError(f"data set {ds.name} has no public download; put "
                                       f"{state.file.name} at {state.path}")
                _download(ds, state.file, state.path, progress=progress, timeout=timeout)
    if done is not None:
        for state in states:
            done(state.path, "present" if state.ok else
                 "built" if ds.derived_from else "downloaded")
    return [s.path for s in states]


def require(name, *, progress=None, timeout=TIMEOUT):
    """The main file of data set ``name``, fetched first when absent (a config's first use).

    Raises
    ------
    DatasetError
        One line naming the data set, why it could not be fetched, and how to get it:
        ``spca datasets fetch NAME`` where the network allows, or ``SPCA_DATA``.
    """
    ds = _dataset(name)
    states = file_states(ds)
    if all(s.ok for s in states):
        return states[0].path
    try:
        return fetch(ds, progress=progress, timeout=timeout)[0]
    except DatasetError as exc:
        what = "built" if ds.derived_from else "downloaded"
        files = _names_text([s.file.name for s in states])
        damaged = [s for s in states if s.present and s.problem is not None]
        state = (f"is damaged in {data_folder()} ({damaged[0].path.name}: {damaged[0].problem})"
                 if damaged else f"is not in {data_folder()}")
        raise DatasetError(f"{ds.name} {state} and could not be {what} "
                           f"({exc.reason}); run `spca datasets fetch {ds.name}` where the "
                           f"network allows, or put {files} in {data_folder()}, or set SPCA_DATA"
                           " to a folder holding them", reason=exc.reason) from None


def task_bar(progress):
    """A download bar drawn through a ``progress(description, done, total)`` callback (the
    task bar of ``spca reproduce``), in the form :func:`fetch` takes; None gives None."""
    if progress is None:
        return None

    @contextlib.contextmanager
    def bar(description, total):
        done = 0

        def advance(n):
            nonlocal done
            done += n
            progress(f"downloading {description}", done, total or None)

        yield advance

    return bar
