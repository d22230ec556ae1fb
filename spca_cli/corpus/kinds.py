"""The input kinds and what a file's name says about it, with nothing but the standard library
imported: the CLI's options (``--input-format``, ``--weighting``) take their choices from here
at every start, and :mod:`spca_cli.corpus.sources` and :mod:`spca_cli.corpus.read` both tell a
file's kind from its name here.
"""

from __future__ import annotations

import os
import re

from spca_cli.errors import Name, SpcaInputError

__all__ = ["FORMATS", "WEIGHTINGS", "NEAR_THRESHOLD", "detect_format", "is_docword_name",
           "vocab_path_for"]

#: what ``format`` (the CLI's ``--input-format``) accepts; auto tells the kind from the name
FORMATS = ("auto", "uci", "csv", "jsonl", "text")

#: the entries of the document-word matrix: 1 per word present, its count, or tf-idf
WEIGHTINGS = ("binary", "count", "tfidf")

#: the Jaccard index at which ``near_duplicates`` (``--near-duplicates`` alone) sets a text aside
NEAR_THRESHOLD = 0.8

_DOCWORD = re.compile(r"^docword\.(?P<name>.+)\.txt(?:\.gz)?$")

_SUFFIXES = (
    (".npz", "corpus"), (".npy", "npy"), (".mtx", "mtx"), (".csv", "csv"), (".jsonl", "jsonl"),
    (".ndjson", "jsonl"), (".json", "jsonl"), (".txt", "text"),
)


def is_docword_name(path):
    """True for ``docword.NAME.txt`` and ``docword.NAME.txt.gz``."""
    return _DOCWORD.match(os.path.basename(str(path))) is not None


def vocab_path_for(path):
    """``vocab.NAME.txt`` (or ``.txt.gz``) beside ``docword.NAME.txt[.gz]``, or None."""
    match = _DOCWORD.match(os.path.basename(str(path)))
    if match is None:
        return None
    folder = os.path.dirname(str(path))
    for suffix in (".txt", ".txt.gz"):
        candidate = os.path.join(folder, f"vocab.{match['name']}{suffix}")
        if os.path.exists(candidate):
            return candidate
    return os.path.join(folder, f"vocab.{match['name']}.txt")


def detect_format(path):
    """The input kind of ``path`` from its name: 'uci', 'csv', 'jsonl', 'text', 'corpus',
    'npy' or 'mtx' (a ``.gz`` suffix is looked through)."""
    name = os.path.basename(str(path)).lower()
    if is_docword_name(name):
        return "uci"
    if name.endswith(".gz"):
        name = name[:-3]
    for suffix, kind in _SUFFIXES:
        if name.endswith(suffix):
            return kind
    raise SpcaInputError(path, ["cannot tell the input format from the file name (expected "
                                "docword.NAME.txt, .csv, .jsonl, .json, .txt, .npz, .npy or .mtx,"
                                " optionally .gz); give ", Name("format")])
