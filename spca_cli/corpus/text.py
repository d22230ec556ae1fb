"""Plain text: one document per line (an empty line is an empty document)."""

from __future__ import annotations

from itertools import islice

from spca_cli.corpus._io import open_text
from spca_cli.corpus import tweets
from spca_cli.errors import SpcaInputError

__all__ = ["iter_text"]


def iter_text(path, *, progress=None, meta=None, chunk_size=None):
    """Chunks ``(lines, None, None)`` of a UTF-8 text file; the line ends stay on (they are
    whitespace to the tokenizer), so an empty line still counts as a document."""
    chunk_size = chunk_size or tweets.CHUNK_DOCUMENTS
    seen = False
    with open_text(path, progress) as (f, tracker):
        while True:
            lines = list(islice(f, chunk_size))
            tracker.update()
            if not lines:
                break
            seen = True
            yield lines, None, None
    if not seen:
        raise SpcaInputError(path, "file is empty")
