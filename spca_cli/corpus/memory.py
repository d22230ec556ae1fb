"""Texts held in memory (a list of str from Python), read as the texts of a CSV text column.

:func:`spca_cli.corpus.read.read_texts` reads them through the raw-text ingest of
:func:`~spca_cli.corpus.read.read_corpus`: each text normalised by
:func:`~spca_cli.corpus.tweets.normalize_text` as the CSV and JSON readers normalise theirs,
then the same tokenizer, word filters and weighting. A :class:`Texts` stands where a file's
path stands in that ingest; messages name it by its ``name`` (no file is written).
"""

from __future__ import annotations

from spca_cli.corpus.tweets import CHUNK_DOCUMENTS, normalize_text

__all__ = ["Texts", "iter_memory"]


class Texts:
    """A list of str, one document each, and the name messages call it by (``str()``);
    ``groups``: each text's group (a list of str) when the read keeps them, else None."""

    __slots__ = ("texts", "name", "groups")

    def __init__(self, texts, name="<texts>"):
        self.texts = list(texts)
        self.name = str(name)
        self.groups = None

    def __str__(self):
        return self.name

    def __len__(self):
        return len(self.texts)


def iter_memory(source, *, progress=None, meta=None, chunk_size=None):
    """Chunks ``(texts, None, None, None)`` of a :class:`Texts`, as :func:`~spca_cli.corpus.
    tweets.iter_csv` yields a text column without times or ids (``progress`` and ``meta``: the
    readers' arguments, with nothing to report here)."""
    chunk_size = chunk_size or CHUNK_DOCUMENTS
    texts = source.texts
    for start in range(0, len(texts), chunk_size):
        yield list(map(normalize_text, texts[start:start + chunk_size])), None, None, None
