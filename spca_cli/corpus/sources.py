"""What the user named as input -> the files to read: ``-`` (stdin), folders, quoted globs.

- ``-`` reads standard input. Its kind cannot be told from a name, so ``--input-format`` must
  say it. It is copied once to a temporary file (gzip is still recognised by its magic bytes),
  so it is read like any file, by the parallel reader too, and ``spca daily`` can read it more
  than once; messages name it ``-``.
- A folder stands for the files in it (not its subfolders) whose names tell a known kind
  (``detect_format``), or with ``--input-format`` given, those of that kind; hidden files are
  skipped; sorted by name.
- A name that is not an existing path but holds ``*``, ``?`` or ``[`` is a glob pattern,
  expanded by spca (sorted), as a quoted pattern from cron needs. No match is an error naming
  the pattern.
- A file named twice (``t.txt t.txt``, a pattern and a name of one file, a link to it) is read
  once, with a warning: reading it twice would count its documents twice.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field

from spca_cli.corpus.kinds import detect_format
from spca_cli.errors import Name, SpcaInputError, SpcaParameterError
from spca_cli.files import own_prefix, remove_stale

__all__ = ["Inputs", "open_inputs", "STDIN"]

STDIN = "-"
#: the temporary folder (in TMPDIR) of the copy of standard input
_SPOOL_PREFIX = "spca-stdin-"

logger = logging.getLogger(__name__)


@dataclass
class Inputs:
    """The inputs of one command, resolved.

    Attributes
    ----------
    given : list of str
        As the user named them (a folder, a pattern, ``-``).
    files : list of str
        The files to read, in order (a temporary copy for ``-``).
    names : list of str
        How each file is called in messages and in JSON ``input.paths`` (``-`` for stdin).

    Iterating gives ``given``, so ``", ".join(inputs)`` names the inputs as the user did.
    """

    given: list
    files: list
    names: list
    _temporary: dict = field(default_factory=dict, repr=False)

    @property
    def label(self):
        """The inputs as given, joined with ', ' (the header and JSON ``input.path``)."""
        return ", ".join(self.given)

    def __iter__(self):
        return iter(self.given)

    def __len__(self):
        return len(self.given)

    def name_of(self, path):
        """The user's name of a file of :attr:`files`."""
        return self._temporary.get(str(path), str(path))


def _read_once(files, names):
    """``files`` and their ``names`` without a file named again (the same file: its links
    and other spellings included), with a warning naming what was dropped."""
    seen, kept_files, kept_names, again = set(), [], [], []
    for path, name in zip(files, names):
        try:
            stat = os.stat(path)
            identity = (stat.st_dev, stat.st_ino)
        except OSError:  # (a missing file is reported by its read)
            identity = os.path.abspath(path)
        if identity in seen:
            again.append(name)
            continue
        seen.add(identity)
        kept_files.append(path)
        kept_names.append(name)
    if again:
        logger.warning("%s named more than once: read once", ", ".join(dict.fromkeys(again)))
    return kept_files, kept_names


def _is_corpus_folder(folder):
    """A folder of row blocks saved by ``spca ingest --scheduler`` is one input, not its files."""
    from spca_cli.distributed.corpus import is_corpus_folder

    return is_corpus_folder(folder)


def _folder_files(folder, input_format):
    found = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.startswith(".") or not entry.is_file():
            continue
        try:
            kind = detect_format(entry.path)
        except SpcaInputError:
            continue
        if input_format in (None, "auto") or kind == input_format:
            found.append(entry.path)
    if not found:
        what = "of a known kind" if input_format in (None, "auto") else f"of kind {input_format}"
        raise SpcaInputError(folder, f"the folder holds no input files {what} (.csv, .jsonl, "
                                     ".json, .txt, docword.NAME.txt, .npz, .npy, .mtx, "
                                     "optionally .gz)")
    return found


def _spool_stdin(folder, input_format, stdin):
    if input_format in (None, "auto"):
        raise SpcaParameterError(["reading standard input (-) needs ", Name("format"),
                                  " csv|jsonl|text|uci"])
    stream = stdin if stdin is not None else sys.stdin.buffer
    if stdin is None and sys.stdin.isatty():
        raise SpcaInputError(STDIN, "standard input is a terminal; pipe a file in "
                                    "(cat FILE | spca ...)")
    path = os.path.join(folder, "stdin")
    with open(path, "wb") as out:
        shutil.copyfileobj(stream, out, 1 << 20)
    if os.path.getsize(path) == 0:
        raise SpcaInputError(STDIN, "standard input is empty")
    return path


@contextlib.contextmanager
def open_inputs(items, input_format="auto", *, stdin=None):
    """Resolve ``items`` (a path or list of them, or an :class:`Inputs` already resolved,
    passed through as is) and yield :class:`Inputs`; a copy of stdin lives until the block
    ends. Errors inside the block about that copy are re-raised naming ``-``.

    Parameters
    ----------
    stdin : binary file, optional
        Read for ``-`` instead of the process's standard input (for tests and callers that
        hold the stream).
    """
    if isinstance(items, Inputs):
        yield items
        return
    items = [os.fspath(items)] if isinstance(items, (str, os.PathLike)) else [
        os.fspath(i) for i in items]
    if not items:
        raise SpcaParameterError("no input given")
    if items.count(STDIN) > 1:
        raise SpcaParameterError("standard input (-) can be read only once")
    with contextlib.ExitStack() as stack:
        files, names, temporary = [], [], {}
        for item in items:
            if item == STDIN:
                remove_stale(tempfile.gettempdir(), _SPOOL_PREFIX)  # a killed run's copy
                folder = stack.enter_context(tempfile.TemporaryDirectory(
                    prefix=own_prefix(_SPOOL_PREFIX)))
                path = _spool_stdin(folder, input_format, stdin)
                temporary[path] = STDIN
                files.append(path)
                names.append(STDIN)
            elif os.path.isdir(item) and not _is_corpus_folder(item):
                found = _folder_files(item, input_format)
                files.extend(found)
                names.extend(found)
            elif not os.path.exists(item) and glob.has_magic(item):
                matches = sorted(p for p in glob.glob(item) if os.path.isfile(p))
                if not matches:
                    raise SpcaInputError(item, "the pattern matches no files")
                files.extend(matches)
                names.extend(matches)
            else:
                files.append(item)
                names.append(item)
        files, names = _read_once(files, names)
        inputs = Inputs(given=items, files=files, names=names, _temporary=temporary)
        try:
            yield inputs
        except SpcaInputError as exc:
            if exc.path in temporary:
                raise type(exc)(temporary[exc.path], exc.message, exc.line) from None
            raise
