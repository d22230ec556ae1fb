"""Atomic file output: readers see the old file or the whole new one, never half of one.

Every file spca writes (corpora, reports, tables, plots) goes through :func:`atomic_output`: a
temp file in the destination folder (same file system, so the rename is atomic), flushed and
fsynced, given ordinary permissions, then ``os.replace``-d over the destination. A failure or an
exception removes the temp file; a process killed mid-write leaves one named ``.tmp-spca-*``,
which ``spca daily`` removes on its next run.

Temporary folders (the row blocks of ``spca ingest --scheduler``, the copy of standard input)
are named by :func:`own_prefix` with this host and process id; a run killed with SIGKILL (which
no cleanup survives) leaves them, and the next run that makes one removes those of processes
that no longer live (:func:`remove_stale`). SIGTERM runs every cleanup (the CLI turns it into an
exit).

Before any work, every command checks all its outputs with :func:`check_output_file` and
:func:`check_output_folder`: an output that is (or resolves to, or is a hard link of) one of the
inputs is refused, and so is a directory where a file goes, a missing or unwritable folder. While
writing, :func:`atomic_output` turns any ``OSError`` into :class:`~spca_cli.errors.SpcaOutputError`
naming the output, which the CLI prints as one line.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import tempfile
from pathlib import Path

from spca_cli.errors import SpcaOutputError

__all__ = ["atomic_output", "atomic_write", "TMP_PREFIX", "check_output_file",
           "check_output_folder", "input_identities", "output_errors", "own_prefix",
           "remove_stale"]

TMP_PREFIX = ".tmp-spca-"


def _host():
    import socket  # (only a lock's name needs it: 5 ms less for every other run)

    # without "-", which separates the host from the pid in a name
    return re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "host"


def own_prefix(prefix):
    """``prefix`` followed by this host and this process's id (``.spca-blocks-HOST-PID-``): the
    start of a temporary name that :func:`remove_stale` can tell is left over. The host is part
    of it because a folder on shared storage may be a live process's of another machine."""
    return f"{prefix}{_host()}-{os.getpid()}-"


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # another user's process (EPERM), or a number no process can have
    return True


def remove_stale(folder, prefix):
    """Remove the entries of ``folder`` named by :func:`own_prefix` with ``prefix`` on this host
    whose process no longer lives (what a run killed with SIGKILL left); the others stay."""
    mine = f"{prefix}{_host()}-"
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        pid = name[len(mine):].split("-", 1)[0] if name.startswith(mine) else ""
        if not pid.isdigit() or _alive(int(pid)):
            continue
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _reason(exc):
    """The OS's own words for an OSError ("Permission denied"), without the errno prefix."""
    return exc.strerror or str(exc) or type(exc).__name__


@contextlib.contextmanager
def output_errors(path):
    """Turn an OSError raised while writing ``path`` into a one-line SpcaOutputError."""
    try:
        yield
    except OSError as exc:
        raise SpcaOutputError(path, _reason(exc)) from None


def _identity(path):
    """(st_dev, st_ino) of the file ``path`` names (symlinks followed), or None."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def input_identities(inputs):
    """{(st_dev, st_ino): path} of every file the inputs name: plain files, the files under an
    input directory, and the matches of a glob pattern (as ``spca daily`` expands them)."""
    found = {}

    def add(path):
        ident = _identity(path)
        if ident is not None:
            found.setdefault(ident, str(path))

    for item in inputs:
        if item is None:
            continue
        item = os.fspath(item)
        if os.path.isdir(item):
            for folder, _, names in os.walk(item):
                for name in names:
                    add(os.path.join(folder, name))
        elif os.path.exists(item) or not glob.has_magic(item):
            add(item)
        else:
            for match in glob.glob(item):
                add(match)
    return found


def _writable_folder(folder):
    return os.access(folder, os.W_OK | os.X_OK)


def check_output_file(path, inputs=(), *, identities=None):
    """Refuse, before any work, an output file that cannot or must not be written.

    ``path`` must not be a directory, its folder must exist and be writable, and it must not be
    the same file as any of ``inputs`` (compared by device and inode, so a symlink to an input
    or a hard link of one is caught, not only the same name). Returns ``path``.

    Raises
    ------
    SpcaOutputError
        Naming ``path`` and what is wrong.
    """
    path = os.fspath(path)
    if not path:
        raise SpcaOutputError("''", "an output file name is empty")
    if os.path.isdir(path):
        raise SpcaOutputError(path, "is a directory; give a file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.exists(folder):
        raise SpcaOutputError(path, "the folder to write into does not exist")
    if not os.path.isdir(folder):
        raise SpcaOutputError(path, f"{folder} is not a folder")
    if not _writable_folder(folder):
        raise SpcaOutputError(path, f"the folder {folder} is not writable")
    identities = input_identities(inputs) if identities is None else identities
    mine = _identity(path)
    if mine is not None and mine in identities:
        source = identities[mine]
        same = "is" if os.path.abspath(source) == os.path.abspath(path) else "is the same file as"
        raise SpcaOutputError(path, f"{same} the input {source}; writing it would destroy the "
                                    "input, give another output name")
    return path


def check_output_folder(folder, inputs=(), *, files=()):
    """Refuse, before any work, an output folder that cannot be written (created if missing).

    ``folder`` must be a writable directory, or not exist below a writable directory (it is
    made later); each of ``files`` (names inside it that will be written) is checked as by
    :func:`check_output_file`. Returns ``folder``.
    """
    folder = os.fspath(folder)
    if not folder:
        raise SpcaOutputError("''", "an output folder name is empty")
    if os.path.exists(folder):
        if not os.path.isdir(folder):
            raise SpcaOutputError(folder, "exists and is not a folder")
        if not _writable_folder(folder):
            raise SpcaOutputError(folder, "the folder is not writable")
    else:
        parent = os.path.dirname(os.path.abspath(folder))
        while not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent):
            raise SpcaOutputError(folder, f"cannot be created: {parent} is not a folder")
        if not _writable_folder(parent):
            raise SpcaOutputError(folder, f"cannot be created: {parent} is not writable")
        return folder  # nothing inside it exists yet, so nothing inside can be an input
    identities = input_identities(inputs)
    for name in files:
        check_output_file(os.path.join(folder, name), identities=identities)
    return folder


@contextlib.contextmanager
def atomic_output(path, mode="wb"):
    """Yield a file object to write ``path`` through; it replaces ``path`` only on success.

    An OSError (a full disk, a folder that became read-only, ...) becomes SpcaOutputError
    naming ``path``; the temp file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    with output_errors(path):
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TMP_PREFIX, suffix=".part")
    try:
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs are ordinary files
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise SpcaOutputError(path, _reason(exc)) from None
        raise


def atomic_write(path, payload):
    """Write ``payload`` (str as UTF-8, or bytes) to ``path`` atomically."""
    with atomic_output(path, "w" if isinstance(payload, str) else "wb") as fh:
        fh.write(payload)
