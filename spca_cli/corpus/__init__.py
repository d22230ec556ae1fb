"""Corpus layer: input files -> document-word matrix S with vocabulary and document times.

Every input kind of SPEC's table is read here; the CLI only calls :func:`load_input` (or
:func:`read_corpus`) and :func:`save_corpus`. Errors are :class:`~spca_cli.errors.SpcaInputError`
naming the file and line; nothing is printed.

The names below are imported on first use: the readers load NumPy, SciPy and the numba
kernels, which a light submodule (:mod:`~spca_cli.corpus.kinds`,
:mod:`~spca_cli.corpus.sources`, imported by every CLI start) must not pay for.
"""

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

#: each public name -> the submodule that defines it
_HOMES = {
    "Corpus": "core", "MatrixInput": "core",
    "read_corpus": "read", "load_input": "read", "DEFAULTS": "read",
    "detect_format": "kinds", "FORMATS": "kinds",
    "save_corpus": "store", "load_corpus": "store",
    "format_time": "times",
    "document_frequency": "tokenize",
}


def __getattr__(name):
    if name not in _HOMES:
        raise AttributeError(f"module 'spca_cli.corpus' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"spca_cli.corpus.{_HOMES[name]}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *__all__})
