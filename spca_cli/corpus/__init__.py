"""Corpus layer: input files -> document-word matrix S with vocabulary and document times.

Every input kind of SPEC's table is read here; the CLI only calls :func:`load_input` (or
:func:`read_corpus`) and :func:`save_corpus`. Errors are :class:`~spca_cli.errors.SpcaInputError`
naming the file and line; nothing is printed.
"""

from spca_cli.corpus.core import Corpus, MatrixInput
from spca_cli.corpus.read import DEFAULTS, FORMATS, detect_format, load_input, read_corpus
from spca_cli.corpus.store import load_corpus, save_corpus
from spca_cli.corpus.times import format_time
from spca_cli.corpus.tokenize import document_frequency

__all__ = [
    "Corpus",
    "MatrixInput",
    "read_corpus",
    "load_input",
    "save_corpus",
    "load_corpus",
    "detect_format",
    "document_frequency",
    "format_time",
    "FORMATS",
    "DEFAULTS",
]
