"""Plain text: one document per line (an empty line is an empty document)."""

from __future__ import annotations

from spca_cli.corpus._io import line_chunks
from spca_cli.corpus import tweets
from spca_cli.errors import SpcaInputError

__all__ = ["iter_text"]


def iter_text(path, *, progress=None, meta=None, chunk_size=None, byte_range=None):
    """Chunks ``(lines, None, None, None)`` of a UTF-8 text file; the line ends stay on (they are
    whitespace to the tokenizer), so an empty line still counts as a document.

    ``byte_range=(start, stop)``: only those bytes (whole lines), for the parallel ingest."""
    chunk_size = chunk_size or tweets.CHUNK_DOCUMENTS
    seen = byte_range is not None  # a range may be empty; the file as a whole is not
    for lines in line_chunks(path, chunk_size, progress, byte_range=byte_range):
        seen = True
        yield lines, None, None, None
    if not seen:
        raise SpcaInputError(path, "file is empty")
