"""Atomic file output: readers see the old file or the whole new one, never half of one.

Every file spca writes (corpora, reports, tables, plots) goes through :func:`atomic_output`: a
temp file in the destination folder (same file system, so the rename is atomic), flushed and
fsynced, given ordinary permissions, then ``os.replace``-d over the destination. A failure or an
exception removes the temp file; a process killed mid-write leaves one named ``.tmp-spca-*``,
which ``spca daily`` removes on its next run.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["atomic_output", "atomic_write", "TMP_PREFIX"]

TMP_PREFIX = ".tmp-spca-"


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_output(path, mode="wb"):
    """Yield a file object to write ``path`` through; it replaces ``path`` only on success."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TMP_PREFIX, suffix=".part")
    try:
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs are ordinary files
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write(path, payload):
    """Write ``payload`` (str as UTF-8, or bytes) to ``path`` atomically."""
    with atomic_output(path, "w" if isinstance(payload, str) else "wb") as fh:
        fh.write(payload)
